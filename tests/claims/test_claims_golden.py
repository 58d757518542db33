"""serq against pyserq 0.1.3 on random claims over the corpus' run programs (golden/README.md)."""
import json
import os
import pathlib

import pytest

import serq

HERE = pathlib.Path(__file__).parent / "golden"
ROOT = pathlib.Path(__file__).resolve().parents[2]
SHARED = pathlib.Path(os.environ.get("SERQ_SHARED", ROOT.parent / "shared")).resolve()
CASES = sorted(p.name[:-3] for p in HERE.glob("*.sq"))


@pytest.mark.parametrize("name", CASES)
def test_claims_as_pyserq_013(name, monkeypatch):
    args = json.loads((HERE / f"{name}.args.json").read_text())
    want = json.loads((HERE / f"{name}.expected.json").read_text())
    run_dir = SHARED / "conformance" / args.pop("_cwd")
    if not run_dir.exists():
        pytest.fail(f"the conformance corpus is missing: {run_dir}", pytrace=False)
    monkeypatch.chdir(run_dir)
    src = (HERE / f"{name}.sq").read_text()
    if "error" in want:
        with pytest.raises(ValueError) as e:
            serq.run(serq.compile(source=src, **args))
        assert str(e.value) == want["error"]
        return
    rep = serq.run(serq.compile(source=src, **args))
    assert json.loads(rep.json())["claims"] == want["claims"]
    assert [c.as_dict() for c in rep.claims] == want["claims"]
