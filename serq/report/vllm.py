"""A report in ``vllm bench serve``'s terms: the keys of its saved result JSON (mean, median,
std and percentile TTFT, TPOT, ITL and E2EL in milliseconds, request and token throughput,
goodput under SLOs), computed from the program's observations, so a simulated run and a
measured one compare key by key (docs/tools.md has the mapping).

The mapping (each overridable with ``names``):

* TTFT ← observation ``ttft``; TPOT ← ``tpot``; E2EL ← ``e2el``, else ``latency``;
* ITL ← observation ``itl`` when the program has one, else the step engines' inter-token
  latency (mean, p50 as median, p99; the stage rows carry no std or other percentiles, so
  those keys are ``null``; the first step stage's);
* ``completed`` ← the E2EL observation's count (requests that finished after the warm-up);
* ``duration`` ← the measured span, end − warm-up;
* output tokens ← observation ``output_tokens`` when present (summed), else estimated from
  the step engines: decode iterations × mean decode batch, the decode iterations being the
  time spent in iterations with decoders over their mean cost; input tokens ← observation
  ``input_tokens`` (summed) when present, else ``null``.

Statistics follow vllm's definitions: numpy's ``mean``, ``median``, ``std`` (population) and
``percentile`` (linear interpolation) of the samples — not the report's nearest-rank p99. A
request counts toward ``request_goodput`` when every SLO it is subject to holds for it
(``value <= bound`` in ms, as vllm); requests are matched across observations by (session,
turn), and a request without a sample of a constrained metric does not count as good.
"""
from __future__ import annotations

import math

__all__ = ["TIME_UNITS", "GOODPUT_KEYS", "vllm_metrics", "parse_goodput"]

#: milliseconds per unit of the program's time
TIME_UNITS = {"s": 1e3, "ms": 1.0, "us": 1e-3, "ns": 1e-6}
GOODPUT_KEYS = ("ttft", "tpot", "e2el")
_METRICS = ("ttft", "tpot", "itl", "e2el")


def parse_goodput(items) -> dict:
    """``["ttft:500", "tpot:50"]`` -> ``{"ttft": 500.0, "tpot": 50.0}`` (milliseconds, as
    ``vllm bench serve --goodput``)."""
    out = {}
    for item in items:
        key, sep, value = item.partition(":")
        key = key.strip().lower()
        if not sep or key not in GOODPUT_KEYS:
            raise ValueError(f"--goodput {item!r}: expected KEY:MS with KEY one of "
                             f"{', '.join(GOODPUT_KEYS)} (e.g. ttft:500)")
        try:
            ms = float(value)
        except ValueError:
            raise ValueError(f"--goodput {item!r}: {value!r} is not a number") from None
        if not ms >= 0:
            raise ValueError(f"--goodput {item!r}: the bound must be a number >= 0")
        out[key] = ms
    return out


def _observation(report, names, key, fallbacks=()):
    for name in ([names[key]] if key in names else [key, *fallbacks]):
        o = report.observe(name)
        if o is not None:
            return name, o
    if key in names:
        raise ValueError(f"--map {key}={names[key]}: the program has no observation "
                         f"{names[key]!r}")
    return None, None


def _pword(q) -> str:
    return str(int(q)) if q == int(q) else str(q)


def _stats(values_ms, percentiles):
    import numpy as np
    if len(values_ms) == 0:
        out = {"mean": None, "median": None, "std": None}
        out.update({f"p{_pword(q)}": None for q in percentiles})
        return out
    xs = np.asarray(values_ms, dtype=float)
    out = {"mean": float(np.mean(xs)), "median": float(np.median(xs)),
           "std": float(np.std(xs))}
    for q in percentiles:
        out[f"p{_pword(q)}"] = float(np.percentile(xs, q))
    return out


def _step_itl(report, ms, percentiles):
    steps = [s for s in report.stages if s.iterations > 0 and math.isfinite(s.mean_itl)]
    if not steps:
        return None, _stats([], percentiles)
    s = steps[0]
    out = {"mean": s.mean_itl * ms, "median": s.itl_p50 * ms, "std": None}
    for q in percentiles:
        out[f"p{_pword(q)}"] = {99: s.itl_p99 * ms, 50: s.itl_p50 * ms}.get(q)
    label = s.name if s.index is None else f"{s.name}[{s.index}]"
    return f"stage {label} (ITL mean, p50, p99)", out


def _decoded_tokens(report, span):
    total = 0.0
    found = False
    for s in report.stages:
        if s.iterations > 0 and math.isfinite(s.mean_decode_step) and s.mean_decode_step > 0:
            found = True
            iterations = (s.decode_only + s.mixed) * span / s.mean_decode_step
            total += iterations * s.mean_decode_batch
    return total if found else None


def _good_requests(report, names, goodput, ms):
    """Requests (by the E2EL observation's (session, turn)) meeting every SLO."""
    _, e2el = _observation(report, names, "e2el", ("latency",))
    if e2el is None:
        return None
    values = {}
    for key in goodput:
        _, o = (None, e2el) if key == "e2el" else _observation(report, names, key)
        values[key] = {} if o is None else {
            (s, k): v for s, k, v in zip(o.sessions, o.turns, o.samples)}
    good = 0
    for s, k in zip(e2el.sessions, e2el.turns):
        if all((s, k) in values[key] and values[key][(s, k)] * ms <= bound
               for key, bound in goodput.items()):
            good += 1
    return good


def vllm_metrics(report, *, time_unit="s", names=None, goodput=None,
                 percentiles=(99.0,)) -> dict:
    """The ``vllm bench serve`` result keys for ``report`` (see the module docstring), plus
    ``serq_mapping``: which observation (or stage) each metric came from."""
    if time_unit not in TIME_UNITS:
        raise ValueError(f"unknown time unit {time_unit!r} (expected "
                         f"{', '.join(TIME_UNITS)})")
    names = dict(names or {})
    ms = TIME_UNITS[time_unit]
    span = report.end - report.warmup
    duration_s = span * ms / 1e3
    mapping = {}
    stats = {}
    for key in _METRICS:
        fallbacks = ("latency",) if key == "e2el" else ()
        name, o = _observation(report, names, key, fallbacks)
        if o is not None:
            mapping[key] = f"observe {name}"
            stats[key] = _stats([x * ms for x in o.samples], percentiles)
        elif key == "itl":
            mapping[key], stats[key] = _step_itl(report, ms, percentiles)
        else:
            mapping[key], stats[key] = None, _stats([], percentiles)
    _, e2el = _observation(report, names, "e2el", ("latency",))
    completed = e2el.count if e2el is not None else None
    _, out_obs = _observation(report, names, "output_tokens")
    _, in_obs = _observation(report, names, "input_tokens")
    if out_obs is not None:
        out_tokens = math.fsum(out_obs.samples)
        mapping["output_tokens"] = f"observe {out_obs.name} (sum)"
    else:
        out_tokens = _decoded_tokens(report, span)
        mapping["output_tokens"] = ("step engines (estimate: decode iterations x mean decode "
                                    "batch)" if out_tokens is not None else None)
    in_tokens = math.fsum(in_obs.samples) if in_obs is not None else None
    mapping["input_tokens"] = f"observe {in_obs.name} (sum)" if in_obs is not None else None

    def per_s(x):
        return x / duration_s if x is not None and duration_s > 0 else None

    out = {"duration": duration_s, "completed": completed,
           "total_input_tokens": in_tokens, "total_output_tokens": out_tokens,
           "request_throughput": per_s(completed),
           "request_goodput": None,
           "output_throughput": per_s(out_tokens),
           "total_token_throughput": per_s(in_tokens + out_tokens)
           if in_tokens is not None and out_tokens is not None else None}
    if goodput:
        out["request_goodput"] = per_s(_good_requests(report, names, goodput, ms))
        out["serq_goodput_slos_ms"] = dict(goodput)
    for key in _METRICS:
        for stat, v in stats[key].items():
            out[f"{stat}_{key}_ms"] = v
    out["serq_mapping"] = mapping
    out["serq_time_unit"] = time_unit
    return out
