"""dump_csv: one CSV file per observation (and optionally per gauge). Expected files are
written by hand from the records given."""
import math

import pytest

from serq.report import Gauge, Observe, Report, dump_csv


def make(observes=(), gauges=()):
    return Report(10, 10, 0, 1, 0, 0, 0, 0, 0.0, list(observes), list(gauges), [], [])


def test_dump_rows_and_round_trip(tmp_path):
    xs = [0.1, 1 / 3, -0.0, math.nan, math.inf, -math.inf, 1e300, 5e-324]
    o = Observe("lat", xs, [float(i) / 7 for i in range(8)], list(range(8)), [0, 1] * 4)
    e = Observe("empty")
    out = tmp_path / "new" / "dir"
    paths = dump_csv(make([o, e]), out)
    assert paths == [out / "lat.csv", out / "empty.csv"]
    assert (out / "empty.csv").read_text() == "time,session,turn,value\n"
    lines = (out / "lat.csv").read_text().splitlines()
    assert lines[0] == "time,session,turn,value"
    assert lines[1] == "0.0,0,0,0.1"
    assert lines[4] == f"{3 / 7!r},3,1,nan"
    assert [ln.split(",")[3] for ln in lines[1:]] == ["0.1", repr(1 / 3), "-0.0", "nan", "inf",
                                                     "-inf", "1e+300", "5e-324"]
    back = [float(ln.split(",")[3]) for ln in lines[1:]]
    assert all(repr(a) == repr(b) for a, b in zip(back, xs))  # exact, -0.0 and nan included
    assert [float(ln.split(",")[0]) for ln in lines[1:]] == [float(i) / 7 for i in range(8)]


def test_dump_gauges_optional(tmp_path):
    g = Gauge("busy", [0.0, 2.5], [1.0, 0.0], 0.0, 10.0)
    assert dump_csv(make(gauges=[g]), tmp_path) == []
    paths = dump_csv(make(gauges=[g]), tmp_path, gauges=True)
    assert paths == [tmp_path / "busy.gauge.csv"]
    assert paths[0].read_text() == "time,value\n0.0,1.0\n2.5,0.0\n"


@pytest.mark.parametrize("name", ["a/b", "..", ".", "", "a\\b", "x\0y"])
def test_dump_refuses_path_names(tmp_path, name):
    good = Observe("ok", [1.0], [0.0], [0], [0])
    with pytest.raises(ValueError):
        dump_csv(make([good, Observe(name, [1.0], [0.0], [0], [0])]), tmp_path / "d")
    assert not (tmp_path / "d").exists()  # nothing written before the refusal


def test_dump_existing_directory(tmp_path):
    (tmp_path / "lat.csv").write_text("old")
    dump_csv(make([Observe("lat", [2.0], [1.0], [3], [4])]), tmp_path)
    assert (tmp_path / "lat.csv").read_text() == "time,session,turn,value\n1.0,3,4,2.0\n"
