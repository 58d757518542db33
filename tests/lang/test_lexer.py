"""Lexer unit tests. Expected values come from the rules of language.md §1 (by hand)."""
import pytest

from serq.errors import CompileError
from serq.lang.diagnostics import Source
from serq.lang.lexer import lex, show_f64


def kinds(text):
    return [(t.kind, t.val) for t in lex(Source(text))][:-1]


def test_numbers_and_exponent_rule():
    # `2e` is 2 then the identifier e; `2e1` is one number; underscores vanish
    assert kinds("2e") == [("num", 2.0), ("ident", "e")]
    assert kinds("2e1") == [("num", 20.0)]
    assert kinds("1_000.5") == [("num", 1000.5)]
    assert kinds(".5 7.") == [("num", 0.5), ("num", 7.0)]
    assert kinds("1.5E-3") == [("num", 0.0015)]


def test_no_units_and_no_sign():
    assert kinds("5ms") == [("num", 5.0), ("ident", "ms")]
    assert kinds("-3") == [("Minus", "-"), ("num", 3.0)]


def test_two_char_operators_first():
    assert [k for k, _ in kinds("<= >= == != && || < !")] == [
        "Le", "Ge", "EqEq", "Ne", "AndAnd", "OrOr", "Lt", "Not"]


def test_unicode_identifiers_and_columns():
    toks = lex(Source("λ é\n  _x1"))
    assert [(t.val, t.pos.line, t.pos.col) for t in toks[:-1]] == [
        ("λ", 1, 1), ("é", 1, 3), ("_x1", 2, 3)]


def test_comments():
    assert kinds("a // b\n/* c\n d */ e") == [("ident", "a"), ("ident", "e")]


def test_strings_have_no_escapes():
    assert kinds('"a\\nb"') == [("str", "a\\nb")]


@pytest.mark.parametrize("text,message", [
    ("a % b", "1:3: unexpected character `%`"),
    ("# x", "1:1: unexpected character `#`"),
    ("x = 1.2.3", "1:5: bad number `1.2.3`"),
    ("ok /* never closed", "1:4: unterminated block comment"),
])
def test_lex_errors(text, message):
    with pytest.raises(CompileError) as e:
        lex(Source(text))
    assert str(e.value).split("\n")[0] == message


def test_unterminated_string_position():
    # reported on the string's line, at its column plus every character consumed
    with pytest.raises(CompileError) as e:
        lex(Source('ab "cd\nef'))
    assert str(e.value).split("\n")[0] == "1:10: unterminated string"


def test_rust_display_of_numbers():
    assert show_f64(3.0) == "3"
    assert show_f64(2.5) == "2.5"
    assert show_f64(1e20) == "100000000000000000000"
    assert show_f64(1e-7) == "0.0000001"
