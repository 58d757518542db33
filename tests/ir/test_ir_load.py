"""``Program.from_json``: serde_json's messages and positions, and the input leniency of
ir.md §1.5 / §13.1.

Every expected text below comes from the spec (ir.md, section named in the comment) or was
obtained by running the same input through the reference build, pyserq 0.1.2 ("probed");
none was taken from this implementation's output.
"""
import json
import math

import pytest

from serq.errors import IRError
from serq.ir import types as T
from serq.ir.load import load_program

# A small valid IR (the `base (valid)` input of the conformance corpus, load/cases.jsonl).
BASE = (
    '{"version": 10, "attrs": ["cached", "serial", "turn_no", "new", "out", "think", "more", '
    '"forced", "computed", "p", "q"], "observes": ["x"], "pools": [{"name": "kv", "cap": 100.0, '
    '"block": 8.0, "evict": "Lru", "preempt": "None", "queue": null, "spill": null, '
    '"admit_via": null}], "stages": [{"name": "E", "kind": {"Step": {"budget": {"Num": 64.0}, '
    '"cost": {"Num": 0.01}, "chunk": {"Num": 0.0}, "serve": {"By": []}, "memory": 0}}}, '
    '{"name": "s", "kind": {"Fifo": 1}}], "arrival": {"Poisson": 1.0}, "trace": null, '
    '"trace_ordered": false, "init": 0, "turn": 1, "session": 2, "blocks": [[{"Set": [9, '
    '{"Num": 10.0}]}], [], [{"Hold": {"pools": [[{"base": 0, "count": 1, "index": null}, '
    '{"Attr": 9}, null]], "reuse": null, "body": 3, "cache": {"Attr": 9}, "lease": null}}, '
    '{"Run": {"stage": {"base": 1, "count": 1, "index": null}, "mode": "Plain", "work": '
    '{"Num": 1.0}, "growing": null}}, {"Observe": [0, {"Num": 1.0}]}], [{"Run": {"stage": '
    '{"base": 0, "count": 1, "index": null}, "mode": "Prefill", "work": {"Attr": 9}, '
    '"growing": {"base": 0, "count": 1, "index": null}}}]], "horizon": 10.0, "warmup": 0.0, '
    '"seed": 1, "slot_cached": 0, "slot_serial": 1, "slot_turn": 2, "slot_new": 3, '
    '"slot_out": 4, "slot_think": 5, "slot_more": 6, "slot_forced": 7, "slot_computed": 8, '
    '"hidden": []}')


def edit(old: str, new: str, text: str = BASE) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def error_of(text: str) -> str:
    with pytest.raises(IRError) as info:
        load_program(text)
    return str(info.value)


def test_base_loads():
    p = load_program(BASE)
    assert p.version == 10
    assert p.pools[0].cap == 100.0
    assert p.blocks[2][1] == T.Run(T.CRef(1, 1), "Plain", T.Num(1.0))


def test_load_errors_are_value_errors():
    # ir.md §0: every error surfaces as a Python ValueError.
    with pytest.raises(ValueError):
        load_program("")


# --- syntax: serde_json's messages at serde_json's positions -----------------------------

@pytest.mark.parametrize("text, message", [
    # probed: the conformance corpus's "empty text", "not JSON", "top level is null" ...
    ("", "IR: EOF while parsing a value at line 1 column 0"),
    ("  ", "IR: EOF while parsing a value at line 1 column 2"),
    ("serq", "IR: expected value at line 1 column 1"),
    ("nope", "IR: expected ident at line 1 column 2"),
    ("x", "IR: expected value at line 1 column 1"),
    ("nul", "IR: EOF while parsing a value at line 1 column 3"),
    ("null", "IR: invalid type: null, expected struct Program at line 1 column 4"),
    ("9", "IR: invalid type: integer `9`, expected struct Program at line 1 column 1"),
    ('"x"', 'IR: invalid type: string "x", expected struct Program at line 1 column 3'),
    ("[]", "IR: invalid length 0, expected struct Program with 28 elements at line 1 column 2"),
    ("[10]", "IR: invalid length 1, expected struct Program with 28 elements at line 1 column 4"),
    ("{}", "IR: missing field `version` at line 1 column 2"),
    ('{"version": 9', "IR: EOF while parsing an object at line 1 column 13"),
    ("\n\n  {", "IR: EOF while parsing an object at line 3 column 3"),
    ('{"version": 10,\n "attrs": 5}',
     "IR: invalid type: integer `5`, expected a sequence at line 2 column 11"),
])
def test_whole_text_errors(text, message):
    assert error_of(text) == message


def test_columns_count_utf8_bytes():
    # probed: "é" is two bytes, so `5` ends at byte 35 (character 34).
    assert error_of('{"é": 1, "version": 10, "attrs": 5}') == (
        "IR: invalid type: integer `5`, expected a sequence at line 1 column 35")


@pytest.mark.parametrize("old, new, message", [
    # probed on pyserq 0.1.2 (horizon's value starts at byte 1079 of the edited text)
    ('"horizon": 10.0', '"horizon": 1.', "IR: invalid number at line 1 column 1082"),
    ('"horizon": 10.0', '"horizon": 1e', "IR: invalid number at line 1 column 1082"),
    ('"horizon": 10.0', '"horizon": 01', "IR: invalid number at line 1 column 1081"),
    ('"horizon": 10.0', '"horizon": -', "IR: invalid number at line 1 column 1081"),
    ('"horizon": 10.0', '"horizon": +1', "IR: expected value at line 1 column 1080"),
    ('"horizon": 10.0', '"horizon": NaN', "IR: expected value at line 1 column 1080"),
    ('"horizon": 10.0', '"horizon": tru', "IR: expected ident at line 1 column 1083"),
    ('"horizon": 10.0', '"horizon": 1e400', "IR: number out of range at line 1 column 1084"),
    # the exponent is accumulated in an i32: overflow is reported at the overflowing digit
    ('"horizon": 10.0', '"horizon": 1e99999999999',
     "IR: number out of range at line 1 column 1091"),
    ('"seed": 1', '"seed" 1', "IR: expected `:` at line 1 column 1108"),
    ('"seed": 1', '"seed": 1 "x": 2', "IR: expected `,` or `}` at line 1 column 1111"),
    ('"seed": 1', '"seed": 1,, "x": 2', "IR: key must be a string at line 1 column 1111"),
    ('"hidden": []', '"hidden": [],', "IR: trailing comma at line 1 column 1278"),
    ('"name": "kv"', '"name": "k\\xv"', "IR: invalid escape at line 1 column 163"),
    ('"name": "kv"', '"name": "k\\u12x4v"', "IR: invalid escape at line 1 column 167"),
    ('"name": "kv"', '"name": "k\\ud800v"',
     "IR: unexpected end of hex escape at line 1 column 168"),
    ('"name": "kv"', '"name": "k\\udc00v"',
     "IR: lone leading surrogate in hex escape at line 1 column 167"),
    ('"name": "kv"', '"name": "k\x01v"',
     "IR: control character (\\u0000-\\u001F) found while parsing a string at line 1 column 162"),
    # an ignored value is only checked for syntax; a control character there is reported
    # at its own byte, not after it
    ('"seed": 1', '"zz": "\x01", "seed": 1',
     "IR: control character (\\u0000-\\u001F) found while parsing a string at line 1 column 1107"),
    ('"seed": 1', '"zz": [1,], "seed": 1', "IR: expected value at line 1 column 1110"),
    ('"seed": 1', '"zz": {"a":1,}, "seed": 1', "IR: key must be a string at line 1 column 1114"),
])
def test_syntax_errors(old, new, message):
    assert error_of(edit(old, new)) == message


def test_trailing_characters():
    # conformance corpus, "trailing garbage" (probed): reported at the first extra byte
    assert error_of(BASE + " x") == "IR: trailing characters at line 1 column 1279"
    load_program(BASE + " \n\t")  # trailing whitespace is fine


def test_ignored_values_are_not_range_checked():
    # probed: 1e400 in an unknown key loads; in a known f64 it is out of range
    load_program(edit('"seed": 1', '"zz": 1e400, "seed": 1'))


def test_recursion_limit():
    # probed: 60 nested `Unary` expressions load, 61 exceed serde_json's depth of 128
    def nested(d):
        e = '{"Num": 1.0}'
        for _ in range(d):
            e = '{"Unary": ["Neg", ' + e + ']}'
        return edit('{"Num": 10.0}', e)
    load_program(nested(60))
    assert error_of(nested(61)) == "IR: recursion limit exceeded at line 1 column 1694"
    # ignored values have no depth limit (probed)
    load_program(edit('"cap": 100.0', '"cap": 100.0, "zz": ' + "[" * 3000 + "]" * 3000))


# --- types ---------------------------------------------------------------------------------

@pytest.mark.parametrize("old, new, message", [
    # conformance corpus (probed)
    ('"version": 10', '"version": "10"',
     'IR: invalid type: string "10", expected u32 at line 1 column 16'),
    ('"version": 10', '"version": 10.0',
     "IR: invalid type: floating point `10.0`, expected u32 at line 1 column 16"),
    ('"seed": 1', '"seed": -1', "IR: invalid value: integer `-1`, expected u64 at line 1 column 1110"),
    ('"seed": 1', '"seed": 18446744073709551616',
     "IR: invalid type: floating point `1.8446744073709552e+19`, expected u64 at line 1 column 1128"),
    # probed: serde_json reads `-0` as the float -0.0; floats print in Rust's layout
    ('"seed": 1', '"seed": -0', "IR: invalid type: floating point `-0.0`, expected u64 at line 1 column 1110"),
    ('"seed": 1', '"seed": 1e16', "IR: invalid type: floating point `1e+16`, expected u64 at line 1 column 1112"),
    ('"seed": 1', '"seed": 1e-5', "IR: invalid type: floating point `0.00001`, expected u64 at line 1 column 1112"),
    ('"seed": 1', '"seed": -9223372036854775809',
     "IR: invalid type: floating point `-9.223372036854776e+18`, expected u64 at line 1 column 1128"),
    ('"seed": 1', '"seed": true', "IR: invalid type: boolean `true`, expected u64 at line 1 column 1112"),
    ('"seed": 1', '"seed": [1]', "IR: invalid type: sequence, expected u64 at line 1 column 1108"),
    ('"seed": 1', '"seed": {}', "IR: invalid type: map, expected u64 at line 1 column 1108"),
    # probed: a string is shown as Rust's Debug of it
    ('"seed": 1', '"seed": "a\\"b\\n\\u0001\\u00e9é\\t"',
     'IR: invalid type: string "a\\"b\\n\\u{1}éé\\t", expected u64 at line 1 column 1132'),
    ('"name": "kv"', '"name": "kv", "index": 4294967296',
     "IR: invalid value: integer `4294967296`, expected u32 at line 1 column 184"),
    ('"init": 0', '"init": 0.0', "IR: invalid type: floating point `0.0`, expected usize at line 1 column 546"),
    ('"trace_ordered": false', '"trace_ordered": 0',
     "IR: invalid type: integer `0`, expected a boolean at line 1 column 529"),
    ('"trace": null', '"trace": 0', "IR: invalid type: integer `0`, expected a string at line 1 column 506"),
    ('"pools": [', '"pools": [5, ', "IR: invalid type: integer `5`, expected struct CPool at line 1 column 151"),
    ('"Poisson": 1.0', '"Sessions": [{"attrs": [[5]]}]',
     "IR: invalid length 1, expected a tuple of size 2 at line 1 column 506"),
    # ir.md §1.5 (Sessions attr pair too long, corpus): extra elements are trailing characters
    ('"Poisson": 1.0', '"Sessions": [{"attrs": [[9, 1.0, 2.0]]}]',
     "IR: trailing characters at line 1 column 513"),
    ('"hidden": []', '"hidden": [], "gauges": null',
     "IR: invalid type: null, expected a sequence at line 1 column 1292"),
])
def test_type_errors(old, new, message):
    assert error_of(edit(old, new)) == message


@pytest.mark.parametrize("old, new, message", [
    # conformance corpus (probed): the variant lists are serde's, in declaration order
    ('"preempt": "None"', '"preempt": "Fifo"',
     "IR: unknown variant `Fifo`, expected `None` or `Lifo` at line 1 column 226"),
    ('"kind": {"Fifo": 1}', '"kind": {"Zz": 1}',
     "IR: unknown variant `Zz`, expected one of `Fifo`, `Ps`, `Delay`, `Step` at line 1 column 457"),
    ('{"Num": 10.0}', '{"Zz": 10.0}',
     "IR: unknown variant `Zz`, expected one of `Num`, `Attr`, `Ctx`, `Sample`, `Call`, `Unary`, "
     "`Binary`, `Cond` at line 1 column 600"),
    ('{"Num": 10.0}', '{"Call": ["Min", [{"Zz": 1}]]}',
     "IR: unknown variant `Zz`, expected one of `Expr`, `Pool`, `Stage` at line 1 column 618"),
    ('"hidden": []', '"hidden": [], "share": "Zz"',
     "IR: unknown variant `Zz`, expected `MaxMin` or `Bottleneck` at line 1 column 1291"),
    # a bare string naming a variant with a payload (probed)
    ('"arrival": {"Poisson": 1.0}', '"arrival": "Poisson"',
     "IR: invalid type: unit variant, expected newtype variant at line 1 column 487"),
    ('{"Set": [9, {"Num": 10.0}]}', '"Set"',
     "IR: invalid type: unit variant, expected tuple variant at line 1 column 589"),
    ('{"Set": [9, {"Num": 10.0}]}', '"Hold"',
     "IR: invalid type: unit variant, expected struct variant at line 1 column 590"),
    ('"kind": {"Step"', '"kind": "Step": {"Q"',
     "IR: invalid type: unit variant, expected newtype variant at line 1 column 318"),
    # a unit variant written as an object takes only null (probed)
    ('"arrival": {"Poisson": 1.0}', '"arrival": {"None": 5}',
     "IR: invalid type: integer `5`, expected unit at line 1 column 488"),
    # the enum object (probed): its key is read as an object key, then exactly one entry
    ('"arrival": {"Poisson": 1.0}', '"arrival": {}', "IR: expected value at line 1 column 480"),
    ('"arrival": {"Poisson": 1.0}', '"arrival": {5: 1}', "IR: key must be a string at line 1 column 480"),
    ('"arrival": {"Poisson": 1.0}', '"arrival": {"Poisson": 1.0, "x": 1}',
     "IR: expected value at line 1 column 493"),
    ('"arrival": {"Poisson": 1.0}', '"arrival": 5', "IR: expected value at line 1 column 479"),
    ('{"Set": [9, {"Num": 10.0}]}', '{"Set": [9]}',
     "IR: invalid length 1, expected tuple variant CStmt::Set with 2 elements at line 1 column 594"),
    ('{"Set": [9, {"Num": 10.0}]}', '{"Set": 9}',
     "IR: invalid type: integer `9`, expected tuple variant CStmt::Set at line 1 column 592"),
    ('{"Set": [9, {"Num": 10.0}]}', '{"Set": [9, {"Num": 10.0},]}',
     "IR: trailing comma at line 1 column 610"),
    ('{"Set": [9, {"Num": 10.0}]}', '{"Choose": [9, {"Num": 1.0}]}',
     "IR: invalid length 2, expected struct variant CStmt::Choose with 3 elements at line 1 column 611"),
])
def test_enum_errors(old, new, message):
    assert error_of(edit(old, new)) == message


@pytest.mark.parametrize("old, new, message", [
    # ir.md §1.4 and the corpus (probed): the `real` adapter of Num and cap
    ('"cap": 100.0', '"cap": "nan"',
     'IR: expected a number, "inf" or "-inf", found "nan" at line 1 column 177'),
    ('"cap": 100.0', '"cap": "a\\"b"',  # the string is shown unescaped (probed)
     'IR: expected a number, "inf" or "-inf", found "a"b" at line 1 column 178'),
    ('"cap": 100.0', '"cap": true',
     "IR: data did not match any variant of untagged enum Real at line 1 column 176"),
    # the whole value is parsed first (untagged enum), so syntax inside it is checked
    ('"cap": 100.0', '"cap": [1e400]', "IR: number out of range at line 1 column 178"),
    # an error from inside an enum object is placed after the object is closed (probed)
    ('"work": {"Num": 1.0}', '"work": {"Num": null}',
     "IR: data did not match any variant of untagged enum Real at line 1 column 861"),
])
def test_real_errors(old, new, message):
    assert error_of(edit(old, new)) == message


@pytest.mark.parametrize("old, new, message", [
    # missing fields are reported at the closing brace of their object (corpus, probed)
    ('"cap": 100.0, ', '', "IR: missing field `cap` at line 1 column 262"),
    ('"hidden": []', '"zz": 0', "IR: missing field `hidden` at line 1 column 1272"),
    ('"Poisson": 1.0', '"Sessions": [{"turns": []}]', "IR: missing field `attrs` at line 1 column 505"),
    # duplicates are reported right after the repeated key (probed)
    ('"hidden": []', '"hidden": [], "hidden": []', "IR: duplicate field `hidden` at line 1 column 1286"),
    ('{"version": 10', '{"version": 10, "version": 10', "IR: duplicate field `version` at line 1 column 25"),
    # positional structs: Option fields may not be left out, #[serde(default)] ones may
    ('{"base": 0, "count": 1, "index": null}', '[0, 1]',
     "IR: invalid length 2, expected struct CRef with 3 elements at line 1 column 645"),
])
def test_struct_errors(old, new, message):
    assert error_of(edit(old, new)) == message


# --- leniency (ir.md §1.5) -----------------------------------------------------------------

def test_integers_for_floats_and_canonical_output():
    p = load_program(edit('"cap": 100.0', '"cap": 5'))
    assert p.pools[0].cap == 5.0
    assert '"cap": 5.0,' in p.to_json()


def test_real_strings():
    assert load_program(edit('"cap": 100.0', '"cap": "inf"')).pools[0].cap == math.inf
    assert load_program(edit('"cap": 100.0', '"cap": "-inf"')).pools[0].cap == -math.inf
    assert load_program(edit('{"Num": 10.0}', '{"Num": "inf"}')).blocks[0][0].expr == T.Num(math.inf)


def test_options_may_be_omitted_and_unknown_keys_ignored():
    p = load_program(edit('"trace": null, ', '', edit('"block": 8.0, ', '"zz": [1, {"a": null}], ')))
    assert p.trace is None and p.pools[0].block is None


def test_unit_variant_as_object():
    p = load_program(edit('{"Observe": [0, {"Num": 1.0}]}', '{"End": null}'))
    assert p.blocks[2][-1] == T.End()
    assert '"End"' in p.to_json()


def test_positional_structs():
    # ir.md §1.5: a struct may be given as a positional array (probed: `[0, 1, null]` loads;
    # SessionInit's `turns` has a serde default, so `[[]]` is a whole SessionInit)
    p = load_program(edit('{"base": 0, "count": 1, "index": null}', "[0, 1, null]"))
    assert p.blocks[2][0].pools[0].ref == T.CRef(0, 1, None)
    p = load_program(edit('"Poisson": 1.0', '"Sessions": [[[]]]'))
    assert p.arrival == T.Sessions((T.SessionInit(()),))


def test_defaults():
    p = load_program(BASE)
    assert p.arrivals is None and p.share is None and p.gauges == ()
    assert load_program(edit('"hidden": []', '"hidden": [], "share": null, "arrivals": null')).share is None


def test_u64_max_seed():
    # corpus, "seed u64 max (valid)"
    assert load_program(edit('"seed": 1', '"seed": 18446744073709551615')).seed == (1 << 64) - 1


def test_floats_are_correctly_rounded():
    # probed: the reference parses with serde_json's float_roundtrip (correct rounding)
    p = load_program(edit('"horizon": 10.0', '"horizon": 9007199254740993.0000000000000001'))
    assert p.horizon == 9007199254740994.0


# --- the version pre-check (ir.md §13.1) ---------------------------------------------------

@pytest.mark.parametrize("text, message", [
    ('{"version": 9, "attrs": 5}', "IR version 9 (this interpreter reads 10)"),
    ('{"version": 9, "x": 1e400}', "IR version 9 (this interpreter reads 10)"),
    (' {"version": 11} ', "IR version 11 (this interpreter reads 10)"),
    # probed: the pre-check reads a one-field struct, which a one-element array also is
    ("[9]", "IR version 9 (this interpreter reads 10)"),
    # probed: when the pre-check fails, the full parse's error is reported
    ('{"version": 9, "version": 9}', "IR: duplicate field `version` at line 1 column 24"),
    ('{"version": 9} x', "IR: missing field `attrs` at line 1 column 14"),
    ('{"version": 9, "x": [1,]}', "IR: expected value at line 1 column 24"),
    ("[9, 1]", "IR: invalid type: integer `1`, expected a sequence at line 1 column 5"),
])
def test_version_precheck(text, message):
    assert error_of(text) == message


def test_version_of_a_loaded_program():
    # ir.md §13.4
    assert error_of(edit('"version": 10', '"version": 9')) == "IR version 9 (this interpreter reads 10)"


def test_lone_surrogate_in_python_text():
    # probed: the reference cannot encode the str to UTF-8 and says so (a ValueError)
    assert error_of('{"version": 10, "attrs": ["\ud800"]}') == (
        "'utf-8' codec can't encode character '\\ud800' in position 27: surrogates not allowed")


def test_pretty_input_loads_to_the_same_program():
    assert load_program(json.dumps(json.loads(BASE), indent=4)) == load_program(BASE)
