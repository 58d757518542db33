"""Errors met inside `def` expansions print as pyserq 0.1.2 prints them: the error's own
`help:` lines before the `note: in `f`, used at L:C` lines of the enclosing uses (innermost
first); an argument that reads a context variable names no use; an argument reading a name
that the body — or a def the body uses — assigns is refused at the outermost use.

The data, tests/lang/data/def_expansion_errors.json, is pyserq 0.1.2's answer for each
program (`str(error)` of `pyserq.compile(source=...)`, or null where it compiles), recorded by
tools/probe_def_errors.py (its "provenance" field says when).
"""
import json
import pathlib

import pytest

import serq

DATA = json.loads((pathlib.Path(__file__).parent / "data" / "def_expansion_errors.json")
                  .read_text(encoding="utf-8"))
CASES = DATA["cases"]


def test_the_data_covers_help_and_note_together():
    both = [c for c in CASES if c["error"] and "help:" in c["error"] and "note: in" in c["error"]]
    assert len(both) >= 60
    assert "pyserq 0.1.2" in DATA["provenance"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_error_text_is_the_references(case):
    try:
        serq.compile(source=case["source"])
        got = None
    except serq.CompileError as e:
        got = str(e)
    assert got == case["error"]
