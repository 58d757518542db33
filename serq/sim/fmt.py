"""Rust's ``Display`` of an f64 (``format!("{}", x)``), used by run-time messages: the
shortest digits that round-trip, never an exponent, integral values without a point."""
from __future__ import annotations

from decimal import Decimal


def display(x: float) -> str:
    if x != x:
        return "NaN"
    if x == float("inf"):
        return "inf"
    if x == float("-inf"):
        return "-inf"
    r = repr(x)
    if "e" in r or "E" in r:
        r = format(Decimal(r), "f")
    if r.endswith(".0"):
        r = r[:-2]
    return r
