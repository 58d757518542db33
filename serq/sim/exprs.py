"""IR expressions compiled to closures, once per run (interpreter.md §13, language.md §4.3).

Each expression becomes one function ``f(a)`` (``a``: the attribute list of the session,
entry snapshot or ``None`` it is read for), built directly from the IR tree: one small
closure per node, its children's functions captured, so the event loop never walks IR nodes
and no source text is generated. Common shapes get their own closure, chosen once when the
node is built: a node over constants is folded to its value (computed by the same function
the closure would call), and an operator on an attribute read, a constant or ``now`` reads
it in place instead of calling a child.

The arithmetic is ``serq.ir.arith`` (the reference's f64 answers where Python's differ:
division by zero, ``powf``, ``ln``/``sqrt`` of negatives, NaN signs, the first of two NaN
operands, ``f64::min``/``max`` ignoring NaN, ``floor``/``ceil`` keeping the sign of zero):
its functions are called. Python's own ``+`` and ``*`` (``operator.add``/``mul``) are used
only where one operand is a constant that is not a NaN, so that two NaN operands cannot meet
(the one case where CPython's answer differs from arith's; ``-`` is always CPython's).

Context variables are read from the simulator's clock (``S.now``) and its ``Context``
(``S.ctx.waited`` …), which each moment sets before it evaluates. A draw names its random stream at compile time: the
stream is a property of where the expression sits, not of the expression. It calls its law's
sampler in ``rng.py`` (the one definition of each law); compiled, that is a C call on the
typed generator, the mean and the draw C doubles (``rng.pxd``).
"""
from __future__ import annotations

import math
import operator
import struct

try:
    import cython
except ImportError:  # Cython not installed: the no-op stand-in, the module runs interpreted
    from serq import _cython_shim as cython

from serq.ir import arith
from serq.ir import types as T
from serq.sim.context import Context  # noqa: F401  (its old home; tests import it here)

# The samplers of the random streams (the one definition of each law, rng.py); compiled, a
# draw is a C call on the typed generator (rng.pxd), its arguments and result C doubles
if cython.compiled:
    from cython.cimports.serq.sim.rng import (Rng, erlang_k, sample_bernoulli, sample_erlang,
                                              sample_exp, sample_h2, sample_uniform)
else:
    from serq.sim.rng import (Rng, erlang_k, sample_bernoulli, sample_erlang, sample_exp,
                              sample_h2, sample_uniform)

INF = math.inf
NAN = math.nan

#: the field of ``Context`` each IR context variable reads (``Now``: the clock, ``S.now``)
CTX_FIELD = {"Now": "now", "Waited": "waited", "Size": "size", "Age": "age", "Last": "last",
             "Queued": "queued", "N": "n", "Ntok": "ntok", "Ndec": "ndec", "Npre": "npre",
             "Nres": "nres", "Kvb": "kvb", "Kvp": "kvp", "Attn": "attn",
             "Decoding": "decoding", "Admission": "admission", "Remaining": "remaining",
             # a claim over iterations (IR 11), set by the claims observer before it reads
             "Demand": "demand", "Served": "served", "Arrived": "arrived"}


#: Python's operators where arith says they give its answer (see ``binary_op``)
PLAIN = {"Add": operator.add, "Sub": operator.sub, "Mul": operator.mul}

FUN_NAME = {"Queue": "queue", "Busy": "busy", "Work": "work", "BudgetLeft": "budget_left",
            "EstLambda": "est_lambda", "EstRho": "est_rho", "EstWait": "est_wait",
            "Used": "used", "Free": "free", "CachedIn": "cachedin", "Holders": "holders",
            "Queued": "queued", "Price": "price"}
STAGE_FUNS = ("Queue", "Busy", "Work", "BudgetLeft", "EstLambda", "EstRho", "EstWait")
POOL_FUNS = ("Used", "Free", "CachedIn", "Holders", "Queued")
SAMPLE_ARITY = {"Exp": 1, "Det": 1, "Bernoulli": 1, "Uniform": 2, "Erlang": 2, "H2": 2}

# The shape of a built node, ``(shape, f, v)``: a constant (``v`` its value), an attribute
# read (``v`` its slot), ``now`` (``v`` the simulator), or anything else (``v`` unused).
K, A, N, F = range(4)

ERLANG_LIMIT = 10_000_000


class ExprCompiler:
    """Builds the function of each expression of a run, for the simulator ``S``."""

    def __init__(self, sim):
        self.S = sim
        self.cache = {}
        # the context variables read by the expressions built so far (see ``function``)
        self.ctx_used = set()
        self.cache_ctx = {}

    def function(self, e, stream="session", track=True):
        """A function ``f(a)`` evaluating ``e``; draws come from ``stream``. Unless ``track``
        is false, the context variables ``e`` reads are added to ``ctx_used``."""
        return self.node(e, stream, track)[1]

    def node(self, e, stream="session", track=True):
        """``function``'s node ``(shape, f, v)``: for a caller that reads a shape in place."""
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

    def build(self, e, stream):
        """The node ``(shape, f, v)`` of ``e`` (see ``K, A, N, F``)."""
        t = type(e)
        if t is T.Num:
            v = e.value
            return const(NAN if v != v else v)
        if t is T.Attr:
            return attr(e.slot)
        if t is T.Ctx:
            self.ctx_used.add(e.var)
            return ctx_read(self.S, CTX_FIELD[e.var])
        if t is T.Unary:
            x = self.build(e.operand, stream)
            return unary(operator.neg if e.op == "Neg" else arith.not_, x)
        if t is T.Binary:
            x = self.build(e.left, stream)
            y = self.build(e.right, stream)
            if e.op == "And" or e.op == "Or":
                return logical(e.op, x, y)
            return binary(binary_op(e.op, x, y), x, y)
        if t is T.Cond:
            return cond(self.build(e.cond, stream), self.build(e.then, stream),
                        self.build(e.other, stream))
        if t is T.Sample:
            return self.build_sample(e, stream)
        if t is T.Call:
            return self.build_call(e, stream)
        if t is T.Agg:  # a claim `at end` (IR 11): the observer supplies the aggregates
            return aggregate(self.S, e.kind, e.obs)
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
            return draw_erlang(rng, args[0], args[1])
        return draw_h2(rng, args[0], args[1])

    def bad(self, message):
        """The function of an expression the IR allows but no run can evaluate (a function
        given the wrong arguments: the reference panics when it reaches one)."""
        S = self.S
        text = f"run: {message} (an IR the compiler did not write?)"

        def f(a):
            return S.fail(text, S.cur)
        return (F, f, None)

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
        method = getattr(self.S, "fn_" + FUN_NAME[fun])
        member = self.member(args[0].ref, stream)
        if fun == "Price":
            x = self.build(args[1].expr, stream)
            return price(method, member, x, self.build(args[2].expr, stream))
        return member_fn(method, member)

    def member(self, r, stream):
        """The member a CRef selects: its index as a constant node, or a node computing it."""
        if r.index is None:
            return const(r.base)
        index = self.S.ref_index
        base, count = r.base, r.count
        fi = self.build(r.index, stream)[1]

        def f(a):
            return index(base, count, fi(a), None)
        return (F, f, None)


# -- the closures of the node shapes ---------------------------------------------------------


def const(v):
    def f(a):
        return v
    return (K, f, v)


def attr(i):
    def f(a):
        return a[i]
    return (A, f, i)


def ctx_read(S, field):
    """A context variable, read when the expression runs: the clock from the simulator,
    the others from its ``Context``."""
    if field == "now":
        def f(a):
            return S.now
        return (N, f, S)
    ctx = S.ctx

    def g(a):
        return getattr(ctx, field)  # (an attrgetter is called through an argument tuple)
    return (F, g, None)


def binary_op(op, x, y):
    """The function of a binary operator, given its operand nodes: arith's, or Python's
    operator where arith's docstring says it gives the same answer (``-`` always; ``+`` and
    ``*`` when an operand is a constant other than NaN, so two NaNs never meet)."""
    if op == "Sub" or (op in PLAIN and (x[0] == K and x[2] == x[2]
                                        or y[0] == K and y[2] == y[2])):
        return PLAIN[op]
    return arith.BINARY[op]


def unary(op, x):
    sx, fx, vx = x
    if sx == K:
        return const(op(vx))
    if sx == A:
        def f(a):
            return op(a[vx])
    else:
        def f(a):
            return op(fx(a))
    return (F, f, None)


def binary(op, x, y):
    """``op(x, y)``, both operands evaluated, the first first."""
    sx, fx, vx = x
    sy, fy, vy = y
    if sx == K:
        if sy == K:
            return const(op(vx, vy))
        if sy == A:
            def f(a):
                return op(vx, a[vy])
        else:
            def f(a):
                return op(vx, fy(a))
    elif sx == A:
        if sy == K:
            def f(a):
                return op(a[vx], vy)
        elif sy == A:
            def f(a):
                return op(a[vx], a[vy])
        else:
            def f(a):
                return op(a[vx], fy(a))
    elif sy == K:
        def f(a):
            return op(fx(a), vy)
    elif sy == A:
        if sx == N and op is operator.sub:  # `now - t0`: the most common expression
            S = vx  # the simulator ``now`` is read from

            def f(a):
                return S.now - a[vy]
        elif sx == N:
            S = vx

            def f(a):
                return op(S.now, a[vy])
        else:
            def f(a):
                return op(fx(a), a[vy])
    else:
        def f(a):
            return op(fx(a), fy(a))
    return (F, f, None)


def logical(op, x, y):
    """``and``/``or``: 1 or 0; the second operand is evaluated only when the first does not
    decide (its draws are not made otherwise)."""
    sx, fx, vx = x
    sy, fy, vy = y
    if sx == K and sy == K:
        return const((arith.and_ if op == "And" else arith.or_)(vx, vy))
    if op == "And":
        def f(a):
            return 1.0 if fx(a) != 0.0 and fy(a) != 0.0 else 0.0
    else:
        def f(a):
            return 1.0 if fx(a) != 0.0 or fy(a) != 0.0 else 0.0
    return (F, f, None)


def cond(c, x, y):
    """``if c then x else y``: only the branch taken is evaluated."""
    sc, fc, vc = c
    if sc == K:
        return x if vc != 0.0 else y
    fx = x[1]
    fy = y[1]

    def f(a):
        return fx(a) if fc(a) != 0.0 else fy(a)
    return (F, f, None)


# -- draws: a sampler of rng.py on the expression's stream, its arguments evaluated first (in
# order); a constant argument is converted once. Each closure declares its own locals
# (`a=object`): a nested function otherwise takes its enclosing function's declarations.

@cython.locals(r=Rng, m=cython.double)
def draw_exp(rng, mean):
    """``~exp(m)``: ``rng.sample_exp``."""
    r = rng
    sm, fm, vm = mean
    if sm == K:
        m = vm

        @cython.locals(a=object)
        def f(a):
            return sample_exp(r, m)
    else:
        @cython.locals(a=object)
        def f(a):
            return sample_exp(r, fm(a))
    return (F, f, None)


@cython.locals(r=Rng, lo=cython.double, hi=cython.double)
def draw_uniform(rng, low, high):
    """``~uniform(lo, hi)``: ``rng.sample_uniform``."""
    r = rng
    if low[0] == K and high[0] == K:
        lo = low[2]
        hi = high[2]

        @cython.locals(a=object)
        def f(a):
            return sample_uniform(r, lo, hi)
        return (F, f, None)
    fl = low[1]
    fh = high[1]

    @cython.locals(a=object, x=cython.double)
    def g(a):
        x = fl(a)
        return sample_uniform(r, x, fh(a))
    return (F, g, None)


@cython.locals(r=Rng, pv=cython.double)
def draw_bernoulli(rng, p):
    """``~bernoulli(p)``: ``rng.sample_bernoulli``."""
    r = rng
    if p[0] == K:
        pv = p[2]

        @cython.locals(a=object)
        def f(a):
            return sample_bernoulli(r, pv)
        return (F, f, None)
    fp = p[1]

    @cython.locals(a=object)
    def g(a):
        return sample_bernoulli(r, fp(a))
    return (F, g, None)


@cython.locals(r=Rng, mv=cython.double, cv=cython.double)
def draw_h2(rng, mean, c2):
    """``~h2(m, c2)``: ``rng.sample_h2``."""
    r = rng
    if mean[0] == K and c2[0] == K:
        mv = mean[2]
        cv = c2[2]

        @cython.locals(a=object)
        def f(a):
            return sample_h2(r, mv, cv)
        return (F, f, None)
    fm = mean[1]
    fc = c2[1]

    @cython.locals(a=object, x=cython.double)
    def g(a):
        x = fm(a)
        return sample_h2(r, x, fc(a))
    return (F, g, None)


@cython.locals(r=Rng)
def draw_erlang(rng, k, mean):
    """``~erlang(k, m)``: ``rng.sample_erlang``, refused past ``ERLANG_LIMIT`` phases (each
    a draw)."""
    r = rng
    fk = k[1]
    fm = mean[1]

    @cython.locals(a=object)
    def f(a):
        x = fk(a)
        y = fm(a)
        if erlang_k(x) > ERLANG_LIMIT:
            from serq.errors import SimulationError
            raise SimulationError(f"run: `~erlang(k, m)` with k = {x!r} phases would draw "
                                  f"that many numbers; serq refuses more than {ERLANG_LIMIT}")
        return sample_erlang(r, x, y)
    return (F, f, None)


def member_fn(method, member):
    """A stage's or pool's function of its member (``queue(s)``, ``used(p)`` …)."""
    sm, fm, vm = member
    if sm == K:
        def f(a):
            return method(vm)
    else:
        def f(a):
            return method(fm(a))
    return (F, f, None)


def price(method, member, x, y):
    """``price(s, h, d)``: the member first, then the two numbers."""
    fm, fx, fy = member[1], x[1], y[1]

    def f(a):
        return method(fm(a), fx(a), fy(a))
    return (F, f, None)


def aggregate(S, kind, obs):
    """An aggregate of a claim `at end`, read from the observer when the claim is checked
    (``S.agg_value`` is set by the claims monitor, after the expressions are built)."""
    def f(a):
        return S.agg_value(kind, obs)
    return (F, f, None)


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
