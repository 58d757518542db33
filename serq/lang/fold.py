"""Constant folding of parse-tree expressions: `let`s, array sizes, caps and the other
positions the reference evaluates at compile time, with Rust's f64 arithmetic."""
from __future__ import annotations

import math

from serq.ir import arith
from serq.lang import ast as A
from serq.lang.words import CONST_FUNCTIONS


class FoldError(Exception):
    """Not a constant: the message and position the linker reports (if it reports it)."""

    def __init__(self, message, pos=None, extra=()):
        super().__init__(message)
        self.message = message
        self.pos = pos
        self.extra = extra


# the arithmetic itself is serq.ir.arith's (one implementation, the interpreter's too)
UNARY = arith.UNARY
BINARY = arith.BINARY
FUNS1 = {name.lower(): f for name, f in arith.FUNCTIONS1.items()}
FUNS2 = {name.lower(): f for name, f in arith.FUNCTIONS2.items()}


def fold_const(e, lookup, env=None):
    """The value of a constant expression; ``lookup(name, pos)`` gives a name's value or
    raises FoldError; ``env`` maps aggregate indices to their values."""
    t = type(e)
    if t is A.Num:
        return e.value
    if t is A.Name or (t is A.Ref and e.index is None and e.member is None):
        if env and e.name in env:
            return env[e.name]
        return lookup(e.name, e.pos)
    if t is A.Binary:
        a = fold_const(e.left, lookup, env)
        b = fold_const(e.right, lookup, env)
        return BINARY[e.op](a, b)
    if t is A.Unary:
        return UNARY[e.op](fold_const(e.operand, lookup, env))
    if t is A.Cond:
        c = fold_const(e.cond, lookup, env)
        return fold_const(e.then if c != 0.0 else e.other, lookup, env)
    if t is A.Sample:
        raise FoldError("a constant cannot sample", e.pos)
    if t is A.Call:
        if e.name != "blocksize":  # the arguments first, as the reference
            args = [fold_const(a, lookup, env) for a in e.args]
        if e.name not in CONST_FUNCTIONS:
            if e.name == "blocksize":
                raise FoldError("`blocksize` is not a constant: in a constant position "
                                "(a `let`, `cap`, `block`, an array size, `horizon`, a "
                                "rate) name the value with a `let` both use", e.pos)
            raise FoldError(f"`{e.name}` with {len(e.args)} argument(s) is not a constant "
                            f"function", e.pos)
        if e.name in FUNS1 and len(args) == 1:
            return float(FUNS1[e.name](args[0]))
        if e.name in FUNS2 and len(args) == 2:
            return FUNS2[e.name](args[0], args[1])
        raise FoldError(f"`{e.name}` with {len(e.args)} argument(s) is not a constant "
                        f"function", e.pos)
    if t is A.Agg:
        n = agg_count(e, lookup, env)
        check = getattr(lookup, "agg_check", None)
        if check is not None:
            check(e)
        total = None
        for k in range(n):
            env2 = dict(env or {})
            env2[e.var] = float(k)
            v = fold_const(e.body, lookup, env2)
            if total is None:
                total = v
            elif e.kind == "sum":
                total = arith.add(total, v)
            elif e.kind == "max":
                total = arith.fmax(total, v)
            else:
                total = arith.fmin(total, v)
        return total
    if t is A.Fixed:
        from serq.ir import types as T
        if type(e.expr) is T.Num:
            return e.expr.value
        raise FoldError("not a constant", e.pos)
    name = getattr(e, "name", None) or getattr(e, "queue", "?")
    raise FoldError(f"`{name}` is not a constant", e.pos,
                    ("help: declare this constant or use the name of an existing constant",))


def agg_count(e, lookup, env=None):
    v = fold_const(e.count, lookup, env)
    if not (math.isfinite(v) and v >= 1 and v == math.floor(v)):
        from serq.lang.lexer import show_f64
        raise FoldError(f"`{e.kind} {e.var} in`'s count must be a positive integer, found "
                        f"{show_f64(v)}", e.pos)
    return int(v)
