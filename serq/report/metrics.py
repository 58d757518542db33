"""A report as named numbers: percentiles of observations and the flat ``{metric: value}``
mapping that sweeps, capacity searches and tables compare across runs.

Percentiles use the report's own rule for ``p99`` (interpreter.md §12.3: the samples sorted
by ``total_cmp``, element ``clamp(ceil(q n), 1, n) - 1``, nearest rank, no interpolation), so
``percentile(samples, 99)`` is the report's ``p99`` exactly and ``p50`` is a sample that was
really observed.

Metric names (one concept, used everywhere a run is reduced to numbers):

* ``NAME.count``, ``NAME.mean``, ``NAME.cv2``, ``NAME.pQ`` for each observation ``NAME``
  (``Q`` from ``percentiles``, 50, 90, 95 and 99 by default);
* ``gauge.NAME.mean`` / ``.min`` / ``.max`` for each gauge;
* ``stage.LABEL.FIELD`` for each stage row (``LABEL`` is ``name`` or ``name[i]``) and each
  numeric field of :data:`serq.report.STAGE_FIELDS` (step fields only for step stages);
* ``pool.LABEL.FIELD`` likewise for pools;
* ``events``, ``arrivals``, ``ended``, ``turns``, ``mean_live``, ``end`` for the run.
"""
from __future__ import annotations

import math

from serq.sim.stats import total_order_key

__all__ = ["DEFAULT_PERCENTILES", "STATISTICS", "percentile", "percentile_name",
           "parse_percentiles", "flat_metrics"]

#: The percentiles a sweep records for every observation.
DEFAULT_PERCENTILES = (50.0, 90.0, 95.0, 99.0)
#: The observation statistics an SLO or a metric name may name.
STATISTICS = ("mean", "p50", "p90", "p95", "p99")

_RUN_FIELDS = ("events", "arrivals", "ended", "turns", "mean_live", "end")
_STEP_ONLY = ("iterations", "prefill_only", "decode_only", "mixed", "mean_decodes",
              "mean_decode_batch", "mean_decode_step", "mean_itl", "itl_p50", "itl_p99")


def _sorted(samples):
    if any(x != x or x == 0.0 for x in samples):
        return sorted(samples, key=total_order_key)
    return sorted(samples)


def percentile(samples, q, *, ordered=None):
    """The ``q``-th percentile (``0 < q <= 100``) of ``samples`` by the report's nearest-rank
    rule; NaN when there are none. ``ordered`` passes the samples already sorted."""
    n = len(samples)
    if n == 0:
        return math.nan
    xs = ordered if ordered is not None else _sorted(samples)
    # q / 100 first: 99 / 100 is the same double as 0.99, so p99 matches the report exactly
    return xs[min(max(math.ceil(q / 100.0 * n), 1), n) - 1]


def percentile_name(q) -> str:
    """``p99``, ``p99.9``: the metric suffix of a percentile (an integral ``q`` without a
    decimal point)."""
    q = float(q)
    return f"p{int(q)}" if q == int(q) else f"p{q:g}"


def parse_percentiles(text: str) -> tuple:
    """``"50,90,99"`` -> ``(50.0, 90.0, 99.0)``; a ``ValueError`` naming the option
    (``--percentiles``, the one place the text comes from) and the bad item for a value
    outside ``(0, 100]`` or one that is not a number."""
    out = []
    where = f"--percentiles {text!r}"
    for item in text.split(","):
        item = item.strip()
        try:
            q = float(item)
        except ValueError:
            raise ValueError(f"{where}: percentile {item!r} is not a number") from None
        if not 0.0 < q <= 100.0:
            raise ValueError(f"{where}: percentile {item} is not in (0, 100]")
        if q not in out:
            out.append(q)
    if not out:
        raise ValueError(f"{where}: no percentiles given")
    return tuple(out)


def observation_metrics(o, percentiles=DEFAULT_PERCENTILES) -> dict:
    """``{count, mean, cv2, pQ...}`` of one :class:`serq.report.Observe`."""
    out = {"count": o.count, "mean": o.mean, "cv2": o.cv2}
    samples = o.samples
    if samples or o.count == 0:
        ordered = _sorted(samples)
        for q in percentiles:
            out[percentile_name(q)] = percentile(samples, q, ordered=ordered)
    elif 99.0 in percentiles:  # a report read back without samples knows its p99 only
        out["p99"] = o.p99
    return out


def _label(row):
    return row.name if row.index is None else f"{row.name}[{row.index}]"


def flat_metrics(report, percentiles=DEFAULT_PERCENTILES) -> dict:
    """Every number of ``report`` under its metric name (see the module docstring), in a
    fixed order: the run's counters, observations, gauges, stages, pools."""
    out = {f: getattr(report, f) for f in _RUN_FIELDS}
    for name, o in report.observes.items():
        for stat, v in observation_metrics(o, percentiles).items():
            out[f"{name}.{stat}"] = v
    for name, g in report.gauges.items():
        out[f"gauge.{name}.mean"] = g.mean
        out[f"gauge.{name}.min"] = g.min
        out[f"gauge.{name}.max"] = g.max
    for s in report.stages:
        step = s.iterations > 0
        for f, v in s.as_dict().items():
            if f in ("name", "index") or (f in _STEP_ONLY and not step):
                continue
            out[f"stage.{_label(s)}.{f}"] = v
    for p in report.pools:
        for f, v in p.as_dict().items():
            if f not in ("name", "index"):
                out[f"pool.{_label(p)}.{f}"] = v
    return out
