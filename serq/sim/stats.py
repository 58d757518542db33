"""Statistics accumulators, bit for bit as the reference computes them (spec §8.7, §11, §12).

Every formula here was pinned down against the conformance corpus (``run/*.report.json`` with
``run/*.samples.json``) and, where the corpus does not tell variants apart, against runs of the
reference build; the float operation order matters and is written out in each docstring.

* :class:`Welford` -- running mean and sum of squared deviations (observations, stage waits and
  services, decode batch/step means).
* :class:`TimeAvg` -- a piecewise-constant time average (``live``, stage occupancy, pool use).
* :class:`LogHist` -- the ITL histogram (exact mean, log-bucket quantiles).
* :func:`observe_summary` -- an observation's ``count, mean, ci, cv2, p99`` from its samples.
* :func:`gauge_stats` -- a gauge's ``mean, ci, min, max`` from its change points.
"""
from __future__ import annotations

import math
import struct

try:
    import cython
except ImportError:  # Cython not installed: the no-op stand-in, the module runs interpreted
    from serq import _cython_shim as cython

from serq.ir.arith import add, div

if cython.compiled:  # the C functions math.log and math.floor call for a finite float
    from cython.cimports.libc.math import floor as _floor, log as _log
else:
    _floor = math.floor
    _log = math.log

__all__ = ["Welford", "TimeAvg", "LogHist", "T_95", "BATCHES", "LOG_STEP",
           "batch_means_ci", "p99", "total_order_key", "total_eq", "observe_summary",
           "gauge_stats"]

NAN = math.nan
INF = math.inf

#: Student t quantile for 19 degrees of freedom (20 batches), as the reference writes it.
T_95 = 2.093
#: Number of batches (observations) and of windows (gauges).
BATCHES = 20
#: The ITL histogram's bucket width in log space, ``ln_1p(0.01)`` (not ``log(1.01)``).
LOG_STEP = math.log1p(0.01)
_LOG_STEP = cython.declare(cython.double, LOG_STEP)  # the same, a C double compiled

_pack = struct.Struct("<d").pack
_unpack_i64 = struct.Struct("<q").unpack


# ---------------------------------------------------------------------------------------
# Welford


@cython.final
@cython.cclass
class Welford:
    """Running count, mean and sum of squared deviations.

    Update (the reference's order, matched on every corpus observation)::

        n += 1; d = x - mean; mean += d / n; m2 += d * (x - mean)

    ``mean`` reads NaN while empty (the report's ``null``); ``variance`` is ``m2 / (n - 1)``;
    ``cv2`` is ``variance / (mean * mean)``, NaN when ``n < 2`` or the mean is 0.

    Compiled, its fields are C numbers (``stats.pxd``) and ``add`` a C call for typed callers
    (issue 10); an int ``x`` converts to the same double the interpreted ``x - mean`` makes.
    """

    __slots__ = ("n", "_mean", "m2")

    def __init__(self):
        self.n = 0
        self._mean = 0.0
        self.m2 = 0.0

    @cython.ccall
    @cython.exceptval(check=False)  # C arithmetic only, n >= 1: it cannot fail (no check)
    @cython.locals(n=cython.Py_ssize_t, d=cython.double)
    def add(self, x: cython.double) -> cython.void:
        n = self.n + 1
        self.n = n
        d = x - self._mean
        self._mean += d / n
        self.m2 += d * (x - self._mean)

    @property
    def mean(self):
        return self._mean if self.n else NAN

    @property
    def variance(self):
        return self.m2 / (self.n - 1) if self.n >= 2 else NAN

    @property
    def cv2(self):
        if self.n < 2 or self._mean == 0.0:
            return NAN
        # the mean's square may underflow to 0: then inf, or NaN for a zero variance (Rust)
        return div((self.m2 / (self.n - 1)), (self._mean * self._mean))

    def __repr__(self):
        return f"Welford(n={self.n}, mean={self.mean!r}, m2={self.m2!r})"


# ---------------------------------------------------------------------------------------
# time averages


@cython.final
@cython.cclass
class TimeAvg:
    """Time average of a piecewise-constant value (§12.1).

    ``set(t, v)`` adds ``value * (t - last)`` to the integral (always, even for ``t == last``)
    and holds ``v`` from ``t``; ``reset(t)`` zeroes the integral and sets ``start = last = t``;
    ``mean(t) = (integral + value * (t - last)) / (t - start)``, or the current value when
    ``t - start <= 0``.

    Compiled, the fields are C doubles (``stats.pxd``) and ``set`` a C call for typed callers
    (issue 10). Callers pass ints for counts (``live``, pool use): ``value * (t - last)`` turns
    them into the same double either way, and ``mean`` returns a float in both modes.
    """

    __slots__ = ("value", "last", "integral", "start")

    def __init__(self, t0=0.0, v0=0.0):
        self.value = v0
        self.last = t0
        self.integral = 0.0
        self.start = t0

    @cython.ccall
    @cython.exceptval(check=False)  # C arithmetic only: it cannot fail (no check per call)
    def set(self, t: cython.double, v: cython.double) -> cython.void:
        self.integral += self.value * (t - self.last)
        self.value = v
        self.last = t

    def reset(self, t):
        self.integral = 0.0
        self.start = t
        self.last = t

    def mean(self, t):
        span = t - self.start
        if span <= 0:
            return float(self.value)
        return (self.integral + self.value * (t - self.last)) / span

    def __repr__(self):
        return (f"TimeAvg(value={self.value!r}, last={self.last!r}, integral={self.integral!r}, "
                f"start={self.start!r})")


# ---------------------------------------------------------------------------------------
# ITL histogram

_ZERO_BUCKET = None  # key of the bucket of every x <= 0 (sorted below every integer bucket)


@cython.final
@cython.cclass
class LogHist:
    """The ITL histogram (§8.7): exact mean, quantiles within half a bucket (0.5 %).

    Bucket of ``x > 0``: ``k = floor(ln(x) / L)`` with ``L = ln_1p(0.01)``; every ``x <= 0``
    shares one bucket below all others, whose middle is 0. Each bucket keeps its count, min and
    max. ``quantile(q)``: rank ``r = clamp(ceil(q * n), 1, n)``; walk the buckets upwards until
    the cumulative count reaches ``r``; answer ``exp((k + 0.5) * L)`` clamped into the bucket's
    ``[min, max]``. NaN while empty. ``mean`` is ``sum / count`` (the sum in insertion order).

    Compiled, ``count`` and ``sum`` are C numbers (``stats.pxd``) and ``add_repeat`` a C call
    for typed callers (the step engine's ``iter_end``, issue 10); a NaN is summed as
    ``arith.add`` sums it (of two NaNs the first, as CPython keeps it).
    """

    __slots__ = ("count", "sum", "_buckets", "_zero", "_lastq", "_lastb")

    def __init__(self):
        self.count = 0
        self.sum = 0.0
        self._buckets = {}  # k -> [count, min, max]
        self._zero = None  # [count, min, max] of the x <= 0 bucket
        # the bucket of the last x > 0 added (``_lastb``, None before one) and its k as
        # ``floor`` gave it (``_lastq``): consecutive latencies mostly share a bucket, which
        # is then found without a dictionary look-up (nor, compiled, an int object)
        self._lastq = 0.0
        self._lastb = None

    @cython.ccall
    def add(self, x: cython.double) -> cython.void:
        self.add_repeat(x, 1)

    @cython.ccall
    @cython.locals(total=cython.double, i=cython.Py_ssize_t, q=cython.double,
                   fq=cython.double, lo=cython.double, hi=cython.double, b=list)
    def add_repeat(self, x: cython.double, k: cython.Py_ssize_t) -> cython.void:
        """``add(x)`` ``k`` times (the sum still added one by one)."""
        self.count += k
        total = self.sum
        if x != x:
            for i in range(k):
                total = add(total, x)
        else:
            for i in range(k):
                total += x
        self.sum = total
        if x > 0:
            q = _log(x) / _LOG_STEP
            # math.floor of a float: an int, or OverflowError for inf (x = inf)
            fq = _floor(q) if q - q == 0.0 else math.floor(q)
            b = self._lastb
            if b is None or fq != self._lastq:
                kb = int(fq)
                b = self._buckets.get(kb)
                if b is None:
                    b = [k, x, x]
                    self._buckets[kb] = b
                    self._lastq = fq
                    self._lastb = b
                    return
                self._lastq = fq
                self._lastb = b
        else:
            b = self._zero
            if b is None:
                self._zero = [k, x, x]
                return
        b[0] += k
        lo = b[1]
        if x < lo:
            b[1] = x
        hi = b[2]
        if x > hi:
            b[2] = x

    @property
    def mean(self):
        return self.sum / self.count if self.count else NAN

    def quantile(self, q):
        n = self.count
        if n == 0:
            return NAN
        r = min(max(math.ceil(q * n), 1), n)
        cum = 0
        if self._zero is not None:
            c, lo, hi = self._zero
            cum += c
            if cum >= r:
                return min(max(0.0, lo), hi)
        for k in sorted(self._buckets):
            c, lo, hi = self._buckets[k]
            cum += c
            if cum >= r:
                return min(max(math.exp((k + 0.5) * LOG_STEP), lo), hi)
        raise AssertionError("the ranks add up to n")  # unreachable

    def __repr__(self):
        return f"LogHist(count={self.count}, mean={self.mean!r})"


# ---------------------------------------------------------------------------------------
# batch means, p99, observation summary


def batch_means_ci(means):
    """Half-width ``T_95 * sqrt(var / k)`` of ``k`` batch means, ``var`` their (k-1) variance.

    Float order (matched on the corpus): ``s = sum(means) / k``;
    ``ss = sum((m - s) * (m - s))``; ``var = ss / (k - 1)``; ``T_95 * sqrt(var / k)``.
    """
    k = len(means)
    s = 0.0
    for m in means:
        s += m
    s /= k
    ss = 0.0
    for m in means:
        d = m - s
        ss += d * d
    var = ss / (k - 1)
    return T_95 * math.sqrt(var / k)


def _observe_ci(samples):
    n = len(samples)
    if n < 2 * BATCHES:
        return INF
    size = n // BATCHES
    means = []
    for i in range(BATCHES):
        s = 0.0
        for x in samples[i * size:(i + 1) * size]:
            s += x
        means.append(s / size)
    return batch_means_ci(means)


def total_order_key(x):
    """Sort key of IEEE 754 ``totalOrder`` (Rust ``f64::total_cmp``): -NaN < -inf < ... < -0 <
    0 < ... < inf < NaN."""
    i = _unpack_i64(_pack(x))[0]
    return i ^ 0x7FFFFFFFFFFFFFFF if i < 0 else i


def p99(samples):
    """Sorted ascending by ``total_cmp``, element ``clamp(ceil(0.99 n), 1, n) - 1``; NaN if
    empty. (``-0.0`` sorts below ``0.0``; a NaN with the sign bit set sorts first, one without
    it last: the reference's ``0/0`` is a negative NaN.)"""
    n = len(samples)
    if n == 0:
        return NAN
    if any(x != x or x == 0.0 for x in samples):
        ordered = sorted(samples, key=total_order_key)
    else:
        ordered = sorted(samples)
    return ordered[min(max(math.ceil(0.99 * n), 1), n) - 1]


def observe_summary(samples):
    """``(count, mean, ci, cv2, p99)`` of an observation, exactly as the report writes them."""
    w = Welford()
    for x in samples:
        w.add(x)
    return w.n, w.mean, _observe_ci(samples), w.cv2, p99(samples)


# ---------------------------------------------------------------------------------------
# gauges


def total_eq(a, b):
    """IEEE total-order equality (bit patterns equal)."""
    if a == b:
        return a != 0.0 or math.copysign(1.0, a) == math.copysign(1.0, b)
    return a != a and b != b and _pack(a) == _pack(b)


def gauge_stats(times, values, warmup, end):
    """``(mean, ci, min, max)`` of a gauge's change points over ``[warmup, end]`` (§11).

    Point ``i`` holds ``values[i]`` on ``[times[i], times[i+1])`` (the last one up to ``end``).
    Float order (matched on every corpus gauge and 600 gauges of reference runs):

    * overlap of a segment ``[t0, t1)`` with ``[a, b]``: ``min(t1, b) - max(t0, a)``; only a
      positive overlap counts (a non-finite value held before the span does not poison it);
    * ``mean = (sum of v * overlap over [warmup, end], left to right) / span``,
      ``span = end - warmup``;
    * windows: ``width = span / 20``; window ``i`` is ``[warmup + i*width, warmup +
      (i+1)*width]``, the last one ending at ``end``; its average is its integral ``/ width``;
    * ``ci`` = :func:`batch_means_ci` of the 20 window averages;
    * ``min``/``max``: Rust ``f64::min``/``max`` folds (NaN ignored) from ``+inf``/``-inf`` over
      the values held for a positive time inside the span.

    ``span <= 0`` or no points: ``(NaN, +inf, +inf, -inf)`` (the JSON ``null``s).
    """
    span = end - warmup
    n = len(times)
    if span <= 0 or n == 0:
        return NAN, INF, INF, -INF
    last = max(end, times[-1])
    segs = [(times[i], times[i + 1] if i + 1 < n else last, values[i]) for i in range(n)]
    lo = INF
    hi = -INF
    total = 0.0
    for t0, t1, v in segs:
        ov = (t1 if t1 < end else end) - (t0 if t0 > warmup else warmup)
        if ov > 0:
            total += v * ov
            if v < lo:
                lo = v
            if v > hi:
                hi = v
    mean = total / span
    width = span / BATCHES
    avgs = []
    j = 0  # segments before j end at or before the current window's start
    for w in range(BATCHES):
        a = warmup + w * width
        b = end if w == BATCHES - 1 else warmup + (w + 1) * width
        while j < n and segs[j][1] <= a:
            j += 1
        s = 0.0
        for k in range(j, n):
            t0, t1, v = segs[k]
            if t0 >= b:
                break
            ov = (t1 if t1 < b else b) - (t0 if t0 > a else a)
            if ov > 0:
                s += v * ov
        avgs.append(div(s, width))  # a span below 20 * 5e-324 has windows of width 0
    return mean, batch_means_ci(avgs), lo, hi
