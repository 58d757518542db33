"""BurstGPT (HPMLL/BurstGPT: ``BurstGPT_*.csv``), requests to ChatGPT and GPT-4 on Azure.

Columns ``Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type``: the
request's time in seconds from the start of the trace, the model, its prompt and answer
lengths in tokens, their sum, and whether it came from a conversation or the API. Each row
becomes a one-turn session (the public files have no session ids): ``new`` = Request tokens,
``out`` = Response tokens, arriving at Timestamp. Rows whose Response tokens is 0 are failed
requests (the trace's own convention) and are skipped, and counted; ``model`` keeps only the
rows of one model (``ChatGPT``, ``GPT-4``).
"""
from __future__ import annotations

from serq.trace_import import Clock, Request, seconds, skip, tokens
from serq.trace_import._csv import rows

COLUMNS = ("Timestamp", "Model", "Request tokens", "Response tokens", "Total tokens",
           "Log Type")


def read(path: str, window, stats, model: str = None):
    clock = Clock(path)
    for lineno, row in rows(path, COLUMNS):
        t = clock.relative(lineno, seconds(path, lineno, "Timestamp", row["Timestamp"]))
        new = tokens(path, lineno, "Request tokens", row["Request tokens"])
        out = tokens(path, lineno, "Response tokens", row["Response tokens"])
        if window.done(t):
            return
        stats["rows"] += 1
        if model is not None and row["Model"].strip() != model:
            skip(stats, f"rows of another model than {model}")
            continue
        if out == 0:
            skip(stats, "failed requests (0 response tokens)")
            continue
        if window.admits(t):
            yield Request(lineno, t, new, out)
