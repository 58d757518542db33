"""Lowering unit tests: block numbering, attributes, defs, bindings (language.md §4).
Expected shapes are worked out by hand from the spec's rules."""
import pytest

import serq
from serq.errors import CompileError
from serq.ir import types as T


def test_blocks_are_numbered_in_preorder():
    p = serq.compile(source="""
stage s : fifo;
pool kv { cap 10; }
session {
  hold kv (1) { branch (1) { run s (1); } else { loop { end; } } }
  observe o = 1;
}
run { horizon 1; }""")
    hold = p.blocks[2][0]
    assert hold.body == 3
    br = p.blocks[3][0]
    assert (br.then, br.other) == (4, 5)
    assert p.blocks[5][0] == T.Loop(6)
    assert p.blocks[6] == (T.End(),)


def test_attributes_follow_builtins_in_first_assignment_order():
    p = serq.compile(source="""
stage s : fifo;
workload { arrive poisson(1); init { set b = 1; } turn { set a = 2; } session { request; } }
server { choose c in 2 by (c); set b = 3; }
run { horizon 1; }""")
    assert p.attrs == T.BUILTIN_ATTRS + ("b", "a", "c")


def test_branch_without_else_gets_an_empty_block_and_with_is_bernoulli():
    p = serq.compile(source="stage s : fifo;\nsession { branch with (0.3) { run s (1); } }\n"
                            "run { horizon 1; }")
    br = p.blocks[2][0]
    assert br.guard == T.Sample("Bernoulli", (T.Num(0.3),))
    assert p.blocks[br.other] == ()


def test_expression_def_keeps_grouping_and_reference_arguments():
    p = serq.compile(source="""
pool kv[2] { cap 10; }
def twice(x) = x * 2;
def usage(p) = used(p);
stage s : fifo;
session { observe o = twice(1 + 2); observe u = usage(kv[1]); }
run { horizon 1; }""")
    o = p.blocks[2][0].expr
    assert o.op == "Mul" and o.left.op == "Add"
    u = p.blocks[2][1].expr
    assert u == T.Call("Used", (T.ArgPool(T.CRef(0, 2, T.Num(1.0))),))


def test_at_admission_binding_is_substituted_and_hoisted():
    p = serq.compile(source="""
pool kv { cap 100; }
stage s : fifo;
session { hold kv (x * 2) at admission (x = 3) { run s (x); } }
run { horizon 1; }""")
    hold = p.blocks[2][0]
    assert hold.pools[0].units == T.Binary("Mul", T.Num(3.0), T.Num(2.0))
    assert p.blocks[hold.body][0] == T.Set(9, T.Num(3.0))
    assert p.attrs[9] == "x"


def test_aggregates_are_written_out_left_nested():
    p = serq.compile(source="stage s[3] : fifo;\n"
                            "gauge q = sum j in 3 (queue(s[j]));\nrun { horizon 1; }")
    g = p.gauges[0].expr
    assert g.op == "Add" and g.left.op == "Add"
    assert g.right == T.Call("Queue", (T.ArgStage(T.CRef(0, 3, T.Num(2.0))),))


def test_sets_override_replaces_let():
    src = "let lam = 1;\nworkload { arrive poisson(lam); }\nrun { horizon 1; }"
    assert serq.compile(source=src, sets={"lam": "2 * 3"}).arrival == T.Poisson(6.0)
    assert serq.compile(source=src, sets={"lam": 0.5}).arrival == T.Poisson(0.5)
    with pytest.raises(CompileError) as e:
        serq.compile(source=src, sets={"1x": 1})
    assert str(e.value) == "invalid set name `1x`; expected an identifier"


def test_run_settings_cast_and_override():
    p = serq.compile(source="run { horizon 10; seed 7.9; }", seed=None)
    assert (p.horizon, p.seed) == (10.0, 7)
    p = serq.compile(source="run { horizon 10; }", horizon=5, seed=3)
    assert (p.horizon, p.seed) == (5.0, 3)
    with pytest.raises(CompileError) as e:
        serq.compile(source="stage s : fifo;")
    assert str(e.value) == "link error: no horizon (run { horizon T; })"


def test_closed_and_batch_counts_saturate():
    p = serq.compile(source="workload { arrive batch(2.9); }\nrun { horizon 1; }")
    assert p.arrival == T.Batch(2)
    p = serq.compile(source="workload { arrive closed(-1); }\nrun { horizon 1; }")
    assert p.arrival == T.Closed(0)


def test_a_4096_term_aggregate_compiles_without_overflowing_the_stack():
    # 4096 terms is the language's limit (language.md 3.6); the sum nests 4095 levels deep
    p = serq.compile(source="stage s[4096] : fifo;\n"
                            "gauge q = sum j in 4096 (queue(s[j]));\nrun { horizon 1; }")
    e, depth = p.gauges[0].expr, 0
    while type(e) is T.Binary:
        e, depth = e.left, depth + 1
    assert depth == 4095
