"""format_text: the human report (its layout is serq's own; the reference has none).

Checked: the run lines, one table per non-empty section, aligned columns, significant
digits, the dash for values that do not exist, the notes. The reports come from the corpus
(../shared/conformance/run, written by pyserq 0.1.2) or are built by hand.
"""
import json
import math
import os
import pathlib

import pytest

from serq.report import Observe, Report, format_text
from serq.report.text import DASH, fmt_number

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHARED = pathlib.Path(os.environ.get("SERQ_SHARED", ROOT.parent / "shared")).resolve()
RUN = SHARED / "conformance" / "run"


def corpus(name):
    text = (RUN / f"{name}.report.json").read_text().rstrip("\n")
    path = RUN / f"{name}.samples.json"
    return Report.from_json(text, json.loads(path.read_text()) if path.exists() else None)


def section(text, title):
    """The lines of the table whose title line starts with ``title``."""
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(title))
    out = []
    for ln in lines[start + 1:]:
        if not ln.startswith("  "):
            break
        out.append(ln)
    return out


@pytest.mark.parametrize("x,text", [
    (0.0, "0"), (-0.0, "0"), (1.0, "1"), (0.6, "0.6"), (1 / 3, "0.3333"), (2 / 3, "0.6667"),
    (1234.5678, "1235"), (12345.678, "12346"), (9.99996, "10"), (0.00123456, "0.001235"),
    (2.2999999999999987e-06, "2.3e-6"), (2.3e22, "2.3e22"), (-0.5, "-0.5"),
    (math.nan, DASH), (math.inf, DASH), (-math.inf, DASH), (None, DASH), (42, "42"),
])
def test_fmt_number(x, text):
    assert fmt_number(x) == text


def test_p07_sections_and_notes():
    text = format_text(corpus("p07_numbers"), program_name="p07.sq")
    lines = text.splitlines()
    assert lines[0] == "serq 0.1.2 run of p07.sq"
    assert "horizon 10" in lines[1] and "warm-up 0" in lines[1] and "seed 1" in lines[1]
    assert "events 45" in lines[2] and "mean live 4.5" in lines[2]
    obs = section(text, "observations")
    assert obs[0].split() == ["name", "count", "mean", "±", "95%", "CI", "cv²", "p99"]
    rows = {ln.split()[0]: ln for ln in obs[2:]}
    assert set(rows) == {"tiny", "huge", "hit", "third"}
    # hit: 45 samples of 0 -> mean 0 ± 0, cv² does not exist
    assert rows["hit"].split() == ["hit", "45", "0", "±", "0", DASH, "0"]
    assert "observation hit is 0 in all 45 samples" in text
    assert "gauges" not in text and "pools" not in text and "step engines" not in text
    assert "stages" in text


def test_tables_are_aligned():
    text = format_text(corpus("long_engine_chat"))
    for title in ("observations", "stages", "step engines", "pools"):
        rows = section(text, title)
        rows = [r for r in rows if not r.startswith("  zero in every")]
        # right-aligned last column: every line of a table has the same length
        assert len({len(r) for r in rows}) == 1, (title, rows)


def test_step_and_pool_details():
    text = format_text(corpus("long_engine_chat"))
    step = section(text, "step engines")
    assert step[0].split()[:2] == ["stage", "iterations"]
    assert step[2].split()[0:2] == ["gpu", "140941"]
    pools = section(text, "pools")
    assert [r.split()[0] for r in pools[2:4]] == ["slots", "kv"]
    assert "wait" in pools[0] and DASH in pools[3]  # kv mean_wait is null
    assert "zero in every pool: spills, rejected" in text
    assert "pool kv: 1 session(s) stuck" in text


def test_stage_indices_and_gauges():
    text = format_text(corpus("c26_gauges"))
    st = section(text, "stages")
    assert [r.split()[0] for r in st[2:]] == ["svc[0]", "svc[1]", "think"]
    g = section(text, "gauges")
    assert g[2].split()[:4] == ["used_total", "8.721", "±", "2.3"]


def test_ci_missing_is_left_out():
    # fewer than 40 samples: no CI; the mean is shown alone, the note says why
    o = Observe("lat", [1.0, 3.0], [0.0, 1.0], [0, 1], [0, 0])
    r = Report(10, 10, 0, 1, 2, 2, 2, 0, 0.2, [o, Observe("never")], [], [], [])
    text = format_text(r)
    rows = section(text, "observations")
    assert rows[2].split() == ["lat", "2", "2", "0.5", "3"]
    assert rows[3].split() == ["never", "0", DASH, DASH, DASH]
    assert "no CI below 40 samples: lat" in text
    assert "observation never recorded nothing after the warm-up" in text


def test_empty_report_has_only_the_run_lines():
    r = Report(1.5, 1.25, 0.25, 7, 0, 0, 0, 0, 0.0)
    lines = format_text(r).splitlines()
    assert len(lines) == 3
    assert "end 1.25 (before the horizon" in lines[1] and "measured 1" in lines[1]


def test_text_method():
    r = corpus("p31_gauge_instant_end")
    assert r.text("x.sq") == format_text(r, program_name="x.sq")
    assert "gauges" in r.text()
