"""The nodes of compiled expressions (interpreter.md §13, language.md §4.3): one class per
shape of node, its method ``ev(a)`` the node's value. ``serq.sim.exprs`` builds the tree of
an expression from these, once per run.

Compiled (``exprnodes.pxd``), a node is a C struct, ``ev`` a C method returning a C double,
and a node calls its children's ``ev`` in C: an expression is evaluated with no Python call
and no float object but at its leaves that hold Python objects (an attribute read, a claim's
aggregate: floats in both modes). A caller holding a node typed ``Expr`` evaluates it in C
too; a Python caller calls its bound ``ev`` (``exprs.function``). The nodes that call on the
simulator (a stage's or pool's function, a claim's aggregate) are ``serq.sim.fnnodes``'.
Every node class but the bases (``Expr``, ``CtxRead``, ``Binary``) is final: a C call of its
``ev`` then skips Cython's test for an override by a Python subclass (none can exist).
Interpreted, they are plain classes, and the shapes that read a constant, an attribute or
``now`` in place save a Python call per operand.

The arithmetic is ``serq.ir.arith``'s (see its docstring and ``exprs``'). An operator node
holds its operation twice, as one choice made by ``exprs.binary``: ``code``, by which the
compiled node calls arith's C function (``op1``/``op2``, a switch on the index in ``OP1`` or
``OP2``), and ``op``, the Python function the interpreted node calls (arith's, or Python's
own operator where it gives arith's answer). tests/sim/test_exprs.py holds ``op1``/``op2``
equal to the tuples.

Context variables are read from the simulator's clock (``Now``) and its ``Context``: one small
class per variable (``CTX``), a C field read compiled. A draw calls its law's sampler in
``rng.py`` (the one definition of each law); compiled, a C call on the typed generator.
"""
from __future__ import annotations

import math

try:
    import cython
except ImportError:  # Cython not installed: the no-op stand-in, the module runs interpreted
    from serq import _cython_shim as cython

from serq.ir import arith

# arith's functions and the samplers of the random streams; compiled, C calls on C doubles
# (arith.pxd, rng.pxd)
if cython.compiled:
    from cython.cimports.serq.ir.arith import (add, and_, ceil, div, eq, exp, fabs, floor, fmax,
                                               fmin, ge, gt, le, ln, lt, mul, ne, neg, not_,
                                               or_, powf, sqrt, sub)
    from cython.cimports.serq.sim.rng import (erlang_k, sample_bernoulli, sample_erlang,
                                              sample_exp, sample_h2, sample_uniform)
else:
    from serq.ir.arith import (add, and_, ceil, div, eq, exp, fabs, floor, fmax, fmin, ge, gt,
                               le, ln, lt, mul, ne, neg, not_, or_, powf, sqrt, sub)
    from serq.sim.rng import (erlang_k, sample_bernoulli, sample_erlang, sample_exp, sample_h2,
                              sample_uniform)

NAN = math.nan

# A node's shape (``Expr.shape``, a class attribute): a constant (``Const``), an attribute
# read (``Attr``), ``now`` (``Now``), or anything else
K, A, N, F = range(4)

ERLANG_LIMIT = 10_000_000

# The operations by code, the index in these tuples: compiled, ``op1``/``op2`` call the same
# function of arith by the same code (a switch, checked against these tuples by the tests)
OP1 = (arith.neg, arith.not_, arith.fabs, arith.floor, arith.ceil, arith.sqrt, arith.exp,
       arith.ln)
OP2 = (arith.add, arith.sub, arith.mul, arith.div, arith.powf, arith.lt, arith.le, arith.gt,
       arith.ge, arith.eq, arith.ne, arith.and_, arith.or_, arith.fmin, arith.fmax)
CODE1 = {f: i for i, f in enumerate(OP1)}
CODE2 = {f: i for i, f in enumerate(OP2)}


# -- the operations by code: compiled, a C call of arith's function ------------------------

@cython.ccall
@cython.exceptval(-1.0, check=True)
def op1(code: cython.int, x: cython.double) -> cython.double:
    """``OP1[code](x)``."""
    if code == 0:
        return neg(x)
    if code == 1:
        return not_(x)
    if code == 2:
        return fabs(x)
    if code == 3:
        return floor(x)
    if code == 4:
        return ceil(x)
    if code == 5:
        return sqrt(x)
    if code == 6:
        return exp(x)
    return ln(x)


@cython.ccall
@cython.exceptval(-1.0, check=True)
def op2(code: cython.int, x: cython.double, y: cython.double) -> cython.double:
    """``OP2[code](x, y)``."""
    if code == 0:
        return add(x, y)
    if code == 1:
        return sub(x, y)
    if code == 2:
        return mul(x, y)
    if code == 3:
        return div(x, y)
    if code == 4:
        return powf(x, y)
    if code == 5:
        return lt(x, y)
    if code == 6:
        return le(x, y)
    if code == 7:
        return gt(x, y)
    if code == 8:
        return ge(x, y)
    if code == 9:
        return eq(x, y)
    if code == 10:
        return ne(x, y)
    if code == 11:
        return and_(x, y)
    if code == 12:
        return or_(x, y)
    if code == 13:
        return fmin(x, y)
    return fmax(x, y)


# -- the nodes ---------------------------------------------------------------------------

@cython.cclass
class Expr:
    """An expression's node: ``ev(a)`` is its value for the attributes ``a``."""

    shape = F

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double:
        raise NotImplementedError


@cython.final
@cython.cclass
class Const(Expr):
    shape = K

    def __init__(self, value):
        self.value = value

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double:
        return self.value


@cython.final
@cython.cclass
class Attr(Expr):
    shape = A

    def __init__(self, slot):
        self.slot = slot

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double:
        return a[self.slot]


@cython.final
@cython.cclass
class Now(Expr):
    """The clock."""

    shape = N

    def __init__(self, sim):
        self.sim = sim

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double:
        return self.sim.now


@cython.cclass
class CtxRead(Expr):
    """A context variable: a field of the simulator's ``Context``, read when the expression
    runs (one subclass per variable, ``CTX``)."""

    def __init__(self, ctx):
        self.c = ctx


@cython.final
@cython.cclass
class Waited(CtxRead):
    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double: return self.c.waited  # noqa: E704  (one line per variable)


@cython.final
@cython.cclass
class Size(CtxRead):
    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double: return self.c.size  # noqa: E704


@cython.final
@cython.cclass
class Age(CtxRead):
    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double: return self.c.age  # noqa: E704


@cython.final
@cython.cclass
class Last(CtxRead):
    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double: return self.c.last  # noqa: E704


@cython.final
@cython.cclass
class Queued(CtxRead):
    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double: return self.c.queued  # noqa: E704


@cython.final
@cython.cclass
class Count(CtxRead):
    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double: return self.c.n  # noqa: E704


@cython.final
@cython.cclass
class Ntok(CtxRead):
    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double: return self.c.ntok  # noqa: E704


@cython.final
@cython.cclass
class Ndec(CtxRead):
    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double: return self.c.ndec  # noqa: E704


@cython.final
@cython.cclass
class Npre(CtxRead):
    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double: return self.c.npre  # noqa: E704


@cython.final
@cython.cclass
class Nres(CtxRead):
    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double: return self.c.nres  # noqa: E704


@cython.final
@cython.cclass
class Kvb(CtxRead):
    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double: return self.c.kvb  # noqa: E704


@cython.final
@cython.cclass
class Kvp(CtxRead):
    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double: return self.c.kvp  # noqa: E704


@cython.final
@cython.cclass
class Attn(CtxRead):
    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double: return self.c.attn  # noqa: E704


@cython.final
@cython.cclass
class Decoding(CtxRead):
    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double: return self.c.decoding  # noqa: E704


@cython.final
@cython.cclass
class Admission(CtxRead):
    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double: return self.c.admission  # noqa: E704


@cython.final
@cython.cclass
class Remaining(CtxRead):
    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double: return self.c.remaining  # noqa: E704


@cython.final
@cython.cclass
class Demand(CtxRead):
    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double: return self.c.demand  # noqa: E704


@cython.final
@cython.cclass
class Served(CtxRead):
    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double: return self.c.served  # noqa: E704


@cython.final
@cython.cclass
class Arrived(CtxRead):
    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double: return self.c.arrived  # noqa: E704


#: the node class of each IR context variable but ``Now`` (the clock: ``Now``)
CTX = {"Waited": Waited, "Size": Size, "Age": Age, "Last": Last, "Queued": Queued, "N": Count,
       "Ntok": Ntok, "Ndec": Ndec, "Npre": Npre, "Nres": Nres, "Kvb": Kvb, "Kvp": Kvp,
       "Attn": Attn, "Decoding": Decoding, "Admission": Admission, "Remaining": Remaining,
       # a claim over iterations (IR 11), set by the claims observer before it reads
       "Demand": Demand, "Served": Served, "Arrived": Arrived}


# -- operators: the shapes of their operands ------------------------------------------------


@cython.final
@cython.cclass
class UnAttr(Expr):
    def __init__(self, f, slot):
        self.op = f
        self.code = CODE1[f]
        self.slot = slot

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    @cython.locals(x=cython.double)
    def ev(self, a) -> cython.double:
        if cython.compiled:
            x = a[self.slot]
            return op1(self.code, x)
        else:
            return self.op(a[self.slot])


@cython.final
@cython.cclass
class Unary(Expr):
    def __init__(self, f, x):
        self.op = f
        self.code = CODE1[f]
        self.x = x

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double:
        if cython.compiled:
            return op1(self.code, self.x.ev(a))
        else:
            return self.op(self.x.ev(a))


@cython.cclass
class Binary(Expr):
    """An operator: ``op`` (interpreted) and ``code`` (compiled) are the same operation
    (``binary``); the subclasses are the shapes of its operands (a constant ``k``, an
    attribute ``i`` or ``j``, a node ``x`` or ``y``)."""

    def __init__(self, op, f):
        self.op = op
        self.code = CODE2[f]


@cython.final
@cython.cclass
class BinKA(Binary):
    def __init__(self, op, f, k, j):
        Binary.__init__(self, op, f)
        self.k = k
        self.j = j

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    @cython.locals(y=cython.double)
    def ev(self, a) -> cython.double:
        if cython.compiled:
            y = a[self.j]
            return op2(self.code, self.k, y)
        else:
            return self.op(self.k, a[self.j])


@cython.final
@cython.cclass
class BinKF(Binary):
    def __init__(self, op, f, k, y):
        Binary.__init__(self, op, f)
        self.k = k
        self.y = y

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double:
        if cython.compiled:
            return op2(self.code, self.k, self.y.ev(a))
        else:
            return self.op(self.k, self.y.ev(a))


@cython.final
@cython.cclass
class BinAK(Binary):
    def __init__(self, op, f, i, k):
        Binary.__init__(self, op, f)
        self.i = i
        self.k = k

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    @cython.locals(x=cython.double)
    def ev(self, a) -> cython.double:
        if cython.compiled:
            x = a[self.i]
            return op2(self.code, x, self.k)
        else:
            return self.op(a[self.i], self.k)


@cython.final
@cython.cclass
class BinAA(Binary):
    def __init__(self, op, f, i, j):
        Binary.__init__(self, op, f)
        self.i = i
        self.j = j

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    @cython.locals(x=cython.double, y=cython.double)
    def ev(self, a) -> cython.double:
        if cython.compiled:
            x = a[self.i]
            y = a[self.j]
            return op2(self.code, x, y)
        else:
            return self.op(a[self.i], a[self.j])


@cython.final
@cython.cclass
class BinAF(Binary):
    def __init__(self, op, f, i, y):
        Binary.__init__(self, op, f)
        self.i = i
        self.y = y

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    @cython.locals(x=cython.double)
    def ev(self, a) -> cython.double:
        if cython.compiled:
            x = a[self.i]
            return op2(self.code, x, self.y.ev(a))
        else:
            return self.op(a[self.i], self.y.ev(a))


@cython.final
@cython.cclass
class BinFK(Binary):
    def __init__(self, op, f, x, k):
        Binary.__init__(self, op, f)
        self.x = x
        self.k = k

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double:
        if cython.compiled:
            return op2(self.code, self.x.ev(a), self.k)
        else:
            return self.op(self.x.ev(a), self.k)


@cython.final
@cython.cclass
class BinFA(Binary):
    def __init__(self, op, f, x, j):
        Binary.__init__(self, op, f)
        self.x = x
        self.j = j

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    @cython.locals(x=cython.double, y=cython.double)
    def ev(self, a) -> cython.double:
        if cython.compiled:
            x = self.x.ev(a)
            y = a[self.j]
            return op2(self.code, x, y)
        else:
            return self.op(self.x.ev(a), a[self.j])


@cython.final
@cython.cclass
class BinFF(Binary):
    def __init__(self, op, f, x, y):
        Binary.__init__(self, op, f)
        self.x = x
        self.y = y

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    @cython.locals(x=cython.double)
    def ev(self, a) -> cython.double:
        if cython.compiled:
            x = self.x.ev(a)
            return op2(self.code, x, self.y.ev(a))
        else:
            return self.op(self.x.ev(a), self.y.ev(a))


@cython.final
@cython.cclass
class SumF(Expr):
    """``t0 + t1 + ... + tn`` of two or more nodes (``exprs.binary`` makes one for ``+``
    of two nodes, and extends it for the next ``+``): the terms evaluated in order and added
    left to right with ``arith.add``, as the nested additions would (the same draws, the same
    float, the same first NaN), with one call per term instead of an operator node's two
    (issue 10: a gauge such as ``queue(a) + queue(b) + queue(c)`` is read at every event)."""

    def __init__(self, terms):
        self.terms = tuple(terms)

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    @cython.boundscheck(False)
    @cython.wraparound(False)
    @cython.locals(s=cython.double, i=cython.Py_ssize_t)
    def ev(self, a) -> cython.double:
        terms = self.terms
        if cython.compiled:  # (unchecked: every term is an Expr, exprs.binary)
            s = cython.cast(Expr, terms[0]).ev(a)
            for i in range(1, len(terms)):
                s = add(s, cython.cast(Expr, terms[i]).ev(a))
            return s
        s = terms[0].ev(a)
        for i in range(1, len(terms)):
            s = add(s, terms[i].ev(a))
        return s


@cython.final
@cython.cclass
class NowAttr(Binary):
    def __init__(self, op, f, sim, j):
        Binary.__init__(self, op, f)
        self.sim = sim
        self.j = j

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    @cython.locals(y=cython.double)
    def ev(self, a) -> cython.double:
        if cython.compiled:
            y = a[self.j]
            return op2(self.code, self.sim.now, y)
        else:
            return self.op(self.sim.now, a[self.j])


@cython.final
@cython.cclass
class NowSub(Expr):
    """``now - a[j]`` (``-``: Python's and C's are arith's, see ``binary_op``)."""

    def __init__(self, sim, j):
        self.sim = sim
        self.j = j

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    @cython.locals(y=cython.double)
    def ev(self, a) -> cython.double:
        y = a[self.j]
        return self.sim.now - y


@cython.final
@cython.cclass
class And(Expr):
    def __init__(self, x, y):
        self.x = x
        self.y = y

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double:
        return 1.0 if self.x.ev(a) != 0.0 and self.y.ev(a) != 0.0 else 0.0


@cython.final
@cython.cclass
class Or(Expr):
    def __init__(self, x, y):
        self.x = x
        self.y = y

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double:
        return 1.0 if self.x.ev(a) != 0.0 or self.y.ev(a) != 0.0 else 0.0


@cython.final
@cython.cclass
class Cond(Expr):
    def __init__(self, c, x, y):
        self.c = c
        self.x = x
        self.y = y

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double:
        return self.x.ev(a) if self.c.ev(a) != 0.0 else self.y.ev(a)


# -- draws: a sampler of rng.py on the expression's stream, its arguments evaluated first (in
# order); constant arguments are held as numbers

@cython.final
@cython.cclass
class ExpK(Expr):
    def __init__(self, rng, m):
        self.r = rng
        self.m = m

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double:
        return sample_exp(self.r, self.m)


@cython.final
@cython.cclass
class Exp(Expr):
    def __init__(self, rng, m):
        self.r = rng
        self.x = m

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double:
        return sample_exp(self.r, self.x.ev(a))


@cython.final
@cython.cclass
class UniformK(Expr):
    def __init__(self, rng, lo, hi):
        self.r = rng
        self.lo = lo
        self.hi = hi

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double:
        return sample_uniform(self.r, self.lo, self.hi)


@cython.final
@cython.cclass
class Uniform(Expr):
    def __init__(self, rng, lo, hi):
        self.r = rng
        self.x = lo
        self.y = hi

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    @cython.locals(x=cython.double)
    def ev(self, a) -> cython.double:
        x = self.x.ev(a)
        return sample_uniform(self.r, x, self.y.ev(a))


@cython.final
@cython.cclass
class BernoulliK(Expr):
    def __init__(self, rng, p):
        self.r = rng
        self.p = p

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double:
        return sample_bernoulli(self.r, self.p)


@cython.final
@cython.cclass
class Bernoulli(Expr):
    def __init__(self, rng, p):
        self.r = rng
        self.x = p

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double:
        return sample_bernoulli(self.r, self.x.ev(a))


@cython.final
@cython.cclass
class H2K(Expr):
    def __init__(self, rng, m, c2):
        self.r = rng
        self.m = m
        self.c2 = c2

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double:
        return sample_h2(self.r, self.m, self.c2)


@cython.final
@cython.cclass
class H2(Expr):
    def __init__(self, rng, m, c2):
        self.r = rng
        self.x = m
        self.y = c2

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    @cython.locals(x=cython.double)
    def ev(self, a) -> cython.double:
        x = self.x.ev(a)
        return sample_h2(self.r, x, self.y.ev(a))


@cython.final
@cython.cclass
class Erlang(Expr):
    """``~erlang(k, m)``: ``rng.sample_erlang``, refused past ``ERLANG_LIMIT`` phases (each
    a draw)."""

    def __init__(self, rng, k, m):
        self.r = rng
        self.x = k
        self.y = m

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    @cython.locals(x=cython.double, y=cython.double)
    def ev(self, a) -> cython.double:
        x = self.x.ev(a)
        y = self.y.ev(a)
        if erlang_k(x) > ERLANG_LIMIT:
            from serq.errors import SimulationError
            raise SimulationError(f"run: `~erlang(k, m)` with k = {x!r} phases would draw "
                                  f"that many numbers; serq refuses more than {ERLANG_LIMIT}")
        return sample_erlang(self.r, x, y)
