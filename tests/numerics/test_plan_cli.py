"""The integration (batch-invariance.md §4.7): `serq run FILE --plan` writes the step engine's
plan; `serq numerics check` replays it. Exit codes and messages per the house rules."""
import json
import pathlib

import pytest

from serq.cli import main
from serq.numerics.checker import plan_requests
from serq.numerics.trace import read_plan

ROOT = pathlib.Path(__file__).resolve().parents[2]
VLLM = str(ROOT / "examples" / "vllm_engine.sq")
SMALL = ["--set", "kv_blocks=24", "--set", "prompt_mean=60", "--set", "answer_mean=40",
         "--set", "max_tokens=64", "--set", "chunk_size=64", "--horizon", "1.5", "--warmup", "0"]


@pytest.fixture(scope="module")
def plan_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("plan") / "p.jsonl"
    assert main(["run", VLLM, *SMALL, "--plan", str(path)]) == 0
    return path


def test_plan_header_and_events(plan_path):
    lines = plan_path.read_text().splitlines()
    header = json.loads(lines[0])
    assert header == {"format": "serq-plan", "version": 1, "program": VLLM, "stage": "engine",
                      "block": 16, "memory": "kv", "seed": 16, "horizon": 1.5}
    plan = read_plan(plan_path)
    kinds = {e.kind for s in plan.steps for e in s.events}
    assert {"admit", "preempt", "prefix_hit", "finish", "evict"} <= kinds
    assert all(s.n_tokens <= 64 for s in plan.steps)                      # the budget
    assert any(len(s.slices) > 1 and {x.kind for x in s.slices} == {"prefill", "decode"}
               for s in plan.steps)                                        # chunked prefill mixes


def test_plan_positions_are_contiguous(plan_path):
    """Each request's slices continue where its KV ends: from 0 after an admission, from the
    hit after a prefix hit, from the previous slice's end otherwise; decodes are 1 token."""
    plan = read_plan(plan_path)
    pos = {}
    for st in plan.steps:
        for e in st.events:
            if e.kind == "admit":
                pos[e.request] = 0
            elif e.kind == "prefix_hit":
                assert e.tokens % 16 == 0
                pos[e.request] = e.tokens
        for s in st.slices:
            assert s.start == pos[s.request], (st.step, s)
            assert s.kind == "prefill" or s.n == 1
            pos[s.request] = s.start + s.n
    info = plan_requests(plan)
    assert len(info) >= 8 and all(p >= 16 and a >= 1 for p, a in info.values())


def test_check_exact_exit_0(plan_path, capsys):
    assert main(["numerics", "check", str(plan_path), "--kernels", "exact"]) == 0
    out = capsys.readouterr().out
    n = len(plan_requests(read_plan(plan_path)))
    assert f"{n}/{n} requests invariant (0 with logit-bit mismatches" in out
    assert "first divergence:" not in out


def test_check_default_exit_1_names_the_divergence(plan_path, capsys):
    assert main(["numerics", "check", str(plan_path), "--kernels", "default"]) == 1
    out = capsys.readouterr().out
    assert "first divergence: s" in out and " vs replay 0x" in out and "reference 0x" in out
    assert "margin audit:" in out and ", 0 violations" in out


def test_check_dvr_commits_the_reference(plan_path, capsys):
    assert main(["numerics", "check", str(plan_path), "--kernels", "default", "--dvr", "4",
                 "--near-ties", "4", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["ok"] and all(r["committed_equal"] for r in rep["requests"])
    assert rep["dvr"]["rollbacks"] > 0 and rep["near_ties_planted"] > 0


def test_plan_needs_a_step_stage(tmp_path, capsys):
    out = tmp_path / "x.jsonl"
    assert main(["run", str(ROOT / "examples" / "mm1.sq"), "--plan", str(out)]) == 1
    assert "has no step stage" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("text, message", [
    ("", "empty plan"),
    ("not json\n", ":1: not JSON"),
    ('{"format": "other"}\n', ":1: not a serq plan"),
    ('{"format": "serq-plan", "version": 1}\n{"step": 0, "slices": [["a", 0, -1, "prefill"]]}\n',
     ":2: a slice's tokens must be a non-negative integer"),
    ('{"format": "serq-plan", "version": 1}\n{"step": 0, "slices": [["a", 0, 2, "decode"]]}\n',
     "a decode must follow the prefill"),
])
def test_bad_plans_exit_1(tmp_path, capsys, text, message):
    p = tmp_path / "bad.jsonl"
    p.write_text(text)
    assert main(["numerics", "check", str(p)]) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_usage_errors_exit_2(plan_path):
    with pytest.raises(SystemExit) as e:
        main(["numerics", "check", str(plan_path), "--kernels", "fast"])
    assert e.value.code == 2
    with pytest.raises(SystemExit) as e:
        main(["numerics", "check", str(plan_path), "--dvr", "0"])
    assert e.value.code == 2
