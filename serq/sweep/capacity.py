"""Capacity search: the largest value of one knob (a ``let``) at which every SLO holds with
confidence, found by bisection, each probe a set of replications (one per seed).

An SLO is ``METRIC OP BOUND``: ``ttft.p99<1``, ``latency.mean<=30``,
``stage.engine.throughput>10``. ``METRIC`` is an observation and a statistic (``mean``,
``p50``, ``p90``, ``p95``, ``p99``) or any metric name of
:func:`serq.report.metrics.flat_metrics`; ``OP`` is ``<``, ``<=``, ``>`` or ``>=``.

*With confidence* means the whole 95 % Student-t interval across replications is on the
right side of the bound: for ``<``/``<=`` its upper end ``mean + ci``, for ``>``/``>=`` its
lower end ``mean - ci``. A probe passes when every SLO does.

The search assumes the SLOs hold below some value of the knob and fail above it (latency
grows with load). ``lo`` must pass and ``hi`` should fail; the interval is halved until it
is narrower than ``tol`` (or, for an integer knob, until ``hi = lo + 1``); the answer is the
last passing value. With ``minimize`` the roles flip: the SLOs hold *above* some value (a
KV cache size, a replica count) and the answer is the smallest passing value.
"""
from __future__ import annotations

import math
import operator
import re

from serq.report.metrics import STATISTICS
from serq.sweep.replicate import summarize
from serq.sweep.runner import run_tasks
from serq.sweep.task import Task, load_program

__all__ = ["SLO", "parse_slo", "Probe", "CapacityResult", "capacity_search"]

_OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
_SLO = re.compile(r"^\s*([A-Za-z_][\w.\[\]]*)\s*(<=|>=|<|>)\s*(\S+)\s*$")


class SLO:
    """One service-level objective: ``metric op bound``."""

    __slots__ = ("metric", "op", "bound")

    def __init__(self, metric, op, bound):
        self.metric, self.op, self.bound = metric, op, float(bound)

    @property
    def upper(self) -> bool:
        """True for an upper bound (``<``, ``<=``)."""
        return self.op in ("<", "<=")

    def edge(self, iv) -> float:
        """The end of the interval that must satisfy the bound."""
        return iv.hi if self.upper else iv.lo

    def met(self, iv) -> bool:
        """Whether the interval ``iv`` lies wholly on the right side of the bound (a metric
        with fewer than two finite replications cannot be met with confidence)."""
        edge = self.edge(iv)
        return math.isfinite(edge) and _OPS[self.op](edge, self.bound)

    def __str__(self):
        return f"{self.metric}{self.op}{self.bound:g}"

    def __repr__(self):
        return f"SLO({str(self)!r})"


def parse_slo(text: str) -> SLO:
    """``"ttft.p99<1"`` -> :class:`SLO`; a ``ValueError`` saying what is wrong."""
    m = _SLO.match(text)
    if not m:
        raise ValueError(f"--slo {text!r}: expected METRIC<BOUND, e.g. ttft.p99<1 "
                         f"(statistics: {', '.join(STATISTICS)}; operators <, <=, >, >=)")
    metric, op, bound = m.groups()
    try:
        b = float(bound)
    except ValueError:
        raise ValueError(f"--slo {text!r}: the bound {bound!r} is not a number") from None
    if math.isnan(b):
        raise ValueError(f"--slo {text!r}: the bound is NaN")
    return SLO(metric, op, b)


class Probe:
    """One evaluated knob value: ``value``, ``passed``, and ``{slo_text: Interval}``."""

    __slots__ = ("value", "passed", "intervals")

    def __init__(self, value, passed, intervals):
        self.value, self.passed, self.intervals = value, passed, intervals


class CapacityResult:
    """``answer`` (the largest passing value, or the smallest with ``minimize``; ``None`` when
    the passing end of the range fails), ``status`` (``"found"``, ``"range"`` when even the
    failing end passes, so the capacity lies beyond the range, ``"none"``), the ``probes``
    in the order they were run, and the knob, SLOs and seeds."""

    def __init__(self, knob, slos, seeds, probes, answer, status, minimize):
        self.knob, self.slos, self.seeds = knob, slos, seeds
        self.probes, self.answer, self.status = probes, answer, status
        self.minimize = minimize


def _check_metrics(slos, metrics, knob):
    names = list(metrics)
    for slo in slos:
        if slo.metric not in metrics:
            observed = sorted({n.rsplit(".", 1)[0] for n in names if n.count(".") == 1})
            raise ValueError(f"--slo {slo}: the program has no metric {slo.metric!r} "
                             f"(observations: {', '.join(observed) or 'none'}; a metric is "
                             f"OBSERVATION.STAT with STAT one of {', '.join(STATISTICS)})")


MAX_STEPS = 30  # doublings or halvings when bracketing: a factor of about 10^9


def capacity_search(source, knob, slos, seeds, lo=None, hi=None, *, tol=None, integer=False,
                    minimize=False, start=1.0, jobs=None, backend="process", address=None,
                    on_probe=None) -> CapacityResult:
    """Bisect ``knob`` over ``[lo, hi]`` (see the module docstring). Without both ``lo`` and
    ``hi`` the bracket is found first, by doubling or halving from the one given (else from
    ``start``), which needs a positive knob. ``on_probe(probe)`` is called after each probe
    (the CLI prints the evidence as it comes)."""
    if len(seeds) < 2:
        raise ValueError("a confidence interval needs at least 2 seeds (--seeds)")
    bracketed = lo is not None and hi is not None
    if bracketed and not lo < hi:
        raise ValueError(f"need --lo < --hi (got {lo:g} and {hi:g})")
    if not bracketed:
        start = lo if lo is not None else hi if hi is not None else start
        if not start > 0:
            raise ValueError("finding the bracket by doubling needs a positive start: "
                             "give --lo and --hi")
    if tol is not None and not tol > 0:
        raise ValueError("--tol must be positive")
    for x in ((lo, hi) if bracketed else (start,)):  # a bad knob fails here, as compiled
        load_program(source, ((knob, _value(x, integer)),))
    probes = []

    def probe(x):
        x = _value(x, integer)
        tasks = [Task(source, ((knob, x),), s) for s in seeds]
        rows = run_tasks(tasks, jobs=jobs, backend=backend, address=address)
        if not probes:
            _check_metrics(slos, rows[0], knob)
        summ = summarize(rows, [s.metric for s in slos])
        ivs = {str(s): summ[s.metric] for s in slos}
        p = Probe(x, all(s.met(summ[s.metric]) for s in slos), ivs)
        probes.append(p)
        if on_probe is not None:
            on_probe(p)
        return p.passed

    def result(answer, status):
        return CapacityResult(knob, slos, seeds, probes, answer, status, minimize)

    if bracketed:
        good, bad = (hi, lo) if minimize else (lo, hi)
        if integer:
            good, bad = _value(good, True), _value(bad, True)
        if not probe(good):
            return result(None, "none")
        if probe(bad):
            return result(bad, "range")
    else:
        found = _bracket(probe, _value(start, integer), 0.5 if minimize else 2.0, integer)
        if found[0] is None or found[1] is None:
            return result(found[0], "none" if found[0] is None else "range")
        good, bad = found
    if integer:
        tol = 1
    elif tol is None:
        tol = abs(bad - good) / 64.0
    while abs(bad - good) > tol:
        mid = (good + bad) // 2 if integer else (good + bad) / 2.0
        if mid in (good, bad):
            break
        if probe(mid):
            good = mid
        else:
            bad = mid
    return result(good, "found")


def _value(x, integer):
    return int(round(x)) if integer else float(x)


def _bracket(probe, start, factor, integer):
    """``(good, bad)``: a passing and a failing value, found by multiplying ``start`` by
    ``factor`` (towards failing) or dividing it (towards passing); ``(good, None)`` when
    nothing fails within :data:`MAX_STEPS`, ``(None, bad)`` when nothing passes."""
    def step(x, f):
        y = x * f
        if integer:
            y = int(round(y))
            if y == x:
                y = x + (1 if f > 1 else -1)
            if y < 1:
                return None
        return y

    x = start
    if probe(x):
        for _ in range(MAX_STEPS):
            y = step(x, factor)
            if y is None or not probe(y):
                return (x, y) if y is not None else (x, None)
            x = y
        return (x, None)
    for _ in range(MAX_STEPS):
        y = step(x, 1.0 / factor)
        if y is None:
            return (None, x)
        if probe(y):
            return (y, x)
        x = y
    return (None, x)
