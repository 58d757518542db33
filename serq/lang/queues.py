"""Serving forms and queues: parse-time sugar over the kernel statements.

`prefill X;`, `decode X;`, `tool X;` and `transfer X from P to Q (n);` become `run`s (plus
`load`/`release` for a transfer) on the stage that plays the role among those declared
*above*. Queue declarations (`queue Q[N] : roles { … }`) add pool and stage families, and
their entries are expanded at every call (language.md 4.8, 4.11).
"""
from __future__ import annotations

from serq.lang import ast as A
from serq.lang.diagnostics import fail
from serq.lang.lexer import IDENT, describe
from serq.lang.suggest import closest

ROLE_NAMES = {"prefill": ("prefill",), "decode": ("decode",), "tool": ("tool",),
              "transfer": ("link", "transfer")}


def visible_stages(p):
    """Stages a serving form may pick: all declared above, except that inside a queue entry
    the only step stage is the queue's own."""
    stages = p.out.stages
    if p.in_entry is not None:
        own = p.in_entry.name
        return [s for s in stages if s.kind != "step" or s.name == own]
    return stages


def serving_form(p, side, out):
    t = p.next()
    role = t.val
    stages = visible_stages(p)
    index = None
    refs = None
    if p.at("LBracket"):
        p.next()
        index = p.expr()
        p.expect("RBracket")
    elif p.at_word("on"):
        p.next()
        refs = [p.ref()]
        while p.accept("Comma"):
            refs.append(p.ref())
        names = [s.name for s in stages]
        for r in refs:
            if r.name not in names:
                near = closest(r.name, names)
                help_ = (f"help: did you mean stage `{near}`?" if near
                         else "help: declare the stage above this statement")
                fail(f"`{role} on {r.name}`: no stage `{r.name}` is declared above", r.pos,
                     extra=(help_,))
    if refs is None and index is None and role == "transfer" and p.at("LParen") \
            and pull_read(p):  # the reference's read form starts `transfer (`
        out.append(pull_transfer_form(p, t))
        return
    if refs is None:
        wanted = ROLE_NAMES[role]
        cands = [s for s in stages if s.name in wanted]
        if not cands and role in ("prefill", "decode"):
            cands = [s for s in stages if s.kind == "step"]
        if not cands:
            if role in ("prefill", "decode"):
                fail(f"no stage declared above plays `{role}`: name a stage `{role}`, declare "
                     f"a `step` engine, or write `{role} on STAGE (...)`", t.pos)
            shown = " or ".join(f"`{w}`" for w in wanted)
            fail(f"no stage declared above plays `{role}`: name a stage {shown}, or write "
                 f"`{role} on STAGE (...)`", t.pos)
        if len(cands) > 1:
            fail(f"several stages play `{role}` ({', '.join(s.name for s in cands)}): write "
                 f"`{role} on STAGE (...)`", t.pos)
        refs = [A.Ref(cands[0].name, index, None, t.pos,
                      None if index is None else index.pos)]
    work = p.expr()
    main = next(s for s in stages if s.name == refs[0].name)
    mode = "Plain"
    if role in ("prefill", "decode") and main.kind == "step":
        mode = "Prefill" if role == "prefill" else "Decode"
    if role == "transfer":
        grows = p.at_word("growing")
        if grows:  # the reference reads the clause, then wants the tail
            p.next()
            p.ref()
        r0 = refs[0]
        src, dst, n = transfer_tail(p, t, r0.name if r0.index is None else f"{r0.name}[…]",
                                    grows)
        latency_runs(p, refs, out, t)
        out.append(A.RunS(refs, "Plain", work, None, t.pos, "Plain"))
        out.append(A.LoadS(dst, n, t.pos))
        out.append(A.ReleaseS(src, t.pos))
        return
    growing = None
    if p.accept_word("growing"):
        growing = p.ref()
        check_foreign_pool(p, "growing", growing)
    p.expect("Semi")
    out.append(A.RunS(refs, mode, work, growing, t.pos, mode))


def pull_read(p):
    """A `transfer` in an entry of a queue with a `nic`, the entry taking `from`."""
    q = p.in_entry
    return q is not None and q.nic is not None and q.cur is not None and q.cur.src is not None


def pull_transfer_form(p, t):
    from serq.lang.queue_decl import PullTransferS
    work = p.expr()
    src, dst, n = transfer_tail(p, t, "@pull")
    return PullTransferS(work, src, dst, n, t.pos)


def transfer_tail(p, t, stage, grows=False):
    """``from P to Q (n);`` after a transfer's work: the source, destination and amount."""
    if not p.at_word("from"):
        fail("`transfer` without `from P to Q (n)`: a KV transfer leaves the lease (or "
             "hold) on P and enters the hold on Q", t.pos,
             extra=(f"help: write `transfer (w) from P to Q (n);`, or `run {stage} (w);` "
                    f"for a link that only takes time",))
    p.next()
    if stage == "@pull":  # a read takes from the entry's `from` pool, checked as written
        want = p.in_entry.cur.src
        st = p.peek()
        if st.kind == IDENT and st.val != want:
            shown = st.val
            fail(f"`transfer … from {shown}`: a read takes from the entry's source, "
                 f"`from {want}`", st.pos)
    src = p.ref()
    check_foreign_pool(p, "transfer", src)
    p.expect_word("to")
    dst = p.ref()
    check_foreign_pool(p, "transfer", dst)
    p.expect("LParen")
    n = p.expr()
    p.expect("RParen")
    if grows:
        fail("`transfer … from P to Q`: a transfer does not grow a pool", t.pos)
    p.expect("Semi")
    return src, dst, n


def latency_runs(p, refs, out, t):
    """A transfer over a link queue with a fixed latency first waits that latency."""
    for r in refs:
        q = p.queues.get(r.name)
        if q is not None and q.latency is not None:
            out.append(A.RunS([A.Ref(q.name + ".latency", r.index, None, r.pos,
                                     r.bracket_pos)], "Plain",
                              A.Name(q.name + ".latency.time", t.pos), None, t.pos,
                              "Plain"))


def member_ref(p, name, index, mt):
    """`Q[i].x` naming no pool of queue Q reads an attribute, which is no member's."""
    q = p.queues.get(name)
    if q is not None and index is not None and mt.val not in q.pools:
        # reported after parsing, as the reference
        p.defer(f"`{name}[…].{mt.val}` reads the request's attribute, which is no member's: "
                f"write `{name}.{mt.val}`", mt.pos)


def check_foreign_pool(p, verb, r):
    """`hold P.kv` and the like outside P's entries: only P's entries hold P's pools."""
    if r.member is None:
        return
    if p.in_entry is None or p.in_entry.name != r.name:  # declared or not, as the reference
        fail(f"`{verb} {r.name}.{r.member}`: `{r.member}` is a pool of queue `{r.name}`, and "
             f"only `{r.name}`'s entries hold it; call one (`{r.name}.verb (…)`)", r.pos)


# queue declarations, calls and entries ------------------------------------------------------

def queue_decl(p):
    from serq.lang.queue_decl import parse_queue
    parse_queue(p)


def pull_relation(p):
    from serq.lang.queue_decl import parse_pull
    parse_pull(p)


def queue_call_stmt(p, side, out):
    from serq.lang.queue_decl import parse_call
    parse_call(p, side, out)


def mark_stmt(p, name_tok):
    q = p.in_entry
    if q is not None and q.cur is not None and name_tok.val not in q.cur.marks:
        q.cur.marks.append(name_tok.val)
    return A.SetS(name_tok.val, A.Name("now", name_tok.pos), name_tok.pos)


def entry_run(p, t):
    q = p.in_entry
    if q is None:
        fail("`run` names a stage: `run STAGE (X)`", p.peek().pos)
    if not q.has_serve:
        fail(f"`run (…)` in queue `{q.name}`, which has no `serve`", p.peek().pos)
    p.expect("LParen")
    work = p.expr()
    p.expect("RParen")
    growing = None
    if p.accept_word("growing"):
        growing = p.ref()
    p.expect("Semi")
    mode = None
    return A.RunS([A.Ref(q.name, None, None, t.pos)], mode, work, growing, t.pos, mode)
