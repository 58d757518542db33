"""Loading what the reference wrote gives it back byte for byte (ir.md §1.5: ``from_json``
then ``to_json`` is the identity on every compiler output but the non-finite quirk).

The texts are the reference's own IR output in the conformance corpus
(``compile/*.ir.json``, ``run/*.ir.json``), located as tests/conformance does.
"""
import os
import pathlib

import pytest

from serq.ir import types as T

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHARED = pathlib.Path(os.environ.get("SERQ_SHARED", ROOT.parent / "shared")).resolve()
CORPUS = SHARED / "conformance"
# `poisson(inf)` is written with a null rate, which does not read back (ir.md §1.4)
QUIRK = "ir10_24_quirk_nonfinite_plain_f64"

FILES = sorted(CORPUS.glob("compile/*.ir.json")) + sorted(CORPUS.glob("run/*.ir.json"))


def test_corpus_is_present():
    assert FILES, f"no IR texts under {CORPUS}: clone `shared` beside the repository or set SERQ_SHARED"


@pytest.mark.parametrize("path", [f for f in FILES if QUIRK not in f.name],
                         ids=lambda f: f"{f.parent.name}/{f.name}")
def test_round_trip(path):
    text = path.read_text(encoding="utf-8")
    text = text[:-1] if text.endswith("\n") else text  # the corpus adds one newline
    assert T.Program.from_json(text).to_json() == text


def test_quirk_does_not_load():
    # ir.md §1.4: the null Poisson rate is refused (the corpus's `load` case gives the text)
    path = CORPUS / "compile" / f"{QUIRK}.ir.json"
    if not path.exists():
        pytest.skip("quirk file absent")
    with pytest.raises(ValueError, match=r"^IR: invalid type: null, expected f64 at line \d+ column \d+$"):
        T.Program.from_json(path.read_text(encoding="utf-8"))
