"""Across-replication statistics: the mean of a metric over independent replications (one
per seed) and its Student-t 95 % confidence interval.

Replications are independent runs, so the interval is the textbook one:
``mean ± t(0.975, n-1) * sd / sqrt(n)`` with ``sd`` the sample standard deviation (n-1).
This is not the report's batch-means interval (one run, correlated samples, spec §12.3); it
is the interval a sweep and a capacity search compare, for every metric, p99 included.
Values that are NaN or infinite (a metric that did not exist in that run) are left out and
``n`` says how many remained.
"""
from __future__ import annotations

import math

__all__ = ["Interval", "t_quantile", "interval", "summarize"]

LEVEL = 0.95


def t_quantile(df: int, level: float = LEVEL) -> float:
    """The two-sided ``level`` quantile of Student's t with ``df`` degrees of freedom
    (scipy's ``t.ppf``)."""
    from scipy.stats import t
    return float(t.ppf(0.5 + level / 2.0, df))


class Interval:
    """``n``, ``mean``, ``sd`` and the half-width ``ci`` of one metric over replications;
    ``lo``/``hi`` are ``mean ∓ ci``. With one value ``sd`` and ``ci`` are NaN; with none,
    everything is NaN."""

    __slots__ = ("n", "mean", "sd", "ci")

    def __init__(self, n, mean, sd, ci):
        self.n, self.mean, self.sd, self.ci = n, mean, sd, ci

    @property
    def lo(self):
        return self.mean - self.ci

    @property
    def hi(self):
        return self.mean + self.ci

    def as_dict(self) -> dict:
        return {"n": self.n, "mean": self.mean, "sd": self.sd, "ci": self.ci,
                "lo": self.lo, "hi": self.hi}

    def __repr__(self):
        return f"Interval(n={self.n}, mean={self.mean!r}, ci={self.ci!r})"


def interval(values, level: float = LEVEL) -> Interval:
    """The :class:`Interval` of ``values`` (one per replication)."""
    xs = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    n = len(xs)
    if n == 0:
        return Interval(0, math.nan, math.nan, math.nan)
    mean = math.fsum(xs) / n
    if n == 1:
        return Interval(1, mean, math.nan, math.nan)
    sd = math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (n - 1))
    return Interval(n, mean, sd, t_quantile(n - 1, level) * sd / math.sqrt(n))


def summarize(rows, metrics=None, level: float = LEVEL) -> dict:
    """``{metric: Interval}`` over ``rows`` (dicts of one point's replications); every metric
    any row has, in first-seen order, unless ``metrics`` names them."""
    if metrics is None:
        metrics = list(dict.fromkeys(k for r in rows for k in r))
    return {m: interval([r.get(m, math.nan) for r in rows], level) for m in metrics}
