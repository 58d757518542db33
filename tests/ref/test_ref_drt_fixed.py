"""formal.md §5.1, §6.3: the fixed DRT cases. The generator regenerates upstream's cases bit for
bit (their shapes match pyserq 0.1.2's recorded rows, and the simulator's observations hash to
the recorded digests); serq.sim and serq.ref agree on them. The default run takes every
fourth seed; all 200 run under `-m slow` (and `make drt`)."""
import json
import os
import pathlib

import pytest

import serq
import serq.ref
from serq.ref import drt

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHARED = pathlib.Path(os.environ.get("SERQ_SHARED", ROOT.parent / "shared")).resolve()
ROWS = {r["seed"]: r for r in json.loads(drt.DIGESTS.read_text())["cases"]}


def test_the_generator_regenerates_the_recorded_case_shapes():
    assert sorted(ROWS) == list(range(200))
    for seed in range(200):
        doc, row = drt.case_ir(seed), ROWS[seed]
        step = doc["stages"][0]["kind"]["Step"]
        sessions = doc["arrival"]["Sessions"]
        assert len(sessions) == row["sessions"]
        assert sum(len(s["turns"]) for s in sessions) == row["turns"]
        assert (step["budget"]["Num"], step["chunk"]["Num"]) == (row["budget"], row["chunk"])
        assert (doc["pools"][0]["cap"], doc["pools"][1]["cap"]) == (row["kv_cap"], row["slots"])
        assert doc["horizon"] == row["end"] == 1e15


def test_the_cost_is_written_as_upstream_writes_it():
    assert drt.cost_ir([7, 1, 2, 3, 4, 5]) == {"Binary": ["Add", {"Binary": ["Add", {"Binary": [
        "Add", {"Binary": ["Add", {"Binary": ["Add", {"Num": 7.0}, {"Binary": [
            "Mul", {"Num": 1.0}, {"Ctx": "Ntok"}]}]}, {"Binary": ["Mul", {"Num": 2.0}, {
                "Ctx": "Npre"}]}]}, {"Binary": ["Mul", {"Num": 3.0}, {"Ctx": "Ndec"}]}]}, {
                    "Binary": ["Mul", {"Num": 4.0}, {"Ctx": "Kvb"}]}]}, {"Binary": [
                        "Mul", {"Num": 10.0}, {"Ctx": "Attn"}]}]}


def test_seeds_0_to_9_give_pyserq_s_recorded_observations():
    path = SHARED / "oracle-data" / "drt-pyserq-0.1.2-seeds0-9.observations.json"
    if not path.exists():
        pytest.fail(f"the recorded oracle data is missing: {path}", pytrace=False)
    recorded = json.loads(path.read_text())
    for seed in range(3):
        assert drt.canonical(serq.ref.run(drt.case_program(seed))) == recorded[str(seed)]


@pytest.mark.parametrize("seed", range(0, 200, 4))
def test_fixed_case_agrees_three_ways(seed):
    assert drt.run_cases([seed], check_digests=True) == []


@pytest.mark.slow
def test_all_200_fixed_cases_agree_three_ways():
    failed = drt.run_cases(range(200), check_digests=True)
    assert [(o.name, o.diff) for o in failed] == []


def test_a_divergence_is_caught_and_saved(tmp_path):
    """DRT has teeth: a simulator that drops the last observation of every run diverges, and
    the case is written out with both outputs and the first difference."""
    def broken_sim(program):
        report = serq.run(program)
        o = report.observe("latency")
        for field in ("samples", "times", "sessions", "turns"):
            getattr(o, field).pop()
        return report
    failed = drt.run_cases([5], sim_run=broken_sim, save_dir=tmp_path)
    assert [o.name for o in failed] == ["case-5"]
    assert "observation latency" in failed[0].diff
    saved = tmp_path / "case-5"
    assert sorted(p.name for p in saved.iterdir()) == [
        "first_difference.txt", "program.ir.json", "ref.observations.json",
        "sim.observations.json"]
    assert serq.Program.from_json((saved / "program.ir.json").read_text()) == failed[0].program
