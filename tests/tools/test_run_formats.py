"""`serq run --percentiles` and `--format vllm`: checked against the report's own samples
(nearest-rank percentiles; vllm's numpy definitions) and by hand."""
import json
import math
import pathlib

import numpy as np
import pytest

import serq
from serq import cli as serq_cli
from serq.report.metrics import percentile

ROOT = pathlib.Path(__file__).resolve().parents[2]
MM1 = str(ROOT / "examples" / "mm1.sq")
VLLM = str(ROOT / "examples" / "vllm_engine.sq")
SHORT = ["--horizon", "1500", "--warmup", "100"]


def run_cli(capsys, *args):
    code = serq_cli.main(list(args))
    cap = capsys.readouterr()
    return code, cap.out, cap.err


@pytest.fixture(scope="module")
def vllm_report():
    return serq.run(serq.compile(VLLM, horizon=60, warmup=10))


def test_percentile_is_the_reports_nearest_rank_rule(vllm_report):
    for o in vllm_report.observes.values():
        assert percentile(o.samples, 99) == o.p99
        xs = sorted(o.samples)
        assert percentile(o.samples, 50) == xs[math.ceil(len(xs) / 2) - 1]
    assert percentile([3.0, 1.0, 2.0], 100) == 3.0 and percentile([5.0], 1) == 5.0
    assert math.isnan(percentile([], 50))


def test_text_percentile_columns(capsys):
    code, out, _ = run_cli(capsys, "run", MM1, *SHORT, "--percentiles", "50,90,99.9")
    assert code == 0
    lines = out.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.strip().startswith("name"))
    assert lines[head].split()[-3:] == ["p50", "p90", "p99.9"]
    rep = serq.run(serq.compile(MM1, horizon=1500, warmup=100))
    samples = rep.observe("response").samples
    from serq.report.text import fmt_number
    cells = lines[head + 2].split()
    assert cells[-3:] == [fmt_number(percentile(samples, q)) for q in (50, 90, 99.9)]


def test_json_keeps_the_v012_text_and_adds_a_last_key(capsys):
    _, plain, _ = run_cli(capsys, "run", MM1, *SHORT, "--json")
    code, more, _ = run_cli(capsys, "run", MM1, *SHORT, "--json", "--percentiles", "50,99")
    assert code == 0
    assert more.startswith(plain.rstrip("\n")[:-1] + ',"percentiles":{')
    doc = json.loads(more)
    assert list(doc)[-1] == "percentiles"
    assert doc["percentiles"]["response"]["p99"] == doc["observes"]["response"]["p99"]
    rep = serq.run(serq.compile(MM1, horizon=1500, warmup=100))
    assert doc["percentiles"]["response"]["p50"] == percentile(rep.observe("response").samples,
                                                               50)


def test_vllm_keys_come_from_the_observations(capsys, vllm_report):
    code, out, _ = run_cli(capsys, "run", VLLM, "--horizon", "60", "--warmup", "10",
                           "--format", "vllm", "--percentiles", "50,90,99",
                           "--goodput", "ttft:500", "tpot:12")
    assert code == 0
    doc = json.loads(out)
    r = vllm_report
    for key, name in (("ttft", "ttft"), ("tpot", "tpot"), ("e2el", "latency")):
        ms = np.asarray(r.observe(name).samples) * 1e3
        assert doc[f"mean_{key}_ms"] == pytest.approx(ms.mean(), rel=1e-12)
        assert doc[f"median_{key}_ms"] == pytest.approx(np.median(ms), rel=1e-12)
        assert doc[f"std_{key}_ms"] == pytest.approx(ms.std(), rel=1e-12)
        assert doc[f"p90_{key}_ms"] == pytest.approx(np.percentile(ms, 90), rel=1e-12)
    engine = r.stage("engine")
    assert doc["mean_itl_ms"] == pytest.approx(engine.mean_itl * 1e3)
    assert doc["p99_itl_ms"] == pytest.approx(engine.itl_p99 * 1e3)
    assert doc["std_itl_ms"] is None and doc["p90_itl_ms"] is None
    assert doc["duration"] == 50.0 and doc["completed"] == r.observe("latency").count
    assert doc["request_throughput"] == pytest.approx(r.observe("latency").count / 50.0)
    # goodput by hand: requests (session, turn) whose ttft <= 0.5 s and tpot <= 12 ms
    ttft = {(s, k): v for s, k, v in zip(*(getattr(r.observe("ttft"), f)
                                           for f in ("sessions", "turns", "samples")))}
    tpot = {(s, k): v for s, k, v in zip(*(getattr(r.observe("tpot"), f)
                                           for f in ("sessions", "turns", "samples")))}
    lat = r.observe("latency")
    good = sum(1 for key in zip(lat.sessions, lat.turns)
               if key in ttft and key in tpot and ttft[key] <= 0.5 and tpot[key] <= 0.012)
    assert 0 < good < lat.count
    assert doc["request_goodput"] == pytest.approx(good / 50.0)
    # output tokens: the engine decodes lam * mean answer = 14 * 200 = 2800 tokens/s
    assert doc["output_throughput"] == pytest.approx(2800, rel=0.08)
    assert doc["serq_mapping"]["e2el"] == "observe latency"
    assert doc["total_input_tokens"] is None


def test_vllm_time_unit_and_map(capsys):
    code, out, _ = run_cli(capsys, "run", MM1, *SHORT, "--format", "vllm", "--time-unit", "us",
                           "--map", "e2el=response")
    assert code == 0
    doc = json.loads(out)
    rep = serq.run(serq.compile(MM1, horizon=1500, warmup=100))
    assert doc["mean_e2el_ms"] == pytest.approx(rep.observe("response").mean * 1e-3)
    assert doc["duration"] == pytest.approx(1400 * 1e-6)
    assert doc["mean_ttft_ms"] is None and doc["serq_mapping"]["ttft"] is None


@pytest.mark.parametrize("args, message", [
    (["--goodput", "ttft:5"], "apply to --format vllm only"),
    (["--format", "vllm", "--goodput", "itl:5"], "expected KEY:MS"),
    (["--format", "vllm", "--goodput", "ttft:x"], "is not a number"),
    (["--format", "vllm", "--map", "e2el=nope"], "no observation 'nope'"),
    (["--format", "vllm", "--map", "foo=response"], "expected METRIC=OBSERVATION"),
    (["--percentiles", "0"], "not in \\(0, 100\\]"),
    (["--json", "--format", "vllm"], "contradict"),
])
def test_bad_output_options(capsys, args, message):
    import re
    code, _, err = run_cli(capsys, "run", MM1, *SHORT, *args)
    assert code == 1 and re.search(message, err), err
