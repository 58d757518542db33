"""Report.json() against the conformance corpus, byte for byte.

Provenance: every expected text is ../shared/conformance/run/NAME.report.json, written by the
reference build (pyserq 0.1.2), less its single trailing newline. Each report is rebuilt from
its parts: Observe objects from NAME.samples.json's records (so count/mean/ci/cv2/p99 are
recomputed from the samples), Gauge objects from the recorded change points with the report's
warm-up and end (mean/ci/min/max recomputed), Stage/Pool rows from the parsed rows, and the run
fields. The three long_* runs have no samples file: their observations carry the report's
statistics, which checks the number formatting only.
"""
import json
import math
import os
import pathlib

import pytest

from serq.report import Gauge, Observe, Pool, Report, Stage
from serq.report.json import fmt_float, fmt_int

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHARED = pathlib.Path(os.environ.get("SERQ_SHARED", ROOT.parent / "shared")).resolve()
RUN = SHARED / "conformance" / "run"

CASES = sorted(p.name[:-len(".report.json")] for p in RUN.glob("*.report.json")) \
    if RUN.is_dir() else []


def _parse_int(s):
    return -0.0 if s == "-0" else int(s)  # JSON "-0" is the f64 -0.0


def _expected(name):
    text = (RUN / f"{name}.report.json").read_text(encoding="utf-8")
    assert text.endswith("\n") and not text.endswith("\n\n")
    return text[:-1]


def _float(x):
    return math.nan if x is None else float(x)


# the integer (or string/None) fields of the rows; every other field is an f64
NOT_FLOAT = {"name", "index", "completed", "iterations", "admissions", "evicted_entries",
             "evicted_units", "preemptions", "spills", "rejected", "stuck"}


def _row(row):
    return {k: (v if k in NOT_FLOAT else _float(v)) for k, v in row.items()}


def _build(name):
    """The report NAME rebuilt from the corpus records; returns (report, rebuilt counts)."""
    doc = json.loads(_expected(name), parse_int=_parse_int)
    path = RUN / f"{name}.samples.json"
    rec = json.loads(path.read_text()) if path.exists() else None
    warmup, end = float(doc["warmup"]), float(doc["end"])
    observes, gauges = [], []
    for oname, o in doc["observes"].items():
        if rec is not None:
            r = rec["observes"][oname]
            observes.append(Observe(oname, r["samples"], r["times"], r["sessions"], r["turns"]))
        else:
            observes.append(Observe(oname, stats=(o["count"], _float(o["mean"]),
                                                  _float(o["ci"]), _float(o["cv2"]),
                                                  _float(o["p99"]))))
    for gname, g in doc["gauges"].items():
        r = rec["gauges"][gname]  # every report with gauges has its samples file
        gauges.append(Gauge(gname, r["times"], r["values"], warmup, end))
    stages = [Stage(**_row(row)) for row in doc["stages"]]
    pools = [Pool(**_row(row)) for row in doc["pools"]]
    rep = Report(doc["horizon"], doc["end"], doc["warmup"], doc["seed"], doc["events"],
                 doc["arrivals"], doc["ended"], doc["turns"], doc["mean_live"], observes,
                 gauges, stages, pools)
    return rep, rec is not None


def test_corpus_present():
    assert len(CASES) >= 100, f"the conformance corpus is missing at {RUN} (set SERQ_SHARED)"


@pytest.mark.parametrize("name", CASES)
def test_report_json_reproduces_corpus(name):
    rep, from_records = _build(name)
    if from_records:  # nothing computed before json(): the statistics come from the records
        assert all(o._stats is None for o in rep.observes.values())
        assert all(g._stats is None for g in rep.gauges.values())
    got = rep.json()
    want = _expected(name)
    if got != want:
        i = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b),
                 min(len(got), len(want)))
        pytest.fail(f"first difference at {i}:\n got  ...{got[max(0, i - 60):i + 40]}\n"
                    f" want ...{want[max(0, i - 60):i + 40]}", pytrace=False)


@pytest.mark.parametrize("name", CASES)
def test_from_json_round_trip(name):
    want = _expected(name)
    path = RUN / f"{name}.samples.json"
    samples = json.loads(path.read_text()) if path.exists() else None
    assert Report.from_json(want, samples).json() == want
    assert Report.from_json(want).json() == want  # statistics read back from the text


def test_corpus_counts():
    # the corpus README: 151 run cases, 4 expect an error -> 147 reports, 3 without samples
    with_samples = [n for n in CASES if (RUN / f"{n}.samples.json").exists()]
    assert len(CASES) == 147 and len(with_samples) == 144


# ---------------------------------------------------------------------------------------
# number formatting (spec §12.4; examples from corpus p07_numbers and p50_negzero_format)


@pytest.mark.parametrize("x,text", [
    (1000.0, "1000"),
    (-0.0, "-0"),
    (0.0, "0"),
    (0.6, "0.6"),
    (2.2999999999999987e-06, "0.0000022999999999999987"),  # p07 tiny mean
    (2.299999999999999e22, "22999999999999990000000"),  # p07 huge mean
    (5.33092604494507e-17, "0.0000000000000000533092604494507"),  # p07 third ci
    (1.2345678901234568e17, "123456789012345680"),  # p50 big
    (0.30000000000000004, "0.30000000000000004"),  # p50 small
    (1e300, "1" + "0" * 300),  # p50 e300
    (4.5e-06, "0.0000045"),  # p07 tiny p99
    (1e16, "10000000000000000"),
    (1.5e-05, "0.000015"),
    (-2.5e-07, "-0.00000025"),
    (5e-324, "0." + "0" * 323 + "5"),
    (math.nan, "null"), (math.inf, "null"), (-math.inf, "null"), (None, "null"),
    (3, "3"),  # an integer given for a float field is the same f64
])
def test_fmt_float(x, text):
    assert fmt_float(x) == text


def test_fmt_float_round_trips():
    for x in (0.1, 1 / 3, 2 / 3 * 1e-9, 123.456e20, 7e-8, 1.7976931348623157e308, 2.0 ** -1074):
        assert float(fmt_float(x)) == x and "e" not in fmt_float(x)


def test_fmt_int():
    assert fmt_int(0) == "0" and fmt_int(18446744073709551615) == "18446744073709551615"
    assert fmt_int(None) == "null" and fmt_int(3.0) == "3"
