"""`serq numerics cost` (batch-invariance.md §4.7 cost hooks): the determinism modes rewrite
the step cost in memory only; the formulas, checked by hand on examples/vllm_engine.sq's
cost `t_fixed + t_token * tokens` (0.006 + 0.00004 · tokens)."""
import pathlib

import pytest

import serq
from serq.cli import main
from serq.ir import types as T
from serq.numerics.cost import Mode, priced_cost, step_stage, with_mode

ROOT = pathlib.Path(__file__).resolve().parents[2]
VLLM = str(ROOT / "examples" / "vllm_engine.sq")


def evaluate(e, ctx):
    """A hand evaluator for the node kinds these costs use."""
    if isinstance(e, T.Num):
        return e.value
    if isinstance(e, T.Ctx):
        return ctx[e.var]
    a, b = evaluate(e.left, ctx), evaluate(e.right, ctx)
    return {"Add": a + b, "Mul": a * b}[e.op]


@pytest.fixture(scope="module")
def program():
    return serq.compile(VLLM, horizon=6, warmup=1)


def test_modes_leave_the_program_and_ir_unchanged(program):
    text = program.to_json()
    for kind in ("none", "batch_invariant", "dvr"):
        with_mode(program, Mode(kind))
    assert program.to_json() == text
    assert with_mode(program, Mode("none")).to_json() == text


def test_formulas(program):
    cost = step_stage(program)[1].kind.cost
    ctx = {"Ntok": 100.0, "Ndec": 40.0, "Npre": 60.0}
    base = 0.006 + 0.00004 * 100
    assert evaluate(cost, ctx) == pytest.approx(base)
    assert evaluate(priced_cost(cost, Mode("batch_invariant", multiplier=1.5)), ctx) == pytest.approx(1.5 * base)
    m = Mode("dvr", window=8, group=8, fraction=0.5, rollback=0.1)
    recompute = 40 * 0.5 * 0.1 * 7 / 16                     # f·ρ·(W−1)/(2W) per decode token
    verify = 40 * 0.5 / 64 * (0.006 + 0.00004 * 64)         # f/(W·G) passes of G·W tokens
    want = 0.006 + 0.00004 * (100 + recompute) + verify
    assert evaluate(priced_cost(cost, m), ctx) == pytest.approx(want)


def test_cost_command(capsys):
    assert main(["numerics", "cost", VLLM, "--horizon", "6", "--warmup", "1", "--set", "lam=8",
                 "--fraction", "0.5"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"determinism cost of {VLLM}: step stage engine, seed 16, horizon 6")
    rows = [line for line in out if line.startswith(("none", "batch_invariant", "dvr"))]
    assert [r.split()[0] for r in rows] == ["none", "batch_invariant(x1.34)", "dvr(W"]
    assert "ttft mean" in out[2] and "(x" in rows[1]


def test_cost_needs_a_step_stage(capsys):
    assert main(["numerics", "cost", str(ROOT / "examples" / "mm1.sq")]) == 1
    assert "has no step stage" in capsys.readouterr().err


def test_cost_bad_mode(capsys):
    assert main(["numerics", "cost", VLLM, "--modes", "fast"]) == 1
    assert "--modes: unknown mode 'fast'" in capsys.readouterr().err
