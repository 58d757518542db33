"""The IR's f64 arithmetic, bit for bit as the reference (Rust on x86-64) computes it.

The one implementation of every operator and arithmetic function: the constant folders
(``serq.lang.fold``, ``serq.ir.fold``) call these functions, and the interpreter's expression
compiler (``serq.sim.exprs``) calls them too, using Python's own ``+ - *`` only where the
notes below say they give the same answer (spec interpreter.md §13, language.md §4.3).

Where Python's float operations differ from the reference:

* Python raises on division by zero, overflow and domain errors; Rust returns infinities and
  NaN.
* The sign of a NaN. x86 makes a *negative* NaN for an invalid operation (``0/0``,
  ``inf - inf``, ``sqrt(-1)``, a negative base to a fractional power); the reference's ``ln``
  of a negative number is a *positive* NaN; ``pow`` of a NaN base to an odd integer clears
  the NaN's sign. The sign shows wherever values are ordered by IEEE ``totalOrder`` (p99,
  ``serve by`` and queue keys) or written as bits.
* Of two NaN operands, Rust's ``+ - * /``, ``min`` and ``max`` give the *first*. CPython's
  ``+`` and ``*`` give the first or the second depending on whether the bytecode has been
  specialised (measured on 3.11), so ``add`` and ``mul`` decide it themselves.
* ``f64::min``/``max`` ignore a NaN operand; of two equal operands (``-0``, ``+0``) they give
  the second.

Every answer here is checked against the reference's bits in tests/ir/test_arith.py (golden
data: tests/golden/arith, from pyserq 0.1.2).

Compiled by Cython (issue 10), the ``float`` annotations make the arguments and results C
doubles (an int argument is converted first; the IR's values are all f64). The rules above
still decide every NaN's sign: a C compiler may swap the operands of ``+`` and ``*`` as
CPython's specialised bytecode does, and ``add``/``mul`` test for a NaN first operand
themselves; ``-`` and ``/`` are never swapped.
"""
from __future__ import annotations

import math

INF = math.inf
NAN = math.nan
#: x86's default NaN (sign bit set): what an invalid operation makes
NEG_NAN = -math.nan

# -- the operators ---------------------------------------------------------------------


def add(a: float, b: float) -> float:
    return a if a != a else a + b  # of two NaNs the first


def sub(a: float, b: float) -> float:
    return a - b  # CPython keeps the first of two NaNs here on every path


def mul(a: float, b: float) -> float:
    return a if a != a else a * b


def div(a: float, b: float) -> float:
    try:
        return a / b
    except ZeroDivisionError:
        if a != a:
            return a
        if a == 0.0:
            return NEG_NAN
        neg = (a < 0) != (math.copysign(1.0, b) < 0)
        return -INF if neg else INF


def neg(a: float) -> float:
    return -a  # flips the sign bit, of a NaN too


def not_(a: float) -> float:
    return 1.0 if a == 0.0 else 0.0


def truthy(x: float) -> bool:
    """A value as a condition: anything but ±0 (NaN is true)."""
    return x != 0.0


def lt(a: float, b: float) -> float: return 1.0 if a < b else 0.0
def le(a: float, b: float) -> float: return 1.0 if a <= b else 0.0
def gt(a: float, b: float) -> float: return 1.0 if a > b else 0.0
def ge(a: float, b: float) -> float: return 1.0 if a >= b else 0.0
def eq(a: float, b: float) -> float: return 1.0 if a == b else 0.0
def ne(a: float, b: float) -> float: return 1.0 if a != b else 0.0
def and_(a: float, b: float) -> float: return 1.0 if (a != 0.0 and b != 0.0) else 0.0
def or_(a: float, b: float) -> float: return 1.0 if (a != 0.0 or b != 0.0) else 0.0


# -- the functions ---------------------------------------------------------------------


def powf(x: float, y: float) -> float:
    if x != x:
        # a NaN base: 1 for a zero exponent, the NaN without its sign bit for an odd integer
        # exponent, the NaN itself otherwise (probed on pyserq 0.1.2)
        if y == 0:
            return 1.0
        if _odd_integer(y):
            return abs(x)
        return x
    try:
        return math.pow(x, y)
    except OverflowError:
        # |result| too large: negative only for a negative base and an odd integer exponent
        return -INF if x < 0 and _odd_integer(y) else INF
    except ValueError:
        if x == 0:  # 0 to a negative power: ±inf, the zero's sign kept for odd integers
            return -INF if _odd_integer(y) and math.copysign(1.0, x) < 0 else INF
        return NEG_NAN  # a negative base to a fractional power


def _odd_integer(y: float) -> bool:
    return (y == y and y not in (INF, -INF) and y == math.floor(y)
            and abs(y) < 9007199254740992.0 and int(y) % 2 == 1)


def fmin(a: float, b: float) -> float:
    if a != a:
        return a if b != b else b  # of two NaNs the first
    if b != b:
        return a
    return a if a < b else b


def fmax(a: float, b: float) -> float:
    if a != a:
        return a if b != b else b
    if b != b:
        return a
    return a if a > b else b


def fabs(a: float) -> float:
    return abs(a)


def floor(a: float) -> float:
    if a != a or a in (INF, -INF):
        return a
    r = float(math.floor(a))
    return r if r != 0 else math.copysign(0.0, a)


def ceil(a: float) -> float:
    if a != a or a in (INF, -INF):
        return a
    r = float(math.ceil(a))
    return r if r != 0 else math.copysign(0.0, a)


def sqrt(a: float) -> float:
    if a < 0:
        return NEG_NAN
    return math.sqrt(a)  # a NaN passes through with its sign; sqrt(-0) is -0


def exp(a: float) -> float:
    try:
        return math.exp(a)
    except OverflowError:
        return INF


def ln(a: float) -> float:
    if a > 0:
        return math.log(a) if a != INF else INF
    if a == 0:
        return -INF
    if a != a:
        return a
    return NAN  # a negative number: the reference's ln gives the positive NaN


def cast_u64(x: float) -> int:
    """Rust's saturating ``as u64``: truncation, NaN and negatives to 0."""
    if x != x or x <= 0:
        return 0
    if x >= 18446744073709551615.0:
        return 18446744073709551615
    return int(x)


# -- tables by IR name (the folders' and the expression compiler's) ----------------------

UNARY = {"Neg": neg, "Not": not_}
BINARY = {"Add": add, "Sub": sub, "Mul": mul, "Div": div, "Pow": powf,
          "Lt": lt, "Le": le, "Gt": gt, "Ge": ge, "Eq": eq, "Ne": ne, "And": and_, "Or": or_}
#: the arithmetic functions of one and two arguments (IR ``Call`` names)
FUNCTIONS1 = {"Abs": fabs, "Floor": floor, "Ceil": ceil, "Sqrt": sqrt, "Exp": exp, "Ln": ln}
FUNCTIONS2 = {"Min": fmin, "Max": fmax, "Pow": powf}
