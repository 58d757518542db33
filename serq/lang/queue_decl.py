"""Queue declarations, pull relations, entry calls and gateway routes (language.md 4.11).

A queue declaration adds pool and stage families at once (in the order its parts are
parsed) and records its entries as parse trees written in the queue's own words (`kv`, the
stage `Q`, `self`, `src`, parameters, locals). A call `Q[i].verb (args) [from S[k]]
[to P (m)];` is replaced at assembly by a copy of the entry body with those words rewritten
(`Q.kv[i]`, `Q[i]`, `i`, the source's leased pool, the arguments, `Q.local`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from serq.lang import ast as A
from serq.lang.diagnostics import fail
from serq.lang.fold import FoldError, fold_const
from serq.lang.lexer import IDENT, describe
from serq.lang.words import CONTEXT

ROLES = ("gateway", "prefill", "decode", "link")
SERVING_WORDS = ("prefill", "decode", "tool", "transfer", "gateway", "link")
# verb -> (role, parameter count, how the role writes it)
ENTRY_ROLE = {"route": ("gateway", 0, "route"), "prefill": ("prefill", 1, "prefill (…)"),
              "decode": ("decode", 1, "decode (…)"), "transfer": ("link", 1, "transfer (…)")}
ROLE_ENTRY = {"gateway": "route", "prefill": "prefill", "decode": "decode", "link": "transfer"}


class Entry:
    def __init__(self, queue, verb, pos, params, src, src_pos):
        self.queue = queue
        self.verb = verb
        self.pos = pos
        self.params = params  # [(name, pos)]
        self.src = src  # the `from` name, or None
        self.src_pos = src_pos
        self.body = []
        self.marks = []
        self.locals = set()
        self.pending = []  # names read that only the workload's `hidden` may allow
        self.uses_self = False
        self.own_indexed = False


class QueueInfo:
    def __init__(self, name, size, pos, roles):
        self.name = name
        self.size = size
        self.pos = pos
        self.roles = roles
        self.pools = {}  # own name -> PoolD
        self.has_serve = False
        self.nic = None
        self.latency = None
        self.entries = []  # [Entry] in order
        self.cur = None  # the entry being parsed
        self.pull = None  # (source queue name, latency expr or None)

    def entry(self, verb, with_from):
        for e in self.entries:
            if e.verb == verb and (e.src is not None) == with_from:
                return e
        return None


@dataclass(slots=True)
class PullTransferS:
    """`transfer (n) from src to kv (m)` in an entry of a queue with a `nic` and a `from`:
    a read over the source's NIC and the reader's, lowered at the call."""
    work: Any
    src: A.Ref
    dst: A.Ref
    amount: Any
    pos: Any


# ---------------------------------------------------------------------------------------
# declarations


def fold_now(p, e):
    reads = set()
    try:
        return fold_const(e, p.let_lookup(reads))
    except FoldError:
        return None


def parse_queue(p):
    qt = p.next()
    nt = p.expect_ident()
    name = nt.val
    if name in SERVING_WORDS:
        fail(f"`{name}` is a serving word; a queue needs another name", nt.pos)
    if name in p.queues:
        fail(f"duplicate queue `{name}`", nt.pos)
    size = p.array_size() if p.at("LBracket") else None
    roles = []
    if p.accept("Colon"):
        while True:
            rt = p.expect_ident()
            if rt.val not in ROLES:
                fail(f"unknown role `{rt.val}`: a queue plays gateway, prefill, decode or link",
                     rt.pos)
            if rt.val in roles:
                fail(f"role `{rt.val}` twice", rt.pos)
            roles.append(rt.val)
            if not p.accept("Comma"):
                break
    if "gateway" in roles and size is not None:
        fail("a gateway is one queue, not a family: the requests enter it", qt.pos)
    q = QueueInfo(name, size, nt.pos, roles)
    q.pos_kw = qt.pos
    p.queues[name] = q
    p.out.queues = p.queues
    p.expect("LBrace")
    serve_seen = False
    while not p.at("RBrace"):
        t = p.peek()
        if t.kind != IDENT:
            fail(f"expected `pool`, `serve` or an entry in queue `{name}`, found {describe(t)}",
                 t.pos)
        w = t.val
        if w == "pool":
            if serve_seen or q.entries:
                fail(f"queue `{name}` declares its pools first, above its `serve` and entries",
                     t.pos)
            p.next()
            pt = p.expect_ident()
            if p.at("LBracket"):
                fail(f"`pool {pt.val}[…]` in queue `{name}`: a queue's pool is the member's, "
                     f"one per member of `{name}`; write `pool {pt.val}`", pt.pos)
            d = A.PoolD(f"{name}.{pt.val}", size, pt.pos)
            p.pool_body(d)
            if pt.val in q.pools:
                fail(f"duplicate pool `{pt.val}` in queue `{name}`", p.peek().pos)
            q.pools[pt.val] = d
            p.out.pools.append(d)
        elif w == "serve":
            if q.entries:
                fail(f"queue `{name}` declares its `serve` above its entries", t.pos)
            if serve_seen:
                fail(f"`serve` twice: queue `{name}` is one stage", t.pos)
            p.next()
            serve_seen = True
            link = "link" in roles
            d = p.stage_kind(name, size, nt.pos, link_latency=link)
            if d.memory is not None and d.memory[0] in q.pools:
                d.memory = (f"{name}.{d.memory[0]}", d.memory[1])
            p.out.stages.append(d)
            q.has_serve = True
            if p.at_word("latency"):  # any queue, as the reference (after `serve X;`)
                p.next()
                lt = p.peek()
                e = p.expr()
                if fold_now(p, e) is None:
                    fail("`latency` is a number or a constant over `let`s: a link's fixed "
                         "wait, the same for every transfer", lt.pos)
                p.expect("Semi")
                q.latency = e
                p.out.lets.append(A.LetD(f"{name}.latency.time", e, lt.pos, generated=True))
        elif w == "nic":
            if q.nic is not None:
                fail(f"`nic` twice: queue `{name}` has one NIC", t.pos)
            if q.entries:
                fail(f"queue `{name}` declares its `nic` above its entries", t.pos)
            p.next()
            d = p.stage_kind(f"{name}.nic", size, nt.pos)
            p.out.stages.append(d)
            q.nic = d
        else:
            parse_entry(p, q)
    p.next()
    check_roles(q)
    if q.latency is not None:
        p.out.stages.append(A.StageD(f"{name}.latency", size, nt.pos, "delay"))


def check_roles(q):
    for role in q.roles:
        verb = ROLE_ENTRY[role]
        if role == "link":
            if not q.has_serve and q.entry("transfer", False) is None:
                fail(f"queue `{q.name}` plays `link` and has neither a `serve` nor a `transfer` "
                     f"entry: nothing says what a transfer over it costs", q.pos_kw)
            if q.latency is not None and q.entry("transfer", False) is not None:
                fail(f"queue `{q.name}` has a `transfer` entry and a `latency`: a called "
                     f"link's time is its entry's; write the latency in the entry body",
                     q.pos_kw)
        elif q.entry(verb, False) is None:
            fail(f"queue `{q.name}` plays `{role}` and has no `{verb}` entry", q.pos_kw)
    for e in q.entries:
        spec = ENTRY_ROLE.get(e.verb)
        if e.src is not None and e.verb != "decode":
            fail(f"`{e.verb}` is not an entry of any role: `{e.verb}` takes no `from`", e.pos)
        if spec is None:
            fail(f"`{e.verb}` is not an entry of any role", e.pos)
        role, n, shown = spec
        if role not in q.roles:
            fail(f"`{e.verb}` is an entry of a `{role}` queue; declare "
                 f"`queue {q.name} : {role}`", e.pos)
        if len(e.params) != n:
            fail(f"`{q.name}.{e.verb}` takes {n} parameter(s), as the role says (`{shown}`); "
                 f"it declares {len(e.params)}", e.pos)


def parse_entry(p, q):
    vt = p.expect_ident()
    params = []
    if p.accept("LParen"):
        if not p.at("RParen"):
            params.append((p.expect_ident().val, None))
            while p.accept("Comma"):
                pt = p.expect_ident()
                if any(pt.val == n for n, _ in params):
                    fail(f"parameter `{pt.val}` twice", p.peek().pos)
                params.append((pt.val, None))
        p.expect("RParen")
    src = src_pos = None
    if p.accept_word("from"):
        st = p.expect_ident()
        src, src_pos = st.val, st.pos
    if q.entry(vt.val, src is not None) is not None:
        fail(f"queue `{q.name}` has `{vt.val}` twice", vt.pos)
    spec = ENTRY_ROLE.get(vt.val)
    if spec is not None and (src is None or vt.val == "decode") and len(params) != spec[1]:
        # the reference counts the parameters of a role's entry before its body
        fail(f"`{q.name}.{vt.val}` takes {spec[1]} parameter(s), as the role says "
             f"(`{spec[2]}`); it declares {len(params)}", vt.pos)
    e = Entry(q, vt.val, vt.pos, params, src, src_pos)
    saved = p.in_entry
    p.in_entry = q
    q.cur = e
    try:
        e.body = p.block("server")
    finally:
        p.in_entry = saved
        q.cur = None
    q.entries.append(e)
    analyse_entry(p, q, e)


# ---------------------------------------------------------------------------------------
# what an entry may name


def stmt_list(block):
    from serq.lang.walk import all_stmts
    return list(all_stmts(block))


def assigned(block):
    out = []
    for s in stmt_list(block):
        if type(s) in (A.SetS, A.ChooseS) and s.name not in out:
            out.append(s.name)
    return out


def expr_nodes(e, bound=()):
    """(node, bound names, in an index) for every node of an expression."""
    stack = [(e, frozenset(bound), False)]
    while stack:
        x, b, ix = stack.pop()
        if x is None:
            continue
        yield x, b, ix
        t = type(x)
        kids = []
        if t is A.Binary:
            kids = [(x.left, b, ix), (x.right, b, ix)]
        elif t is A.Unary:
            kids = [(x.operand, b, ix)]
        elif t is A.Cond:
            kids = [(x.cond, b, ix), (x.then, b, ix), (x.other, b, ix)]
        elif t is A.Call or t is A.Sample:
            kids = [(a, b, ix) for a in x.args]
        elif t is A.Agg:
            kids = [(x.count, b, ix), (x.body, b | {x.var}, ix)]
        elif t is A.Ref:
            if x.index is not None:
                kids = [(x.index, b, True)]
        stack.extend(reversed(kids))


def entry_exprs(s):
    """Expressions of one statement (not nested blocks), refs included."""
    from serq.lang.walk import stmt_exprs
    t = type(s)
    if t is PullTransferS:
        return [s.work, s.src, s.dst, s.amount]
    if t is A.QueueCallS:
        out = list(s.args)
        if s.index is not None:
            out.append(s.index)
        if s.source is not None:
            out.append(s.source)
        if s.to is not None:
            out.extend([s.to[0], s.to[1]])
        return out
    return stmt_exprs(s)


POOL_VERBS = (A.GrowS, A.LoadS, A.DropS, A.ReleaseS)


def read_exprs(s):
    """The values a statement reads: its expressions, with the pools and stages it names
    in statement position reduced to their index expressions."""
    refs = []
    out = []
    t = type(s)
    if t is A.RunS:
        refs = list(s.stages) + ([s.growing] if s.growing is not None else [])
        out = [s.work]
    elif t is A.HoldS:
        refs = [hp.ref for hp in s.pools]
        out = [hp.units for hp in s.pools] + [hp.reserve for hp in s.pools]
        out += [s.reuse, s.cache]
        if s.lease is not None:
            refs.append(s.lease[0])
            out.append(s.lease[1])
    elif t in POOL_VERBS:
        refs = [s.ref]
        if t in (A.GrowS, A.LoadS):
            out = [s.amount]
    elif t is PullTransferS:
        refs = [s.src, s.dst]
        out = [s.work, s.amount]
    elif t is A.QueueCallS:
        out = list(s.args) + [s.index]
        if s.source is not None:
            refs.append(s.source)
        if s.to is not None:
            refs.append(s.to[0])
            out.append(s.to[1])
    else:
        out = entry_exprs(s)
    for r in refs:
        if r.index is not None:
            out.append(A.Ref("", r.index, "", r.pos))  # an index position
    return [x for x in out if x is not None]


def analyse_entry(p, q, e):
    stmts = stmt_list(e.body)
    e.locals = set(assigned(e.body))
    who = f"`{q.name}.{e.verb}`"
    gateway = "gateway" in q.roles
    # pools an entry takes must be the queue's own
    if not gateway:
        for s in stmts:
            refs = []
            t = type(s)
            if t is A.HoldS:
                refs = [hp.ref for hp in s.pools]
                if s.lease is not None:
                    r = s.lease[0]
                    if r.member is None and r.name not in q.pools and r.name != e.src:
                        fail(f"{who} leases `{r.name}`, which is not a pool of `{q.name}`",
                             e.pos)
            elif t in POOL_VERBS:
                refs = [s.ref]
            elif t is A.RunS and s.growing is not None:
                refs = [s.growing]
            for r in refs:
                if r.member is not None:  # an entry names its pools bare
                    tail = ("" if e.src is None else
                            f" and `{e.src}`, the pool its `from` names")
                    fail(f"{who} holds `{r.name}.{r.member}`, which is not a pool of "
                         f"`{q.name}`: an entry allocates its queue's own pools{tail}", e.pos)
                if r.member is None and r.name not in q.pools and r.name != e.src:
                    tail = ("" if e.src is None else
                            f" and `{e.src}`, the pool its `from` names")
                    fail(f"{who} holds `{r.name}`, which is not a pool of `{q.name}`: an "
                         f"entry allocates its queue's own pools{tail}", e.pos)
    # a hold's header sees parameters, pools and the stage (and the constants, the
    # built-in attributes and the context variables other than `now`, as the reference)
    params = {n for n, _ in e.params}
    lets = set(p.let_values) | {d.name for d in p.out.lets}
    seen = params | lets | (set(CONTEXT) - {"now"}) | {"inf", "self", "cached", "computed"}
    if e.src is not None:
        seen.add(e.src)  # reported as the source pool read as a number
    for s in stmts:
        if type(s) is A.HoldS:
            header = [hp.units for hp in s.pools] + [hp.reserve for hp in s.pools] + [s.reuse]
            for h in header:
                if h is None:
                    continue
                for x, b, _ in expr_nodes(h):
                    t = type(x)
                    if t is A.Ref and (x.member is not None or x.name in q.pools
                                       or x.name == q.name or x.member == ""):
                        continue
                    if t in (A.Name, A.Ref) and (x.name in e.locals or x.name not in seen) \
                            and x.name not in b and not gateway:
                        fail(f"{who}: the header reads `{x.name}`; an entry's header sees its "
                             f"parameters and the queue's pools and stage. Pass `{x.name}` as "
                             f"a parameter", e.pos)
    for s in stmts:
        refs = list(s.stages) if type(s) is A.RunS else []
        for ex in read_exprs(s):
            refs.extend(x for x, _, _ in expr_nodes(ex) if type(x) is A.Ref)
        if any(r.name == q.name and r.member is None and r.index is not None for r in refs):
            e.own_indexed = True
    params = {n for n, _ in e.params}
    lets = set(p.let_values) | {d.name for d in p.out.lets}
    for s in stmts:
        for ex in read_exprs(s):
            for x, b, ix in expr_nodes(ex):
                t = type(x)
                if t is A.Dotted:
                    if not gateway:
                        fail(f"{who} reads `{x.queue}.{x.member}`, another queue's: an entry "
                             f"sees its own; the gateway reads across queues and passes what "
                             f"an entry needs", e.pos)
                    continue
                if t is A.Name:
                    n = x.name
                    if n == "self":
                        e.uses_self = True
                        continue
                    if n in b:
                        continue
                    if e.src is not None and n == e.src:
                        if not ix:
                            fail(f"{who} reads `{n}` as a number: `{n}` is the source pool, "
                                 f"and only in an index the source member (`L[{n}]`)", e.pos)
                        continue
                elif t is A.Ref:
                    n = x.name
                    if x.member == "":
                        continue  # an index position (read_exprs)
                    if x.member is None and (n in q.pools or n == q.name or n in b):
                        continue
                    if e.src is not None and n == e.src and x.member is None:
                        continue
                    if not gateway and (x.member is not None or n in p.queues):
                        shown = n if x.member is None else f"{n}.{x.member}"
                        fail(f"{who} reads `{shown}`, which is not a pool or stage of "
                             f"`{q.name}`: a queue sees its own; the deployment reads across "
                             f"queues", e.pos)
                else:
                    continue
                if gateway:
                    continue
                if (n in params or n in e.locals or n in lets or n in CONTEXT
                        or n in ("cached", "computed", "inf")):
                    continue
                if n not in e.pending:
                    e.pending.append(n)


def check_reads(parser):
    """Entry reads of names that are neither the entry's nor the program's constants: only
    the workload's `hidden` attributes are allowed (checked once, at assembly)."""
    if getattr(parser, "_queue_reads_checked", False):
        return
    parser._queue_reads_checked = True
    w = parser.out.workload
    hidden = {n for n, _ in (w.hidden if w else [])}
    for q in parser.queues.values():
        for e in q.entries:
            for n in e.pending:
                if n not in hidden:
                    fail(f"`{q.name}.{e.verb}` reads `{n}`, a session attribute set outside "
                         f"the queue: an entry sees its parameters, the queue's pools, the "
                         f"context and the request's `hidden` attributes; pass `{n}` as a "
                         f"parameter or `mark` a moment for the caller to read", e.pos)


# ---------------------------------------------------------------------------------------
# pull relation


def parse_pull(p):
    dt = p.next()
    p.next()  # pull
    st = p.expect_ident()
    shown = f"`{dt.val} pull {st.val}`"
    d = p.queues.get(dt.val)
    if d is None:
        fail(f"{shown}: no queue `{dt.val}` is declared above", dt.pos)
    if d.nic is None:
        fail(f"{shown}: queue `{d.name}` has no `nic`; a read runs over the source's NIC and "
             f"the reader's", dt.pos)
    s = p.queues.get(st.val)
    if s is None:
        fail(f"{shown}: no queue `{st.val}` is declared above", st.pos)
    if s is d:
        fail(f"{shown}: a queue reads from another", st.pos)
    if s.nic is None:
        fail(f"{shown}: queue `{s.name}` has no `nic`; a read runs over the source's NIC and "
             f"the reader's", st.pos)
    if d.pull is not None:
        fail(f"`{d.name}` pulls from `{d.pull[0]}` already: one relation per reader", dt.pos)
    latency = None
    lt = None
    if p.accept_word("latency"):
        lt = p.peek()
        latency = p.expr()
        if fold_now(p, latency) is None:
            fail("`latency` is a number or a constant over `let`s: the reader's fixed wait "
                 "before each read", lt.pos)
    k = p.peek()
    if not k.is_word("share"):
        fail(f"{shown} names how concurrent reads divide the NICs: `share maxmin` or "
             f"`share bottleneck`, found {describe(k)}", k.pos)
    p.next()
    k = p.peek()
    if k.is_word("maxmin"):
        v = "MaxMin"
    elif k.is_word("bottleneck"):
        v = "Bottleneck"
    else:
        fail(f"`share` takes `maxmin` or `bottleneck`, found {describe(k)}", k.pos)
    p.next()
    p.expect("Semi")
    if p.out.share is not None and p.out.share[0] != v:
        fail("the program divides shared stages by one policy: every relation and `share` "
             "names the same", dt.pos)
    if p.out.share is None:
        p.out.share = (v, dt.pos, True)
    d.pull = (s.name, latency)
    if latency is not None:
        p.out.lets.append(A.LetD(f"{d.name}.pull.time", latency, lt.pos, generated=True))
        p.out.stages.append(A.StageD(f"{d.name}.nic.latency", d.size, dt.pos, "delay"))


# ---------------------------------------------------------------------------------------
# calls


def parse_call(p, side, out):
    qt = p.next()
    index = None
    if p.at("LBracket"):
        p.next()
        index = p.expr()
        p.expect("RBracket")
    if not p.at("Dot"):
        fail(f"`{qt.val}[…]` as a statement: a queue's entry is `{qt.val}[i].verb (…)`",
             qt.pos)
    p.next()
    vt = p.expect_ident()
    p.expect("LParen")
    args = []
    if not p.at("RParen"):
        args.append(p.expr())
        while p.accept("Comma"):
            args.append(p.expr())
    p.expect("RParen")
    source = None
    if p.accept_word("from"):
        source = p.ref()
    to = None
    if p.accept_word("to"):
        r = p.ref()
        p.expect("LParen")
        m = p.expr()
        p.expect("RParen")
        to = (r, m)
    p.expect("Semi")
    out.append(A.QueueCallS(qt.val, index, vt.val, args, source, to, qt.pos, vt.pos))


def expand_calls(parser, block):
    check_reads(parser)
    check_dotted(parser, block)  # the block's own reads, before its calls expand
    block[:] = expand_block(parser, block, ())
    check_dotted(parser, block)
    return block


def expand_block(p, block, stack):
    out = []
    for s in block:
        t = type(s)
        if t is A.QueueCallS:
            out.extend(expand_call(p, s, stack))
            continue
        if t is A.HoldS or t is A.LoopS:
            s.body = expand_block(p, s.body, stack)
        elif t is A.BranchS:
            s.then = expand_block(p, s.then, stack)
            s.other = expand_block(p, s.other, stack)
        out.append(s)
    return out


def leased_pool(q):
    from serq.lang.walk import all_stmts
    for e in q.entries:
        for s in all_stmts(e.body):
            if type(s) is A.HoldS and s.lease is not None:
                r = s.lease[0]
                if r.member is None and r.name in q.pools:
                    return r.name
    return None


def expand_call(p, c, stack):
    q = p.queues.get(c.queue)
    if q is None:
        fail(f"`{c.queue}.{c.verb}`: no queue `{c.queue}` is declared", c.pos)
    who = f"`{q.name}.{c.verb}`"
    if q.size is not None and c.index is None:
        fail(f"{who}: `{q.name}` is a family of {q.size}; index it", c.pos)
    if q.size is None and c.index is not None:
        fail(f"`{q.name}[…].{c.verb}`: `{q.name}` is one queue, not a family", c.pos)
    link_call = c.verb == "transfer"
    if link_call:
        e = q.entry("transfer", False)
        if e is None:  # any queue: the entry is looked up first
            fail(f"{who}: queue `{q.name}` has no such entry; its `serve` is its cost: "
                 f"`transfer on {q.name}[…] (n) from S to P (m);`", c.pos)
        if c.source is None or c.to is None:
            fail(f"`{q.name}.transfer (n) from S to P (m)`: a transfer names the pool it takes "
                 f"from and the pool it fills", c.pos)
    else:
        e = q.entry(c.verb, c.source is not None)
        if e is None:
            other = q.entry(c.verb, c.source is None)
            if other is not None and c.source is not None:
                fail(f"{who}: queue `{q.name}` has no such entry: its `{c.verb}` takes no "
                     f"`from`", c.pos)
            fail(f"{who}: queue `{q.name}` has no such entry", c.pos)
        if c.to is not None:
            fail(f"`to` belongs to a link's `transfer`, not to `{c.verb}`", c.pos)
    key = (q.name, e.verb, e.src is not None)
    if key in stack:
        fail(f"{who}: the entries call each other in a cycle", c.pos)
    if len(c.args) != len(e.params):
        fail(f"{who} takes {len(e.params)} argument(s), got {len(c.args)}", c.pos)
    from serq.lang.parser import draws
    for (pname, _), a in zip(e.params, c.args):
        if draws(a):
            fail(f"{who}: the argument for `{pname}` draws a sample; a parameter is "
                 f"substituted, so a name used twice would draw twice", c.pos)
    if e.own_indexed:
        fail(f"`{q.name}[…]` inside queue `{q.name}`: the own stage is the member's; write "
             f"`{q.name}`", c.pos)
    if e.uses_self and q.size is None:
        fail(f"`self` inside queue `{q.name}`, which is not a family", c.pos)
    src_pool = src_index = src_queue = None
    if c.source is not None:
        sr = c.source
        sq = p.queues.get(sr.name) if sr.member is None else None
        if sq is not None:
            if sq.size is not None and sr.index is None:
                fail(f"`from {sq.name}`: `{sq.name}` is a family of {sq.size}; index it",
                     c.pos)
            pool = leased_pool(sq)
            if pool is None:
                fail(f"`from {sq.name}`: no entry of `{sq.name}` leases a pool, so it has "
                     f"nothing to take", c.pos)
            src_pool = A.Ref(sq.name, sr.index, pool, sr.pos, sr.bracket_pos)
            src_queue = sq
        else:
            src_pool = sr
        src_index = sr.index
    gateway = "gateway" in q.roles
    env = Env(q, e, c, src_pool, src_index, src_queue, gateway)
    body = [sub_stmt(s, env) for s in e.body]
    body = [x for s in body for x in (s if isinstance(s, list) else [s])]
    if link_call:
        body.append(A.LoadS(c.to[0], c.to[1], c.pos))
        body.append(A.ReleaseS(c.source, c.pos))
    return expand_block(p, body, stack + (key,))


class Env:
    def __init__(self, q, e, c, src_pool, src_index, src_queue, gateway):
        self.q = q
        self.e = e
        self.c = c
        self.params = {n: a for (n, _), a in zip(e.params, c.args)}
        self.src_pool = src_pool
        self.src_index = src_index
        self.src_queue = src_queue
        renamed = e.marks if gateway else e.locals
        self.local = {n: f"{q.name}.{n}" for n in renamed}

    def name(self, n):
        return self.local.get(n, n)


def sub_expr(x, env, bound=frozenset(), in_index=False):
    if x is None:
        return None
    t = type(x)
    if t is A.Num or t is A.Fixed or t is A.Dotted:
        return x
    if t is A.Name:
        n = x.name
        if n in bound:
            return x
        if n in env.params:
            return env.params[n]
        if n == "self":
            return env.c.index
        if env.e.src is not None and n == env.e.src:
            return env.src_index if env.src_index is not None else x
        if n in env.local:
            return A.Name(env.local[n], x.pos)
        return x
    if t is A.Ref:
        return sub_ref(x, env, bound)
    if t is A.Binary:
        return A.Binary(x.op, sub_expr(x.left, env, bound), sub_expr(x.right, env, bound),
                        x.pos)
    if t is A.Unary:
        return A.Unary(x.op, sub_expr(x.operand, env, bound), x.pos)
    if t is A.Cond:
        return A.Cond(sub_expr(x.cond, env, bound), sub_expr(x.then, env, bound),
                      sub_expr(x.other, env, bound), x.pos)
    if t is A.Call:
        return A.Call(x.name, [sub_expr(a, env, bound) for a in x.args], x.pos)
    if t is A.Sample:
        return A.Sample(x.dist, [sub_expr(a, env, bound) for a in x.args], x.pos)
    if t is A.Agg:
        return A.Agg(x.kind, x.var, x.var_pos, sub_expr(x.count, env, bound),
                     sub_expr(x.body, env, bound | {x.var}), x.pos)
    return x


def sub_ref(r, env, bound=frozenset()):
    if r is None:
        return None
    q = env.q
    if r.member is None and r.index is None and r.name not in bound:
        if r.name in env.params:
            a = env.params[r.name]
            return a
        if env.e.src is not None and r.name == env.e.src:
            return env.src_pool
        if r.name in env.local:
            return A.Ref(env.local[r.name], None, None, r.pos)
    if r.member is None and r.name not in bound:
        if r.name in q.pools:
            return A.Ref(q.name, env.c.index, r.name, r.pos, r.bracket_pos)
        if r.name == q.name and r.index is None:
            return A.Ref(q.name, env.c.index, None, r.pos, r.bracket_pos)
    ix = sub_expr(r.index, env, bound) if r.index is not None else None
    return A.Ref(r.name, ix, r.member, r.pos, r.bracket_pos)


def sub_block(block, env):
    out = []
    for s in block:
        x = sub_stmt(s, env)
        if isinstance(x, list):
            out.extend(x)
        else:
            out.append(x)
    return out


def sub_stmt(s, env):
    t = type(s)
    e = lambda x: sub_expr(x, env)  # noqa: E731
    if t is A.SetS:
        return A.SetS(env.name(s.name), e(s.expr), s.pos)
    if t is A.ObserveS:
        return A.ObserveS(s.name, e(s.expr), s.pos)
    if t is A.HoldS:
        pools = [A.HoldPoolS(sub_ref(hp.ref, env), e(hp.units), e(hp.reserve))
                 for hp in s.pools]
        lease = None if s.lease is None else (sub_ref(s.lease[0], env), e(s.lease[1]))
        h = A.HoldS(pools, e(s.reuse), sub_block(s.body, env), e(s.cache), lease, s.pos)
        h.bindings = [(env.name(n), e(x), pos) for n, x, pos in s.bindings]
        h.bound = s.bound
        return h
    if t is A.GrowS:
        return A.GrowS(sub_ref(s.ref, env), e(s.amount), s.pos)
    if t is A.LoadS:
        return A.LoadS(sub_ref(s.ref, env), e(s.amount), s.pos)
    if t is A.DropS:
        return A.DropS(sub_ref(s.ref, env), s.pos)
    if t is A.ReleaseS:
        return A.ReleaseS(sub_ref(s.ref, env), s.pos)
    if t is A.RunS:
        return A.RunS([sub_ref(r, env) for r in s.stages], s.mode, e(s.work),
                      sub_ref(s.growing, env), s.pos, s.written_mode)
    if t is A.BranchS:
        return A.BranchS(e(s.guard), sub_block(s.then, env), sub_block(s.other, env), s.pos,
                         s.draw)
    if t is A.LoopS:
        return A.LoopS(sub_block(s.body, env), s.pos)
    if t is A.ChooseS:
        return A.ChooseS(env.name(s.name), e(s.count), [e(k) for k in s.keys], s.pos)
    if t is A.QueueCallS:
        to = None if s.to is None else (sub_ref(s.to[0], env), e(s.to[1]))
        return A.QueueCallS(s.queue, e(s.index), s.verb, [e(a) for a in s.args],
                            sub_ref(s.source, env), to, s.pos, s.verb_pos)
    if t is PullTransferS:
        return pull_transfer(s, env)
    return s


def pull_transfer(s, env):
    d = env.q
    i = env.c.index
    src = env.src_queue
    out = []
    if d.pull is not None and d.pull[1] is not None:
        out.append(A.RunS([A.Ref(f"{d.name}.nic.latency", i, None, s.pos)], "Plain",
                          A.Name(f"{d.name}.pull.time", s.pos), None, s.pos, "Plain"))
    if src is None:
        fail(f"`{d.name}.{env.e.verb}`: the source of a read is a queue with a `nic`", env.c.pos)
    stages = [A.Ref(f"{src.name}.nic", env.src_index, None, s.pos),
              A.Ref(f"{d.name}.nic", i, None, s.pos)]
    out.append(A.RunS(stages, "Plain", sub_expr(s.work, env), None, s.pos, "Plain"))
    out.append(A.LoadS(sub_ref(s.dst, env), sub_expr(s.amount, env), s.pos))
    out.append(A.ReleaseS(sub_ref(s.src, env), s.pos))
    return out


# ---------------------------------------------------------------------------------------
# gateways and `Q.x` reads


def gateway_of(parser, req):
    q = parser.queues.get(req.gateway)
    if q is None:
        fail(f"`request {req.gateway}`: no queue `{req.gateway}` is declared", req.name_pos)
    if "gateway" not in q.roles:
        fail(f"`request {req.gateway}`: queue `{req.gateway}` does not play `gateway`",
             req.name_pos)
    return q


def route_of(parser, req):
    q = gateway_of(parser, req)
    e = q.entry("route", False)
    c = A.QueueCallS(q.name, None, "route", [], None, None, req.pos, req.name_pos)
    env = Env(q, e, c, None, None, None, True)
    body = sub_block(e.body, env)
    check_dotted(parser, body)  # the route's own reads, before its calls expand
    body = expand_block(parser, body, ((q.name, "route", False),))
    check_dotted(parser, body)
    return body


def check_dotted(parser, block):
    from serq.lang.walk import all_stmts
    for s in all_stmts(block):
        for ex in entry_exprs(s):
            for x, _, _ in expr_nodes(ex):
                if type(x) is A.Ref and x.member and x.index is not None:
                    q = parser.queues.get(x.name)
                    if q is not None and x.member not in q.pools:
                        fail(f"`{x.name}[…].{x.member}` reads the request's attribute, which "
                             f"is no member's: write `{x.name}.{x.member}`", x.pos)
                if type(x) is not A.Dotted:
                    continue
                q = parser.queues.get(x.queue)
                if q is None and not parser.queues:
                    continue  # without queues, an unknown name at link time
                if q is not None and x.member in q.pools:
                    continue
                known = set()
                for e in (q.entries if q is not None else ()):
                    known.update(e.marks if "gateway" in q.roles else e.locals)
                if x.member not in known:
                    fail(f"`{x.queue}.{x.member}`: no entry of `{x.queue}` marks or sets "
                         f"`{x.member}`, and `{x.queue}` has no pool `{x.member}`", x.pos)


def dotted_unknown(e):
    fail(f"unknown name `{e.queue}.{e.member}`", e.pos, link=True,
         extra=("help: declare a `let` constant or assign a session attribute before using "
                "it",))
