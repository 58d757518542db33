"""The conformance corpus in ../shared/conformance, every family (compile, errors, load, run,
oracle), one pytest case per corpus case (`check.collect`, see ../shared/conformance/README.md).
The run family compares every report field and every observation bit for bit with pyserq
0.1.2; the oracle family compares the real vLLM scheduler's answers.

The corpus lives beside the repository (`<repo root>/../shared`, as CI clones it; the environment
variable SERQ_SHARED names another place). Without it this module fails loudly: a missing corpus
must never look like a passing suite.
"""
import importlib.util
import os
import pathlib

import pytest

import serq

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHARED = pathlib.Path(os.environ.get("SERQ_SHARED", ROOT.parent / "shared")).resolve()
CHECK = SHARED / "conformance" / "check.py"
FAMILIES = ["compile", "errors", "load", "run", "oracle"]


def _load_checker():
    spec = importlib.util.spec_from_file_location("conformance_check", CHECK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


if CHECK.exists():
    check = _load_checker()
    CASES = check.collect(serq, FAMILIES)
    MISSING = None if CASES else f"the conformance corpus at {SHARED / 'conformance'} has no cases"
else:
    check = None
    CASES = []
    MISSING = (f"the conformance corpus is missing: {CHECK} does not exist. Clone the `shared` "
               f"folder beside the repository ({ROOT.parent / 'shared'}) or set SERQ_SHARED.")


def test_corpus_is_present():
    if MISSING:
        pytest.fail(MISSING, pytrace=False)
    ids = {cid.split("/", 1)[0] for cid, _ in CASES}
    assert ids == set(FAMILIES)


@pytest.mark.parametrize("cid,fn", CASES, ids=[cid for cid, _ in CASES])
def test_conformance(cid, fn):
    try:
        fn()
    except check.Failure as failure:
        details = "\n".join(str(d) for d in failure.details)
        pytest.fail(f"{cid}: {failure.reason}" + (f"\n{details}" if details else ""), pytrace=False)
