"""Parser unit tests: precedence, sugar and parse errors (language.md §2), by hand."""
import pytest

import serq
from serq.errors import CompileError

KERNEL = "stage s : fifo;\nsession {{ {body} }}\nrun {{ horizon 10; }}\n"


def session_block(body):
    p = serq.compile(source=KERNEL.format(body=body))
    return p, p.blocks[2]


def observed(expr_text):
    p, blk = session_block(f"observe o = {expr_text};")
    return blk[0].expr


def test_precedence_mul_over_add():
    e = observed("1 + 2 * 3")
    assert e.op == "Add" and e.right.op == "Mul"


def test_power_is_right_associative_and_binds_tighter_than_minus():
    e = observed("2 ^ 3 ^ 2")
    assert e.op == "Pow" and e.right.op == "Pow"
    e = observed("-2 ^ 2")
    assert type(e).__name__ == "Unary" and e.operand.op == "Pow"


def test_conditional_nests_to_the_right():
    e = observed("1 ? 2 : 3 ? 4 : 5")
    assert type(e).__name__ == "Cond" and type(e.other).__name__ == "Cond"


def test_comparisons_do_not_chain():
    with pytest.raises(CompileError) as e:
        observed("1 < 2 < 3")
    assert "expected Semi, found Lt" in str(e.value)


def test_sample_is_complete_at_unary_level():
    with pytest.raises(CompileError) as e:
        observed("~exp(1)^2")
    assert "expected Semi, found Caret" in str(e.value)
    e = observed("(~exp(1))^2")
    assert e.op == "Pow"


def test_no_literal_folding_but_lets_fold():
    p = serq.compile(source="let x = 0.1 + 0.2;\nstage s : fifo;\n"
                            "session { observe o = x; observe q = 0.1 + 0.2; }\n"
                            "run { horizon 1; }")
    assert p.blocks[2][0].expr.value == 0.1 + 0.2
    assert p.blocks[2][1].expr.op == "Add"


def test_error_excerpt_and_caret():
    with pytest.raises(CompileError) as e:
        serq.compile(source="stage s : fifo;\nfoo bar;\n")
    assert str(e.value) == "2:1: unexpected `foo` at top level\n2 | foo bar;\n  | ^"


def test_unknown_run_option_reported_after_its_semicolon():
    with pytest.raises(CompileError) as e:
        serq.compile(source="run { horizon 10; bogus 3; }")
    assert str(e.value).startswith("1:28: unknown run option `bogus`")


def test_keywords_are_not_reserved():
    p = serq.compile(source="let block = 3;\nstage delay : delay;\n"
                            "session { run delay (block); }\nrun { horizon 1; }")
    assert p.blocks[2][0].work.value == 3.0
