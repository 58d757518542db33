"""Azure LLM inference traces (AzurePublicDataset, 2023 and 2024: ``AzureLLMInferenceTrace_*.csv``).

Columns ``TIMESTAMP,ContextTokens,GeneratedTokens``: a request's arrival time (a UTC date and
time, ``2023-11-16 18:15:46.6805900``; 2024's files add ``+00:00``), its prompt length and its
output length in tokens. Each row becomes a one-turn session: ``new`` = ContextTokens,
``out`` = GeneratedTokens, arriving at its TIMESTAMP (seconds after the first row).
"""
from __future__ import annotations

import calendar
import re
from decimal import Decimal

from serq.trace_import import Clock, Request, TraceImportError, tokens
from serq.trace_import._csv import rows

COLUMNS = ("TIMESTAMP", "ContextTokens", "GeneratedTokens")

_STAMP = re.compile(r"\s*(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(\.\d+)?"
                    r"\s*(Z|[+-]\d{2}:?\d{2})?\s*", re.ASCII)


def timestamp(path: str, lineno: int, text: str) -> Decimal:
    """A ``YYYY-MM-DD HH:MM:SS[.fraction][zone]`` time in seconds since 1970 (UTC), exact
    (a ``Decimal``: a float would lose the fraction's last digits next to 1.7e9 seconds); a
    plain number is read as seconds."""
    m = _STAMP.fullmatch(text)
    if m is None:
        try:
            t = Decimal(text.strip())
            if not t.is_finite():
                raise ValueError
            return t
        except (ValueError, ArithmeticError):
            raise TraceImportError(f"{path}:{lineno}: column `TIMESTAMP`: expected a date "
                                   f"and time like `2023-11-16 18:15:46.6805900`, found "
                                   f"`{text}`") from None
    y, mo, d, h, mi, s = (int(g) for g in m.groups()[:6])
    if not (1 <= mo <= 12 and 1 <= d <= 31 and h < 24 and mi < 60 and s < 61):
        raise TraceImportError(f"{path}:{lineno}: column `TIMESTAMP`: not a valid date and "
                               f"time: `{text}`")
    t = calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0)) + Decimal(m.group(7) or 0)
    zone = m.group(8)
    if zone and zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        digits = zone[1:].replace(":", "")
        t -= sign * (int(digits[:2]) * 3600 + int(digits[2:]) * 60)
    return t


def read(path: str, window, stats):
    clock = Clock(path)
    for lineno, row in rows(path, COLUMNS):
        t = clock.relative(lineno, timestamp(path, lineno, row["TIMESTAMP"]))
        new = tokens(path, lineno, "ContextTokens", row["ContextTokens"])
        out = tokens(path, lineno, "GeneratedTokens", row["GeneratedTokens"])
        if window.done(t):
            return
        stats["rows"] += 1
        if window.admits(t):
            yield Request(lineno, t, new, out)
