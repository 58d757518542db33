"""Folding of linked IR expressions that read only numbers (constant pool/stage indices)."""
from __future__ import annotations

from serq.ir import arith
from serq.ir import types as T

_UN = arith.UNARY
_BIN = arith.BINARY
_F1 = arith.FUNCTIONS1
_F2 = arith.FUNCTIONS2


def fold_ir(e):
    """The value of an expression of numbers, operators and arithmetic functions, or None."""
    t = type(e)
    if t is T.Num:
        return e.value
    if t is T.Binary:
        a = fold_ir(e.left)
        if a is None:
            return None
        b = fold_ir(e.right)
        return None if b is None else _BIN[e.op](a, b)
    if t is T.Unary:
        a = fold_ir(e.operand)
        return None if a is None else _UN[e.op](a)
    if t is T.Cond:
        c = fold_ir(e.cond)
        if c is None:
            return None
        return fold_ir(e.then if c != 0.0 else e.other)
    if t is T.Call:
        if any(type(a) is not T.ArgExpr for a in e.args):
            return None
        vals = [fold_ir(a.expr) for a in e.args]
        if any(v is None for v in vals):
            return None
        if e.fun in _F1 and len(vals) == 1:
            return float(_F1[e.fun](vals[0]))
        if e.fun in _F2 and len(vals) == 2:
            return _F2[e.fun](*vals)
        return None
    return None


def draws_ir(e) -> bool:
    t = type(e)
    if t is T.Sample:
        return True
    if t is T.Binary:
        return draws_ir(e.left) or draws_ir(e.right)
    if t is T.Unary:
        return draws_ir(e.operand)
    if t is T.Cond:
        return draws_ir(e.cond) or draws_ir(e.then) or draws_ir(e.other)
    if t is T.Call:
        for a in e.args:
            if type(a) is T.ArgExpr:
                if draws_ir(a.expr):
                    return True
            elif a.ref.index is not None and draws_ir(a.ref.index):
                return True
    return False
