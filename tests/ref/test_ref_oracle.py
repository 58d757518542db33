"""formal.md §3, §6.2: every vLLM answer of the conformance corpus's oracle family and the three
regressions of §3.3 (preempt_delay, cost_ctx, chunk_expr) reproduced by serq.sim *and* by
serq.ref, through the corpus's own checker (``check.collect(module, ["oracle"])``) with
``run`` swapped for ``serq.ref.run``. Also: on every oracle run case (both chunk variants) the
two implementations agree observation by observation (serq.ref.drt.compare).

The corpus lives beside the repository (../shared, or SERQ_SHARED); without it these tests fail
loudly."""
import importlib.util
import os
import pathlib
import types

import pytest

import serq
import serq.ref
from serq.ref import drt

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHARED = pathlib.Path(os.environ.get("SERQ_SHARED", ROOT.parent / "shared")).resolve()
CORPUS = SHARED / "conformance"
CHECK = CORPUS / "check.py"


def _checker():
    if not CHECK.exists():
        pytest.fail(f"the conformance corpus is missing: {CHECK}", pytrace=False)
    spec = importlib.util.spec_from_file_location("conformance_check_ref", CHECK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def ref_module():
    """serq with ``run`` replaced by the reference semantics."""
    shim = types.SimpleNamespace(**{k: getattr(serq, k) for k in dir(serq)
                                    if not k.startswith("__")})
    shim.run = serq.ref.run
    return shim


CHECKER = _checker() if CHECK.exists() else None
SIDES = {"sim": serq, "ref": ref_module()}
CASES = [] if CHECKER is None else [
    (side, cid, fn) for side, mod in SIDES.items() for cid, fn in CHECKER.collect(mod, ["oracle"])]


def test_the_oracle_family_is_all_there():
    if CHECKER is None:
        pytest.fail(f"the conformance corpus is missing: {CHECK}", pytrace=False)
    names = {cid for side, cid, _ in CASES if side == "ref"}
    assert len(names) == 15  # 11 request scenarios, cache_trace, 3 regressions
    for r in ("preempt_delay", "cost_ctx", "chunk_expr", "cache_trace"):
        assert f"oracle/oracle_{r}" in names


@pytest.mark.parametrize("side,cid,fn", CASES, ids=[f"{s}:{c}" for s, c, _ in CASES])
def test_oracle_answer(side, cid, fn):
    fn()  # raises check.Failure with the first difference


def test_the_reference_defect_is_a_clear_error_on_both_sides():
    """serve/newest_first_preempt with the conditional chunk: pyserq 0.1.2 panics (a growth
    preempts a resident already served in the iteration); both sides report an error."""
    path = CORPUS / "defects" / "oracle_serve_newest_first_preempt_chunkcond.ir.json"
    program = serq.Program.from_json(path.read_text())
    for run in (serq.run, serq.ref.run):
        with pytest.raises(serq.SimulationError, match="already"):
            run(program)


RUN_CASES = sorted((CORPUS / "run").glob("oracle_*.ir.json"))


def test_every_oracle_run_case_is_compared():
    assert len(RUN_CASES) == 25


@pytest.mark.parametrize("path", RUN_CASES, ids=[p.name.split(".")[0] for p in RUN_CASES])
def test_sim_and_ref_agree_on_the_oracle_run_cases(path):
    out = drt.compare(path.name, serq.Program.from_json(path.read_text()))
    assert out.diff is None, out.diff
