"""`serq sweep` and serq.sweep: the grid, the replications, the across-seed CIs, the files.

Every number checked here is recomputed from independent `serq.run` calls (the library's own
answer) or by hand; M/M/1 runs are short (horizon 1500, a few thousand events).
"""
import csv
import math
import pathlib
import statistics

import pytest

import serq
from serq import cli as serq_cli
from serq.sweep import Source, interval, parse_axis, run_sweep
from serq.sweep.grid import grid_points

pytest.importorskip("scipy")
pytest.importorskip("tqdm")

ROOT = pathlib.Path(__file__).resolve().parents[2]
MM1 = str(ROOT / "examples" / "mm1.sq")
SHORT = (("horizon", 1500.0), ("warmup", 100.0))

# Student-t 0.975 quantiles: 2 degrees of freedom in closed form, (2a-1)/sqrt(2a(1-a)) with
# a = 0.975; 3 degrees of freedom 3.18245 from the standard tables (NIST/SEMATECH e-Handbook
# of Statistical Methods, 1.3.6.7.2), compared to 6 digits
A = 0.975
T975 = {2: (2 * A - 1) / math.sqrt(2 * A * (1 - A)), 3: 3.18245}


def test_axis_ranges_include_the_stop_and_lists_keep_expressions():
    assert parse_axis("lam=11:14:0.5").values == (11, 11.5, 12, 12.5, 13, 13.5, 14)
    assert parse_axis("x=0.1:0.3:0.1").values == (0.1, 0.2, 0.3)
    assert parse_axis("kv_blocks=2048,4096").values == ("2048", "4096")
    assert parse_axis("cap=4*1024,8*1024").values == ("4*1024", "8*1024")
    assert parse_axis("x=max(1, 2),min(3,4)").values == ("max(1, 2)", "min(3,4)")
    pts = grid_points([parse_axis("a=1,2"), parse_axis("b=3:4:1")])
    assert pts == [{"a": "1", "b": 3}, {"a": "1", "b": 4}, {"a": "2", "b": 3},
                   {"a": "2", "b": 4}]


@pytest.mark.parametrize("text, message", [
    ("lam", "expected NAME=VALUES"),
    ("lam=1:0:0.5", "range is empty"),
    ("lam=0:1:0", "step must be positive"),
    ("lam=0:x:1", "'x' is not a number"),
    ("lam=1,,2", "an empty value"),
])
def test_bad_axes_say_what_is_wrong(text, message):
    with pytest.raises(ValueError, match=message):
        parse_axis(text)


def test_interval_is_the_student_t_interval():
    xs = [1.0, 2.0, 4.0, 5.0]
    iv = interval(xs)
    sd = statistics.stdev(xs)
    assert iv.n == 4 and iv.mean == 3.0
    assert iv.ci == pytest.approx(T975[3] * sd / 2.0, rel=2e-6)
    assert interval([1.0, math.nan, math.inf, 3.0]).n == 2
    one = interval([2.0])
    assert one.n == 1 and one.mean == 2.0 and math.isnan(one.ci)


def test_sweep_rows_are_independent_runs_and_summaries_their_cis():
    source = Source(MM1, settings=SHORT)
    result = run_sweep(source, [parse_axis("lam=0.5,0.7")], [3, 4, 5], jobs=2)
    assert [r["lam"] for r in result.rows] == [0.5] * 3 + [0.7] * 3
    assert [r["seed"] for r in result.rows] == [3, 4, 5] * 2
    for row in result.rows:  # each row is that (point, seed) run, by itself
        rep = serq.run(serq.compile(MM1, sets={"lam": str(row["lam"])}, seed=row["seed"],
                                    horizon=1500, warmup=100))
        o = rep.observe("response")
        assert row["response.mean"] == o.mean and row["response.p99"] == o.p99
        assert row["response.count"] == o.count
        assert row["gauge.utilization.mean"] == rep.gauge("utilization").mean
        assert row["stage.server.throughput"] == rep.stage("server").throughput
        ordered = sorted(o.samples)
        assert row["response.p50"] == ordered[math.ceil(0.5 * len(ordered)) - 1]
    for i, summ in enumerate(result.summaries):
        for metric in ("response.mean", "response.p99", "gauge.in_system.mean"):
            xs = [r[metric] for r in result.rows[3 * i:3 * i + 3]]
            assert summ[metric].mean == pytest.approx(statistics.fmean(xs), rel=1e-12)
            assert summ[metric].ci == pytest.approx(T975[2] * statistics.stdev(xs) / 3 ** 0.5,
                                                    rel=1e-12)
    # more load, longer responses
    assert result.summaries[1]["response.mean"].mean > result.summaries[0]["response.mean"].mean


def test_the_pool_and_a_single_process_give_the_same_rows():
    source = Source(MM1, settings=SHORT)
    axes = [parse_axis("lam=0.6:0.7:0.1")]
    assert run_sweep(source, axes, [1, 2], jobs=1).rows == run_sweep(source, axes, [1, 2],
                                                                      jobs=2).rows


def test_cli_sweep_prints_the_summary_and_writes_rows_and_summary(tmp_path, capsys):
    out, summ = tmp_path / "rows.csv", tmp_path / "summary.csv"
    code = serq_cli.main(["sweep", MM1, "--set", "lam=0.5:0.6:0.1", "--set", "s=1",
                          "--seeds", "2", "--seed", "11", "-j", "2", "--horizon", "1500",
                          "--warmup", "100", "--out", str(out), "--summary", str(summ)])
    cap = capsys.readouterr()
    assert code == 0, cap.err
    lines = cap.out.splitlines()
    assert lines[0].startswith("serq sweep: 2 points × 2 seeds (seeds 11–12)")
    assert lines[1].split() == ["lam", "s", "response.mean", "response.p99"]
    assert lines[3].split()[:2] == ["0.5", "1"] and lines[4].split()[:2] == ["0.6", "1"]
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["lam"], r["s"], r["seed"]) for r in rows] == [
        ("0.5", "1", "11"), ("0.5", "1", "12"), ("0.6", "1", "11"), ("0.6", "1", "12")]
    rep = serq.run(serq.compile(MM1, sets={"lam": 0.6}, seed=12, horizon=1500, warmup=100))
    assert float(rows[3]["response.mean"]) == rep.observe("response").mean
    with open(summ, newline="") as f:
        srows = [r for r in csv.DictReader(f) if r["metric"] == "response.mean"]
    assert [(r["lam"], r["n"]) for r in srows] == [("0.5", "2"), ("0.6", "2")]
    xs = [float(r["response.mean"]) for r in rows[:2]]
    assert float(srows[0]["mean"]) == pytest.approx(statistics.fmean(xs), rel=1e-12)
    assert "wrote" in cap.err and "progress" not in cap.err  # no bar on a pipe


def test_cli_sweep_parquet(tmp_path, capsys):
    pq = pytest.importorskip("pyarrow.parquet")
    out = tmp_path / "rows.parquet"
    assert serq_cli.main(["sweep", MM1, "--set", "lam=0.5,0.6", "--seeds", "2", "-j", "1",
                          "--horizon", "1500", "--warmup", "100", "--out", str(out)]) == 0
    table = pq.read_table(out).to_pydict()
    assert table["lam"] == [0.5, 0.5, 0.6, 0.6] and table["seed"] == [7, 8, 7, 8]


@pytest.mark.parametrize("args, message", [
    (["--set", "lam=1:0:1"], "range is empty"),
    (["--set", "nope=1,2"], "nope"),
    (["--set", "lam=0.5", "--out", "x.txt"], "must end in .csv or .parquet"),
    (["--set", "lam=0.5", "--metrics", "response.p42"], "no metric 'response.p42'"),
    (["--set", "lam=0.5", "--percentiles", "50,101"], "not in \\(0, 100\\]"),
])
def test_cli_sweep_bad_input_is_one_message_and_status_1(args, message, capsys):
    code = serq_cli.main(["sweep", MM1, "--seeds", "2", "-j", "1", "--horizon", "500",
                          "--warmup", "10", *args])
    err = capsys.readouterr().err
    assert code == 1
    assert "Traceback" not in err
    import re
    assert re.search(message, err), err


def test_dask_backend_on_a_local_cluster_gives_the_same_rows():
    pytest.importorskip("dask.distributed")
    source = Source(MM1, settings=SHORT)
    axes = [parse_axis("lam=0.5,0.6")]
    local = run_sweep(source, axes, [1, 2], jobs=1)
    assert run_sweep(source, axes, [1, 2], jobs=2, backend="dask").rows == local.rows


def test_ray_backend_on_a_local_cluster_gives_the_same_rows():
    pytest.importorskip("ray")
    source = Source(MM1, settings=SHORT)
    axes = [parse_axis("lam=0.5,0.6")]
    local = run_sweep(source, axes, [1, 2], jobs=1)
    assert run_sweep(source, axes, [1, 2], jobs=2, backend="ray").rows == local.rows


def test_progress_bar_on_a_terminal(monkeypatch, capsys):
    import io
    import sys

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    monkeypatch.delenv("SERQ_PROGRESS", raising=False)
    assert serq_cli.main(["sweep", MM1, "--set", "lam=0.5,0.6", "--seeds", "3", "-j", "1",
                          "--horizon", "300", "--warmup", "10"]) == 0
    text = term.getvalue()
    import re
    # tqdm's line: done/total, [elapsed<remaining, rate], redrawn with \r, erased at the end
    assert re.search(r"\| [0-6]/6 \[\d\d:\d\d<(\?|\d\d:\d\d), [ ?\d.]+run/s\]", text), text
    assert text.endswith("\r")
    capsys.readouterr()
    term2 = Terminal()
    monkeypatch.setattr(sys, "stderr", term2)
    assert serq_cli.main(["sweep", MM1, "--set", "lam=0.5", "--seeds", "2", "-j", "1",
                          "--horizon", "300", "--warmup", "10", "--no-progress"]) == 0
    assert "/2 [" not in term2.getvalue()
