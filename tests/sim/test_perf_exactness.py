"""The interpreter's fast paths keep every report bit: the benchmark programs at short
horizons give the reference's report (pinned: SHA-256 of ``Report.json()`` from pyserq 0.1.2),
and the accumulators' batch methods equal their one-by-one ``add``."""
from __future__ import annotations

import hashlib
import math
import pathlib
import random
import re

import pytest

import serq
from serq.sim.stats import LogHist

ROOT = pathlib.Path(__file__).resolve().parents[2]
PROGRAMS = ROOT / "benchmarks" / "programs"

MM1 = """
stage server : fifo(1);
workload { arrive poisson(0.8); }
session { set t0 = now; run server (~exp(1)); observe response = now - t0; end; }
run { horizon 5000; seed 1; }
"""

# (source, horizon, events, sha256 of the reference's report JSON)
CASES = {
    "mm1": (MM1, None, 7991,
            "0be38d95e882d71a8ea06fbf58f601f3c2ac6a652b19cbeaf9d76ac09a43c538"),
    "step_kv": ("step_kv.sq", 150, 24790,
                "586cb14965c7237c780e103e17ef4938814f684981397e2ff6cc9a84d9cd77b8"),
    "step_busy": ("step_busy.sq", 150, 16312,
                  "86638c0a7bc4bc807739b26200069133b9b1260cfcd8eb92a54a1e7fb1717df8"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_report_is_the_references(name):
    src, horizon, events, digest = CASES[name]
    if src.endswith(".sq"):
        src = (PROGRAMS / src).read_text()
    if horizon is not None:
        src = re.sub(r"horizon [0-9.e]+", f"horizon {horizon}", src)
    report = serq.run(serq.compile(source=src))
    assert report.events == events
    assert hashlib.sha256(report.json().encode()).hexdigest() == digest


def _same(a, b):
    return a == b or (a != a and b != b)


def _hist_state(h):
    return h.count, h.sum, h._buckets, repr(h._zero)


def test_loghist_batches_equal_adds():
    rng = random.Random(5)
    values = [0.0, -1.0, math.nan, 1e-300, 0.5, 2.0]
    for _ in range(300):
        one, rep, ext = LogHist(), LogHist(), LogHist()
        xs = []
        for _ in range(rng.randint(0, 15)):
            x = rng.choice(values + [rng.random(), rng.expovariate(1.0)])
            k = rng.randint(1, 4)
            xs += [x] * k
            for _ in range(k):
                one.add(x)
            rep.add_repeat(x, k)
        ext.extend(xs[:len(xs) // 2])
        ext.extend(xs[len(xs) // 2:])
        for other in (rep, ext):
            a, b = _hist_state(one), _hist_state(other)
            assert a[0] == b[0] and _same(a[1], b[1]) and a[2] == b[2] and a[3] == b[3]
            for q in (0.5, 0.99):
                assert _same(one.quantile(q), other.quantile(q))
