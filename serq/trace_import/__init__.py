"""``serq trace import``: public LLM-serving traces to serq's trace format (docs/traces.md).

Each format module reads its file into :class:`Request` records (one per request, i.e. one
turn, with the session it belongs to and, where the format has one, its arrival time); this
module applies the options every format shares — a time window, a time scale, a limit on the
number of sessions — groups the turns into sessions and writes the trace CSV:

* with arrival times (Azure, BurstGPT, Mooncake) the header
  ``session,turn,new,out,think,forced,at`` and an ``at`` on each session's first row
  (``serq.trace``'s extension: a run replays those times);
* without (ShareGPT) the v0.1.2 columns ``session,turn,new,out,think,forced``.

What the columns mean, for every importer: ``new`` is the turn's whole prompt (the context
the engine must hold for it, earlier turns included, as a chat API resends them); ``out`` the
tokens generated; ``think`` the pause before the session's next turn; ``forced`` 1 when the
turn cannot reuse the previous turn's cached context; ``at`` the session's arrival time in
seconds from the start of the window.
"""
from __future__ import annotations

import math
import os

from serq.errors import SerqError
from serq.trace import TIMED_HEADER

__all__ = ["FORMATS", "Request", "TraceImportError", "import_trace", "ImportSummary"]

FORMATS = ("azure", "mooncake", "burstgpt", "sharegpt")


class TraceImportError(SerqError):
    """A public trace file that cannot be converted; the message names ``file:line``."""


class Request:
    """One request of a public trace: a turn of session ``key`` (rows of one key are turns
    in file order), arriving at ``time`` seconds on the trace's own clock (``None`` when the
    format has no times)."""
    __slots__ = ("key", "time", "new", "out", "think", "forced")

    def __init__(self, key, time, new, out, think=0.0, forced=0):
        self.key = key
        self.time = time
        self.new = new
        self.out = out
        self.think = think
        self.forced = forced


class ImportSummary:
    """What an import did, for the one-line report the command prints."""
    def __init__(self, fmt, path, out, rows, skipped, sessions, turns, first, last):
        self.format = fmt
        self.path = path
        self.out = out
        self.rows = rows            # requests read from the file
        self.skipped = skipped      # {reason: count} of rows read but not converted
        self.sessions = sessions
        self.turns = turns
        self.first = first          # first and last arrival time written (None: no times)
        self.last = last

    def line(self) -> str:
        s = "" if self.sessions == 1 else "s"
        t = "" if self.turns == 1 else "s"
        text = (f"wrote {self.out}: {self.sessions} session{s}, {self.turns} turn{t} "
                f"from {self.rows} {self.format} row{'' if self.rows == 1 else 's'}")
        if self.first is not None:
            text += f"; arrivals from {_num(self.first)} s to {_num(self.last)} s"
        if self.skipped:
            text += "; skipped " + ", ".join(f"{why}: {n}" for why, n in self.skipped.items())
        return text


def _reader(fmt):
    if fmt == "azure":
        from serq.trace_import.azure import read
    elif fmt == "burstgpt":
        from serq.trace_import.burstgpt import read
    elif fmt == "mooncake":
        from serq.trace_import.mooncake import read
    elif fmt == "sharegpt":
        from serq.trace_import.sharegpt import read
    else:
        raise TraceImportError(f"unknown trace format `{fmt}`: use one of {', '.join(FORMATS)}")
    return read


def import_trace(fmt: str, path, out, *, scale: float = 1.0, start: float = None,
                 end: float = None, limit: int = None, **options) -> ImportSummary:
    """Convert the ``fmt`` trace at ``path`` into serq's trace format at ``out``.

    ``start``/``end`` keep the sessions arriving in ``[start, end)`` seconds after the
    trace's first request (times are then counted from ``start``); ``scale`` multiplies
    every time written (arrivals and think times: 0.5 replays the trace twice as fast);
    ``limit`` keeps the first ``limit`` sessions. ``options`` go to the format's reader
    (``block_size`` for mooncake, ``chars_per_token`` for sharegpt)."""
    if not (scale > 0 and scale != math.inf):
        raise TraceImportError(f"--scale must be a positive finite number, got {_num(scale)}")
    for name, t in (("--start", start), ("--end", end)):
        if t is not None and not math.isfinite(t):
            raise TraceImportError(f"{name} must be a finite number of seconds, got {_num(t)}")
    if limit is not None and limit < 1:
        raise TraceImportError(f"--limit must be at least 1, got {limit}")
    if start is not None and end is not None and not start < end:
        raise TraceImportError(f"--start {_num(start)} must be before --end {_num(end)}")
    read = _reader(fmt)
    path = os.fspath(path)
    _check_out(out)
    stats = {"rows": 0, "skipped": {}}
    window = _Window(start, end, limit)
    requests = read(path, window, stats, **options)
    sessions = _group(requests, window)
    if not sessions:
        raise TraceImportError(f"{path}: no request to convert"
                               + (" in the window" if start is not None or end is not None
                                  else ""))
    timed = sessions[0][0].time is not None
    origin = (start or 0.0) if timed else None
    text, first, last = _render(sessions, origin, scale, fmt, path)
    _write(out, text)
    return ImportSummary(fmt, path, out, stats["rows"], stats["skipped"], len(sessions),
                         sum(len(s) for s in sessions), first, last)


class _Window:
    """The session filter every format shares. A reader asks ``admits(t)`` for a new
    session's time relative to the trace's first request and ``done(t)`` whether it can stop
    reading (its rows are in time order, so nothing later can fall in the window)."""
    def __init__(self, start, end, limit):
        self.start = start
        self.end = end
        self.limit = limit
        self.kept = 0

    def admits(self, t) -> bool:
        if t is not None:
            if self.start is not None and t < self.start:
                return False
            if self.end is not None and t >= self.end:
                return False
        if self.limit is not None and self.kept >= self.limit:
            return False
        self.kept += 1
        return True

    def done(self, t) -> bool:
        if self.limit is not None and self.kept >= self.limit:
            return True
        return t is not None and self.end is not None and t >= self.end


def _group(requests, window) -> list:
    """The requests as sessions (lists of turns), in order of their first request."""
    sessions = {}
    for r in requests:
        turns = sessions.get(r.key)
        if turns is None:
            sessions[r.key] = [r]
        else:
            turns.append(r)
    return list(sessions.values())


def _render(sessions, origin, scale, fmt, path):
    header = TIMED_HEADER if origin is not None else "session,turn,new,out,think,forced"
    lines = [f"# serq trace import {fmt} {os.path.basename(path)}"
             + (f" (times x {_num(scale)})" if scale != 1.0 else ""),
             header]
    first = last = None
    for sid, turns in enumerate(sessions, start=1):
        for k, r in enumerate(turns):
            row = f"{sid},{k},{r.new},{r.out},{_num(r.think * scale)},{r.forced}"
            if origin is not None:
                at = (r.time - origin) * scale if k == 0 else None
                if k == 0:
                    first = at if first is None else first
                    last = at
                row += "," + ("" if at is None else _num(at))
            lines.append(row)
    return "\n".join(lines) + "\n", first, last


def _check_out(out) -> None:
    """The output can be written (checked before the input is read)."""
    from serq.output import WriteError, check_output_file
    try:
        check_output_file(os.fspath(out), "OUT")
    except WriteError as e:
        raise TraceImportError(str(e)) from None


def _write(out, text: str) -> None:
    from serq.output import WriteError, replace_file
    data = text.encode("utf-8")
    try:
        replace_file(os.fspath(out), lambda f: f.write(data))
    except WriteError as e:
        raise TraceImportError(str(e)) from None


def _num(x: float) -> str:
    """A time as written: rounded to the nanosecond (so that float noise such as
    ``0.15728950000000003`` does not show), an integer without ``.0``; ``nan`` and ``inf``
    as such (they reach here only in the messages refusing them)."""
    if not math.isfinite(x):
        return repr(float(x))
    x = round(x, 9)
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    return repr(float(x))


# ---------------------------------------------------------------------------------------
# helpers the format readers share


def open_text(path: str):
    """The file's lines (UTF-8, a BOM dropped), or a clear error (a regular file only: a
    device or a FIFO would read forever or block, ``serq.files``)."""
    from serq.files import open_text as open_regular_text, os_error_text
    try:
        return open_regular_text(path, encoding="utf-8-sig", newline="")
    except OSError as e:
        raise TraceImportError(f"cannot read {path}: {os_error_text(e)}") from None


def tokens(path: str, lineno: int, column: str, text: str) -> int:
    """A token count: a whole number, not negative (``12``, ``12.0``)."""
    t = text.strip()
    try:
        x = float(t)
    except ValueError:
        x = math.nan
    if not (x >= 0 and x == int(x) and x != math.inf):
        raise TraceImportError(f"{path}:{lineno}: column `{column}`: expected a token count "
                               f"(a whole number, not negative), found `{text}`")
    return int(x)


def seconds(path: str, lineno: int, column: str, text: str, unit: float = 1.0) -> float:
    """A time given as a number (``unit`` seconds each)."""
    t = text.strip() if isinstance(text, str) else text
    try:
        x = float(t)
    except (TypeError, ValueError):
        x = math.nan
    if not (math.isfinite(x) and x >= 0):
        raise TraceImportError(f"{path}:{lineno}: column `{column}`: expected a time "
                               f"(a number, not negative), found `{text}`")
    return x * unit


class Clock:
    """Checks that rows come in time order (every public trace does) and turns absolute
    times into seconds after the first row."""
    def __init__(self, path: str):
        self.path = path
        self.origin = None
        self.prev = None

    def relative(self, lineno: int, t) -> float:
        """``t`` (a float, or a ``Decimal`` to subtract exactly) in seconds after the first
        row, as a float."""
        if self.origin is None:
            self.origin = t
        elif t < self.prev:
            raise TraceImportError(f"{self.path}:{lineno}: this row's time is earlier than "
                                   f"the row before it ({_num(float(t - self.origin))} s < "
                                   f"{_num(float(self.prev - self.origin))} s after the "
                                   "first row); the rows must be in time order")
        self.prev = t
        return float(t - self.origin)


def skip(stats: dict, why: str) -> None:
    stats["skipped"][why] = stats["skipped"].get(why, 0) + 1
