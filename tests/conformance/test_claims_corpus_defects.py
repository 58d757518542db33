"""The eight claims cases that ../shared/conformance lists wrongly (see CORPUS_DEFECTS in
test_conformance.py), run on a corrected copy of the corpus, so that serq's answers on them are
asserted and not only expected to fail.

The corrections, each checked against pyserq 0.1.2 and 0.1.3 (both give the corrected answer):
* the claims folder gets the `traces/` its programs read (the run family's `run/traces`);
* `c_p50_negzero_format` expects `"p99":-0`, as both builds write for `observe z = 0 * -a` (the
  run family's `p50_negzero_format.report.json` has -0 too).
"""
import importlib.util
import pathlib
import shutil

import pytest

import serq

from test_conformance import CORPUS_DEFECTS, SHARED

CONF = SHARED / "conformance"


@pytest.fixture(scope="module")
def corrected_checker(tmp_path_factory):
    if not (CONF / "check.py").exists():
        pytest.fail(f"the conformance corpus is missing: {CONF}", pytrace=False)
    root = tmp_path_factory.mktemp("corpus")
    shutil.copy(CONF / "check.py", root / "check.py")
    shutil.copytree(CONF / "claims", root / "claims")
    if not (root / "claims" / "traces").exists():
        shutil.copytree(CONF / "run" / "traces", root / "claims" / "traces")
    report = root / "claims" / "c_p50_negzero_format.report.json"
    text = report.read_text()
    report.write_text(text.replace('"p99":0}', '"p99":-0}'))
    spec = importlib.util.spec_from_file_location("corrected_check", root / "check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("cid", sorted(CORPUS_DEFECTS))
def test_defective_case_passes_once_corrected(corrected_checker, cid):
    cases = dict(corrected_checker.collect(serq, ["claims"]))
    assert cid in cases
    try:
        cases[cid]()
    except corrected_checker.Failure as failure:
        details = "\n".join(str(d) for d in failure.details)
        pytest.fail(f"{cid}: {failure.reason}\n{details}", pytrace=False)
