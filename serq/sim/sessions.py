"""Sessions: spawning, turns, executing statements, ending (interpreter.md §5–§6).

Every IR block is compiled once into a list of ops, one per statement (``Op``, one class per
statement shape); a session runs by stepping its session block (``ops`` and ``pc``, fields of
the session) under a stack of ``[ops, pc, kind, hold]`` frames for the blocks it entered. An
op's ``run(s)`` returns True when the session must stop executing (it blocked,
ended, or yielded its turn in the ready queue). Compiled, an op is a C struct and ``run`` a
C call through its vtable (a closure called through Python's call protocol cost about a
third of a run's instructions, issue 10).

Compiled, a ``Session`` is a C struct (``sessions.pxd``): the executor, the ops and the other
compiled modules read and write its fields without an attribute look-up (issue 10).
"""
from __future__ import annotations

import math

try:
    import cython
except ImportError:  # Cython not installed: the no-op stand-in, the module runs interpreted
    from serq import _cython_shim as cython

from serq.ir import types as T
from serq.ir.show import show_expr, show_ref
from serq.sim.exprs import N as NOW
from serq.sim.fmt import display as show_num

# Compiled, the run's fields as C slots: the methods and ops typed `RunState` read and write
# the clock, the counters and the ready queue from the struct (state.pxd); the ops evaluate
# their expressions' nodes (`Expr`) with C calls (exprnodes.pxd)
if cython.compiled:
    from cython.cimports.cpython.list import PyList_GET_ITEM, PyList_SET_ITEM
    from cython.cimports.cpython.long import PyLong_AsSsize_t
    from cython.cimports.cpython.object import PyObject
    from cython.cimports.cpython.ref import Py_DECREF, Py_INCREF, Py_REFCNT, Py_XDECREF
    from cython.cimports.serq.sim.chain import Chain
    from cython.cimports.serq.sim.exprnodes import Expr
    from cython.cimports.serq.sim.observations import Observations
    from cython.cimports.serq.sim.stages import Stage
    from cython.cimports.serq.sim.state import RunState
    from cython.cimports.serq.sim.states import ENDED, LOOP, PLAIN, READY
else:
    from serq.sim.chain import Chain
    from serq.sim.exprnodes import Expr
    from serq.sim.observations import Observations
    from serq.sim.stages import Stage
    from serq.sim.state import RunState
    from serq.sim.states import ENDED, LOOP, PLAIN, READY

U64_MAX = float(1 << 64)

LOOP_SPIN_LIMIT = 1_000_000


NO_POS = {}  # never written: see Session
EMPTY = []  # a session's holds and leases until its first (never added to: see Session)

@cython.final
@cython.freelist(64)
@cython.cclass
class Session:
    """A session (§5), made by :func:`new_session`. Only what every session needs is set per
    instance (a session is made per arrival): the fields that start as ``None``, ``0`` or
    ``False`` are not. Compiled, they are C fields, which start so; interpreted, they read
    their value from the class until first written. ``holds`` and ``leases`` start as the
    shared empty list ``EMPTY`` and ``preempt_pos`` as the shared empty ``NO_POS``: the few
    places that add to them replace them first (compiled, a list's truth is a C test)."""
    if not cython.compiled:
        job = None          # the job it waits for, while IN_STAGE
        stage = None        # that job's stage
        pending = None      # the hold it queues for, while QUEUED
        queued_pool = None
        trace_turns = None  # the turns of its trace session (or its script)
        trace_pos = 0
        script = False
        stuck = False
        last_token = None
        pc = 0              # the next statement of the session block (ops)
        frames = None       # the blocks entered (enter_block)
        link = -1           # its slot on the live sessions' chain (spawn, end_session)
        spins = 0           # passes of a loop body at time spin_time (see execute)
        spin_time = 0.0
        grow = None
        spare_frame = None  # compiled: its last plain block's frame, for reuse (Branch)


@cython.locals(s=Session)
def new_session(serial, nattrs, ops, spare):
    """A session at the start of the session block ``ops``. ``__new__`` and the stores here,
    not ``__init__``: compiled, a C allocation and C stores (a call of the class goes through
    Python's call protocol); interpreted, a plain function call is cheaper than a class's
    ``__init__``. The session block is not a frame: a session makes no frame (a list) until
    it enters a block (a loop, a branch, a hold), and most never do: ``frames`` is None
    until then (``enter_block``).

    Compiled, ``spare`` is the run's list of ended sessions (``end_session``; None
    interpreted): one that nothing else holds any more is made new again (``recycled``)
    instead of a new object (issue 10: a session's allocation and freeing, with its
    attributes' list, cost about a fifth of an M/M/1 event). Invisible: an object that only
    the run's list holds can be reached by nobody."""
    if spare is None or (s := recycled(spare, nattrs)) is None:
        s = Session.__new__(Session)
        s.attrs = [0.0] * nattrs
        s.preempt_pos = NO_POS  # (a recycled session's is NO_POS or an empty dict: recycled)
    s.serial = serial
    s.ops = ops
    s.status = READY
    s.holds = EMPTY  # admitted holds, innermost last
    s.leases = EMPTY
    s.adm_seq = U64_MAX
    return s


SPARE_MAX = 16  # the ended sessions a run keeps for recycling (a power of 2): few enough
# that a recycled session is still in the data cache (64 kept twice the M/M/1 loop's L1
# misses by callgrind's cache model, 8 made the M/G/c PS network allocate more, issue 10)
SPARE_PROBES = 4  # how many of the oldest of them new_session looks at (recycled)


@cython.final
@cython.cclass
class Spare:
    """Compiled only: the run's last ``SPARE_MAX`` ended sessions, a ring of ``slots`` in the
    order they ended (``keep``); ``at`` is the oldest's (the next to be replaced), which
    ``recycled`` takes when nothing else holds it any more. The oldest: a session just
    ended is often still held for a while (the run's ``cur``, a finished ps job that its
    stage drops later), one that ended ``SPARE_MAX`` ends ago seldom is."""

    def __init__(self):
        self.slots = [None] * SPARE_MAX
        self.at = 0

    @cython.boundscheck(False)
    @cython.wraparound(False)
    def keep(self, s):
        """``s`` ended: kept in the oldest's slot (which is dropped)."""
        put(self.slots, self.at, s)
        self.at = (self.at + 1) & (SPARE_MAX - 1)


def put(a, i, x):
    """``a[i] = x`` for a list ``a`` and an ``i`` in range, compiled only: C stores (a list
    item assignment's checks and its out-of-line call cost about 30 instructions, issue
    10)."""
    old = PyList_GET_ITEM(a, i)
    Py_INCREF(x)
    PyList_SET_ITEM(a, i, x)
    Py_XDECREF(old)


@cython.boundscheck(False)
@cython.wraparound(False)
def recycled(spare, nattrs):
    """Compiled only: one of the oldest ``SPARE_PROBES`` sessions of ``spare`` that nothing
    else holds (its one reference is ``spare``'s: the slots are read as borrowed pointers,
    without a reference count or a type test, issue 10), the oldest such, taken
    off ``spare`` and set back to how a new session starts (the class's start values, and
    its ``nattrs`` attributes 0.0: its own list kept when nothing else holds that either;
    ``new_session`` sets the rest), or None. More than the oldest: arrivals in a row take
    the oldest slots one after the other, and a few sessions are held longer than others."""
    slots = spare.slots
    i = spare.at
    for k in range(SPARE_PROBES):
        old = PyList_GET_ITEM(slots, i)  # (a session or None: only the ring holds it at 1)
        if Py_REFCNT(cython.cast(object, old)) == 1:
            break
        i = (i + 1) & (SPARE_MAX - 1)
    else:
        return None
    s = cython.cast(Session, old)  # (no type test: the ring holds sessions and None only)
    Py_INCREF(None)
    PyList_SET_ITEM(slots, i, None)  # (the ring's reference, handed to s)
    Py_DECREF(s)
    a = s.attrs
    if Py_REFCNT(a) == 2:  # (its and a's): each slot 0.0, stored where it is not already
        zero = 0.0
        for j in range(nattrs):
            old = PyList_GET_ITEM(a, j)
            if old != cython.cast(cython.pointer[PyObject], zero):
                Py_INCREF(zero)
                PyList_SET_ITEM(a, j, zero)  # (takes the reference: the old one dropped below)
                Py_XDECREF(old)
    else:
        s.attrs = [0.0] * nattrs
    s.pc = 0
    fr = s.frames
    if fr is not None and (fr or Py_REFCNT(fr) != 2):  # (its and fr's)
        s.frames = None  # (an emptied list that only it holds is kept)
    if s.job is not None:
        s.job = None
    if s.stage is not None:
        s.stage = None
    if s.pending is not None:
        s.pending = None
    if s.queued_pool is not None:
        s.queued_pool = None
    if s.trace_turns is not None:
        s.trace_turns = None
    s.trace_pos = 0
    s.script = False
    s.stuck = False
    if s.last_token is not None:
        s.last_token = None
    s.spins = 0
    s.spin_time = 0.0
    if s.grow is not None:
        s.grow = None
    if s.preempt_pos:  # (an emptied one of its own is kept: pools.py reads no more than
        s.preempt_pos = NO_POS  # NO_POS's emptiness, and makes its own before it writes)
    return s


def enter_block(s, fr):
    """Push the frame ``fr`` (``[ops, pc, kind, hold]``) on ``s``'s stack, made here at the
    first: a session that never enters a block never allocates one (``new_session``)."""
    if s.frames is None:
        s.frames = [fr]
    else:
        s.frames.append(fr)


@cython.cclass
class Op:
    """A compiled statement: ``run(s)`` does it for session ``s`` and returns True when the
    session must stop executing. The statement shapes are its subclasses (below the
    executor, which types its ops as ``Op``). ``indexed``: it reports its out-of-range
    indices after it (``Deferring``), so ``SessionOps.fuse`` keeps it apart."""
    if not cython.compiled:
        indexed = False

    def run(self, s):
        raise NotImplementedError


def u32(x):
    """Rust's ``as u32``: truncation, saturating, NaN -> 0."""
    if not x > 0:
        return 0
    if x >= 4294967295.0:
        return 4294967295
    return int(x)


# -- spawning, executing, ending (§5.1, §6) --------------------------------------------------
# SessionOps' methods (the class takes them below), written as functions of the run so that
# compiled, a caller holding the run typed (``RunState``) reaches them in C (sessions.pxd);
# other callers call them as methods, ``sim.execute(s)``, in both modes.


@cython.ccall
@cython.boundscheck(False)  # (attribute slots: in range, validate.py checks every slot)
@cython.wraparound(False)
@cython.locals(s=Session)
def spawn(self: RunState, init=None) -> Session:
    """A new session (§5.1): its serial set, its trace turns chosen, last on the live
    sessions' chain, its workload ``init`` run, and queued ready. What only a replayed or
    traced run does is in ``take_turns`` and ``take_attrs``: compiled, the common spawn then
    keeps none of their objects as locals (each one a reference released on return)."""
    s = new_session(self.next_serial, self.nattrs, self.session_ops, self.spare)
    self.next_serial += 1
    s.attrs[self.slot_serial] = float(s.serial)
    if init is not None or self.trace is not None:
        take_turns(self, s, init)
    s.link = self.live_chain.append(s)
    self.live += 1
    self.arrivals += 1
    if self.init_ops:
        run_workload_block(self, s, self.init_ops)
    if init is not None:
        take_attrs(s, init)
    if self.hooks is not None:
        self.hooks.session(s)
    self.ready.append(s)
    return s


def take_turns(self: RunState, s: Session, init):
    """``spawn``'s choice of the turns of ``s``: its script's (a replayed session ``init``
    with turns), else one of the trace's."""
    if init is not None and init.turns:
        s.script = True
        s.trace_turns = init.turns
    elif self.trace is not None:
        n = len(self.trace)
        k = s.serial % n if self.trace_ordered else self.rngs["trace"].range_u32(0, n - 1)
        s.trace_turns = self.trace[k]


def take_attrs(s: Session, init):
    """``spawn``'s last step for a replayed session ``init``: its attributes' values."""
    a = s.attrs
    for slot, v in init.attrs:
        a[slot] = v


@cython.ccall
@cython.locals(op=Op)
def run_workload_block(self: RunState, s: Session, ops: list):
    prev = self.cur
    self.cur = s
    outer = self.defer_index
    self.defer_index = True  # the whole block runs; its last index error is reported
    try:
        for op in ops:
            op.run(s)
    finally:
        self.defer_index = outer
    if self.index_error is not None and not outer:
        self.raise_index_error()
    self.cur = prev


@cython.ccall
@cython.boundscheck(False)  # (a frame's four items: in range)
@cython.locals(frames=list, fr=list, ops=list, pc=cython.Py_ssize_t, kind=cython.int,
               stop=cython.bint)
def execute(self: RunState, s: Session):
    """Step ``s`` until it stops: the innermost frame's next statement, or the session
    block's when no frame is left; the session ends after its block's last. A loop frame
    counts the passes of its body at one instant (``spins``, reset when the time differs
    from ``spin_time``; as ``spins`` starts at 0, ``spin_time``'s start value does not
    matter)."""
    self.cur = s
    while s.status == READY:
        if s.frames:  # (an op may have made it: enter_block)
            frames = s.frames
            if cython.compiled:  # C reads of [ops, pc, kind, hold] lists (no type tests)
                fr = cython.cast(list, PyList_GET_ITEM(frames, len(frames) - 1))
                ops = cython.cast(list, PyList_GET_ITEM(fr, 0))
                pc = PyLong_AsSsize_t(cython.cast(object, PyList_GET_ITEM(fr, 1)))
            else:
                fr = frames[-1]
                ops = fr[0]
                pc = fr[1]
            if pc < len(ops):
                if cython.compiled:
                    put(fr, 1, pc + 1)  # (C stores)
                else:
                    fr[1] = pc + 1
            else:
                kind = fr[2]
                if kind == LOOP:
                    fr[1] = 0
                    if s.spin_time != self.now:
                        s.spin_time = self.now
                        s.spins = 0
                    s.spins += 1
                    if s.spins > LOOP_SPIN_LIMIT:
                        self.fail(f"run: session {s.serial} loops without letting time pass: "
                                  f"its `loop` body ran {LOOP_SPIN_LIMIT} times at time "
                                  f"{show_num(self.now)} without a statement that waits "
                                  f"(a run, a hold or a grow)", s, "loop")
                elif kind == PLAIN:
                    frames.pop()
                    if cython.compiled and Py_REFCNT(fr) == 1:  # (held by nobody else)
                        s.spare_frame = fr  # for the session's next branch (Branch)
                else:
                    frames.pop()
                    self.end_hold_scope(s)
                    self.cur = s
                continue
        else:
            ops = s.ops
            pc = s.pc
            if pc < len(ops):
                s.pc = pc + 1
            else:
                end_session(self, s)
                return
        if cython.compiled:  # a block's list holds ops only (no type test), pc < len(ops)
            stop = cython.cast(Op, PyList_GET_ITEM(ops, pc)).run(s)
        else:
            stop = ops[pc].run(s)
        if stop:
            return


@cython.ccall
def end_session(self: RunState, s: Session):
    if s.status == ENDED:
        return
    if s.status != READY:
        self.detach(s)
    if s.holds or s.leases:
        self.release_all(s)
    s.status = ENDED
    if s.frames:
        s.frames.clear()
    self.live_chain.unlink(s.link)  # off the live sessions' chain
    s.link = -1
    self.live -= 1
    if self.warm:
        self.ended += 1
    if cython.compiled:
        self.spare.keep(s)  # for new_session
    if self.closed:
        spawn(self)


@cython.ccall
def live_sessions(self: RunState) -> dict:
    """The live sessions, serial -> session in arrival order: a new dict (``Sim.alive``, for
    the observers: the run itself keeps them on a chain, which costs no dict insertion and
    deletion and no serial object per session)."""
    out = {}
    for s in self.live_chain.listed():
        out[s.serial] = s
    return out


@cython.ccall
def live_session(self: RunState, serial: cython.Py_ssize_t) -> Session:
    """The live session ``serial``, or None (one that ended, or a dead key): a walk of the
    live sessions' chain from the newest (what an eviction's context and the plan export
    ask, rarely)."""
    ch = self.live_chain
    k = ch.last
    while k >= 0:
        s = ch.items[k]
        if s.serial <= serial:
            return s if s.serial == serial else None
        k = ch.before(k)
    return None


@cython.ccall
@cython.locals(a=list, i=cython.Py_ssize_t)
def do_turn(self: RunState, s: Session):
    p = self.p
    a = s.attrs
    a[p.slot_turn] += 1.0
    if self.warm:
        self.turns += 1
    turns = s.trace_turns
    if turns is not None:
        i = s.trace_pos
        if i < len(turns):
            if s.script:
                for slot, v in turns[i]:
                    a[slot] = v
            else:
                new, out, think, forced = turns[i]
                a[p.slot_new] = new
                a[p.slot_out] = out
                a[p.slot_think] = think
                a[p.slot_forced] = forced
            s.trace_pos = i + 1
            a[p.slot_more] = 1.0 if i + 1 < len(turns) else 0.0
        else:
            a[p.slot_more] = 0.0
    if self.turn_ops:
        run_workload_block(self, s, self.turn_ops)


class SessionOps:
    # -- set-up ---------------------------------------------------------------------------
    def init_sessions(self):
        p = self.p
        self.nattrs = len(p.attrs)
        self.block_cache = {}
        self.names = (list(p.attrs), [pl.name for pl in p.pools], [st.name for st in p.stages])
        self.init_ops = self.block(p.init, "workload", workload=True)
        self.turn_ops = self.block(p.turn, "workload", workload=True)
        self.session_ops = self.block(p.session, "session")
        self.closed = type(p.arrival) is T.Closed and self.replay is None
        self.live_chain = Chain()
        self.spare = Spare() if cython.compiled else None  # ended sessions (new_session)
        self.slot_serial = p.slot_serial
        if type(p.arrival) is T.Renewal:
            self.renewal_fn = self.ex.expr(p.arrival.gap, "arrival")  # a node (engine)

    def show(self, e):
        a, pl, st = self.names
        return show_expr(e, a, self.p.pools, self.p.stages)

    def show_ref(self, r, table):
        return show_ref(r, table, self.names[0], self.p.pools, self.p.stages)

    def block(self, idx, stream, workload=False):
        key = (idx, stream, workload)
        ops = self.block_cache.get(key)
        if ops is None:
            ops = []
            self.block_cache[key] = ops  # filled in place: blocks may nest (never cyclic)
            stmts = self.p.blocks[idx]
            compiled = [self.compile_stmt(st, stream, workload) for st in stmts]
            if workload:
                ops[:] = compiled
            else:
                for k, st in enumerate(stmts):
                    if has_index(st):
                        compiled[k] = Deferring(self, compiled[k])
                ops[:] = self.fuse(stmts, compiled)
        return ops

    # -- fusing straight-line statements ----------------------------------------------------
    @staticmethod
    def fuse(stmts, ops):
        """Each run of ``set``/``observe`` statements, with the statement after it, becomes one
        op calling their ops in turn: the executor then steps once per run instead of once
        per statement.

        Exact because those statements never block, end, or touch the frame stack: the fused
        op does what the ops did one after the other, and the statement after the run (its
        op called last) decides whether the session stops."""
        out = []
        run = []
        for st, op in zip(stmts, ops):
            if getattr(op, "indexed", False):  # keeps its own op, and reports after it
                if run:
                    out.append(fused_op(run, None))
                    run = []
                out.append(op)
            elif type(st) is T.Set or type(st) is T.Observe:
                run.append(op)
            elif run:
                out.append(fused_op(run, op))
                run = []
            else:
                out.append(op)
        if run:
            out.append(fused_op(run, None))
        return out

    # -- spawning, executing, ending: the functions below, as methods ------------------------
    spawn = spawn
    run_workload_block = run_workload_block
    execute = execute
    end_session = end_session
    do_turn = do_turn
    live_session = live_session
    alive = property(live_sessions)  # serial -> session, a new dict (hooks.py)

    # -- statements -------------------------------------------------------------------------
    def compile_stmt(self, st, stream, workload):
        t = type(st)
        if workload and t not in (T.Set, T.Observe):
            kind = t.__name__.lower()
            return Refused(self, f"run: a workload `init` or `turn` block may only set and "
                                 f"observe; this one has a `{kind}` statement", kind)
        if t is T.Set:
            e = self.ex.expr(st.expr, stream)
            return SetNow(self, st.slot) if e.shape == NOW else SetExpr(st.slot, e)
        if t is T.Observe:
            return Observe(self, st.index, self.ex.expr(st.expr, stream))
        if t is T.End:
            return End(self)
        if t is T.Turn:
            return Turn(self)
        if t is T.Loop:
            return Loop(self.block(st.body, stream))
        if t is T.Branch:
            return Branch(self, self.ex.expr(st.guard, stream), self.block(st.then, stream),
                          self.block(st.other, stream), self.show(st.guard))
        if t is T.Choose:
            return Choose(self, self.ex.expr(st.count, stream),
                          [self.ex.expr(k, stream) for k in st.key], st.var)
        if t is T.Run:
            return self.compile_run(st, stream)
        if t is T.Hold:  # pools.py's closures, as ops
            return CallOp(self.compile_hold(st, stream))
        if t in (T.Grow, T.Drop, T.Release, T.Load):
            return CallOp(self.compile_pool_stmt(st, stream))
        raise ValueError(f"unknown statement {st!r}")

    def compile_run(self, st, stream):
        r = st.stage
        work = self.ex.expr(st.work, stream)
        if (r.index is None and r.base not in self.shared_stages
                and st.growing is None):  # the common run: one stage, not growing
            return RunSimple(self, work, self.stages[r.base], st.mode)
        g = st.growing
        return RunGeneral(
            self, work, r, self.ex.expr(r.index, stream) if r.index is not None else None,
            st.mode, g, self.ex.expr(g.index, stream) if g is not None
            and g.index is not None else None,
            [(a, self.ex.expr(a.index, stream) if a.index is not None else None)
             for a in st.also])


# -- the statements' ops (§6) ----------------------------------------------------------------
# One class per statement shape; compiled, each is a C struct whose ``run`` the executor calls
# through the C vtable (issue 10: a closure went through Python's call protocol, with its
# captured values in cells). ``run(s)`` returns True when the session must stop executing.


@cython.cclass
class CallOp(Op):
    """A statement compiled to a function ``fn(s)`` elsewhere (``pools.py``'s hold, grow,
    drop, release and load)."""

    def __init__(self, fn):
        self.fn = fn

    def run(self, s):
        return self.fn(s)


@cython.cclass
class Refused(Op):
    """A statement a workload ``init`` or ``turn`` block may not hold: an error when run."""

    def __init__(self, sim, msg, kind):
        self.sim = sim
        self.msg = msg
        self.kind = kind

    def run(self, s):
        self.sim.fail(self.msg, s, self.kind)
        return False


@cython.cclass
class SetNow(Op):
    """``set x = now``: the clock read in place."""

    def __init__(self, sim, slot):
        self.sim = sim
        self.slot = slot

    @cython.boundscheck(False)  # (attribute slots: in range, validate.py checks every slot)
    @cython.wraparound(False)
    def run(self, s):
        s.attrs[self.slot] = self.sim.now
        return False


@cython.cclass
class SetExpr(Op):
    """``set x = e``."""

    def __init__(self, slot, f):
        self.slot = slot
        self.f = f

    @cython.boundscheck(False)  # (attribute slots: in range, validate.py checks every slot)
    @cython.wraparound(False)
    @cython.locals(a=list)
    def run(self, s):
        a = s.attrs
        a[self.slot] = self.f.ev(a)
        return False


@cython.cclass
class Observe(Op):
    """``observe``: the value recorded with its time, session and turn once warm; before
    the warm-up kept only for an observer that asks (``Hooks.early_observations``)."""

    def __init__(self, sim, k, f):
        self.sim = sim
        self.k = k
        self.f = f
        self.rec = sim.obs[k]
        self.slot_turn = sim.p.slot_turn

    @cython.boundscheck(False)  # (attribute slots: in range, validate.py checks every slot)
    @cython.wraparound(False)
    @cython.locals(a=list, S=RunState)
    def run(self, s):
        S = self.sim
        a = s.attrs
        v = self.f.ev(a)
        if S.warm:
            self.rec.add_value(v, S.now, s.serial, u32(a[self.slot_turn]))
        elif S.pre_obs is not None:
            S.pre_obs[self.k].append(v)
        return False


@cython.cclass
class End(Op):
    def __init__(self, sim):
        self.sim = sim

    def run(self, s):
        end_session(self.sim, s)
        return True


@cython.cclass
class Turn(Op):
    def __init__(self, sim):
        self.sim = sim

    def run(self, s):
        do_turn(self.sim, s)
        return False


@cython.cclass
class Loop(Op):
    def __init__(self, body):
        self.body = body

    def run(self, s):
        enter_block(s, [self.body, 0, LOOP, None])
        return False


@cython.cclass
class Branch(Op):
    def __init__(self, sim, g, then, other, text):
        self.sim = sim
        self.g = g
        self.then = then
        self.other = other
        self.text = text

    @cython.locals(fr=list)
    def run(self, s):
        """Enter the block the guard chooses, in the frame of the session's last plain block
        where it kept one (``spare_frame``, compiled only: a frame's list made and freed
        per branch cost about a twelfth of a compiled mgc_ps event, issue 10)."""
        v = self.g.ev(s.attrs)
        if v == 1.0:
            ops = self.then
        elif v == 0.0:
            ops = self.other
        else:
            text = self.text
            self.sim.fail(f"`branch ({text})`: the guard is {show_num(v)}, not 0 or 1; a draw "
                          f"is written `branch with (p)`", s, f"branch ({text})")
            return False
        fr = s.spare_frame
        if fr is None:
            fr = [ops, 0, PLAIN, None]
        else:  # (compiled only) [ops, pc, PLAIN, None] as execute left it
            s.spare_frame = None
            put(fr, 0, ops)
            put(fr, 1, 0)
        enter_block(s, fr)
        return False


@cython.cclass
class Choose(Op):
    def __init__(self, sim, count, keys, var):
        self.sim = sim
        self.count = count
        self.keys = keys
        self.var = var

    def run(self, s):
        a = s.attrs
        var = self.var
        keys = self.keys
        c = self.count.ev(a)
        n = 0 if not c > 0 else (int(c) if c < 1e18 else -1)
        if n < 0 or n > 100_000_000:
            self.sim.fail(f"run: `choose` over {show_num(c)} members cannot finish", s, "choose")
        best = None
        bj = 0
        for j in range(n):
            a[var] = float(j)
            kv = [k.ev(a) for k in keys]
            if best is None or lex_less(kv, best):
                best = kv
                bj = j
        a[var] = float(bj)
        return False


@cython.cclass
class RunSimple(Op):
    """The common ``run``: one stage, not indexed, shared or growing."""

    def __init__(self, sim, work, stage, mode):
        self.work = work
        self.stage = stage
        self.mode = mode
        self.ready = sim.ready

    @cython.locals(w=cython.double)
    def run(self, s):
        w = self.work.ev(s.attrs)
        if not w > 0:
            self.ready.append(s)
            return True
        self.stage.add_job(s, w, self.mode, None)
        return True


@cython.cclass
class RunGeneral(Op):
    """``run`` on an indexed, shared or growing stage."""

    def __init__(self, sim, work, r, idxf, mode, growing, gfn, afns):
        self.sim = sim
        self.work = work
        self.base = r.base
        self.count = r.count
        self.idxf = idxf
        self.mode = mode
        self.growing = growing
        self.gfn = gfn
        self.afns = afns
        self.shared = r.base in sim.shared_stages
        self.stages = sim.stages
        self.ready = sim.ready

    @cython.locals(S=RunState, idxf=Expr, gfn=Expr, w=cython.double)
    def run(self, s):
        S = self.sim
        a = s.attrs
        idxf = self.idxf
        i = (self.base if idxf is None
             else S.ref_index(self.base, self.count, idxf.ev(a), "stage"))
        w = self.work.ev(a)
        if not w > 0:
            w = 0.0
        if self.shared:
            others = [S.ref_index(x.base, x.count, f.ev(a), "stage") if f is not None else x.base
                      for x, f in self.afns]
            if w == 0.0:
                self.ready.append(s)
                return True
            S.start_flow(s, i, others, w)
            return True
        gp = None
        growing = self.growing
        if growing is not None:
            gfn = self.gfn
            gp = growing.base if gfn is None else S.ref_index(growing.base, growing.count,
                                                              gfn.ev(a), "pool")
        if w == 0.0:
            self.ready.append(s)
            return True
        self.stages[i].add_job(s, w, self.mode, gp)
        return True


@cython.cclass
class Fused(Op):
    """``ops`` (sets and observes, which never stop the session) and then ``last`` (``None``:
    nothing), returning what ``last`` returns: see ``SessionOps.fuse``."""

    def __init__(self, ops, last):
        self.ops = tuple(ops)
        self.last = last

    @cython.locals(o=Op)
    def run(self, s):
        for o in self.ops:
            o.run(s)
        if self.last is not None:
            return self.last.run(s)
        return False


@cython.cclass
class Pair(Op):
    """``first`` (a set or an observe) and then ``last``: the most common ``Fused``."""

    def __init__(self, first, last):
        self.first = first
        self.last = last

    def run(self, s):
        self.first.run(s)
        return self.last.run(s)


def fused_op(ops, last):
    """One op doing ``ops`` and then ``last``."""
    if len(ops) == 1:
        return ops[0] if last is None else Pair(ops[0], last)
    return Fused(ops, last)


@cython.cclass
class Deferring(Op):
    """An op whose out-of-range indices are reported after it (the last one), as the
    reference does; see ``Sim.ref_index``."""

    def __init__(self, sim, op):
        self.sim = sim
        self.op = op
        self.indexed = True

    @cython.locals(S=RunState, r=cython.bint)
    def run(self, s):
        S = self.sim
        S.defer_index = True
        try:
            r = self.op.run(s)
        finally:
            S.defer_index = False
        if S.index_error is not None:
            S.raise_index_error()
        return r


def has_index(node):
    """Whether a statement reads an indexed pool or stage (in its own expressions, not in
    the blocks it runs)."""
    stack = [node]  # an explicit stack: expressions may nest thousands of levels deep
    while stack:
        node = stack.pop()
        t = type(node)
        if t is T.CRef:
            if node.index is not None:
                return True
        elif t is tuple or t is list:
            stack.extend(node)
        elif hasattr(node, "__dataclass_fields__"):
            stack.extend(getattr(node, f) for f in node.__dataclass_fields__)
    return False


def lex_less(x, y):
    """Lexicographic ``x < y`` under IEEE's partial order (a NaN pair is not less)."""
    for p, q in zip(x, y):
        if p == q:
            continue
        return p < q
    return False
