"""Mooncake traces (FAST'25; the JSONL replay format of AIPerf, Dynamo, SGLang, GuideLLM).

One JSON object a line: ``timestamp`` (the request's arrival, milliseconds), ``input_length``
and ``output_length`` (tokens), ``hash_ids`` (one id per block of ``block_size`` prompt
tokens, 512 in the published traces: two requests with the same leading ids share that
prompt prefix), optionally ``session_id`` and ``delay`` (milliseconds).

What maps to what:

* A row without ``session_id`` is a one-turn session arriving at its timestamp: ``new`` =
  input_length, ``out`` = output_length.
* Rows with a ``session_id`` are the turns of one session, in file order; the session
  arrives at its first row's timestamp. A later turn's ``delay`` (else the gap between the
  two turns' timestamps, which also counts the first turn's own latency) becomes the
  previous turn's ``think``.
* ``hash_ids`` → ``forced``: a later turn whose ids do not begin with the previous turn's
  full blocks (``input_length // block_size`` ids) cannot reuse the previous turn's cached
  context, so it is marked ``forced`` 1; otherwise 0. Prefix sharing *between* sessions
  (equal ids in different sessions, e.g. one system prompt) has no column in serq's trace and
  is not carried over.
"""
from __future__ import annotations

import json
import math

from serq.trace_import import Clock, Request, TraceImportError, open_text

DEFAULT_BLOCK = 512


def _field(path, lineno, obj, names, required=True):
    for name in names:
        if name in obj:
            return obj[name]
    if required:
        raise TraceImportError(f"{path}:{lineno}: the row has no `{names[0]}` field")
    return None


def _count(path, lineno, name, v) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not (
            v >= 0 and v == int(v) and v != math.inf):
        raise TraceImportError(f"{path}:{lineno}: `{name}`: expected a token count (a whole "
                               f"number, not negative), found {json.dumps(v)}")
    return int(v)


def _ms(path, lineno, name, v) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not (
            math.isfinite(v) and v >= 0):
        raise TraceImportError(f"{path}:{lineno}: `{name}`: expected a time in milliseconds "
                               f"(a number, not negative), found {json.dumps(v)}")
    return v / 1000.0


def _ids(path, lineno, v):
    if v is None:
        return None
    if not isinstance(v, list) or any(isinstance(x, (list, dict)) for x in v):
        raise TraceImportError(f"{path}:{lineno}: `hash_ids`: expected a list of block ids, "
                               f"found {json.dumps(v)[:60]}")
    return v


def _objects(path):
    f = open_text(path)
    with f:
        try:
            for lineno, line in enumerate(f, start=1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line.rstrip("\r\n"))
                except json.JSONDecodeError as e:
                    raise TraceImportError(f"{path}:{lineno}:{e.colno}: invalid JSON: "
                                           f"{e.msg}") from None
                if not isinstance(obj, dict):
                    raise TraceImportError(f"{path}:{lineno}: expected a JSON object a line "
                                           f"(Mooncake JSONL), found {type(obj).__name__}")
                yield lineno, obj
        except UnicodeDecodeError:
            raise TraceImportError(f"{path}: not a UTF-8 text file") from None


class _Turn:
    """The last turn read of a session, to set its think and compare block ids."""
    __slots__ = ("request", "time", "ids", "input")

    def __init__(self, request, t, ids, n):
        self.request = request
        self.time = t
        self.ids = ids
        self.input = n


def read(path: str, window, stats, block_size: int = DEFAULT_BLOCK):
    if not block_size >= 1:
        raise TraceImportError(f"--block-size must be at least 1, got {block_size}")
    clock = Clock(path)
    last = {}      # session id -> _Turn, for kept sessions
    dropped = set()
    sessions_seen = False
    for lineno, obj in _objects(path):
        sid = obj.get("session_id")
        new = _count(path, lineno, "input_length",
                     _field(path, lineno, obj, ("input_length", "input_tokens")))
        out = _count(path, lineno, "output_length",
                     _field(path, lineno, obj, ("output_length", "output_tokens")))
        ids = _ids(path, lineno, obj.get("hash_ids"))
        stamp = _field(path, lineno, obj, ("timestamp", "created_time"),
                       required=sid is None or sid not in last and sid not in dropped)
        t = None if stamp is None else _ms(path, lineno, "timestamp", stamp)
        if sid is None or (sid not in last and sid not in dropped):  # a new session
            rel = clock.relative(lineno, t)
            if not sessions_seen and window.done(rel):
                return
            stats["rows"] += 1
            if not window.admits(rel):
                if sid is not None:
                    dropped.add(sid)
                continue
            r = Request(lineno if sid is None else ("s", sid), rel, new, out)
            if sid is not None:
                sessions_seen = True
                last[sid] = _Turn(r, t, ids, new)
            yield r
            continue
        stats["rows"] += 1
        if sid in dropped:
            continue
        prev = last[sid]
        delay = obj.get("delay", obj.get("delay_ms"))
        if delay is not None:
            prev.request.think = _ms(path, lineno, "delay", delay)
        elif t is not None:
            if t < prev.time:
                raise TraceImportError(f"{path}:{lineno}: this turn of session "
                                       f"{json.dumps(sid)} is earlier than its previous turn")
            prev.request.think = t - prev.time
        forced = 0
        if ids is not None and prev.ids is not None:
            full = min(prev.input // block_size, len(prev.ids))
            if ids[:full] != prev.ids[:full]:
                forced = 1
        r = Request(("s", sid), None, new, out, forced=forced)
        last[sid] = _Turn(r, t if t is not None else prev.time, ids, new)
        yield r
