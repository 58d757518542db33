"""IR expressions compiled to trees of typed nodes, once per run (interpreter.md §13,
language.md §4.3).

Each expression becomes one node (``exprnodes.Expr``), built directly from the IR tree; its
method ``ev(a)`` evaluates it (``a``: the attribute list of the session, entry snapshot or
the run's ``na`` it is read for), in C when compiled (see ``exprnodes``). The event loop
never walks IR nodes and no source text is generated. Common shapes get their own class,
chosen once when the node is built: a node over constants is folded to its value (computed
by the same function the node would call), and an operator on an attribute read, a constant
or ``now`` reads it in place instead of calling a child.

The arithmetic is ``serq.ir.arith`` (the reference's f64 answers where Python's differ:
division by zero, ``powf``, ``ln``/``sqrt`` of negatives, NaN signs, the first of two NaN
operands, ``f64::min``/``max`` ignoring NaN, ``floor``/``ceil`` keeping the sign of zero):
its functions are called (compiled, as C functions). Interpreted, Python's own ``+`` and
``*`` (``operator.add``/``mul``) are used only where one operand is a constant that is not a
NaN, so that two NaN operands cannot meet (the one case where CPython's answer differs from
arith's; ``-`` is always CPython's).

Context variables are read from the simulator's clock (``S.now``) and its ``Context``
(``S.ctx.waited`` …), which each moment sets before it evaluates. A draw names its random
stream at compile time: the stream is a property of where the expression sits, not of the
expression. It calls its law's sampler in ``rng.py`` (the one definition of each law).
"""
from __future__ import annotations

import math
import operator
import struct

from serq.ir import arith
from serq.ir import types as T
from serq.sim.context import Context  # noqa: F401  (its old home; tests import it here)
from serq.sim.exprnodes import (CTX, A, And, BernoulliK, Bernoulli, BinAA, BinAF, BinAK, BinFA,
                                BinFF, BinFK, BinKA, BinKF, Cond, Const, Erlang, Exp, ExpK, F,
                                H2, H2K, K, N, Now, NowAttr, NowSub, Or, SumF, UnAttr, Unary,
                                Uniform, UniformK)
from serq.sim.exprnodes import Attr as AttrNode

__all__ = ["ExprCompiler", "Context", "K", "A", "N", "F", "expr_key"]

STAGE_FUNS = ("Queue", "Busy", "Work", "BudgetLeft", "EstLambda", "EstRho", "EstWait")
POOL_FUNS = ("Used", "Free", "CachedIn", "Holders", "Queued")
SAMPLE_ARITY = {"Exp": 1, "Det": 1, "Bernoulli": 1, "Uniform": 2, "Erlang": 2, "H2": 2}
NAN = math.nan

#: Python's operators where arith says they give its answer (see ``binary_op``)
PLAIN = {arith.add: operator.add, arith.sub: operator.sub, arith.mul: operator.mul}


class ExprCompiler:
    """Builds the node of each expression of a run, for the simulator ``S``."""

    def __init__(self, sim):
        self.S = sim
        # the nodes that call on the simulator: imported here, not at the module's import,
        # because the modules they cimport (the run, the stages, the pools) import this one
        from serq.sim import fnnodes
        self.fn = fnnodes
        self.cache = {}
        # the context variables read by the expressions built so far (see ``expr``)
        self.ctx_used = set()
        self.cache_ctx = {}

    def expr(self, e, stream="session", track=True):
        """The node (an ``Expr``) evaluating ``e``; draws come from ``stream``. Unless
        ``track`` is false, the context variables ``e`` reads are added to ``ctx_used``."""
        key = (expr_key(e), stream)
        n = self.cache.get(key)
        outer = self.ctx_used
        if n is None:
            self.ctx_used = set()
            n = self.build(e, stream)
            self.cache[key] = n
            self.cache_ctx[key] = self.ctx_used
            self.ctx_used = outer
        if track:
            outer |= self.cache_ctx[key]
        return n

    def function(self, e, stream="session", track=True):
        """``expr``'s node as a function ``f(a)`` (its bound ``ev``), for a Python caller."""
        return self.expr(e, stream, track).ev

    def node(self, e, stream="session", track=True):
        """``(shape, f, v)``: ``expr``'s node's shape (``K, A, N, F``), its function, and its
        datum: a constant's value, an attribute's slot, ``now``'s simulator (else None)."""
        n = self.expr(e, stream, track)
        s = n.shape
        v = n.value if s == K else n.slot if s == A else self.S if s == N else None
        return (s, n.ev, v)

    def build(self, e, stream):
        """The node of ``e``."""
        t = type(e)
        if t is T.Num:
            v = e.value
            return Const(NAN if v != v else v)
        if t is T.Attr:
            return AttrNode(e.slot)
        if t is T.Ctx:
            self.ctx_used.add(e.var)
            if e.var == "Now":
                return Now(self.S)
            return CTX[e.var](self.S.ctx)
        if t is T.Unary:
            x = self.build(e.operand, stream)
            return unary(arith.neg if e.op == "Neg" else arith.not_, x)
        if t is T.Binary:
            x = self.build(e.left, stream)
            y = self.build(e.right, stream)
            if e.op == "And" or e.op == "Or":
                return logical(e.op, x, y)
            return binary(arith.BINARY[e.op], x, y)
        if t is T.Cond:
            return cond(self.build(e.cond, stream), self.build(e.then, stream),
                        self.build(e.other, stream))
        if t is T.Sample:
            return self.build_sample(e, stream)
        if t is T.Call:
            return self.build_call(e, stream)
        if t is T.Agg:  # a claim `at end` (IR 11): the observer supplies the aggregates
            return self.fn.Aggregate(self.S, e.kind, e.obs)
        raise ValueError(f"unknown expression {e!r}")

    def build_sample(self, e, stream):
        args = [self.build(a, stream) for a in e.args]
        need = SAMPLE_ARITY[e.dist]
        if len(args) != need:
            return self.bad(f"`~{e.dist.lower()}` takes {need} argument"
                            f"{'s' if need > 1 else ''}, the program gives {len(args)}")
        rng = self.S.rngs[stream]
        if e.dist == "Det":
            return args[0]
        if e.dist == "Exp":
            return draw_exp(rng, args[0])
        if e.dist == "Uniform":
            return draw_uniform(rng, args[0], args[1])
        if e.dist == "Bernoulli":
            return draw_bernoulli(rng, args[0])
        if e.dist == "Erlang":
            return Erlang(rng, args[0], args[1])
        return draw_h2(rng, args[0], args[1])

    def bad(self, message):
        """The node of an expression the IR allows but no run can evaluate (a function given
        the wrong arguments: the reference panics when it reaches one)."""
        return self.fn.Fail(self.S, f"run: {message} (an IR the compiler did not write?)")

    def build_call(self, e, stream):
        fun = e.fun
        args = e.args
        arity = {"Min": 2, "Max": 2, "Pow": 2, "Price": 3}.get(fun, 1)
        if len(args) != arity:
            return self.bad(f"`{fun.lower()}` takes {arity} argument"
                            f"{'s' if arity > 1 else ''}, the program gives {len(args)}")
        kinds = {"Price": ("stage", "expr", "expr")}.get(fun)
        if kinds is None:
            kinds = (("stage",) if fun in STAGE_FUNS else ("pool",) if fun in POOL_FUNS
                     else ("expr",) * arity)
        for i, kind in enumerate(kinds):
            want = {"expr": T.ArgExpr, "stage": T.ArgStage, "pool": T.ArgPool}[kind]
            if type(args[i]) is not want:
                return self.bad(f"`{fun.lower()}` takes a"
                                f"{' number' if kind == 'expr' else ' ' + kind} as argument "
                                f"{i + 1}")
        if fun in arith.FUNCTIONS2:
            x = self.build(args[0].expr, stream)
            return binary(arith.FUNCTIONS2[fun], x, self.build(args[1].expr, stream))
        if fun in arith.FUNCTIONS1:
            return unary(arith.FUNCTIONS1[fun], self.build(args[0].expr, stream))
        r = args[0].ref
        # the member: its index, or the node computing it (selected by ``S.ref_index``)
        index = None if r.index is None else self.build(r.index, stream)
        if fun == "Price":
            x = self.build(args[1].expr, stream)
            return self.fn.Price(self.S, r.base, r.count, index, x,
                                 self.build(args[2].expr, stream))
        return self.fn.FUNCTIONS[fun](self.S, r.base, r.count, index)



# -- operators: the shapes of their operands ------------------------------------------------


def binary_op(f, x, y):
    """The Python function of the operation ``f`` (arith's) on the nodes ``x``, ``y``:
    ``f``, or Python's operator where arith's docstring says it gives the same answer (``-``
    always; ``+`` and ``*`` when an operand is a constant other than NaN, so two NaNs never
    meet)."""
    if f is arith.sub or (f in PLAIN and (x.shape == K and x.value == x.value
                                          or y.shape == K and y.value == y.value)):
        return PLAIN[f]
    return f


def unary(f, x):
    """``f(x)`` for arith's function ``f`` of one argument; folded when ``x`` is constant."""
    if x.shape == K:
        return Const(f(x.value))
    if x.shape == A:
        return UnAttr(f, x.slot)
    return Unary(f, x)


def binary(f, x, y):
    """``f(x, y)`` for arith's function ``f`` of two arguments, both operands evaluated, the
    first first; folded when both are constant."""
    sx = x.shape
    sy = y.shape
    if sx == K and sy == K:
        return Const(f(x.value, y.value))
    op = binary_op(f, x, y)
    if sx == K:
        return BinKA(op, f, x.value, y.slot) if sy == A else BinKF(op, f, x.value, y)
    if sx == A:
        if sy == K:
            return BinAK(op, f, x.slot, y.value)
        return BinAA(op, f, x.slot, y.slot) if sy == A else BinAF(op, f, x.slot, y)
    if sy == K:
        return BinFK(op, f, x, y.value)
    if sy == A:
        if sx == N:  # `now - t0`: the most common expression
            return NowSub(x.sim, y.slot) if f is arith.sub else NowAttr(op, f, x.sim, y.slot)
        return BinFA(op, f, x, y.slot)
    if f is arith.add:  # a sum of nodes: one node, extended by the next `+`
        return SumF((*x.terms, y) if type(x) is SumF else (x, y))
    return BinFF(op, f, x, y)


def logical(op, x, y):
    """``and``/``or``: 1 or 0; the second operand is evaluated only when the first does not
    decide (its draws are not made otherwise)."""
    if x.shape == K and y.shape == K:
        return Const((arith.and_ if op == "And" else arith.or_)(x.value, y.value))
    return And(x, y) if op == "And" else Or(x, y)


def cond(c, x, y):
    """``if c then x else y``: only the branch taken is evaluated."""
    if c.shape == K:
        return x if c.value != 0.0 else y
    return Cond(c, x, y)


# -- draws: a sampler of rng.py on the expression's stream, its arguments evaluated first (in
# order); constant arguments are held as numbers

def draw_exp(rng, mean):
    """``~exp(m)``: ``rng.sample_exp``."""
    return ExpK(rng, mean.value) if mean.shape == K else Exp(rng, mean)


def draw_uniform(rng, low, high):
    """``~uniform(lo, hi)``: ``rng.sample_uniform``."""
    if low.shape == K and high.shape == K:
        return UniformK(rng, low.value, high.value)
    return Uniform(rng, low, high)


def draw_bernoulli(rng, p):
    """``~bernoulli(p)``: ``rng.sample_bernoulli``."""
    return BernoulliK(rng, p.value) if p.shape == K else Bernoulli(rng, p)


def draw_h2(rng, mean, c2):
    """``~h2(m, c2)``: ``rng.sample_h2``."""
    if mean.shape == K and c2.shape == K:
        return H2K(rng, mean.value, c2.value)
    return H2(rng, mean, c2)



_PACK = struct.Struct("<d").pack


def expr_key(e):
    """A hashable key equal for equal expressions, built without recursion.

    Not ``e`` itself (``Num(-0.0) == Num(0.0)``, but they differ, and a NaN is never equal
    to itself), nor ``repr(e)``: the dataclasses' ``__repr__``, ``__eq__`` and ``__hash__``
    recurse through C, and a program nested thousands of levels deep would overflow the C
    stack (a crash, not an error). Floats are keyed by their bits."""
    out = []
    stack = [e]
    while stack:
        x = stack.pop()
        t = type(x)
        if t is float:
            out.append(_PACK(x))
        elif t is tuple or t is list:
            out.append(len(x))
            stack.extend(reversed(x))
        elif x is None or t is int or t is str or t is bool:
            out.append(x)
        else:  # an IR node: a dataclass with slots
            out.append(t.__name__)
            stack.extend(reversed([getattr(x, f) for f in t.__slots__]))
    return tuple(out)
