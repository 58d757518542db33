"""Trace files: the sessions a replay draws from (``ir.md`` §6.1).

A trace is a comma-separated text with the columns ``session,turn,new,out,think[,forced]``.
:func:`read_trace` reads one exactly as the reference does, with its messages.

serq extension (beyond v0.1.2, see docs/traces.md): after the header line
``session,turn,new,out,think,forced,at`` a row may carry a seventh column, ``at``, the
session's arrival time, given on the first row of each session. :func:`load_trace` returns
the sessions with those times; a run then starts each session at its time. The reference
skips every line starting with ``session`` and refuses 7-field rows, so a file with times is
refused there, and every file it accepts (no 7-field row) reads here exactly as there.
"""
from __future__ import annotations

import io
import math
import os
import re

from serq.errors import IRError
from serq.files import open_regular, os_error_text, read_bytes

__all__ = ["read_trace", "load_trace", "has_times", "Trace", "TIMED_HEADER", "parse_f64"]

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
TIMED_HEADER = "session,turn,new,out,think,forced,at"
_TIMED_NAMES = TIMED_HEADER.split(",")
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


class Trace:
    """A trace file's contents: ``sessions`` (each a list of its turns ``(new, out, think,
    forced)``) and ``times``, each session's arrival time in file order, or ``None`` when the
    file gives none (every v0.1.2 trace)."""
    __slots__ = ("sessions", "times")

    def __init__(self, sessions, times=None):
        self.sessions = sessions
        self.times = times


def read_trace(path) -> list:
    """The sessions of the trace file at ``path``, each a list of its turns
    ``(new, out, think, forced)`` as floats; a relative path is read from the current
    directory. Errors raise :class:`serq.errors.IRError` (a ``ValueError``). Arrival times
    (the serq extension) are read and checked but not returned: see :func:`load_trace`."""
    return load_trace(path).sessions


def has_times(path) -> bool:
    """Whether the trace file at ``path`` gives arrival times, judged from its lines up to
    the first data row (after the timed header, a 7-field row); ``False`` when it cannot be
    read (the run reports that)."""
    header = False
    try:
        with io.TextIOWrapper(open_regular(os.fspath(path)), encoding="utf-8") as f:
            for raw in f:
                line = raw.strip(_WHITESPACE)
                if not line or line.startswith("#"):
                    continue
                if line.startswith("session"):
                    header = header or [x.strip() for x in line.split(",")] == _TIMED_NAMES
                    continue
                return header and line.count(",") == 6
    except (OSError, UnicodeDecodeError, TypeError):
        return False
    return False


def load_trace(path) -> Trace:
    """The trace file at ``path`` as a :class:`Trace`: its sessions and, when its rows
    carry the ``at`` column, each session's arrival time."""
    try:
        p = os.fspath(path)
    except TypeError as e:  # pyserq 0.1.2's words: the argument named
        raise TypeError(f"argument 'path': {e}") from None
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


def _parse(text: str) -> Trace:
    sessions: list = []
    current = None
    last_id = None
    header = 0     # the line of the timed header, once seen
    starts = []    # per session: (line, `at` text or None) of its first row
    timed = False  # some row has an `at` field
    # Rust's `str::lines`: split at "\n" (a "\r" before it goes with the trimming below)
    for lineno, raw in enumerate(text.split("\n"), start=1):
        line = raw.strip(_WHITESPACE)
        if not line or line.startswith("#"):
            continue
        if line.startswith("session"):
            if not header and [f.strip() for f in line.split(",")] == _TIMED_NAMES:
                header = lineno
            continue
        fields = line.split(",")
        at = None
        if len(fields) == 7 and header:
            at = fields.pop()
            timed = True
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
            starts.append((lineno, at))
            last_id = sid
        elif at not in (None, "") and at != starts[-1][1]:
            _check_later_at(lineno, at, starts[-1])
        current.append(tuple(values[1:]))
    if not sessions:
        raise IRError("empty trace\n"
                      "help: add a data row using session,turn,new,out,think[,forced]")
    return Trace(sessions, _arrival_times(starts, header) if timed else None)


def _arrival_time(lineno: int, text: str) -> float:
    t = parse_f64(text)
    if t is None:
        raise IRError(f"line {lineno}: column 7 (at): invalid number `{text}`\n"
                      "help: replace `at` with the session's arrival time")
    if not 0.0 <= t < math.inf:
        raise IRError(f"line {lineno}: column 7 (at): an arrival time must be finite and "
                      f"not negative, got `{text}`")
    return t


def _arrival_times(starts: list, header: int) -> list:
    """Each session's arrival time, from the ``at`` field of its first row: a file with
    times gives every session one (a session without one would have no place to start)."""
    times = []
    for lineno, text in starts:
        if not text:
            raise IRError(f"line {lineno}: this row starts a session but gives no arrival "
                          f"time (column 7, `at`)\nhelp: the header on line {header} says "
                          "the rows carry arrival times: give the first row of every session "
                          "one")
        times.append(_arrival_time(lineno, text))
    return times


def _check_later_at(lineno: int, text: str, start) -> None:
    """A session's later rows may repeat its arrival time (or leave ``at`` empty); a
    different one is a mistake (two sessions with one id next to each other?)."""
    first_line, first_text = start
    t = _arrival_time(lineno, text)
    if not first_text or parse_f64(first_text) == t:
        return  # (a first row without a time is reported once the file is read)
    raise IRError(f"line {lineno}: column 7 (at): `{text}` differs from the arrival time of "
                  f"the session that starts on line {first_line}\nhelp: a session arrives "
                  "once: leave `at` empty on its later rows, or give the rows of another "
                  "session another id")
