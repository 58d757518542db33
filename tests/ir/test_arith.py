"""serq.ir.arith, the interpreter and the constant folder against the reference's bits.

Golden data: tests/golden/arith/arith_bits.json, written by tools/regen_arith_golden.py with
pyserq 0.1.2: the samples of arith_probe.sq (every operator and arithmetic function on the
values where a NaN's or a zero's sign can arise, evaluated at run time by twelve sessions) and
the values the reference's compiler folds for arith_fold.sq (the same operations as `let`s,
where the answer is a number). Bits are compared (`struct.pack('>d', x).hex()`), so the sign
of a zero and of a NaN count.
"""
import json
import pathlib
import struct

import pytest

import serq
from serq.ir import arith

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "golden" / "arith"
DATA = json.loads((GOLDEN / "arith_bits.json").read_text())
VALUES = {name: struct.unpack(">d", bytes.fromhex(h))[0] for name, h in DATA["values"].items()}

FUNCTIONS = {"neg": arith.neg, "not": arith.not_, "abs": arith.fabs, "floor": arith.floor,
             "ceil": arith.ceil, "sqrt": arith.sqrt, "exp": arith.exp, "ln": arith.ln,
             "add": arith.add, "sub": arith.sub, "mul": arith.mul, "div": arith.div,
             "powop": arith.powf, "pow": arith.powf, "min": arith.fmin, "max": arith.fmax,
             "lt": arith.lt, "le": arith.le, "gt": arith.gt, "ge": arith.ge, "eq": arith.eq,
             "ne": arith.ne, "and": arith.and_, "or": arith.or_,
             "cond": lambda c, a: a if arith.truthy(c) else 7.0}


def bits(x):
    return struct.pack(">d", x).hex()


def test_the_golden_data_covers_every_function():
    ops = {name.split("__")[0] for name in DATA["bits"]}
    assert set(FUNCTIONS) <= ops
    assert ops - set(FUNCTIONS) == {"det", "sexp", "suni"}  # draws: the interpreter only
    # the values hold both NaN signs and both zeros
    assert {DATA["values"][k] for k in ("nan_pos", "nan_neg", "zero", "neg_zero")} == {
        "7ff8000000000000", "fff8000000000000", "0000000000000000", "8000000000000000"}


@pytest.mark.parametrize("op", sorted(FUNCTIONS))
def test_arith_gives_the_reference_bits(op):
    wrong = []
    for name, want in DATA["bits"].items():
        parts = name.split("__")
        if parts[0] != op:
            continue
        got = bits(FUNCTIONS[op](*(VALUES[v] for v in parts[1:])))
        if got != want:
            wrong.append((name, want, got))
    assert wrong == []


def test_the_interpreter_gives_the_reference_bits():
    report = serq.run(serq.compile(str(GOLDEN / "arith_probe.sq")))
    observes = {o.name: o for o in report.observes.values()}
    wrong = []
    for name, want in DATA["bits"].items():
        got = [bits(x) for x in observes[name].samples]
        if isinstance(want, str):
            want = [want] * len(got)
        if got != want:
            wrong.append((name, want, got))
    assert wrong == []


def test_the_folder_gives_the_reference_bits():
    ir = json.loads(serq.compile(str(GOLDEN / "arith_fold.sq")).to_json())
    folded = {}
    for block in ir["blocks"]:
        for stmt in block:
            if "Observe" in stmt:
                index, expr = stmt["Observe"]
                folded[ir["observes"][index]] = float(expr["Num"])
    names = list(DATA["folded"])
    assert len(folded) == len(names) > 1000
    wrong = [(name, want, bits(folded[f"o{k}"]))
             for k, (name, want) in enumerate(DATA["folded"].items())
             if bits(folded[f"o{k}"]) != want]
    assert wrong == []
