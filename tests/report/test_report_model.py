"""The report's object graph: pyserq 0.1.2's API (look-ups, attributes, rows), built by hand.

Expected values are hand calculations (stated next to each check) or the API's documented
behaviour (pyserq's docstrings: `stage(name)` is the first row of that name, `stages_named`
every row in index order, `observe`/`gauge` return None when absent).
"""
import math

import pytest

from serq.report import (POOL_FIELDS, SERQ_VERSION, STAGE_FIELDS, Gauge, Observe, Pool,
                         Report, Stage)


def stage(name, index=None, **kw):
    row = dict(name=name, index=index, mean_number=1.0, utilization=0.5, completed=3,
               throughput=0.3, mean_wait=0.0, mean_service=1.0)
    row.update(kw)
    return Stage(**row)


def pool(name, index=None, **kw):
    row = dict(name=name, index=index, mean_used=2.0, mean_cached=0.0, mean_queue=0.0,
               mean_holders=1.0, mean_wait=math.nan, admissions=4, evicted_entries=0,
               evicted_units=0, preemptions=0, spills=0, rejected=0, stuck=0)
    row.update(kw)
    return Pool(**row)


def report(**kw):
    args = dict(horizon=10.0, end=10.0, warmup=0.0, seed=1, events=5, arrivals=2, ended=2,
                turns=0, mean_live=0.5, observes=[], gauges=[], stages=[], pools=[])
    args.update(kw)
    return Report(**args)


def test_field_orders():
    assert STAGE_FIELDS == ("name", "index", "mean_number", "utilization", "completed",
                            "throughput", "mean_wait", "mean_service", "iterations",
                            "prefill_only", "decode_only", "mixed", "mean_decodes",
                            "mean_decode_batch", "mean_decode_step", "mean_itl", "itl_p50",
                            "itl_p99")
    assert POOL_FIELDS == ("name", "index", "mean_used", "mean_cached", "mean_queue",
                           "mean_holders", "mean_wait", "admissions", "evicted_entries",
                           "evicted_units", "preemptions", "spills", "rejected", "stuck")
    assert list(stage("a").as_dict()) == list(STAGE_FIELDS)
    assert list(pool("kv").as_dict()) == list(POOL_FIELDS)


def test_stage_defaults_are_the_non_step_values():
    # spec §12.3: non-step stages report iterations, fractions, mean_decodes 0 and the decode
    # means and ITL statistics null
    s = stage("gate")
    assert (s.iterations, s.prefill_only, s.decode_only, s.mixed, s.mean_decodes) == (0, 0, 0,
                                                                                     0, 0)
    assert all(math.isnan(getattr(s, f)) for f in ("mean_decode_batch", "mean_decode_step",
                                                     "mean_itl", "itl_p50", "itl_p99"))


def test_rows_positional_and_keyword():
    values = ["E", 0, 1.0, 0.5, 3, 0.3, 0.0, 1.0, 6, 0.1, 0.2, 0.3, 0.4, 2.0, 1.5, 1.2, 1.1, 1.3]
    s = Stage(*values)
    assert [getattr(s, f) for f in STAGE_FIELDS] == values
    assert Stage(**dict(zip(STAGE_FIELDS, values))) == s
    with pytest.raises(TypeError):
        Stage(**dict(zip(STAGE_FIELDS, values)), extra=1)
    with pytest.raises(TypeError):
        Pool(name="kv", index=None)  # every pool field is required


def test_slots_reject_typos():
    r = report()
    with pytest.raises(AttributeError):
        r.mean_lve = 1.0
    with pytest.raises(AttributeError):
        stage("a").utilisation = 1.0
    with pytest.raises(AttributeError):
        pool("kv").evicted = 1
    with pytest.raises(AttributeError):
        Observe("x").sample = []
    with pytest.raises(AttributeError):
        Gauge("g").value = []


def test_report_attributes_and_lookups():
    o = Observe("lat", [1.0, 3.0], [0.5, 1.5], [0, 1], [0, 0])
    g = Gauge("busy", [0.0, 2.0], [1.0, 0.0], 0.0, 4.0)
    rows = [stage("rep", 0), stage("gate"), stage("rep", 1)]
    pools = [pool("kv", 0), pool("kv", 1), pool("slots")]
    r = report(observes=[o], gauges=[g], stages=rows, pools=pools)
    assert r.serq_version == SERQ_VERSION == "0.1.2"
    assert (r.horizon, r.end, r.warmup, r.seed, r.events, r.arrivals, r.ended, r.turns,
            r.mean_live) == (10.0, 10.0, 0.0, 1, 5, 2, 2, 0, 0.5)
    assert list(r.observes) == ["lat"] and r.observes["lat"] is o and r.observe("lat") is o
    assert r.gauge("busy") is g and r.gauges == {"busy": g}
    assert r.observe("nope") is None and r.gauge("nope") is None
    assert r.stage("rep") is rows[0] and r.stage("gate") is rows[1] and r.stage("x") is None
    assert r.stages_named("rep") == [rows[0], rows[2]]
    assert r.pool("kv") is pools[0] and r.pools_named("kv") == pools[:2]
    assert r.pool("none") is None and r.pools_named("none") == []
    assert r.stages == rows and r.pools == pools


def test_stages_named_index_order():
    rows = [stage("rep", 1), stage("rep", 0)]
    assert [s.index for s in report(stages=rows).stages_named("rep")] == [0, 1]


def test_observe_statistics_hand():
    # hand: samples 1 and 3: mean 2, m2 = 2, var 2, cv2 2 / 4 = 0.5; ci +inf (< 40 samples);
    # p99 = element ceil(1.98) - 1 = 1 of [1, 3] = 3
    o = Observe("lat", [1.0, 3.0], [0.5, 1.5], [0, 1], [0, 2])
    assert (o.count, o.mean, o.ci, o.cv2, o.p99) == (2, 2.0, math.inf, 0.5, 3.0)
    assert (o.name, o.samples, o.times, o.sessions, o.turns) == ("lat", [1.0, 3.0],
                                                                 [0.5, 1.5], [0, 1], [0, 2])
    e = Observe("none")
    assert e.count == 0 and math.isnan(e.mean) and math.isnan(e.p99)
    given = Observe("x", stats=(5, 1.0, math.inf, 0.25, 2.0))
    assert (given.count, given.mean, given.cv2, given.p99) == (5, 1.0, 0.25, 2.0)


def test_gauge_statistics_hand():
    # hand: 1 on [0,2), 0 on [2,4]: mean 2/4 = 0.5; windows of 0.2: ten 1s, ten 0s ->
    # ci = 2.093 * sqrt((20 * 0.25) / 19 / 20); min 0, max 1
    g = Gauge("busy", [0.0, 2.0], [1.0, 0.0], 0.0, 4.0)
    assert g.mean == 0.5 and (g.min, g.max) == (0.0, 1.0)
    assert abs(g.ci - 2.093 * math.sqrt(5 / 19 / 20)) < 1e-15
    assert g.times == [0.0, 2.0] and g.values == [1.0, 0.0] and g.name == "busy"


def test_report_json_hand():
    # hand-written expected text, following §12.3's key order and §12.4's number format
    r = report(observes=[Observe("x", [0.5, -0.0], [1.0, 2.0], [0, 1], [0, 0])],
               gauges=[Gauge("g", [0.0], [2.0], 0.0, 10.0)],
               stages=[stage("gate")], pools=[pool("kv", 0)])
    # x: mean 0.25, cv2 = (0.125 / 1) / 0.0625 = 2, p99 = 0.5 (index 1 of [-0, 0.5])
    # g: constant 2 -> mean 2; windows 0.5 wide, each 2 * 0.5 / 0.5 = 2 exactly -> ci 0
    assert r.json() == (
        '{"serq_version":"0.1.2","horizon":10,"end":10,"warmup":0,"seed":1,"events":5,'
        '"arrivals":2,"ended":2,"turns":0,"mean_live":0.5,'
        '"observes":{"x":{"count":2,"mean":0.25,"ci":null,"cv2":2,"p99":0.5}},'
        '"gauges":{"g":{"mean":2,"ci":0,"min":2,"max":2}},'
        '"stages":[{"name":"gate","index":null,"mean_number":1,"utilization":0.5,'
        '"completed":3,"throughput":0.3,"mean_wait":0,"mean_service":1,"iterations":0,'
        '"prefill_only":0,"decode_only":0,"mixed":0,"mean_decodes":0,'
        '"mean_decode_batch":null,"mean_decode_step":null,"mean_itl":null,"itl_p50":null,'
        '"itl_p99":null}],'
        '"pools":[{"name":"kv","index":0,"mean_used":2,"mean_cached":0,"mean_queue":0,'
        '"mean_holders":1,"mean_wait":null,"admissions":4,"evicted_entries":0,'
        '"evicted_units":0,"preemptions":0,"spills":0,"rejected":0,"stuck":0}]}')


def test_observes_mapping_and_duplicates():
    a, b = Observe("a"), Observe("b")
    assert list(report(observes={"a": a, "b": b}).observes) == ["a", "b"]
    with pytest.raises(ValueError):
        report(observes=[a, Observe("a")])
    with pytest.raises(TypeError):
        report(stages=[pool("kv")])


def test_equality():
    assert stage("a") == stage("a") and stage("a") != stage("b")
    assert stage("a", mean_wait=math.nan) == stage("a", mean_wait=float("nan"))
    assert stage("a", mean_wait=0.0) != stage("a", mean_wait=-0.0)
    r1 = report(observes=[Observe("x", [1.0], [0.0], [0], [0])])
    r2 = report(observes=[Observe("x", [1.0], [0.0], [0], [0])])
    assert r1 == r2 and r1 != report()
