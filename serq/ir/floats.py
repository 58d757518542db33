"""Rust's text forms of an f64, written once: ``Display`` (``format!("{}", x)``) and
``LowerExp`` (``format!("{:e}", x)``).

The reference prints numbers with Rust's ``Display`` wherever a person reads them: parse
errors (`unexpected 0.0000001 at top level`), link and run-time messages, the report's JSON
(interpreter.md §12.3). ``Display`` takes the *shortest* digits that read back to the same
f64 — the same digits as Python's ``repr`` — and lays them out positionally, never with an
exponent: ``1e300`` is a 1 and 300 zeros, ``5e-324`` is ``0.`` and 323 zeros and a 5, and
``2**60`` is ``1152921504606847000`` (the shortest digits padded with zeros, not the exact
integer). Integral values have no point (``3``), negative zero is ``-0``, NaN is ``NaN``,
the infinities ``inf`` and ``-inf``.

The lexer (error messages), the IR printer (lint messages), the interpreter's messages and
the report all use this module. The IR's JSON numbers are serde_json's layout, a different
form, in :mod:`serq.ir.json`.
"""
from __future__ import annotations

import math

__all__ = ["shortest_digits", "display", "lower_exp"]


def shortest_digits(x: float) -> tuple[str, int]:
    """The shortest round-trip significant digits of a finite, nonzero ``x`` and the
    position of the decimal point: ``|x| == 0.DIGITS × 10**point``, DIGITS without leading
    or trailing zeros (``0.00125`` → ``("125", -2)``, ``1e22`` → ``("1", 23)``)."""
    mantissa, _, exponent = repr(abs(x)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    point = len(whole) + (int(exponent) if exponent else 0)
    significant = digits.lstrip("0")
    point -= len(digits) - len(significant)
    return significant.rstrip("0"), point


def _sign_or_special(x: float, zero: str):
    """What both Rust formats share: NaN and the infinities print as words, a zero as
    ``zero`` with its sign; any other value gives ``(sign, None)`` and its digits follow."""
    if x != x:
        return "", "NaN"
    if x == math.inf:
        return "", "inf"
    if x == -math.inf:
        return "", "-inf"
    sign = "-" if math.copysign(1.0, x) < 0 else ""
    return sign, (sign + zero if x == 0 else None)


def display(x: float) -> str:
    """``format!("{}", x)`` for an f64."""
    sign, special = _sign_or_special(float(x), "0")
    if special is not None:
        return special
    digits, point = shortest_digits(float(x))
    if point <= 0:
        text = "0." + "0" * -point + digits
    elif point >= len(digits):
        text = digits + "0" * (point - len(digits))
    else:
        text = digits[:point] + "." + digits[point:]
    return sign + text


def lower_exp(x: float) -> str:
    """``format!("{:e}", x)`` for an f64: ``1e300``, ``1.5e-7``, ``-2.25e0``, ``0e0``."""
    sign, special = _sign_or_special(float(x), "0e0")
    if special is not None:
        return special
    digits, point = shortest_digits(float(x))
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{sign}{mantissa}e{point - 1}"
