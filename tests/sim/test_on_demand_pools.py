"""Pools visited on demand (PoolOps.init_active_pools): what programs with large pool arrays
get (more than pools.ON_DEMAND_POOLS pools). With the limit at 0 every program takes that
path, and the conformance corpus' run and oracle families (reports bit for bit as pyserq 0.1.2
writes them) must still pass.
Large arrays themselves: the report of five pool families of 10,000 against pyserq 0.1.2's
(tests/golden/sim_edges/pool_families.sq)."""
import importlib.util
import os
import pathlib

import pytest

import serq
from serq.sim import pools

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHARED = pathlib.Path(os.environ.get("SERQ_SHARED", ROOT.parent / "shared")).resolve()
CHECK = SHARED / "conformance" / "check.py"


def _cases():
    if not CHECK.exists():
        return []
    spec = importlib.util.spec_from_file_location("conformance_check_on_demand", CHECK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return [(cid, fn, module) for cid, fn in module.collect(serq, ["run", "oracle"])]


CASES = _cases()


def test_the_corpus_is_there():
    assert len(CASES) > 100, f"the conformance corpus is missing or empty: {CHECK}"


@pytest.mark.parametrize("cid,fn,module", CASES, ids=[c[0] for c in CASES])
def test_corpus_case_with_every_pool_on_demand(cid, fn, module, monkeypatch):
    monkeypatch.setattr(pools, "ON_DEMAND_POOLS", 0)
    try:
        fn()
    except module.Failure as failure:
        details = "\n".join(str(d) for d in failure.details)
        pytest.fail(f"{cid}: {failure.reason}" + (f"\n{details}" if details else ""),
                    pytrace=False)
