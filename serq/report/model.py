"""What a run reports: the pyserq 0.1.2 object graph (``Report``, ``Observe``, ``Gauge``,
``Stage``, ``Pool``), spec §12.

Observations and gauges keep their records (samples with times, sessions and turns; change
points) and compute their summary from them with the reference's exact formulas
(:mod:`serq.sim.stats`), lazily, on first access. Stage and pool rows are plain records.
Every class has ``__slots__``: a misspelt attribute is an ``AttributeError``, never a silent
new field.
"""
from __future__ import annotations

import json as _json
import math
from typing import Iterable, Mapping

from serq.sim.stats import gauge_stats, observe_summary, total_eq

__all__ = ["SERQ_VERSION", "REPORT_VERSION", "Observe", "Gauge", "Stage", "Pool", "Report",
           "STAGE_FIELDS", "POOL_FIELDS"]

#: The serq version a report records (``serq_version``), the reference's.
SERQ_VERSION = "0.1.2"
#: The version of the report's field set (pyserq's ``REPORT_VERSION``).
REPORT_VERSION = 1

_NAN = math.nan
_INF = math.inf


def _eq(a, b):
    if isinstance(a, float) or isinstance(b, float):
        try:
            return total_eq(float(a), float(b))
        except (TypeError, ValueError):
            return False
    return a == b


def _lists_eq(xs, ys):
    return len(xs) == len(ys) and all(_eq(x, y) for x, y in zip(xs, ys))


# ---------------------------------------------------------------------------------------
# observations and gauges


class Observe:
    """One observation: its records and its statistics as ``Report.json()`` writes them.

    ``Observe(name, samples, times, sessions, turns)``: the four lists are parallel (value,
    time, session serial, ``turn_no``). ``count``, ``mean``, ``ci`` (batch-means 95 %
    half-width, +inf below 40 samples), ``cv2`` and ``p99`` are computed from ``samples`` on
    first access and then kept: do not mutate the lists afterwards.

    ``stats=(count, mean, ci, cv2, p99)`` gives the summary instead (a report read back from
    JSON without its samples). ``Observe.of_records(name, records)`` keeps a run's records
    (``serq.sim.observations.Observations``) and makes each list on first access.
    """

    __slots__ = ("name", "_columns", "_records", "_stats")

    def __init__(self, name, samples=(), times=(), sessions=(), turns=(), *, stats=None):
        self.name = name
        self._columns = [list(samples), list(times), list(sessions), list(turns)]
        self._records = None
        if stats is not None:
            count, mean, ci, cv2, p99 = stats
            stats = (int(count), float(mean), float(ci), float(cv2), float(p99))
        self._stats = stats

    @classmethod
    def of_records(cls, name, records):
        """An observation over a run's ``records`` (``samples()`` and ``columns()``, new
        lists each call), read only when a list or a statistic is first asked for.

        Why lazy: a run's report would otherwise turn every sample into four Python objects
        before ``run`` returns (1.3 M objects and about a quarter of the run's time for the
        M/M/1 benchmark's 320 k samples, issue 10), though a sweep reads only the summary."""
        obs = cls(name)
        obs._columns = [None, None, None, None]
        obs._records = records
        return obs

    def _column(self, i):
        columns = self._columns
        if columns[i] is None:
            if i == 0:
                columns[0] = self._records.samples()
            else:
                samples, *rest = self._records.columns()
                columns[1:] = rest
                if columns[0] is None:
                    columns[0] = samples
            if all(c is not None for c in columns):
                self._records = None  # (every list made: the run's records are freed)
        return columns[i]

    samples = property(lambda self: self._column(0), doc="The values, in record order.")
    times = property(lambda self: self._column(1), doc="The time of each sample.")
    sessions = property(lambda self: self._column(2), doc="The session serial of each sample.")
    turns = property(lambda self: self._column(3), doc="The ``turn_no`` of each sample.")

    def __reduce__(self):  # (the records of a run are not pickled: their lists are)
        return (Observe, (self.name, self.samples, self.times, self.sessions, self.turns),
                (None, {"_stats": self._stats}))

    def _summary(self):
        s = self._stats
        if s is None:
            s = self._stats = observe_summary(self.samples)
        return s

    count = property(lambda self: self._summary()[0], doc="Number of samples.")
    mean = property(lambda self: self._summary()[1], doc="Welford running mean (NaN if none).")
    ci = property(lambda self: self._summary()[2],
                  doc="Batch-means 95 % half-width (+inf below 40 samples).")
    cv2 = property(lambda self: self._summary()[3],
                   doc="Sample variance (n-1) over mean squared (NaN if n < 2 or mean 0).")
    p99 = property(lambda self: self._summary()[4], doc="99th percentile (NaN if none).")

    def __eq__(self, other):
        if not isinstance(other, Observe):
            return NotImplemented
        return (self.name == other.name and _lists_eq(self.samples, other.samples)
                and _lists_eq(self.times, other.times) and self.sessions == other.sessions
                and self.turns == other.turns
                and _lists_eq(self._summary(), other._summary()))

    __hash__ = None

    def __repr__(self):
        return (f"Observe({self.name!r}, count={self.count}, mean={self.mean!r}, "
                f"ci={self.ci!r}, cv2={self.cv2!r}, p99={self.p99!r})")


class Gauge:
    """One gauge: its change points and its time statistics over ``[warmup, end]``.

    ``Gauge(name, times, values, warmup, end)``: point ``i`` holds ``values[i]`` from
    ``times[i]``. ``mean``, ``ci`` (batch means of 20 equal windows), ``min`` and ``max`` are
    computed on first access (:func:`serq.sim.stats.gauge_stats`). ``stats=(mean, ci, min,
    max)`` gives them instead. ``Gauge.of_points(name, points, warmup, end)`` keeps a run's
    points (``serq.sim.gauges.Gauge``) and makes the lists on first access.
    """

    __slots__ = ("name", "_points", "_kept", "warmup", "end", "_stats")

    def __init__(self, name, times=(), values=(), warmup=0.0, end=0.0, *, stats=None):
        self.name = name
        self._points = (list(times), list(values))
        self._kept = None
        self.warmup = float(warmup)
        self.end = float(end)
        if stats is not None:
            stats = tuple(float(x) for x in stats)
            if len(stats) != 4:
                raise ValueError("Gauge stats are (mean, ci, min, max)")
        self._stats = stats

    @classmethod
    def of_points(cls, name, kept, warmup, end):
        """A gauge over a run's change points ``kept`` (``points()``: two new lists), read
        only when the lists or a statistic are first asked for (why: ``Observe.of_records``)."""
        gauge = cls(name, warmup=warmup, end=end)
        gauge._points = None
        gauge._kept = kept
        return gauge

    def _lists(self):
        points = self._points
        if points is None:
            points = self._points = self._kept.points()
            self._kept = None  # (the run's points are freed)
        return points

    times = property(lambda self: self._lists()[0], doc="The change points' times.")
    values = property(lambda self: self._lists()[1], doc="The value from each change point.")

    def __reduce__(self):  # (as Observe's)
        return (Gauge, (self.name, self.times, self.values, self.warmup, self.end),
                (None, {"_stats": self._stats}))

    def _summary(self):
        s = self._stats
        if s is None:
            s = self._stats = gauge_stats(self.times, self.values, self.warmup, self.end)
        return s

    mean = property(lambda self: self._summary()[0], doc="Time average over [warmup, end].")
    ci = property(lambda self: self._summary()[1],
                  doc="Batch-means 95 % half-width over 20 equal windows.")
    min = property(lambda self: self._summary()[2],
                   doc="Least value held for a positive time in [warmup, end].")
    max = property(lambda self: self._summary()[3],
                   doc="Greatest value held for a positive time in [warmup, end].")

    def __eq__(self, other):
        if not isinstance(other, Gauge):
            return NotImplemented
        return (self.name == other.name and _lists_eq(self.times, other.times)
                and _lists_eq(self.values, other.values)
                and _lists_eq(self._summary(), other._summary()))

    __hash__ = None

    def __repr__(self):
        return (f"Gauge({self.name!r}, mean={self.mean!r}, ci={self.ci!r}, min={self.min!r}, "
                f"max={self.max!r})")


# ---------------------------------------------------------------------------------------
# rows

STAGE_FIELDS = ("name", "index", "mean_number", "utilization", "completed", "throughput",
                "mean_wait", "mean_service", "iterations", "prefill_only", "decode_only",
                "mixed", "mean_decodes", "mean_decode_batch", "mean_decode_step", "mean_itl",
                "itl_p50", "itl_p99")
POOL_FIELDS = ("name", "index", "mean_used", "mean_cached", "mean_queue", "mean_holders",
               "mean_wait", "admissions", "evicted_entries", "evicted_units", "preemptions",
               "spills", "rejected", "stuck")


class _Row:
    __slots__ = ()
    _fields: tuple = ()

    def as_dict(self) -> dict:
        """The row's fields in output order."""
        return {f: getattr(self, f) for f in self._fields}

    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        return all(_eq(getattr(self, f), getattr(other, f)) for f in self._fields)

    __hash__ = None

    def __repr__(self):
        inner = ", ".join(f"{f}={getattr(self, f)!r}" for f in self._fields)
        return f"{type(self).__name__}({inner})"

    @property
    def label(self) -> str:
        """``name`` or ``name[index]``."""
        return self.name if self.index is None else f"{self.name}[{self.index}]"


class Stage(_Row):
    """One stage's row (one per member of a stage array). Non-step stages report the step
    fields as 0 (``iterations``, the three fractions, ``mean_decodes``) and NaN (the decode
    means and the ITL statistics): those are the defaults."""

    __slots__ = STAGE_FIELDS
    _fields = STAGE_FIELDS

    def __init__(self, name, index, mean_number, utilization, completed, throughput,
                 mean_wait, mean_service, iterations=0, prefill_only=0.0, decode_only=0.0,
                 mixed=0.0, mean_decodes=0.0, mean_decode_batch=_NAN, mean_decode_step=_NAN,
                 mean_itl=_NAN, itl_p50=_NAN, itl_p99=_NAN):
        self.name = name
        self.index = index
        self.mean_number = mean_number
        self.utilization = utilization
        self.completed = completed
        self.throughput = throughput
        self.mean_wait = mean_wait
        self.mean_service = mean_service
        self.iterations = iterations
        self.prefill_only = prefill_only
        self.decode_only = decode_only
        self.mixed = mixed
        self.mean_decodes = mean_decodes
        self.mean_decode_batch = mean_decode_batch
        self.mean_decode_step = mean_decode_step
        self.mean_itl = mean_itl
        self.itl_p50 = itl_p50
        self.itl_p99 = itl_p99


class Pool(_Row):
    """One pool's row (one per member of a pool array)."""

    __slots__ = POOL_FIELDS
    _fields = POOL_FIELDS

    def __init__(self, name, index, mean_used, mean_cached, mean_queue, mean_holders,
                 mean_wait, admissions, evicted_entries, evicted_units, preemptions, spills,
                 rejected, stuck):
        self.name = name
        self.index = index
        self.mean_used = mean_used
        self.mean_cached = mean_cached
        self.mean_queue = mean_queue
        self.mean_holders = mean_holders
        self.mean_wait = mean_wait
        self.admissions = admissions
        self.evicted_entries = evicted_entries
        self.evicted_units = evicted_units
        self.preemptions = preemptions
        self.spills = spills
        self.rejected = rejected
        self.stuck = stuck


# ---------------------------------------------------------------------------------------
# the report


def _by_name(items, kind):
    if isinstance(items, Mapping):
        items = items.values()
    out = {}
    for it in items:
        if not isinstance(it, kind):
            raise TypeError(f"expected {kind.__name__}, got {type(it).__name__}")
        if it.name in out:
            raise ValueError(f"two {kind.__name__.lower()}s named {it.name!r}")
        out[it.name] = it
    return out


def _rows(items, kind):
    out = list(items)
    for it in out:
        if not isinstance(it, kind):
            raise TypeError(f"expected {kind.__name__}, got {type(it).__name__}")
    return out


class Report:
    """What a run reports: the fields of ``Report.json()`` by the same names, with each
    observation's samples and each gauge's change points (pyserq 0.1.2's ``Report``).

    ``Report(horizon, end, warmup, seed, events, arrivals, ended, turns, mean_live, observes,
    gauges, stages, pools)``: ``observes``/``gauges`` are iterables of :class:`Observe` /
    :class:`Gauge` in program order (or mappings name -> object), kept as dicts by name;
    ``stages``/``pools`` lists of :class:`Stage` / :class:`Pool` rows.
    """

    __slots__ = ("horizon", "end", "warmup", "seed", "events", "arrivals", "ended", "turns",
                 "mean_live", "observes", "gauges", "stages", "pools", "claims")

    serq_version = SERQ_VERSION

    def __init__(self, horizon, end, warmup, seed, events, arrivals, ended, turns, mean_live,
                 observes: Iterable[Observe] = (), gauges: Iterable[Gauge] = (),
                 stages: Iterable[Stage] = (), pools: Iterable[Pool] = (), claims=None):
        self.horizon = float(horizon)
        self.end = float(end)
        self.warmup = float(warmup)
        self.seed = int(seed)
        self.events = int(events)
        self.arrivals = int(arrivals)
        self.ended = int(ended)
        self.turns = int(turns)
        self.mean_live = float(mean_live)
        self.observes = _by_name(observes, Observe)
        self.gauges = _by_name(gauges, Gauge)
        self.stages = _rows(stages, Stage)
        self.pools = _rows(pools, Pool)
        # the claims' results (``serq.claims.ClaimResult``), in program order; None for a
        # program without claims, whose report then has no ``claims`` section (v0.1.2's)
        self.claims = None if claims is None else list(claims)

    # -- look-ups (pyserq's methods) ---------------------------------------------------

    def observe(self, name):
        """The observation ``name``, or ``None``."""
        return self.observes.get(name)

    def gauge(self, name):
        """The gauge ``name``, or ``None``."""
        return self.gauges.get(name)

    def stage(self, name):
        """The first stage row named ``name``, or ``None``."""
        return next((s for s in self.stages if s.name == name), None)

    def pool(self, name):
        """The first pool row named ``name``, or ``None``."""
        return next((p for p in self.pools if p.name == name), None)

    def stages_named(self, name):
        """Every row of the stage ``name`` (a stage array's members), in index order."""
        return _index_order([s for s in self.stages if s.name == name])

    def pools_named(self, name):
        """Every row of the pool ``name`` (a pool array's members), in index order."""
        return _index_order([p for p in self.pools if p.name == name])

    # -- output ------------------------------------------------------------------------

    def json(self) -> str:
        """The summary as the reference's ``Report.json()`` writes it, byte for byte."""
        from serq.report.json import report_json
        return report_json(self)

    def text(self, program_name=None) -> str:
        """The human-readable report (:func:`serq.report.format_text`)."""
        from serq.report.text import format_text
        return format_text(self, program_name=program_name)

    # -- tables (the pandas extra) -----------------------------------------------------

    def to_pandas(self):
        """One row per observation sample: ``observation``, ``time``, ``session``, ``turn``,
        ``value`` (a ``pandas.DataFrame``; :func:`serq.report.tables.samples_frame`)."""
        from serq.report.tables import samples_frame
        return samples_frame(self)

    def requests(self):
        """One wide row per (session, turn): ``start``, ``end`` and a column per observation
        (:func:`serq.report.tables.requests_frame`)."""
        from serq.report.tables import requests_frame
        return requests_frame(self)

    def gauges_frame(self):
        """Every gauge's change points: ``gauge``, ``time``, ``value``
        (:func:`serq.report.tables.gauges_frame`)."""
        from serq.report.tables import gauges_frame
        return gauges_frame(self)

    def metrics(self, percentiles=None) -> dict:
        """Every number of the report under its metric name (``ttft.p99``,
        ``gauge.kv_used.mean``, ...; :func:`serq.report.metrics.flat_metrics`)."""
        from serq.report.metrics import DEFAULT_PERCENTILES, flat_metrics
        return flat_metrics(self, percentiles or DEFAULT_PERCENTILES)

    @classmethod
    def from_json(cls, text, samples=None) -> "Report":
        """A report read back from its ``json()`` text (``null`` reads NaN, or +inf for a
        ``ci``). With ``samples`` (the parsed ``{"observes": {name: {samples, times,
        sessions, turns}}, "gauges": {name: {times, values}}}`` of the conformance corpus'
        ``NAME.samples.json``), observations and gauges listed there are rebuilt from their
        records and recompute their statistics; the others keep the text's."""
        if isinstance(text, (str, bytes)):
            doc = _json.loads(text, parse_int=_parse_int)
        else:
            doc = text
        return _from_doc(cls, doc, samples or {})

    def __eq__(self, other):
        if not isinstance(other, Report):
            return NotImplemented
        return (all(_eq(getattr(self, f), getattr(other, f)) for f in self.__slots__[:9])
                and list(self.observes.items()) == list(other.observes.items())
                and list(self.gauges.items()) == list(other.gauges.items())
                and self.stages == other.stages and self.pools == other.pools
                and self.claims == other.claims)

    __hash__ = None

    def __repr__(self):
        return (f"Report(horizon={self.horizon!r}, end={self.end!r}, warmup={self.warmup!r}, "
                f"seed={self.seed}, events={self.events}, observes={list(self.observes)}, "
                f"gauges={list(self.gauges)}, stages={len(self.stages)}, "
                f"pools={len(self.pools)})")


def _parse_int(s):
    return -0.0 if s == "-0" else int(s)  # keep the sign of a written ``-0``


def _index_order(rows):
    return sorted(rows, key=lambda r: -1 if r.index is None else r.index)


def _num(x, null=_NAN):
    return null if x is None else float(x)


def _from_doc(cls, doc, samples):
    sobs = samples.get("observes", {})
    sgau = samples.get("gauges", {})
    warmup, end = _num(doc["warmup"]), _num(doc["end"])
    observes = []
    for name, o in doc.get("observes", {}).items():
        rec = sobs.get(name)
        if rec is not None:
            observes.append(Observe(name, rec["samples"], rec["times"], rec["sessions"],
                                    rec["turns"]))
        else:
            observes.append(Observe(name, stats=(o["count"], _num(o["mean"]),
                                                 _num(o["ci"], _INF), _num(o["cv2"]),
                                                 _num(o["p99"]))))
    gauges = []
    for name, g in doc.get("gauges", {}).items():
        rec = sgau.get(name)
        if rec is not None:
            gauges.append(Gauge(name, rec["times"], rec["values"], warmup, end))
        else:
            gauges.append(Gauge(name, warmup=warmup, end=end,
                                stats=(_num(g["mean"]), _num(g["ci"], _INF), _num(g["min"]),
                                       _num(g["max"]))))
    stages = [Stage(**_typed(row, STAGE_FIELDS, _STAGE_INTS)) for row in doc.get("stages", [])]
    pools = [Pool(**_typed(row, POOL_FIELDS, _POOL_INTS)) for row in doc.get("pools", [])]
    claims = None
    if "claims" in doc:
        from serq.report.claims import ClaimResult
        claims = [ClaimResult(**c) for c in doc["claims"]]
    return cls(_num(doc["horizon"]), end, warmup, doc["seed"], doc["events"], doc["arrivals"],
               doc["ended"], doc["turns"], _num(doc["mean_live"]), observes, gauges, stages,
               pools, claims)


_STAGE_INTS = frozenset({"name", "index", "completed", "iterations"})
_POOL_INTS = frozenset({"name", "index", "admissions", "evicted_entries", "evicted_units",
                        "preemptions", "spills", "rejected", "stuck"})


def _typed(row, fields, ints):
    extra = set(row) - set(fields)
    if extra:
        raise ValueError(f"unknown report row fields: {sorted(extra)}")
    return {f: (row[f] if f in ints else _num(row[f])) for f in fields if f in row}
