"""`hold … at admission (x = e, …)`: bindings substituted into the hold's header, and
hoisted as `set`s at the top of the body when the body reads them (language.md 4.7)."""
from __future__ import annotations

from serq.lang import ast as A
from serq.lang.diagnostics import fail
from serq.lang.walk import any_node, reads_name, stmt_exprs, sub_blocks


def subst(e, env):
    """A copy of ``e`` with every bare name of ``env`` replaced by its expression."""
    if not env or e is None:
        return e
    t = type(e)
    if t is A.Name:
        return env.get(e.name, e)
    if t is A.Ref:
        if e.index is None and e.member is None and e.name in env:
            return env[e.name]
        if e.index is not None:
            return A.Ref(e.name, subst(e.index, env), e.member, e.pos, e.bracket_pos)
        return e
    if t is A.Binary:
        return A.Binary(e.op, subst(e.left, env), subst(e.right, env), e.pos)
    if t is A.Unary:
        return A.Unary(e.op, subst(e.operand, env), e.pos)
    if t is A.Cond:
        return A.Cond(subst(e.cond, env), subst(e.then, env), subst(e.other, env), e.pos)
    if t is A.Call:
        return A.Call(e.name, [subst(a, env) for a in e.args], e.pos)
    if t is A.Sample:
        return A.Sample(e.dist, [subst(a, env) for a in e.args], e.pos)
    if t is A.Agg:
        inner = {k: v for k, v in env.items() if k != e.var}
        return A.Agg(e.kind, e.var, e.var_pos, subst(e.count, env), subst(e.body, inner),
                     e.pos)
    return e


def body_reads(block, name) -> bool:
    """Whether a hold's body reads a binding: a pool or stage named in statement position
    (`run s (…)`) is no read of it, only its index is."""
    for s in block:
        for x in stmt_exprs(s):
            if type(x) is A.Ref:
                x = x.index
            if x is not None and reads_name(x, name):
                return True
        if type(s) is A.HoldS and name in s.bound:
            continue
        for b in sub_blocks(s):
            if body_reads(b, name):
                return True
    return False


def check_order(bindings):
    """A binding sees the ones before it: checked when the list is read, before `)`."""
    names = [b[0] for b in bindings]
    for k, (name, e, pos) in enumerate(bindings):
        for later in names[k + 1:]:
            if reads_name(e, later):
                fail(f"`{name}` reads `{later}`, which is bound after it: a binding sees the "
                     f"ones before it", pos)


def apply_bindings(parser, h: A.HoldS, bindings):
    names = [b[0] for b in bindings]
    env = {}
    for name, e, pos in bindings:
        env[name] = subst(e, env)  # a binding reading its own name reads the outer one
    for p in h.pools:
        p.units = subst(p.units, env)
        p.reserve = subst(p.reserve, env)
        if p.ref.index is not None:
            p.ref = subst(p.ref, env)
    h.reuse = subst(h.reuse, env)
    h.cache = subst(h.cache, env)
    if h.lease is not None:
        h.lease = (h.lease[0], subst(h.lease[1], env))
    hoisted = []
    for name, _, pos in bindings:
        if body_reads(h.body, name):
            hoisted.append(A.SetS(name, env[name], pos))
            parser.out.hoisted.append((name, env[name], pos, h))
    h.body[0:0] = hoisted
    h.bindings = [(s.name, s.expr, s.pos) for s in hoisted]
    h.bound = tuple(names)
