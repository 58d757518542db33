"""`serq run --dump DIR --dump-gauges [--dump-format parquet]`: gauges' change points beside
the observations' records, as CSV or Parquet; checked against the report's own records."""
import csv
import pathlib

import pytest

import serq
from serq import cli as serq_cli

ROOT = pathlib.Path(__file__).resolve().parents[2]
MM1 = str(ROOT / "examples" / "mm1.sq")
SHORT = ["--horizon", "800", "--warmup", "50"]


@pytest.fixture(scope="module")
def report():
    return serq.run(serq.compile(MM1, horizon=800, warmup=50))


def test_dump_gauges_as_csv(tmp_path, capsys, report):
    out = tmp_path / "d"
    assert serq_cli.main(["run", MM1, *SHORT, "--json", "--dump", str(out),
                          "--dump-gauges"]) == 0
    err = capsys.readouterr().err
    assert err == (f"serq: wrote 3 CSV files to {out}: response.csv, in_system.gauge.csv, "
                   f"utilization.gauge.csv\n")
    with open(out / "in_system.gauge.csv", newline="") as f:
        rows = list(csv.reader(f))
    g = report.gauge("in_system")
    assert rows[0] == ["time", "value"]
    assert [float(r[0]) for r in rows[1:]] == g.times
    assert [float(r[1]) for r in rows[1:]] == g.values


def test_dump_as_parquet(tmp_path, capsys, report):
    pq = pytest.importorskip("pyarrow.parquet")
    out = tmp_path / "p"
    out.mkdir()
    target = tmp_path / "precious"
    target.write_text("keep\n")
    (out / "response.parquet").symlink_to(target)  # replaced, never written through
    assert serq_cli.main(["run", MM1, *SHORT, "--json", "--dump", str(out),
                          "--dump-gauges", "--dump-format", "parquet"]) == 0
    assert "wrote 3 Parquet files" in capsys.readouterr().err
    assert target.read_text() == "keep\n" and not (out / "response.parquet").is_symlink()
    t = pq.read_table(out / "response.parquet").to_pydict()
    o = report.observe("response")
    assert t["value"] == o.samples and t["time"] == o.times
    assert t["session"] == o.sessions and t["turn"] == o.turns
    g = pq.read_table(out / "utilization.gauge.parquet").to_pydict()
    assert g["time"] == report.gauge("utilization").times
    assert sorted(p.name for p in out.iterdir()) == [
        "in_system.gauge.parquet", "response.parquet", "utilization.gauge.parquet"]


def test_dump_options_need_dump(capsys):
    assert serq_cli.main(["run", MM1, *SHORT, "--dump-format", "parquet"]) == 1
    assert "apply with --dump DIR only" in capsys.readouterr().err
