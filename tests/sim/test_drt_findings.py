"""Divergences from the reference found by differential random testing (tools/drt.py), each a
small program in tests/golden/drt/ with the reference's answer recorded next to it by
tools/regen_drt_golden.py (pyserq 0.1.2): the report field by field, every sample bit for
bit (the sign of a zero or a NaN included), or the run-time error text."""
import json
import pathlib
import struct

import pytest

import serq

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "golden" / "drt"
NAMES = sorted(p.stem for p in GOLDEN.glob("*.sq"))


def bits(x):
    return struct.pack(">d", x).hex()


def same(a, b):
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b and (type(a) is bool) == (type(b) is bool)


def test_every_finding_has_its_answer():
    assert NAMES
    for n in NAMES:
        assert (GOLDEN / f"{n}.json").exists(), n


@pytest.mark.parametrize("name", NAMES)
def test_finding_matches_reference(name):
    want = json.loads((GOLDEN / f"{name}.json").read_text())
    program = serq.compile(source=(GOLDEN / f"{name}.sq").read_text())
    if "error" in want:
        with pytest.raises(ValueError) as info:
            serq.run(program)
        assert str(info.value) == want["error"]
        return
    r = serq.run(program)
    got = json.loads(r.json())
    got.pop("serq_version")
    assert same(want["report"], got)
    for n, samples in want["samples"].items():
        assert [bits(x) for x in r.observe(n).samples] == samples, n
