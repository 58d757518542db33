"""The points of a sweep: ``--set NAME=VALUES`` axes and their cross product.

An axis value list is either a comma list (``kv_blocks=2048,4096``; each item is an
expression the compiler parses, so ``'cap=4*1024,8*1024'`` works) or a range
``START:STOP:STEP`` with STOP included when the steps land on it (``lam=11:14:0.5`` is 11,
11.5, ..., 14). An assignment with a single value is a fixed override, applied at every point.
"""
from __future__ import annotations

import itertools
import math
import re

__all__ = ["Axis", "parse_axis", "grid_points"]

_RANGE = re.compile(r"^\s*([^:,]+):([^:,]+):([^:,]+)\s*$")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class Axis:
    """One swept (or fixed) ``let``: its name and its values, as given (strings are compiler
    expressions; floats come from a range)."""

    __slots__ = ("name", "values")

    def __init__(self, name, values):
        self.name = name
        self.values = tuple(values)

    def __repr__(self):
        return f"Axis({self.name!r}, {self.values!r})"


def _number(text, what):
    try:
        x = float(text)
    except ValueError:
        raise ValueError(f"{what}: {text.strip()!r} is not a number") from None
    if not math.isfinite(x):
        raise ValueError(f"{what}: {text.strip()!r} is not a finite number")
    return x


def _range(start, stop, step, where):
    a, b, h = (_number(x, where) for x in (start, stop, step))
    if h <= 0:
        raise ValueError(f"{where}: the step must be positive")
    if b < a:
        raise ValueError(f"{where}: the range is empty (stop < start)")
    span = (b - a) / h
    if span > 100_000:  # (checked as a float: the count may have hundreds of digits)
        raise ValueError(f"{where}: about {span:.3g} values; more than 100000")
    count = math.floor(span + 1e-9) + 1
    if count > 100_000:
        raise ValueError(f"{where}: {count} values; more than 100000")
    # a + i*h, rounded to the step's decimals so that 11 + 3*0.1 prints as 11.3
    digits = max(0, -math.floor(math.log10(h)) + 6)
    values = [round(a + i * h, digits) for i in range(count)]
    return [int(v) if v == int(v) else v for v in values]


def parse_axis(text: str) -> Axis:
    """``NAME=VALUES`` -> :class:`Axis` (a ``ValueError`` saying what is wrong)."""
    name, sep, values = text.partition("=")
    name = name.strip()
    where = f"--set {text}"
    if not sep or not _NAME.match(name):
        raise ValueError(f"{where}: expected NAME=VALUES (a comma list or START:STOP:STEP)")
    m = _RANGE.match(values)
    if m:
        return Axis(name, _range(*m.groups(), where))
    items = [v.strip() for v in _split_top(values)]
    if any(not v for v in items):
        raise ValueError(f"{where}: an empty value in the list")
    return Axis(name, items)


def _split_top(text):
    """Split on the commas outside parentheses and brackets (``max(1, 2),3`` is two
    values)."""
    out, depth, cur = [], 0, []
    for c in text:
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        if c == "," and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    out.append("".join(cur))
    return out


def grid_points(axes) -> list:
    """Every point of the grid: a list of ``{name: value}`` (later axes vary fastest). A name
    given twice keeps its last axis, as ``--set`` does for ``serq run``."""
    by_name = {}
    for ax in axes:
        by_name.pop(ax.name, None)
        by_name[ax.name] = ax
    names = list(by_name)
    return [dict(zip(names, combo))
            for combo in itertools.product(*(by_name[n].values for n in names))]
