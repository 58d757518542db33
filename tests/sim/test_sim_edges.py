"""serq against the reference's answers on the interpreter edge cases of
tests/golden/sim_edges (see its README for the provenance): the same report text byte for byte,
or a ValueError with the same text."""
import json
import pathlib

import pytest

import serq

CASES = pathlib.Path(__file__).resolve().parents[1] / "golden" / "sim_edges"
NAMES = sorted(p.name[:-len(".expected.json")] for p in CASES.glob("*.expected.json"))


def answer(name):
    sq = CASES / (name + ".sq")
    try:
        if sq.exists():
            args_path = CASES / (name + ".args.json")
            args = json.loads(args_path.read_text()) if args_path.exists() else {}
            program = serq.compile(sq.name, **args)
        else:
            program = serq.Program.from_json((CASES / (name + ".ir.json")).read_text())
        return {"report": serq.run(program).json()}
    except ValueError as e:
        return {"error": str(e)}


def test_every_case_has_an_expectation():
    inputs = {p.name.split(".")[0] for p in CASES.iterdir()
              if p.name.endswith((".sq", ".ir.json"))}
    assert inputs == set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_same_answer_as_the_reference(name, monkeypatch):
    monkeypatch.chdir(CASES)
    expected = json.loads((CASES / (name + ".expected.json")).read_text())
    assert answer(name) == expected
