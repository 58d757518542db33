"""The invariant monitors (serq/sim/monitors.py, formal.md §6.4): they hold on every run case
and oracle scenario of the conformance corpus and on every example, a monitored run gives the
same report, and each invariant fires, with a clear error, when its property is broken."""
import importlib.util
import json
import os
import pathlib
import types

import pytest

import serq
from serq.ir import types as T
from serq.sim import monitors as M
from serq.sim.monitors import Monitors

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHARED = pathlib.Path(os.environ.get("SERQ_SHARED", ROOT.parent / "shared")).resolve()
CHECK = SHARED / "conformance" / "check.py"
EXAMPLES = sorted((ROOT / "examples").glob("*.sq"))


def golden_report(path):
    """The example's report as pyserq 0.1.2 wrote it (tests/golden), without the version."""
    return without_version((ROOT / "tests" / "golden" / f"{path.stem}.report.json").read_text())


def without_version(text):
    doc = json.loads(text)
    doc.pop("serq_version")
    return doc


def _checked_module():
    """serq with ``run`` monitored: the corpus checker compares its reports as usual."""
    mod = types.SimpleNamespace(**{k: getattr(serq, k) for k in serq.__all__})
    mod.run = lambda program: serq.run(program, check=True)
    return mod


def _corpus_cases():
    if not CHECK.exists():
        return [("missing", None)]
    spec = importlib.util.spec_from_file_location("conformance_check_monitors", CHECK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.collect(_checked_module(), ["run", "oracle"])


CASES = _corpus_cases()
# the three long runs (10^5-10^6 events; long_engine_chat alone takes 13 s monitored) run
# behind `slow`; the default run checks the other 163 cases
SLOW = {"run/long_engine_chat", "run/long_ps_net", "run/long_mm1"}
PARAMS = [pytest.param(cid, fn, id=cid, marks=[pytest.mark.slow] if cid in SLOW else [])
          for cid, fn in CASES]


@pytest.mark.parametrize("cid,fn", PARAMS)
def test_monitors_hold_on_the_corpus(cid, fn):
    """Every run case (151) and vLLM oracle scenario (15), monitored, still matches the
    reference exactly (the 4 run cases that expect a run error still give that error)."""
    assert fn is not None, f"the conformance corpus is missing: {CHECK}"
    fn()


@pytest.mark.slow
def test_monitors_hold_on_the_drt_cases():
    """DRT's 200 fixed cases (formal.md §5.1), the simulator's side monitored: no invariant
    breaks and the runs still agree with serq.ref and pyserq 0.1.2's digests."""
    from serq.ref import drt
    assert drt.run_cases(range(200), sim_run=lambda p: serq.run(p, check=True),
                         check_digests=True) == []


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_monitors_hold_on_every_example(path):
    program = serq.compile(str(path))
    m = Monitors(program)
    checked = serq.run(program, hooks=m)
    assert without_version(checked.json()) == golden_report(path)  # pyserq 0.1.2's report
    assert m.events == checked.events
    assert m.iterations == sum(s.iterations or 0 for s in checked.stages)


PAPERS = sorted((ROOT / "examples" / "papers").glob("*.sq"))


@pytest.mark.parametrize("path", PAPERS, ids=[p.stem for p in PAPERS])
def test_monitors_hold_on_the_paper_programs(path):
    """The paper programs (claims, `serve only`: IR 11) monitored: same report."""
    program = serq.compile(str(path))
    assert serq.run(program, check=True).json() == serq.run(program).json()


def test_check_true_is_the_monitors():
    program = serq.compile(str(ROOT / "examples" / "vllm_engine.sq"), horizon=20)
    assert serq.run(program, check=True).json() == serq.run(program).json()


# -- the pieces, on hand-computed cases ----------------------------------------------------

def test_greedy_fill_by_hand():
    # formal.md §1.4: each job takes min(want, left); zeros dropped; total min(budget, Σ want)
    assert M.greedy_fill([("a", 1), ("b", 1), ("c", 6)], 4) == [("a", 1), ("b", 1), ("c", 2)]
    assert M.greedy_fill([("a", 0), ("b", 3)], 8) == [("b", 3)]
    assert M.greedy_fill([("a", 5), ("b", 3)], 5) == [("a", 5)]
    assert M.greedy_fill([], 8) == []


def test_want_of_by_hand():
    assert M.want_of(True, 7.0, 4) == 1.0 and M.want_of(True, 0.5, 4) == 0.5
    assert M.want_of(False, 7.0, 4) == 4 and M.want_of(False, 3.0, 4) == 3.0
    assert M.want_of(False, 7.0, 0) == 7.0


def test_lower_bound_of_costs():
    tok = T.Ctx("Ntok")
    assert M.lower_bound(T.Binary("Add", T.Num(0.006), T.Binary("Mul", T.Num(4e-5), tok))) \
        == 0.006
    assert M.lower_bound(T.Binary("Sub", T.Num(1.0), tok)) is None
    assert M.lower_bound(T.Ctx("Now")) is None
    assert M.lower_bound(T.Call("Max", (T.ArgExpr(T.Num(1.0)), T.ArgExpr(tok)))) == 1.0


def test_shape_premise():
    before = [(0, 10, True), (1, 11, False), (2, 12, False)]
    # 1's prefill finished into a decode, 2 goes on, 3 arrives as a prefill: a greedy step
    assert M._greedy_successor(before, [(0, 10, True), (1, 13, True), (2, 12, False),
                                        (3, 14, False)])
    assert not M._greedy_successor(before, [(1, 13, True), (0, 10, True)])  # reordered
    assert not M._greedy_successor(before, [(0, 15, False)])  # a decode back to prefill
    assert not M._greedy_successor(before, [(3, 14, True)])   # a new session decoding
    assert M._shaped([(0, 1, True), (1, 2, False)]) and not M._shaped([(0, 1, False),
                                                                       (1, 2, True)])


# -- each invariant fires -------------------------------------------------------------------

VLLM = ROOT / "examples" / "vllm_engine.sq"


def _broken(monkeypatch, target, name, replacement, program):
    monkeypatch.setattr(target, name, replacement)
    with pytest.raises(serq.SimulationError) as info:
        serq.run(program, check=True)
    return info.value


def test_a_broken_pool_account_is_named(monkeypatch):
    from serq.sim.pools import PoolOps
    original = PoolOps.release_units

    def leaky(self, s, pi, alloc, computed, cache):  # frees one unit too few
        original(self, s, pi, alloc - 1.0 if alloc >= 1.0 else alloc, computed, cache)
    err = _broken(monkeypatch, PoolOps, "release_units", leaky,
                  serq.compile(str(VLLM), horizon=20))
    assert err.invariant == "pool accounting" and "check: invariant `pool accounting` broken" \
        in str(err) and "used" in str(err)
    assert err.time is not None


def test_a_wrong_fill_is_named(monkeypatch):
    import serq.sim.step as step
    original = step.StepStage.launch

    def launch(self, assign, attn, sums, *rest):
        if len(assign) > 1:
            assign[-1][1] = assign[-1][1] / 2  # the last slice gets half what it should
        return original(self, assign, attn, sums, *rest)
    # compiled, StepStage is a cclass whose methods cannot be set: the step stages are made
    # of a subclass with this launch (stages.make_stage looks step.StepStage up each time)
    faulty = type("StepStage", (step.StepStage,), {"launch": launch})
    err = _broken(monkeypatch, step, "StepStage", faulty, serq.compile(str(VLLM), horizon=20))
    assert err.invariant == "greedy fill" and "the greedy fill is" in str(err)
    assert err.session is not None


def test_a_rate_breach_is_named(monkeypatch):
    monitors = Monitors(serq.compile(str(VLLM), horizon=20))
    monitors.rates = {0: (512.0, 1.0)}  # pretend every iteration costs at least 1 s
    with pytest.raises(serq.SimulationError, match="invariant `rate bound` broken"):
        serq.run(serq.compile(str(VLLM), horizon=20), hooks=monitors)


def test_the_cli_check_option(tmp_path, capsys):
    from serq.cli import main
    assert main(["run", str(VLLM), "--horizon", "20", "--check"]) == 0
    err = capsys.readouterr().err
    assert "serq: check: every invariant held on 2112 events and 1837 iterations" in err
