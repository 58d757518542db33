"""Report tables (the pandas extra): samples, requests, gauges; checked against the report's
own records."""
import math
import pathlib

import pytest

import serq

pd = pytest.importorskip("pandas")

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def report():
    return serq.run(serq.compile(str(ROOT / "examples" / "vllm_engine.sq"), horizon=30,
                                 warmup=5))


def test_to_pandas_is_one_row_per_sample(report):
    df = report.to_pandas()
    assert list(df.columns) == ["observation", "time", "session", "turn", "value"]
    assert len(df) == sum(o.count for o in report.observes.values())
    ttft = df[df.observation == "ttft"]
    o = report.observe("ttft")
    assert ttft.value.tolist() == o.samples and ttft.session.tolist() == o.sessions
    assert ttft.time.tolist() == o.times and ttft.turn.tolist() == o.turns


def test_requests_is_one_wide_row_per_session_and_turn(report):
    req = report.requests()
    assert list(req.columns) == ["session", "turn", "start", "end", "reused", "ttft", "tpot",
                                 "latency"]
    keys = set()
    for o in report.observes.values():
        keys.update(zip(o.sessions, o.turns))
    assert len(req) == len(keys)
    assert req[["session", "turn"]].apply(tuple, axis=1).is_monotonic_increasing
    lat = report.observe("latency")
    by_key = req.set_index(["session", "turn"])
    for v, s, k, t in zip(lat.samples, lat.sessions, lat.turns, lat.times):
        assert by_key.loc[(s, k), "latency"] == v
        assert by_key.loc[(s, k), "end"] == t  # latency is a request's last observation


def test_gauges_frame_holds_the_change_points(report):
    g = report.gauges_frame()
    assert list(g.columns) == ["gauge", "time", "value"]
    kv = g[g.gauge == "kv_used"]
    assert kv.time.tolist() == report.gauge("kv_used").times
    assert kv.value.tolist() == report.gauge("kv_used").values


def test_a_program_without_observations_gives_empty_frames():
    r = serq.run(serq.compile(source="stage s : fifo(1);\nworkload { arrive poisson(1); }\n"
                                     "session { run s (1); end; }\nrun { horizon 10; }"))
    assert r.to_pandas().empty and r.requests().empty and r.gauges_frame().empty
    assert list(r.requests().columns) == ["session", "turn", "start", "end"]


def test_metrics_names_every_number(report):
    m = report.metrics()
    assert m["ttft.p99"] == report.observe("ttft").p99
    assert m["ttft.mean"] == report.observe("ttft").mean
    assert m["gauge.kv_used.max"] == report.gauge("kv_used").max
    assert m["stage.engine.mean_itl"] == report.stage("engine").mean_itl
    assert m["pool.kv.preemptions"] == report.pool("kv").preemptions
    xs = sorted(report.observe("ttft").samples)
    assert m["ttft.p50"] == xs[math.ceil(0.5 * len(xs)) - 1]
    assert "stage.engine.iterations" in m
