"""Exact evaluation of an IR expression (interpreter.md §13), over ``fractions.Fraction``.

In ``Exec`` (formal.md §1.2) values are natural numbers; here they are rationals, which are
exact for every operation the fragment allows. An operation whose IEEE result is not a
rational (division by zero, a fractional power) is refused, never approximated.
"""
from __future__ import annotations

from fractions import Fraction

from serq.ir import types as T
from serq.ref.fragment import refuse

ONE, ZERO = Fraction(1), Fraction(0)


def num(x) -> Fraction:
    """A float of the IR as the exact rational it denotes."""
    return Fraction(x)


def truth(b: bool) -> Fraction:
    return ONE if b else ZERO


class Scope:
    """What an evaluation can see: the machine, the session whose attributes are read (or
    ``None``), and the context variables supplied at this moment; any other reads 0 (§13)."""

    __slots__ = ("m", "sess", "ctx", "budget_left")

    def __init__(self, machine, sess=None, ctx=None, budget_left=None):
        self.m = machine
        self.sess = sess
        self.ctx = ctx or {}
        self.budget_left = budget_left


def ev(e, sc: Scope) -> Fraction:
    """The value of ``e`` in ``sc``."""
    t = type(e)
    if t is T.Num:
        return num(e.value)
    if t is T.Attr:
        return sc.sess.attrs[e.slot] if sc.sess is not None else refuse("an attribute read "
                                                                        "with no session")
    if t is T.Ctx:
        if e.var == "Now":
            return sc.m.now
        return sc.ctx.get(e.var, ZERO)
    if t is T.Unary:
        v = ev(e.operand, sc)
        return -v if e.op == "Neg" else truth(v == 0)
    if t is T.Binary:
        return _binary(e, sc)
    if t is T.Cond:
        return ev(e.then, sc) if ev(e.cond, sc) != 0 else ev(e.other, sc)
    if t is T.Call:
        return _call(e, sc)
    refuse(f"the expression {type(e).__name__}")


def _binary(e, sc):
    op = e.op
    if op == "And":
        return truth(ev(e.left, sc) != 0 and ev(e.right, sc) != 0)
    if op == "Or":
        return truth(ev(e.left, sc) != 0 or ev(e.right, sc) != 0)
    a, b = ev(e.left, sc), ev(e.right, sc)
    if op == "Add":
        return a + b
    if op == "Sub":
        return a - b
    if op == "Mul":
        return a * b
    if op == "Div":
        return a / b if b != 0 else refuse("a division by zero (an IEEE infinity)")
    if op == "Pow":
        return power(a, b)
    return truth({"Lt": a < b, "Le": a <= b, "Gt": a > b, "Ge": a >= b, "Eq": a == b,
                  "Ne": a != b}[op])


def power(a, b):
    if b.denominator != 1 or (a == 0 and b < 0):
        refuse(f"the power {a}^{b} (not a rational)")
    return a ** int(b)


UNARY = {"Abs": abs, "Floor": lambda x: Fraction(x.__floor__()),
         "Ceil": lambda x: Fraction(x.__ceil__())}


def _call(e, sc):
    if e.fun in ("Min", "Max", "Abs", "Floor", "Ceil", "Pow"):
        xs = [ev(a.expr, sc) for a in e.args]
        if e.fun in UNARY:
            return UNARY[e.fun](xs[0])
        return {"Min": min, "Max": max}[e.fun](xs) if e.fun != "Pow" else power(*xs)
    return sc.m.read(e.fun, e.args[0].ref.base, sc)
