"""Rust's text forms of an f64 (serq.ir.floats), the one implementation the lexer, the IR
printer, the interpreter's messages and the report use.

Golden data: tests/ir/data/rust_display.json, the texts pyserq 0.1.2 printed for 58 values
(parse errors, run-time guard messages, the report's warm-up), recorded by
tools/probe_float_display.py. `lower_exp` is checked against Rust's documented `{:e}` form.
"""
import json
import math
import pathlib

import pytest

import serq
from serq.ir import floats
from serq.ir.show import show_num_exact
from serq.lang.lexer import show_f64
from serq.report.json import fmt_float
from serq.sim.fmt import display as sim_display

DATA = json.loads((pathlib.Path(__file__).parent / "data" / "rust_display.json")
                  .read_text(encoding="utf-8"))
CASES = [(float.fromhex(c["value"]), c["text"], c["from"], c["input"]) for c in DATA["cases"]]
IDS = [f'{c["from"]}:{c["input"]}' for c in DATA["cases"]]


def test_the_data_covers_the_edges():
    texts = {t for _, t, _, _ in CASES}
    assert {"NaN", "inf", "-inf", "-0", "0"} <= texts
    values = [v for v, _, _, _ in CASES]
    assert any(0 < abs(v) < 2.2250738585072014e-308 for v in values)  # subnormals
    assert any(abs(v) >= 2 ** 53 for v in values if math.isfinite(v))
    assert "pyserq 0.1.2" in DATA["provenance"]


@pytest.mark.parametrize("value,text,where,source", CASES, ids=IDS)
def test_display_is_the_references(value, text, where, source):
    assert floats.display(value) == text


@pytest.mark.parametrize("value,text,where,source", CASES, ids=IDS)
def test_every_printer_uses_it(value, text, where, source):
    assert show_f64(value) == text
    assert sim_display(value) == text
    assert fmt_float(value) == (text if math.isfinite(value) else "null")


@pytest.mark.parametrize("value,text,where,source",
                         [c for c in CASES if c[2] == "lexer"],
                         ids=[i for i in IDS if i.startswith("lexer:")])
def test_parse_errors_name_numbers_as_the_reference(value, text, where, source):
    with pytest.raises(serq.CompileError) as e:
        serq.compile(source=f"stage s : fifo;\n{source}\n")
    assert str(e.value).splitlines()[0] == f"2:1: unexpected {text} at top level"


@pytest.mark.parametrize("x,text", [
    (1e300, "1e300"), (1.5e-7, "1.5e-7"), (1234.5, "1.2345e3"), (-2.25, "-2.25e0"),
    (0.0, "0e0"), (-0.0, "-0e0"), (5e-324, "5e-324"), (1e16, "1e16"), (0.001, "1e-3"),
    (math.inf, "inf"), (-math.inf, "-inf"), (math.nan, "NaN")])
def test_lower_exp(x, text):
    assert floats.lower_exp(x) == text


@pytest.mark.parametrize("x,digits,point", [
    (0.00125, "125", -2), (1e22, "1", 23), (123.456, "123456", 3), (5e-324, "5", -323),
    (2.0 ** 60, "1152921504606847", 19), (-7.0, "7", 1)])
def test_shortest_digits(x, digits, point):
    assert floats.shortest_digits(x) == (digits, point)


@pytest.mark.parametrize("x,text", [
    (1e300, "1e300"), (1.5e-7, "1.5e-7"), (0.5, "0.5"), (-0.0, "-0"), (1e15, "1e15"),
    (123456789.0, "123456789"), (math.nan, "nan")])
def test_the_ir_printer_takes_the_shorter_form(x, text):
    assert show_num_exact(x) == text
