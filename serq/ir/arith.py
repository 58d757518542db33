"""IEEE f64 arithmetic as Rust does it, where Python's float operations differ.

Python raises on division by zero, overflow and domain errors and treats NaN differently in
``min``/``max``; Rust returns infinities and NaN and its ``f64::min``/``max`` ignore a NaN
operand. Both the constant folder and the interpreter use these.
"""
from __future__ import annotations

import math

INF = math.inf
NAN = math.nan


def div(a: float, b: float) -> float:
    try:
        return a / b
    except ZeroDivisionError:
        if a != a or a == 0.0:
            return NAN
        neg = (math.copysign(1.0, a) < 0) != (math.copysign(1.0, b) < 0)
        return -INF if neg else INF


def fmin(a: float, b: float) -> float:
    if a != a:
        return b
    if b != b:
        return a
    return a if a < b else b  # of equal operands (-0, +0) the second, as the reference


def fmax(a: float, b: float) -> float:
    if a != a:
        return b
    if b != b:
        return a
    return a if a > b else b


def powf(a: float, b: float) -> float:
    try:
        r = a ** b
    except ZeroDivisionError:  # 0 ** negative
        if b == int(b) and int(b) % 2 == 1 and math.copysign(1.0, a) < 0:
            return -INF
        return INF
    except OverflowError:
        if a < 0 and b == int(b) and int(b) % 2 == 1:
            return -INF
        return INF
    if isinstance(r, complex):  # negative base, fractional exponent
        return NAN
    return float(r)


def sqrt(a: float) -> float:
    if a != a or a < 0:
        return NAN if not (a == 0.0) else a
    return math.sqrt(a)


def exp(a: float) -> float:
    try:
        return math.exp(a)
    except OverflowError:
        return INF


def ln(a: float) -> float:
    if a != a or a < 0:
        return NAN
    if a == 0:
        return -INF
    if a == INF:
        return INF
    return math.log(a)


def floor(a: float) -> float:
    if a != a or a in (INF, -INF):
        return a
    return float(math.floor(a)) if a != 0 else a


def ceil(a: float) -> float:
    if a != a or a in (INF, -INF):
        return a
    r = float(math.ceil(a))
    if r == 0 and a < 0:
        return -0.0
    return r if a != 0 else a


def mul(a: float, b: float) -> float:
    return a * b  # float multiplication never raises


def sub(a: float, b: float) -> float:
    return a - b


def add(a: float, b: float) -> float:
    return a + b


def truthy(x: float) -> bool:
    return x != 0.0


def cast_u64(x: float) -> int:
    """Rust's saturating ``as u64``: truncation, NaN and negatives to 0."""
    if x != x or x <= 0:
        return 0
    if x >= 18446744073709551615.0:
        return 18446744073709551615
    return int(x)
