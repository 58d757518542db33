"""Trace files: the sessions a replay draws from (``ir.md`` §6.1).

A trace is a comma-separated text with the columns ``session,turn,new,out,think[,forced]``.
:func:`read_trace` reads one exactly as the reference does, with its messages.
"""
from __future__ import annotations

import math
import os
import re

from serq.errors import IRError
from serq.files import os_error_text, read_bytes

__all__ = ["read_trace", "parse_f64"]

# Rust's `str::parse::<f64>` grammar: an optional sign, then `inf`, `infinity` or `nan` (any
# case), or decimal digits with an optional point and an optional exponent. ASCII only, no
# surrounding space, no underscores (Python's float() accepts all three, so it is guarded).
_F64 = re.compile(
    r"[+-]?(?:inf|infinity|nan|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:e[+-]?[0-9]+)?)",
    re.IGNORECASE | re.ASCII,
)

# Rust's `char::is_whitespace` (Unicode White_Space), used by `str::trim`. Python's
# str.strip() would also remove U+001C..U+001F, which Rust keeps.
_WHITESPACE = ("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
               "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")

_COLUMNS = ("session", "turn", "new", "out", "think", "forced")
_U64_MAX = 2**64 - 1


def parse_f64(text: str):
    """``text`` as Rust's ``str::parse::<f64>`` reads it, or ``None`` when Rust refuses it."""
    if _F64.fullmatch(text) is None:
        return None
    return float(text)


def _as_u64(x: float) -> int:
    """Rust's saturating ``f64 as u64``: truncation; NaN and negatives give 0."""
    if math.isnan(x) or x <= 0.0:
        return 0
    if x >= 2.0**64:
        return _U64_MAX
    return int(x)


def read_trace(path) -> list:
    """The sessions of the trace file at ``path``, each a list of its turns
    ``(new, out, think, forced)`` as floats; a relative path is read from the current
    directory. Errors raise :class:`serq.errors.IRError` (a ``ValueError``)."""
    p = os.fspath(path)
    if not isinstance(p, str):
        raise TypeError(f"argument 'path': {type(p).__name__!r} object cannot be converted to 'PyString'")
    try:
        data = read_bytes(p)
    except OSError as e:
        raise IRError(f"cannot read trace {p}: {os_error_text(e)}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise IRError(f"cannot read trace {p}: stream did not contain valid UTF-8") from None
    try:
        return _parse(text)
    except IRError as e:
        raise IRError(f"trace {p}: {e}") from None


def _parse(text: str) -> list:
    sessions: list = []
    current = None
    last_id = None
    # Rust's `str::lines`: split at "\n" (a "\r" before it goes with the trimming below)
    for lineno, raw in enumerate(text.split("\n"), start=1):
        line = raw.strip(_WHITESPACE)
        if not line or line.startswith("#") or line.startswith("session"):
            continue
        fields = line.split(",")
        if len(fields) not in (5, 6):
            raise IRError(f"line {lineno}: expected 5 or 6 fields, got {len(fields)}\n"
                          "help: use session,turn,new,out,think[,forced]")
        values = []
        for col in (0, 2, 3, 4, 5):  # column 2 (turn) is never read
            if col >= len(fields):
                values.append(0.0)
                continue
            x = parse_f64(fields[col])
            if x is None:
                name = _COLUMNS[col]
                raise IRError(f"line {lineno}: column {col + 1} ({name}): invalid number "
                              f"`{fields[col]}`\nhelp: replace `{name}` with a numeric value")
            values.append(x)
        sid = _as_u64(values[0])
        if current is None or sid != last_id:
            current = []
            sessions.append(current)
            last_id = sid
        current.append(tuple(values[1:]))
    if not sessions:
        raise IRError("empty trace\n"
                      "help: add a data row using session,turn,new,out,think[,forced]")
    return sessions
