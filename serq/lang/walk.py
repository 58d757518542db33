"""Generic walks over parse-tree expressions and statements."""
from __future__ import annotations

from serq.lang import ast as A


def children(e):
    t = type(e)
    if t is A.Binary:
        return (e.left, e.right)
    if t is A.Unary:
        return (e.operand,)
    if t is A.Cond:
        return (e.cond, e.then, e.other)
    if t is A.Call or t is A.Sample:
        return tuple(e.args)
    if t is A.Agg:
        return (e.count, e.body)
    if t is A.Ref:
        return () if e.index is None else (e.index,)
    return ()


def any_node(e, pred) -> bool:
    return any(pred(x) for x in nodes(e))


def nodes(e):
    """Every node of expression ``e``, in pre-order; iterative, so a deep expression costs
    neither recursion nor a generator per level."""
    stack = [e]
    while stack:
        x = stack.pop()
        yield x
        kids = children(x)
        if kids:
            stack.extend(reversed(kids))


def reads_name(e, name) -> bool:
    """Whether an expression reads a value by that bare name."""
    return any_node(e, lambda x: (type(x) is A.Name and x.name == name)
                    or (type(x) is A.Ref and x.name == name and x.index is None
                        and x.member is None))


def stmt_exprs(s):
    """The expressions a statement evaluates (not those of nested blocks)."""
    t = type(s)
    if t is A.SetS or t is A.ObserveS:
        return [s.expr]
    if t is A.HoldS:
        out = []
        for p in s.pools:
            out.append(p.ref)
            out.append(p.units)
            if p.reserve is not None:
                out.append(p.reserve)
        if s.reuse is not None:
            out.append(s.reuse)
        if s.cache is not None:
            out.append(s.cache)
        if s.lease is not None:
            out.extend([s.lease[0], s.lease[1]])
        return out
    if t is A.GrowS or t is A.LoadS:
        return [s.ref, s.amount]
    if t is A.DropS or t is A.ReleaseS:
        return [s.ref]
    if t is A.RunS:
        out = list(s.stages) + [s.work]
        if s.growing is not None:
            out.append(s.growing)
        return out
    if t is A.BranchS:
        return [s.guard]
    if t is A.ChooseS:
        return [s.count] + list(s.keys)
    return []


def sub_blocks(s):
    t = type(s)
    if t is A.HoldS or t is A.LoopS:
        return [s.body]
    if t is A.BranchS:
        return [s.then, s.other]
    return []


def all_stmts(block):
    """Every statement of ``block`` and of its nested blocks, in pre-order. Iterative: a
    chain of nested generators would pass each statement up through one generator per
    level (quadratic in the depth) and recurse once per level."""
    stack = [iter(block)]
    while stack:
        for s in stack[-1]:
            yield s
            subs = sub_blocks(s)
            if subs:
                stack.extend(iter(b) for b in reversed(subs))
                break
        else:
            stack.pop()
