"""The report's JSON text, byte for byte as the reference's ``Report.json()`` writes it (§12.3,
§12.4): compact (no spaces), keys in a fixed order, integers for counters, floats in Rust
``Display`` form (shortest round-trip digits, never an exponent, integral values without a
decimal point, ``-0`` for negative zero) and ``null`` for NaN and the infinities.

This is not the IR's float form (``serq.ir.json.fmt_float`` keeps Rust's ``Debug``/serde
exponent layout, ``1e300`` there, a 1 and 300 zeros here).
"""
from __future__ import annotations

import json as _json
import math

from serq.ir.floats import display

__all__ = ["fmt_float", "fmt_int", "fmt_str", "report_json", "percentiles_json"]

_INF = math.inf


def fmt_float(x) -> str:
    """An f64 as the report writes it: Rust ``Display`` digits, or ``null`` if not finite."""
    if x is None:
        return "null"
    x = float(x)
    if x != x or x == _INF or x == -_INF:
        return "null"
    return display(x)


def fmt_int(x) -> str:
    """A counter (an integer; ``None`` is ``null``). A float with an integral value is accepted
    and written as the reference writes that f64."""
    if x is None:
        return "null"
    if isinstance(x, int):
        return str(int(x))
    return fmt_float(x)


def fmt_str(s: str) -> str:
    """A JSON string as serde_json writes it (UTF-8 kept, control characters escaped)."""
    return _json.dumps(s, ensure_ascii=False)


# field kinds of the rows, in output order: "s" string, "i" integer, "f" float
_STAGE_KINDS = (("name", "s"), ("index", "i"), ("mean_number", "f"), ("utilization", "f"),
                ("completed", "i"), ("throughput", "f"), ("mean_wait", "f"),
                ("mean_service", "f"), ("iterations", "i"), ("prefill_only", "f"),
                ("decode_only", "f"), ("mixed", "f"), ("mean_decodes", "f"),
                ("mean_decode_batch", "f"), ("mean_decode_step", "f"), ("mean_itl", "f"),
                ("itl_p50", "f"), ("itl_p99", "f"))
_POOL_KINDS = (("name", "s"), ("index", "i"), ("mean_used", "f"), ("mean_cached", "f"),
               ("mean_queue", "f"), ("mean_holders", "f"), ("mean_wait", "f"),
               ("admissions", "i"), ("evicted_entries", "i"), ("evicted_units", "i"),
               ("preemptions", "i"), ("spills", "i"), ("rejected", "i"), ("stuck", "i"))
_FMT = {"s": fmt_str, "i": fmt_int, "f": fmt_float}


def _row(row, kinds) -> str:
    return "{" + ",".join(f'"{k}":{_FMT[kind](getattr(row, k))}' for k, kind in kinds) + "}"


def _claim(c) -> str:
    note = "null" if c.note is None else fmt_str(c.note)
    return (f'{{"name":{fmt_str(c.name)},"kind":{fmt_str(c.kind)},"result":{fmt_str(c.result)},'
            f'"checked":{fmt_int(c.checked)},"failures":{fmt_int(c.failures)},'
            f'"first":{fmt_float(c.first)},"note":{note}}}')


def report_json(rep) -> str:
    """The compact JSON text of a :class:`serq.report.Report`."""
    head = [
        ("serq_version", fmt_str(rep.serq_version)),
        ("horizon", fmt_float(rep.horizon)),
        ("end", fmt_float(rep.end)),
        ("warmup", fmt_float(rep.warmup)),
        ("seed", fmt_int(rep.seed)),
        ("events", fmt_int(rep.events)),
        ("arrivals", fmt_int(rep.arrivals)),
        ("ended", fmt_int(rep.ended)),
        ("turns", fmt_int(rep.turns)),
        ("mean_live", fmt_float(rep.mean_live)),
    ]
    parts = [f'"{k}":{v}' for k, v in head]
    obs = []
    for name, o in rep.observes.items():
        obs.append(f'{fmt_str(name)}:{{"count":{fmt_int(o.count)},"mean":{fmt_float(o.mean)},'
                   f'"ci":{fmt_float(o.ci)},"cv2":{fmt_float(o.cv2)},"p99":{fmt_float(o.p99)}}}')
    parts.append('"observes":{' + ",".join(obs) + "}")
    gs = []
    for name, g in rep.gauges.items():
        gs.append(f'{fmt_str(name)}:{{"mean":{fmt_float(g.mean)},"ci":{fmt_float(g.ci)},'
                  f'"min":{fmt_float(g.min)},"max":{fmt_float(g.max)}}}')
    parts.append('"gauges":{' + ",".join(gs) + "}")
    if rep.claims is not None:  # extension (IR 11): after `gauges`, as pyserq 0.1.3
        parts.append('"claims":[' + ",".join(_claim(c) for c in rep.claims) + "]")
    parts.append('"stages":[' + ",".join(_row(s, _STAGE_KINDS) for s in rep.stages) + "]")
    parts.append('"pools":[' + ",".join(_row(p, _POOL_KINDS) for p in rep.pools) + "]")
    return "{" + ",".join(parts) + "}"


def percentiles_json(rep, percentiles) -> str:
    """``"percentiles":{"NAME":{"p50":...,"p90":...},...}``: the fragment ``serq run --json
    --percentiles`` appends to the report's JSON as a last key (the v0.1.2 keys stay exactly
    as they are), numbers written as the report writes them."""
    from serq.report.metrics import observation_metrics, percentile_name
    parts = []
    for name, o in rep.observes.items():
        m = observation_metrics(o, percentiles)
        cells = ",".join(f'"{percentile_name(q)}":{fmt_float(m.get(percentile_name(q)))}'
                         for q in percentiles)
        parts.append(f"{fmt_str(name)}:{{{cells}}}")
    return '"percentiles":{' + ",".join(parts) + "}"

