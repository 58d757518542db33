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
from serq.sim.stats import LOG_STEP, LogHist

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


def _plain_hist(xs):
    """``(count, sum, buckets, zero bucket)`` by the histogram's rule (§8.7), value by value."""
    count = 0
    total = 0.0
    buckets = {}
    zero = None
    for x in xs:
        count += 1
        total += x
        if x > 0:
            b = buckets.setdefault(math.floor(math.log(x) / LOG_STEP), [0, x, x])
        else:
            zero = zero or [0, x, x]
            b = zero
        b[0] += 1
        if x < b[1]:
            b[1] = x
        if x > b[2]:
            b[2] = x
    return count, total, buckets, repr(zero)


def test_loghist_batches_equal_adds():
    rng = random.Random(5)
    values = [0.0, -1.0, math.nan, 1e-300, 0.5, 2.0]
    for _ in range(300):
        one, rep = LogHist(), LogHist()
        xs = []
        for _ in range(rng.randint(0, 15)):
            x = rng.choice(values + [rng.random(), rng.expovariate(1.0)])
            k = rng.randint(1, 4)
            xs += [x] * k
            for _ in range(k):
                one.add(x)
            rep.add_repeat(x, k)
        want = _plain_hist(xs)
        for h in (one, rep):
            got = _hist_state(h)
            assert got[0] == want[0] and _same(got[1], want[1]) and got[3] == want[3]
            assert repr(got[2]) == repr(want[2])
        for q in (0.5, 0.99):
            assert _same(one.quantile(q), rep.quantile(q))


def _evict_one_by_one(pl, need, cap):
    """``evict lru`` piece by piece, as the interpreter did before it evicted a long entry
    all at once."""
    from serq.sim.pools import EPS
    while pl.used + pl.cached + need > cap and pl.entries:
        ent = next(iter(pl.entries.values()))
        piece = pl.block if pl.block is not None else ent.size
        if piece > ent.size:
            piece = ent.size
        ent.size -= piece
        if ent.size <= EPS:
            del pl.entries[ent.key]
            pl.evicted_entries += 1
        pl.cached -= piece
        pl.evicted_units += piece


# a run with one LRU pool: the pools of the test below are made for its Sim (compiled, a
# pool's run is the engine's typed state, which no stand-in can be)
EVICT_PROGRAM = """
pool p { cap 100; block 16; evict lru; }
workload { arrive poisson(1); }
session { hold p (1) { } end; }
run { horizon 10; seed 1; }
"""


def test_evict_lru_equals_piece_by_piece():
    from serq.ir import types as T
    from serq.sim.engine import Sim
    from serq.sim.pools import EPS, Entry, PoolState
    sim = Sim(serq.compile(source=EVICT_PROGRAM))
    rng = random.Random(1)
    for _ in range(3000):
        block = rng.choice([None, 16, 16.0, 1, 4.0, 7])
        sizes = []
        for _ in range(rng.randint(0, 6)):
            if block is None or rng.random() < 0.2:
                sizes.append(rng.choice([rng.randint(1, 200) * 1.0, rng.random() * 100]))
            elif rng.random() < 0.7:
                sizes.append(float(rng.randint(1, 20) * block))
            else:
                sizes.append(float(rng.randint(1, 300)))
        used = float(rng.randint(0, 500)) if rng.random() < 0.9 else rng.random() * 100
        need = float(rng.randint(0, 300)) if rng.random() < 0.9 else rng.random() * 50
        cap = rng.randint(0, 1500) + EPS
        units = rng.choice([0.0, 160.0, 3.5])
        pools = []
        for _ in range(2):  # a pool of the engine's own type (compiled, a C struct)
            decl = T.Pool("p", None, cap, block, T.EvictLru(), "None", None, None, None)
            pl = PoolState(sim, 0, decl)
            pl.evicted_units = units
            pl.used = used
            for i, s in enumerate(sizes):
                pl.entries[i] = Entry(i, s, 0.0, i, None)
                pl.cached += s
            pools.append(pl)
        _evict_one_by_one(pools[0], need, cap)
        pools[1].evict(need, cap)
        a, b = ([(p.cached, p.evicted_units, p.evicted_entries,
                  [(k, e.size) for k, e in p.entries.items()])] for p in pools)
        assert repr(a) == repr(b)
