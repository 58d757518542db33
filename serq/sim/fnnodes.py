"""The nodes of expressions that call on the simulator (interpreter.md §13): the stage
functions (``queue``, ``busy``, ``work``, ``est_lambda``, ``est_rho``, ``est_wait``,
``price``, ``budget_left``), the pool functions (``used``, ``free``, ``holders``,
``queued``, ``cachedin``), a claim's aggregate, and an expression no run can evaluate.
``serq.sim.exprs`` builds them (``FUNCTIONS``: the node class of each function).

Each function's rule is written here, once, as its node class's ``ev``: the value of the
function for the stage (or pool) that ``stage_of`` (or ``pool_of``) selects. The member is
the function's argument: a fixed index (``base``) or one an expression selects (``x``, by
``S.ref_index``).

Compiled (``fnnodes.pxd``), a node holds the run typed (``state.RunState``) and reads the
stage or pool from its list in C; ``stage_of``/``pool_of`` are inline C functions (a direct
call, no vtable) and the function a C method of the typed stage (``stages.Stage``) or pool
(``pools.PoolCore``): ``queue(front) + queue(app)`` in a gauge is evaluated with C calls only
(issue 10; it was a Python call of a method of the simulator per function). A function of a
fixed member keeps the stage once read (``StageFn.st``): the run makes its stages after the
expressions, and never replaces them. The function classes are final (as ``exprnodes``'
nodes): a C call of their ``ev`` skips Cython's test for an override by a Python subclass,
and the selection and the function are one call, not a base class's ``ev`` calling a
virtual method per function (issue 10: the gauge of ``mgc_ps.sq`` is read whenever the
clock moves). Interpreted, ``ev`` calls ``stage_of`` (or ``pool_of``): one Python call per
function, as before.

A module of its own, apart from ``exprnodes`` (the nodes that only compute): these cimport
the run, the stages and the pools, which import ``exprs`` (its shape constants), so
``exprs`` imports this module when it first builds a function, not at its import.
"""
from __future__ import annotations

import math

try:
    import cython
except ImportError:  # Cython not installed: the no-op stand-in, the module runs interpreted
    from serq import _cython_shim as cython

if cython.compiled:
    from cython.cimports.serq.sim.exprnodes import Expr
    from cython.cimports.serq.sim.pools import Entry, PoolCore
    from cython.cimports.serq.sim.sessions import Session
    from cython.cimports.serq.sim.stages import Stage
else:
    from serq.sim.exprnodes import Expr
    # interpreted, a type in @cython.locals is not used (_cython_shim)
    Entry = PoolCore = Session = Stage = object

NAN = math.nan


@cython.cclass
class Member(Expr):
    """A function of a stage or pool: of member ``base``, or, when ``x`` (a node) is given,
    of the member its value selects (``S.ref_index``: ``max(v, 0)`` truncated, checked)."""

    def __init__(self, sim, base, count, index):
        self.sim = sim
        self.base = base
        self.count = count
        self.x = index

    def at(self, a):
        """The member ``x`` selects (the arguments are evaluated first: see ``Price``)."""
        return self.sim.ref_index(self.base, self.count, self.x.ev(a), None)


@cython.cclass
class StageFn(Member):
    """A stage function: its rule is its final class's ``ev``, on the stage ``stage_of``
    selects."""

    def __init__(self, sim, base, count, index):
        Member.__init__(self, sim, base, count, index)
        self.st = None  # the stage ``base``, once read (the run makes its stages after this)


@cython.cfunc
@cython.inline
def stage_of(f: StageFn, a) -> Stage:
    """The stage ``f`` selects: a fixed member is read from the run's list once and kept
    (typed compiled: later readings return it at once). A function, not a method: compiled,
    each function's ``ev`` calls it directly, inlined by the C compiler (Cython calls a base
    class's C method through the vtable from a subclass)."""
    if f.st is not None:
        return f.st
    if f.x is not None:
        return f.sim.stages[f.at(a)]
    f.st = f.sim.stages[f.base]
    return f.st


@cython.final
@cython.cclass
class QueueFn(StageFn):
    """``queue(s)``: the jobs on the stage."""

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double:
        return float(stage_of(self, a).present())


@cython.final
@cython.cclass
class BusyFn(StageFn):
    """``busy(s)``: the jobs in service."""

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double:
        return float(stage_of(self, a).busy())


@cython.final
@cython.cclass
class WorkFn(StageFn):
    """``work(s)``: the work left on the stage."""

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double:
        return stage_of(self, a).work_left()


@cython.final
@cython.cclass
class EstLambdaFn(StageFn):
    """``est_lambda(s)``: the estimated arrival rate (the stage's estimator)."""

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double:
        return stage_of(self, a).est_lambda()


@cython.final
@cython.cclass
class EstRhoFn(StageFn):
    """``est_rho(s)``: the estimated load, capped below 1."""

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double:
        return stage_of(self, a).est_rho()


@cython.final
@cython.cclass
class EstWaitFn(StageFn):
    """``est_wait(s)``: the EWMA of the waits."""

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double:
        return stage_of(self, a).e_wait


@cython.cclass
class PoolFn(Member):
    """A pool function: its rule is its final class's ``ev``, on the pool ``pool_of``
    selects."""


@cython.cfunc
@cython.inline
def pool_of(f: PoolFn, a) -> PoolCore:
    """The pool ``f`` selects (a function for the reason ``stage_of`` is)."""
    pl = f.sim.pools[f.base if f.x is None else f.at(a)]
    if cython.compiled:  # unchecked: every item is a PoolCore
        return cython.cast(PoolCore, pl)
    return pl


@cython.final
@cython.cclass
class UsedFn(PoolFn):
    """``used(p)``: the units held."""

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double:
        return pool_of(self, a).used


@cython.final
@cython.cclass
class FreeFn(PoolFn):
    """``free(p)``: the capacity not held."""

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    @cython.locals(pl=PoolCore)
    def ev(self, a) -> cython.double:
        pl = pool_of(self, a)
        return pl.cap - pl.used


@cython.final
@cython.cclass
class HoldersFn(PoolFn):
    """``holders(p)``: the holds on the pool."""

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double:
        return float(len(pool_of(self, a).holders))


@cython.final
@cython.cclass
class QueuedFn(PoolFn):
    """``queued(p)``: the requests waiting for the pool."""

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double:
        return float(len(pool_of(self, a).queue))


@cython.final
@cython.cclass
class CachedInFn(PoolFn):
    """``cachedin(p)``: the size of the current session's cache entry in the pool (0 where
    no session is, or it has none)."""

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    @cython.locals(pl=PoolCore, s=Session, ent=Entry)
    def ev(self, a) -> cython.double:
        pl = pool_of(self, a)
        s = self.sim.cur
        if s is None:
            return 0.0
        ent = pl.entries.get(s.serial)
        return ent.size if ent is not None else 0.0


@cython.final
@cython.cclass
class BudgetLeftFn(Member):
    """``budget_left(s)``: the step engine's (``StepOps.fn_budget_left``, a Python call)."""

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double:
        return self.sim.fn_budget_left(self.base if self.x is None else self.at(a))


@cython.final
@cython.cclass
class Price(Member):
    """``price(s, h, d)`` (§13), from the stage's estimator: the member first, then the two
    numbers."""

    def __init__(self, sim, base, count, index, x, y):
        Member.__init__(self, sim, base, count, index)
        self.h = x
        self.d = y

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    @cython.locals(s_h=object, ds=object, st=object, lam=object, rho=object, w=object,
                   s_m=object)
    def ev(self, a) -> cython.double:
        i = self.base if self.x is None else self.at(a)
        s_h = self.h.ev(a)
        ds = self.d.ev(a)
        st = self.sim.stages[i]  # (untyped: the sums below are Python's, NaNs included)
        lam = st.est_lambda()
        rho = st.est_rho()
        w = st.e_wait
        s_m = s_h + ds
        return (ds + lam * (s_m * s_m - s_h * s_h) / (2.0 * (1.0 - rho))
                + lam * w * ds / (1.0 - rho))


#: the node class of each function of a stage or pool (``exprs.ExprCompiler.build_call``)
FUNCTIONS = {"Queue": QueueFn, "Busy": BusyFn, "Work": WorkFn, "EstLambda": EstLambdaFn,
             "EstRho": EstRhoFn, "EstWait": EstWaitFn, "BudgetLeft": BudgetLeftFn,
             "Used": UsedFn, "Free": FreeFn, "Holders": HoldersFn, "Queued": QueuedFn,
             "CachedIn": CachedInFn}


@cython.final
@cython.cclass
class Fail(Expr):
    """An expression no run can evaluate (``ExprCompiler.bad``): the run stops there."""

    def __init__(self, sim, text):
        self.sim = sim
        self.text = text

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double:
        S = self.sim
        S.fail(self.text, S.cur)
        return NAN  # (not reached: fail raises)


@cython.final
@cython.cclass
class Aggregate(Expr):
    """An aggregate of a claim `at end`, read from the observer when the claim is checked
    (``S.agg_value`` is set by the claims monitor, after the expressions are built)."""

    def __init__(self, sim, kind, obs):
        self.sim = sim
        self.kind = kind
        self.obs = obs

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    def ev(self, a) -> cython.double:
        return self.sim.agg_value(self.kind, self.obs)
