"""serq.sim.stats: the report's accumulators, bit for bit.

Provenance of the expected values:
* "hand": worked out by hand in the comment next to the check (exactly representable
  inputs, so the float result is the exact one);
* "corpus": ../shared/conformance/run/*.report.json (written by the reference build,
  pyserq 0.1.2) recomputed from the matching *.samples.json;
* "reference": a value read from pyserq 0.1.2's objects for the program quoted in the comment
  (run once by hand for this suite, not by the tests).
"""
import json
import math
import os
import pathlib
import struct

import pytest

from serq.sim.stats import (LOG_STEP, LogHist, TimeAvg, Welford, batch_means_ci,
                            gauge_stats, observe_summary, p99, total_order_key)

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHARED = pathlib.Path(os.environ.get("SERQ_SHARED", ROOT.parent / "shared")).resolve()
RUN = SHARED / "conformance" / "run"

NAN = math.nan
INF = math.inf
NEG_NAN = struct.unpack("<d", struct.pack("<Q", 0xFFF8000000000000))[0]  # Rust's 0.0/0.0 on x86


def bits(x):
    return struct.pack("<d", x)


def same(a, b):
    """Bit identity (NaN equals NaN, -0.0 differs from 0.0)."""
    return bits(float(a)) == bits(float(b))


# ---------------------------------------------------------------------------------------
# Welford


def test_welford_hand():
    # hand: [1, 2, 3, 4]: means 1, 1.5, 2, 2.5; m2 = 0, 0.5, 2, 5 (each step exact)
    w = Welford()
    for x in (1.0, 2.0, 3.0, 4.0):
        w.add(x)
    assert w.n == 4 and w.mean == 2.5 and w.m2 == 5.0
    assert w.variance == 5.0 / 3.0
    assert w.cv2 == (5.0 / 3.0) / (2.5 * 2.5)


def test_welford_update_order():
    # hand: the update is d = x - mean; mean += d/n; m2 += d*(x - mean), in that order
    xs = [0.1, 0.7, 0.3, 1e-3, 12.5]
    n, mean, m2 = 0, 0.0, 0.0
    for x in xs:
        n += 1
        d = x - mean
        mean += d / n
        m2 += d * (x - mean)
    w = Welford()
    for x in xs:
        w.add(x)
    assert same(w.mean, mean) and same(w.m2, m2)


def test_welford_empty_and_degenerate():
    w = Welford()
    assert w.n == 0 and math.isnan(w.mean) and math.isnan(w.cv2) and math.isnan(w.variance)
    w.add(3.0)
    assert w.mean == 3.0 and math.isnan(w.cv2)  # n < 2
    z = Welford()
    for x in (-1.0, 1.0):
        z.add(x)
    assert z.mean == 0.0 and math.isnan(z.cv2)  # mean 0
    # corpus p50_negzero_format: one sample -0.0 has mean 0 (Welford starts from +0.0)
    nz = Welford()
    nz.add(-0.0)
    assert same(nz.mean, 0.0)


def test_welford_slots():
    w = Welford()
    with pytest.raises(AttributeError):
        w.count = 3


# ---------------------------------------------------------------------------------------
# TimeAvg


def test_time_avg_hand():
    # hand: value 0 on [0,1), 2 on [1,3), 1 on [3,4]: integral 0 + 4 + 1 = 5 over 4 -> 1.25
    a = TimeAvg(0.0, 0.0)
    a.set(1.0, 2.0)
    a.set(3.0, 1.0)
    assert a.mean(4.0) == 1.25
    assert a.mean(3.0) == 4.0 / 3.0  # the value held since the last change counts up to t
    # reset at 2: integral 0, start = last = 2, value stays 1 -> mean(4) = 1
    a.reset(2.0)
    assert a.mean(4.0) == 1.0
    a.set(3.0, 5.0)  # 1 on [2,3), 5 on [3,4]: (1 + 5) / 2
    assert a.mean(4.0) == 3.0


def test_time_avg_empty_span_is_current_value():
    a = TimeAvg(2.0, 7.0)
    assert a.mean(2.0) == 7.0 and a.mean(1.0) == 7.0
    b = TimeAvg()
    b.set(0.0, 1)  # integers are accepted; the mean is a float
    assert b.mean(0.0) == 1.0 and type(b.mean(0.0)) is float


def test_time_avg_same_instant_changes():
    # hand: several sets at one instant add value * 0; the last value is the one held
    a = TimeAvg()
    a.set(1.0, 3.0)
    a.set(1.0, 9.0)
    a.set(1.0, 4.0)
    assert a.mean(2.0) == 2.0  # 0 on [0,1), 4 on [1,2]


def test_time_avg_slots():
    a = TimeAvg()
    with pytest.raises(AttributeError):
        a.valeu = 1.0


# ---------------------------------------------------------------------------------------
# LogHist (ITL)


def test_loghist_step_constant():
    assert LOG_STEP == math.log1p(0.01)


def test_loghist_single_bucket_clamps_to_sample():
    # hand: 1.2 in bucket k = floor(ln 1.2 / L) = 18; its middle exp(18.5 L) = 1.01^18.5
    # ~ 1.2018 lies above the bucket's max 1.2 -> clamped to 1.2
    h = LogHist()
    for _ in range(3):
        h.add(1.2)
    assert math.floor(math.log(1.2) / LOG_STEP) == 18
    assert h.quantile(0.5) == 1.2 and h.quantile(0.99) == 1.2
    assert h.mean == (1.2 + 1.2 + 1.2) / 3


def test_loghist_bucket_middle():
    # hand: 1.0 and 1.009 share bucket 0 (ln 1.009 / L ~ 0.90); the middle exp(0.5 L) =
    # sqrt(1.01) ~ 1.0049876 lies inside [1.0, 1.009], so it is the answer
    h = LogHist()
    h.add(1.0)
    h.add(1.009)
    mid = math.exp(0.5 * LOG_STEP)
    assert h.quantile(0.5) == mid and abs(mid - math.sqrt(1.01)) < 1e-15


def test_loghist_ranks_walk_buckets():
    # hand: samples 1, 2, 4, 8 are in four buckets; rank r = ceil(q n) clamped to [1, n]
    h = LogHist()
    for x in (8.0, 1.0, 4.0, 2.0):
        h.add(x)
    assert h.quantile(0.0) == 1.0  # r clamped up to 1
    assert h.quantile(0.5) == 2.0  # r = 2 -> bucket of 2 (one sample: clamped to it)
    assert h.quantile(0.51) == 4.0  # r = ceil(2.04) = 3
    assert h.quantile(0.99) == 8.0 and h.quantile(1.0) == 8.0


def test_loghist_nonpositive_bucket():
    # hand: zeros and negatives share the lowest bucket, middle 0 clamped into [min, max]
    h = LogHist()
    for x in (0.0, 0.0, 5.0):
        h.add(x)
    assert h.quantile(0.5) == 0.0 and h.quantile(0.99) == 5.0
    g = LogHist()
    for x in (-1.0, -0.5):
        g.add(x)
    assert g.quantile(0.5) == -0.5  # 0 clamped to the bucket max -0.5
    assert h.mean == 5.0 / 3


def test_loghist_empty():
    h = LogHist()
    assert math.isnan(h.quantile(0.5)) and math.isnan(h.mean) and h.count == 0


ITL_GOLDEN = ROOT / "tests" / "report" / "golden" / "reference_itl.json"


@pytest.mark.parametrize("case", json.loads(ITL_GOLDEN.read_text())["itl"],
                         ids=lambda c: f"seed{c['seed']}")
def test_loghist_reference_itl(case):
    # reference: token times of step-engine runs and the stage's mean_itl/itl_p50/itl_p99
    # (tests/report/golden/reference_itl.json states the program); the middles of buckets 0
    # and 4 are answered unclamped (1.004987562112089, 1.045794087133964), zero gaps included
    h = LogHist()
    last = {}
    for t, s in zip(case["token_times"], case["token_sessions"]):
        if s in last:
            h.add(t - last[s])
        last[s] = t
    assert h.count == case["tokens"] * case["sessions_per_batch"] - case["sessions_per_batch"]
    assert same(h.mean, case["mean_itl"])
    assert same(h.quantile(0.5), case["itl_p50"])
    assert same(h.quantile(0.99), case["itl_p99"])


def test_loghist_slots():
    with pytest.raises(AttributeError):
        LogHist().total = 1


# ---------------------------------------------------------------------------------------
# p99, batch means, observe_summary


def test_p99_rank():
    # hand: n = 100 -> ceil(99) - 1 = index 98; n = 45 -> ceil(44.55) - 1 = 44; n = 1 -> 0
    assert p99([float(i) for i in range(100, 0, -1)]) == 99.0
    assert p99([float(i) for i in range(45)]) == 44.0
    assert p99([3.5]) == 3.5
    assert math.isnan(p99([]))


def test_p99_total_order():
    # reference: `observe z = serial == 0 ? 0 : -0.0` (batch(2)) has samples [0.0, -0.0]
    # and p99 0 (positive): -0.0 sorts below 0.0
    assert same(p99([0.0, -0.0]), 0.0) and same(p99([-0.0, 0.0]), 0.0)
    # reference: 100 samples `serial < 50 ? 0/0 : serial` (0/0 is a NaN with the sign bit set)
    # give p99 98: the 50 negative NaNs sort first; a positive NaN (`-(0/0)`) sorts last and
    # is the p99 (null)
    xs = [NEG_NAN] * 50 + [float(i) for i in range(50, 100)]
    assert p99(xs) == 98.0
    assert math.isnan(p99([-NEG_NAN] * 50 + [float(i) for i in range(50, 100)]))
    ys = [float(i) if i < 50 else NEG_NAN for i in range(100)]
    assert p99(ys) == 48.0  # reference: `serial >= 50 ? 0/0 : serial` -> 48


def test_total_order_key():
    xs = [INF, -0.0, NEG_NAN, 1.0, -INF, 0.0, -NEG_NAN, -1.0, 5e-324]
    got = sorted(xs, key=total_order_key)
    assert [bits(x) for x in got] == [bits(x) for x in
                                      (NEG_NAN, -INF, -1.0, -0.0, 0.0, 5e-324, 1.0, INF,
                                       -NEG_NAN)]


def test_batch_means_hand():
    # hand: 40 samples 0,0,1,1,0,0,1,1,...: batch size 2, batch means alternate 0 and 1;
    # s = 0.5, ss = 20 * 0.25 = 5, var = 5/19, half-width 2.093 * sqrt(5/19/20)
    xs = [float((i // 2) % 2) for i in range(40)]
    n, mean, ci, cv2, top = observe_summary(xs)
    assert n == 40 and mean == 0.5 and top == 1.0
    assert ci == 2.093 * math.sqrt(5.0 / 19.0 / 20.0)
    # hand: the remainder n mod 20 at the end is ignored: 59 samples -> batches of 2 from
    # the start, the last 19 samples (huge) play no part in the CI
    ys = xs + [1e9] * 19
    assert observe_summary(ys)[2] == ci
    assert batch_means_ci([0.0, 1.0] * 10) == ci


def test_ci_below_40_is_inf():
    assert observe_summary([1.0, 2.0] * 19 + [3.0])[2] == INF  # 39 samples
    assert observe_summary([])[:2] == (0, observe_summary([])[1])
    assert math.isnan(observe_summary([])[1]) and math.isnan(observe_summary([])[4])


def test_constant_samples_give_zero_ci():
    # corpus p07_numbers: 45 samples all 0 -> mean 0, ci 0, cv2 null (mean 0), p99 0
    assert observe_summary([0.0] * 45)[:3] == (45, 0.0, 0.0)


# ---------------------------------------------------------------------------------------
# gauges


def test_gauge_p31_worked_example():
    # corpus p31_gauge_instant_end (the spec's example): holders 1 on [0,2) then 0, span
    # [0.5, 3]. Hand: mean 1.5 / 2.5 = 0.6; windows of width 0.125: 12 average 1, 8 average
    # 0 -> s = 0.6, ss = 12 * 0.16 + 8 * 0.36 = 4.8, ci = 2.093 * sqrt(4.8 / 19 / 20)
    mean, ci, lo, hi = gauge_stats([0.0, 2.0], [1.0, 0.0], 0.5, 3.0)
    assert mean == 0.6 and ci == 0.23523289243685827 and (lo, hi) == (0.0, 1.0)
    assert abs(ci - 2.093 * math.sqrt(4.8 / 19 / 20)) < 1e-15
    mean, ci, lo, hi = gauge_stats([0.0, 2.0], [3.0, 0.0], 0.5, 3.0)
    assert (mean, ci, lo, hi) == (1.8, 0.7056986773105749, 0.0, 3.0)  # corpus p31, gauge u


def test_gauge_window_average_divides_by_width():
    # reference: a constant gauge 1 from t=1 over [2, 10] (points (0, NaN), (1, 1)) reports
    # ci 8.920345452429873e-16, not 0: the 20 window integrals 1 * (b - a), with edges
    # 2 + i * 0.4, divided by the width 0.4, are not all exactly 1
    mean, ci, lo, hi = gauge_stats([0.0, 1.0], [NAN, 1.0], 2.0, 10.0)
    assert (mean, lo, hi) == (1.0, 1.0, 1.0) and ci == 8.920345452429873e-16
    mean, ci, _, _ = gauge_stats([0.0, 1.0], [NAN, 1.0], 1.0, 10.0)
    assert mean == 1.0 and ci == 5.522077769185332e-16  # reference, warm-up 1


def test_gauge_window_edges():
    # reference: `stage gate : delay; pool kv { cap 10; } workload { arrive batch(1); }
    # session { run gate (1); end; } gauge q = used(kv) / 7 + 0.3;` (seed 1) has the single
    # point (0, 0.3); horizon 9.2397856 with warm-up 2.6 gives ci 1.9740628608548357e-16,
    # horizon 12 with warm-up 0 gives 1.1339971144030678e-16. Only the window edges
    # `warmup + i * width` (last window ending at `end`), each integral divided by `width`,
    # give both (not `warmup + span * i / 20`, not a running `a += width`)
    assert gauge_stats([0.0], [0.3], 2.6, 9.2397856) == (0.3, 1.9740628608548357e-16, 0.3, 0.3)
    assert gauge_stats([0.0], [0.3], 0.0, 12.0) == (0.3, 1.1339971144030678e-16, 0.3, 0.3)


def test_gauge_nonfinite_values():
    # reference: gauge `queue(gate) > 3 ? 1/0 : queue(gate)` = inf on [0,1), 0 after
    # warm-up 1: the inf held for no time inside the span does not count (mean 0, ci 0)
    assert gauge_stats([0.0, 1.0], [INF, 0.0], 1.0, 10.0) == (0.0, 0.0, 0.0, 0.0)
    # warm-up 0.5: mean and ci null, min 0, max inf
    mean, ci, lo, hi = gauge_stats([0.0, 1.0], [INF, 0.0], 0.5, 10.0)
    assert mean == INF and math.isnan(ci) and lo == 0.0 and hi == INF
    # NaN held inside the span: mean/ci NaN, min/max ignore it (Rust f64::min/max)
    mean, ci, lo, hi = gauge_stats([0.0, 1.0], [NAN, 0.0], 0.0, 10.0)
    assert math.isnan(mean) and math.isnan(ci) and (lo, hi) == (0.0, 0.0)
    # reference: an all-NaN gauge (`gauge g = 0/0`) has min inf, max -inf
    mean, ci, lo, hi = gauge_stats([0.0], [NAN], 0.0, 10.0)
    assert math.isnan(mean) and (lo, hi) == (INF, -INF)


def test_gauge_zero_length_last_point_is_not_held():
    # reference: fifo(1), arrivals 5, warm-up 1, end 2.5: the last point (2.5, 0) lasts no
    # time, so min is 1, not 0
    times = [0.0, 0.10005151768790048, 0.5, 0.5346689435783162, 0.7378202084093557, 1.0,
             1.2938053896903, 1.5, 2.0, 2.5]
    values = [1.0, 2.0, 1.0, 2.0, 3.0, 2.0, 3.0, 2.0, 1.0, 0.0]
    assert gauge_stats(times, values, 1.0, 2.5) == (1.8041297402064667, 0.3061118676646652,
                                                   1.0, 3.0)


def test_gauge_empty():
    mean, ci, lo, hi = gauge_stats([], [], 0.0, 1.0)
    assert math.isnan(mean) and ci == INF
    mean, ci, lo, hi = gauge_stats([0.0], [1.0], 1.0, 1.0)  # span 0
    assert math.isnan(mean) and ci == INF


# ---------------------------------------------------------------------------------------
# the corpus, every observation and gauge


def _corpus():
    if not RUN.is_dir():
        return []
    out = []
    for path in sorted(RUN.glob("*.samples.json")):
        name = path.name[:-len(".samples.json")]
        out.append(name)
    return out


CASES = _corpus()


def _parse_int(s):
    return -0.0 if s == "-0" else int(s)


def _want(x):
    return NAN if x is None else float(x)


def test_corpus_present():
    assert CASES, f"the conformance corpus is missing at {RUN} (set SERQ_SHARED)"


@pytest.mark.parametrize("name", CASES)
def test_corpus_observations_and_gauges(name):
    rep = json.loads((RUN / f"{name}.report.json").read_text(), parse_int=_parse_int)
    rec = json.loads((RUN / f"{name}.samples.json").read_text())
    assert list(rec["observes"]) == list(rep["observes"])
    assert list(rec["gauges"]) == list(rep["gauges"])
    for oname, o in rec["observes"].items():
        want = rep["observes"][oname]
        got = observe_summary(o["samples"])
        assert got[0] == want["count"], oname
        for field, g in zip(("mean", "ci", "cv2", "p99"), got[1:]):
            w = want[field]
            if w is None:
                assert not math.isfinite(g), (oname, field, g)
            else:
                assert same(g, w), (oname, field, g, w)
    for gname, g in rec["gauges"].items():
        want = rep["gauges"][gname]
        got = gauge_stats(g["times"], g["values"], float(rep["warmup"]), float(rep["end"]))
        for field, x in zip(("mean", "ci", "min", "max"), got):
            w = want[field]
            if w is None:
                assert not math.isfinite(x), (gname, field, x)
            else:
                assert same(x, w), (gname, field, x, w)
