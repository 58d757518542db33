"""serq.plot and `serq plot`: every plot renders to a valid PNG, with the axes, labels and
lines it should have. Short runs (vllm_engine.sq for 30 time units)."""
import pathlib
import struct

import pytest

import serq

pytest.importorskip("matplotlib")
import serq.plot as P  # noqa: E402
from serq import cli as serq_cli  # noqa: E402
from serq.sweep import Source, parse_axis, run_sweep  # noqa: E402
from serq.timeline import run_with_timeline  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
VLLM = str(ROOT / "examples" / "vllm_engine.sq")
MM1 = str(ROOT / "examples" / "mm1.sq")
PNG = b"\x89PNG\r\n\x1a\n"


def png_size(path):
    """(width, height) of a PNG, after checking its signature and IHDR chunk."""
    data = pathlib.Path(path).read_bytes()
    assert data[:8] == PNG and data[12:16] == b"IHDR" and len(data) > 1000
    return struct.unpack(">II", data[16:24])


@pytest.fixture(scope="module")
def run():
    return run_with_timeline(serq.compile(VLLM, horizon=30, warmup=5))


def test_cdf(run, tmp_path):
    report, _ = run
    fig = P.cdf(report, ["ttft", "latency"])
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_xlabel() for ax in axes] == ["ttft", "latency"]
    assert all(ax.get_ylabel() == "fraction ≤ x" for ax in axes)
    for ax, name in zip(axes, ["ttft", "latency"]):
        curve, p50, p99 = ax.get_lines()
        xs, ys = curve.get_data()
        assert len(xs) == report.observe(name).count and ys[-1] == 1.0
        assert p99.get_xdata()[0] == report.observe(name).p99
    w, h = png_size(P.save(fig, tmp_path / "cdf.png"))
    assert w > 300 and h > 200


def test_gauges(run, tmp_path):
    report, _ = run
    fig = P.gauges(report)
    assert [ax.get_ylabel() for ax in fig.axes] == ["kv_used", "running", "waiting"]
    assert fig.axes[-1].get_xlabel() == "time"
    line, mean = fig.axes[0].get_lines()
    assert mean.get_ydata()[0] == report.gauge("kv_used").mean
    assert len(line.get_xdata()) == len(report.gauge("kv_used").times) + 1
    png_size(P.save(fig, tmp_path / "gauges.png"))


def test_engine(run, tmp_path):
    report, timeline = run
    assert len(timeline) == report.stage("engine").iterations
    fig = P.engine(timeline, warmup=report.warmup)
    top, twin, bottom = fig.axes[0], fig.axes[2], fig.axes[1]
    assert top.get_ylabel() == "decode batch" and twin.get_ylabel() == "prefill tokens"
    assert bottom.get_ylabel() == "fraction of capacity" and bottom.get_xlabel() == "time"
    labels = [ln.get_label() for ln in bottom.get_lines()]
    assert labels == ["seqs used", "kv used", "kv cached"]
    kv = bottom.get_lines()[1].get_ydata()
    assert max(kv) <= 1.0 and max(kv) > 0.5  # the KV cache fills up at lam = 14
    png_size(P.save(fig, tmp_path / "engine.png"))


def test_load_curve(tmp_path):
    res = run_sweep(Source(MM1, settings=(("horizon", 800.0), ("warmup", 50.0))),
                    [parse_axis("lam=0.5:0.7:0.1"), parse_axis("s=0.8,1")], [1, 2, 3],
                    jobs=1)
    fig = P.load_curve(res, "lam", "response.mean", by="s", slo=5)
    (ax,) = fig.axes
    assert ax.get_xlabel() == "lam" and ax.get_ylabel() == "response.mean"
    lines = ax.get_lines()
    assert [ln.get_label() for ln in lines] == ["s = 0.8", "s = 1", "SLO 5"]
    assert list(lines[0].get_xdata()) == [0.5, 0.6, 0.7]
    means = [res.summaries[i]["response.mean"].mean for i in (0, 2, 4)]  # s = 0.8 rows
    assert list(lines[0].get_ydata()) == means
    assert len(ax.collections) == 2  # one CI band per curve
    png_size(P.save(fig, tmp_path / "sweep.png"))


def test_cli_plot_each_kind(tmp_path, capsys):
    args = ["--horizon", "20", "--warmup", "2"]
    for kind in ("cdf", "gauges", "engine"):
        out = tmp_path / f"{kind}.png"
        assert serq_cli.main(["plot", kind, VLLM, *args, "-o", str(out)]) == 0
        png_size(out)
    summary = tmp_path / "summary.csv"
    assert serq_cli.main(["sweep", MM1, "--set", "lam=0.5,0.6", "--seeds", "2", "-j", "1",
                          "--horizon", "500", "--warmup", "10", "--summary",
                          str(summary)]) == 0
    out = tmp_path / "curve.png"
    assert serq_cli.main(["plot", "sweep", str(summary), "--x", "lam", "--metric",
                          "response.p99", "-o", str(out)]) == 0
    png_size(out)
    err = capsys.readouterr().err
    assert err.count("serq: wrote") == 5


@pytest.mark.parametrize("args, message", [
    (["cdf", MM1, "--obs", "nope", "-o", "x.png"], "no observation 'nope'"),
    (["engine", MM1, "-o", "x.png"], "no step-engine iterations"),
    (["cdf", MM1, "-o", "x.txt"], "must end in .png, .svg or .pdf"),
    (["sweep", "missing.csv", "--x", "lam", "--metric", "m", "-o", "x.png"], "cannot read"),
])
def test_cli_plot_errors(args, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = serq_cli.main(["plot", *args[:2], "--horizon", "100", "--warmup", "1", *args[2:]]
                         if args[0] != "sweep" else ["plot", *args])
    err = capsys.readouterr().err
    assert code == 1 and message in err and "Traceback" not in err
