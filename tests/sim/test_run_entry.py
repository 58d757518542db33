"""`serq.run` checks the Program it is given (interpreter.md §12, ir.md §13.2): one edited
with `dataclasses.replace` skipped the loader's checks, and must get the same errors as
`Program.from_json` would give (ValueError for a bad value, TypeError for a bad type), never a
hang, an IndexError or a traceback from inside the interpreter."""
import dataclasses
import json
import math

import pytest

import serq
from serq.errors import IRError
from serq.ir import types as T

SOURCE = """stage s : fifo;
pool p { cap 10; }
workload { arrive batch(2); }
session { hold p (1) { run s (1); } observe q = queue(s); }
run { horizon 10; }
"""


@pytest.fixture(scope="module")
def program():
    return serq.compile(source=SOURCE)


def loader_error(program, **changes):
    """What Program.from_json says about the program's IR with `changes` made to its text."""
    ir = json.loads(program.to_json())
    ir.update(changes)
    with pytest.raises(ValueError) as info:
        serq.Program.from_json(json.dumps(ir))
    return str(info.value)


BAD_VALUES = [
    ("horizon", math.nan, "run: need 0 <= warmup < horizon"),
    ("horizon", math.inf, "run: need 0 <= warmup < horizon"),
    ("horizon", -1.0, "run: need 0 <= warmup < horizon"),
    ("warmup", 10.0, "run: need 0 <= warmup < horizon"),
    ("blocks", [], "init: block 0 out of range"),
    ("blocks", (), "init: block 0 out of range"),
    ("stages", (), "session: stage reference 0..1 out of range"),
    ("arrivals", 0, "run: arrivals must be positive"),
    ("arrivals", 3, "run: arrivals applies only to poisson or renewal workloads"),
    ("seed", -1, "Program.seed: invalid value: integer `-1`, expected u64"),
    ("seed", 1 << 64, "Program.seed: invalid value: integer `18446744073709551616`, "
                      "expected u64"),
    ("arrival", T.Poisson(math.nan), "Program.arrival: the Poisson rate is NaN"),
]


@pytest.mark.parametrize("field,value,message", BAD_VALUES)
def test_bad_values_are_value_errors(program, field, value, message):
    edited = dataclasses.replace(program, **{field: value})
    with pytest.raises(IRError) as info:
        serq.run(edited)
    assert str(info.value) == message


@pytest.mark.parametrize("field,value", [("blocks", []), ("arrivals", 0), ("stages", [])])
def test_the_same_text_as_the_loader(program, field, value):
    edited = dataclasses.replace(program, **{field: value})
    with pytest.raises(IRError) as info:
        serq.run(edited)
    assert str(info.value) == loader_error(program, **{field: value})


BAD_TYPES = [
    ("horizon", "10", 'Program.horizon: invalid type: string "10", expected f64'),
    ("seed", 1.5, "Program.seed: invalid type: floating point `1.5`, expected u64"),
    ("seed", True, "Program.seed: invalid type: boolean `true`, expected u64"),
    ("blocks", None, "Program.blocks: invalid type: null, expected a sequence"),
    ("arrival", None, "Program.arrival: invalid type: null, expected an arrival"),
    ("arrival", T.Batch(2.5), "Program.arrival: invalid type: floating point `2.5`, "
                              "expected u64"),
    ("blocks", [[1]], "run(): the Program does not hold a well-formed IR"),
    ("pools", (1,), "run(): the Program does not hold a well-formed IR"),
]


@pytest.mark.parametrize("field,value,message", BAD_TYPES)
def test_bad_types_are_type_errors(program, field, value, message):
    edited = dataclasses.replace(program, **{field: value})
    with pytest.raises(TypeError) as info:
        serq.run(edited)
    assert str(info.value).startswith(message)


def test_an_unedited_program_still_runs(program):
    assert serq.run(dataclasses.replace(program)).arrivals == 2
