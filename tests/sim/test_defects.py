"""Inputs on which the reference (pyserq 0.1.2) panics or hangs (../shared/conformance/defects,
README "Reference defects"): serq must answer each with a clear `ValueError` naming what went
wrong, promptly, never a panic, a traceback or a hang."""
import json
import os
import pathlib

import pytest

import serq
from serq.errors import SimulationError

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHARED = pathlib.Path(os.environ.get("SERQ_SHARED", ROOT.parent / "shared")).resolve()
DEFECTS = SHARED / "conformance" / "defects"

# file -> words the message must contain (what went wrong, in the user's terms)
EXPECTED = {
    "loop_never_blocks.sq": ["session 0", "loop", "without letting time pass"],
    "p46_served_victim.sq": ["preempted session", "already been given tokens"],
    "renewal_zero_gap.sq": ["renewal", "positive and finite"],
    "zero_cost_self_preempt.sq": ["cost 0", "clock cannot move"],
    "poisson_inf.sq": ["poisson(inf)", "infinitely many"],
    "oracle_serve_newest_first_preempt_chunkcond.ir.json": ["preempted session",
                                                            "already been given tokens"],
}


def load(name):
    path = DEFECTS / name
    if name.endswith(".ir.json"):
        return serq.Program.from_json(path.read_text())
    args = {}
    args_path = path.with_name(name[:-3] + ".args.json")
    if args_path.exists():
        args = json.loads(args_path.read_text())
        args.pop("_file", None)
    return serq.compile(source=path.read_text(), **args)


def test_every_defect_input_is_covered():
    if not DEFECTS.exists():
        pytest.fail(f"the conformance corpus is missing: {DEFECTS}", pytrace=False)
    names = {p.name for p in DEFECTS.iterdir() if p.name.endswith((".sq", ".ir.json"))}
    assert names == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_defect_gives_a_clear_error(name):
    program = load(name)
    with pytest.raises(SimulationError) as info:
        serq.run(program)
    message = str(info.value)
    for word in EXPECTED[name]:
        assert word in message, message
    assert "Traceback" not in message
