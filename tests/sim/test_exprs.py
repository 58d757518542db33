"""The expression compiler (serq/sim/exprs.py) against a plain walk of the IR tree.

The compiler picks a closure per node shape (constants folded, attribute reads, ``now``,
Python's ``+``/``*`` where a non-NaN constant operand makes them exact); the walk below calls
``serq.ir.arith`` for every node, as interpreter.md §13 defines the arithmetic. Random trees
over NaNs of both signs, infinities and signed zeros must give the same bits."""
import math
import random
import struct

from serq.ir import arith
from serq.ir import types as T
from serq.sim import exprnodes
from serq.sim.exprs import Context, ExprCompiler
from serq.sim.scheduler import Scheduler

VALUES = [0.0, -0.0, 1.0, -2.5, 3.0, math.inf, -math.inf, math.nan, -math.nan, 1e308, 0.5]
OPS = ["Add", "Sub", "Mul", "Div", "Pow", "Lt", "Le", "Gt", "Ge", "Eq", "Ne", "And", "Or"]


class FakeSim(Scheduler):
    """What the compiler reads from the simulator for these expressions (the clock is a
    ``Scheduler``'s: ``now`` is read from it in C, compiled)."""
    rngs = {}

    def __init__(self):
        super().__init__()
        self.now = 7.25
        self.ctx = Context()
        self.ctx.waited = -math.nan


def walk(e, a, S):
    t = type(e)
    if t is T.Num:
        return math.nan if e.value != e.value else e.value  # a NaN constant is NaN
    if t is T.Attr:
        return a[e.slot]
    if t is T.Ctx:
        return S.now if e.var == "Now" else S.ctx.waited
    if t is T.Unary:
        return arith.UNARY[e.op](walk(e.operand, a, S))
    if t is T.Binary:
        x = walk(e.left, a, S)
        if e.op == "And" and x == 0.0 or e.op == "Or" and x != 0.0:
            return 1.0 if e.op == "Or" else 0.0  # the second operand is not evaluated
        return arith.BINARY[e.op](x, walk(e.right, a, S))
    if t is T.Cond:
        return walk(e.then if walk(e.cond, a, S) != 0.0 else e.other, a, S)
    fn = arith.FUNCTIONS1.get(e.fun) or arith.FUNCTIONS2[e.fun]
    return fn(*[walk(x.expr, a, S) for x in e.args])


def tree(r, depth):
    k = r.random()
    if depth == 0 or k < 0.25:
        c = r.randrange(4)
        if c == 0:
            return T.Num(r.choice(VALUES))
        if c == 1:
            return T.Ctx(r.choice(["Now", "Waited"]))
        return T.Attr(r.randrange(4))
    d = depth - 1
    if k < 0.35:
        return T.Unary(r.choice(["Neg", "Not"]), tree(r, d))
    if k < 0.45:
        return T.Cond(tree(r, d), tree(r, d), tree(r, d))
    if k < 0.6:
        fun = r.choice(sorted(arith.FUNCTIONS1) + sorted(arith.FUNCTIONS2))
        n = 2 if fun in arith.FUNCTIONS2 else 1
        return T.Call(fun, tuple(T.ArgExpr(tree(r, d)) for _ in range(n)))
    return T.Binary(r.choice(OPS), tree(r, d), tree(r, d))


def bits(x):
    return struct.pack("<d", x)


def test_random_trees_give_the_walks_bits():
    r = random.Random(10)
    S = FakeSim()
    ex = ExprCompiler(S)
    for _ in range(3000):
        e = tree(r, r.randrange(1, 5))
        f = ex.function(e)
        for _ in range(4):
            a = [r.choice(VALUES) for _ in range(4)]
            assert bits(f(a)) == bits(walk(e, a, S)), (e, a)


def test_two_nan_operands_give_the_first():
    """Of two NaN operands ``+`` and ``*`` give the first (arith's rule), whatever shape."""
    S = FakeSim()
    ex = ExprCompiler(S)
    neg, pos = -math.nan, math.nan
    for op in ("Add", "Mul"):
        for left, right in [(T.Attr(0), T.Attr(1)), (T.Attr(0), T.Ctx("Waited")),
                            (T.Ctx("Waited"), T.Attr(1)), (T.Num(math.nan), T.Attr(0))]:
            f = ex.function(T.Binary(op, left, right))
            a = [neg, pos]
            assert bits(f(a)) == bits(walk(T.Binary(op, left, right), a, S))


def test_context_reads_are_tracked():
    ex = ExprCompiler(FakeSim())
    ex.function(T.Binary("Add", T.Ctx("Waited"), T.Num(1.0)))
    ex.function(T.Ctx("Now"), track=False)
    assert ex.ctx_used == {"Waited"}


def test_the_compiled_switch_calls_the_tables_functions():
    """``op1``/``op2`` (the compiled nodes' operations, by code) give the bits of the
    function at that code in ``OP1``/``OP2`` (the interpreted nodes'), for every code."""
    for code, f in enumerate(exprnodes.OP1):
        for x in VALUES:
            assert bits(exprnodes.op1(code, x)) == bits(f(x)), (f, x)
    for code, f in enumerate(exprnodes.OP2):
        for x in VALUES:
            for y in VALUES:
                assert bits(exprnodes.op2(code, x, y)) == bits(f(x, y)), (f, x, y)


def test_a_sum_of_nodes_is_one_node_with_the_nested_additions_bits():
    """``x + y + z + w`` of four node-shaped terms compiles to one ``SumF`` of four terms
    (issue 10), ``x + (y + z)`` to one whose second term is a sum; both give the bits of the
    nested additions (arith.add: of two NaNs the first) on every mix of NaNs of both signs,
    infinities and signed zeros."""
    S = FakeSim()
    ex = ExprCompiler(S)

    def term(slot):  # a node, not an attribute: -a[slot]
        return T.Unary("Neg", T.Attr(slot))

    left = T.Binary("Add", T.Binary("Add", T.Binary("Add", term(0), term(1)), term(2)),
                    term(3))
    right = T.Binary("Add", term(0), T.Binary("Add", term(1), term(2)))
    assert isinstance(ex.expr(left), exprnodes.SumF) and len(ex.expr(left).terms) == 4
    assert [type(t).__name__ for t in ex.expr(right).terms] == ["UnAttr", "SumF"]
    r = random.Random(3)
    for e in (left, right):
        f = ex.function(e)
        for _ in range(500):
            a = [r.choice(VALUES) for _ in range(4)]
            assert bits(f(a)) == bits(walk(e, a, S)), (e, a)
