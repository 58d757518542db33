"""Sessions: spawning, turns, executing statements, ending (interpreter.md §5–§6).

Every IR block is compiled once into a list of small functions ("ops"), one per statement;
a session runs by stepping a frame stack of ``[ops, pc, kind, hold]`` lists. An op returns
a true value when the session must stop executing (it blocked, ended, or yielded its turn
in the ready queue).

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
# the clock, the counters and the ready queue from the struct (state.pxd)
if cython.compiled:
    from cython.cimports.serq.sim.observations import Observations
    from cython.cimports.serq.sim.stages import Stage
    from cython.cimports.serq.sim.state import RunState
    from cython.cimports.serq.sim.states import ENDED, LOOP, PLAIN, READY
else:
    from serq.sim.observations import Observations
    from serq.sim.stages import Stage
    from serq.sim.state import RunState
    from serq.sim.states import ENDED, LOOP, PLAIN, READY

U64_MAX = float(1 << 64)

LOOP_SPIN_LIMIT = 1_000_000


NO_POS = {}  # never written: see Session


@cython.final
@cython.cclass
class Session:
    """A session (§5), made by :func:`new_session`. Only what every session needs is set per
    instance (a session is made per arrival): the fields that start as ``None``, ``0`` or
    ``False`` are not. Compiled, they are C fields, which start so; interpreted, they read
    their value from the class until first written. ``holds`` and ``leases`` start as an
    empty tuple and ``preempt_pos`` as the shared empty ``NO_POS``: the few places that add
    to them replace them first."""
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
        spins = 0           # passes of a loop body at time spin_time (see execute)
        spin_time = 0.0
        grow = None


@cython.locals(s=Session)
def new_session(serial, nattrs, frame):
    """A session with its first frame. ``__new__`` and the stores here, not ``__init__``:
    compiled, a C allocation and C stores (a call of the class goes through Python's call
    protocol); interpreted, a plain function call is cheaper than a class's ``__init__``."""
    s = Session.__new__(Session)
    s.serial = serial
    s.attrs = [0.0] * nattrs
    s.frames = [frame]
    s.status = READY
    s.holds = ()     # admitted holds, innermost last
    s.leases = ()
    s.adm_seq = U64_MAX
    s.preempt_pos = NO_POS
    return s


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
@cython.locals(s=Session)
def spawn(self: RunState, init=None) -> Session:
    p = self.p
    s = new_session(self.next_serial, self.nattrs, [self.session_ops, 0, PLAIN, None])
    self.next_serial += 1
    s.attrs[p.slot_serial] = float(s.serial)
    if init is not None and init.turns:
        s.script = True
        s.trace_turns = init.turns
    elif self.trace is not None:
        n = len(self.trace)
        k = s.serial % n if self.trace_ordered else self.rngs["trace"].range_u32(0, n - 1)
        s.trace_turns = self.trace[k]
    self.alive[s.serial] = s
    self.live += 1
    self.arrivals += 1
    if self.init_ops:
        run_workload_block(self, s, self.init_ops)
    if init is not None:
        a = s.attrs
        for slot, v in init.attrs:
            a[slot] = v
    if self.hooks is not None:
        self.hooks.session(s)
    self.ready.append(s)
    return s


@cython.ccall
def run_workload_block(self: RunState, s: Session, ops: list):
    prev = self.cur
    self.cur = s
    outer = self.defer_index
    self.defer_index = True  # the whole block runs; its last index error is reported
    try:
        for op in ops:
            op(s)
    finally:
        self.defer_index = outer
    if self.index_error is not None and not outer:
        self.raise_index_error()
    self.cur = prev


@cython.ccall
@cython.locals(frames=list, fr=list, ops=list, pc=cython.Py_ssize_t, kind=cython.int)
def execute(self: RunState, s: Session):
    """Step ``s`` until it stops. A loop frame counts the passes of its body at one
    instant (``spins``, reset when the time differs from ``spin_time``; as ``spins``
    starts at 0, ``spin_time``'s start value does not matter)."""
    self.cur = s
    frames = s.frames
    while s.status == READY:
        if not frames:
            end_session(self, s)
            return
        fr = frames[-1]
        ops = fr[0]
        pc = fr[1]
        if pc < len(ops):
            fr[1] = pc + 1
            if ops[pc](s):
                return
            continue
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
        else:
            frames.pop()
            self.end_hold_scope(s)
            self.cur = s


@cython.ccall
def end_session(self: RunState, s: Session):
    if s.status == ENDED:
        return
    if s.status != READY:
        self.detach(s)
    if s.holds or s.leases:
        self.release_all(s)
    s.status = ENDED
    s.frames.clear()
    del self.alive[s.serial]
    self.live -= 1
    if self.warm:
        self.ended += 1
    if self.closed:
        spawn(self)


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
        if type(p.arrival) is T.Renewal:
            self.renewal_fn = self.ex.function(p.arrival.gap, "arrival")

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
                        compiled[k] = self.deferring(compiled[k])
                ops[:] = self.fuse(stmts, compiled)
        return ops

    def deferring(self, op):
        """An op whose out-of-range indices are reported after it (the last one), as the
        reference does; see ``Sim.ref_index``."""
        S = self

        def deferred(s):
            S.defer_index = True
            try:
                r = op(s)
            finally:
                S.defer_index = False
            if S.index_error is not None:
                S.raise_index_error()
            return r
        deferred.indexed = True
        return deferred

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

    # -- statements -------------------------------------------------------------------------
    @cython.locals(S=RunState)
    def compile_stmt(self, st, stream, workload):
        t = type(st)
        S = self
        if workload and t not in (T.Set, T.Observe):
            kind = t.__name__.lower()
            msg = (f"run: a workload `init` or `turn` block may only set and observe; "
                   f"this one has a `{kind}` statement")

            @cython.locals(s=Session)
            def op(s):
                S.fail(msg, s, kind)
            return op
        if t is T.Set:
            return self.compile_set(st, stream)
        if t is T.Observe:
            return self.compile_observe(st, stream)
        if t is T.End:
            @cython.locals(s=Session)
            def op(s):
                end_session(S, s)
                return True
            return op
        if t is T.Turn:
            return self.do_turn
        if t is T.Loop:
            body = self.block(st.body, stream)

            @cython.locals(s=Session)
            def op(s):
                s.frames.append([body, 0, LOOP, None])
            return op
        if t is T.Branch:
            return self.compile_branch(st, stream)
        if t is T.Choose:
            return self.compile_choose(st, stream)
        if t is T.Run:
            return self.compile_run(st, stream)
        if t is T.Hold:
            return self.compile_hold(st, stream)
        if t in (T.Grow, T.Drop, T.Release, T.Load):
            return self.compile_pool_stmt(st, stream)
        raise ValueError(f"unknown statement {st!r}")

    @cython.locals(S=RunState, slot=cython.Py_ssize_t)
    def compile_set(self, st, stream):
        """``set``: the attribute written; ``set t = now`` reads the clock in place."""
        S = self
        slot = st.slot
        shape, f, v = self.ex.node(st.expr, stream)
        if shape == NOW:
            @cython.locals(s=Session)
            def op(s):
                s.attrs[slot] = S.now
        else:
            @cython.locals(s=Session, a=list)
            def op(s):
                a = s.attrs
                a[slot] = f(a)
        return op

    @cython.locals(S=RunState, slot_turn=cython.Py_ssize_t, rec=Observations)
    def compile_observe(self, st, stream):
        """``observe``: the value recorded with its time, session and turn once warm; before
        the warm-up kept only for an observer that asks (``Hooks.early_observations``)."""
        S = self
        k = st.index
        f = self.ex.function(st.expr, stream)
        rec = self.obs[k]
        slot_turn = self.p.slot_turn

        @cython.locals(s=Session, a=list)
        def op(s):
            a = s.attrs
            v = f(a)
            if S.warm:
                rec.add(v, S.now, s.serial, u32(a[slot_turn]))
            elif S.pre_obs is not None:
                S.pre_obs[k].append(v)
        return op

    @cython.locals(S=RunState)
    def compile_branch(self, st, stream):
        S = self
        g = self.ex.function(st.guard, stream)
        then = self.block(st.then, stream)
        other = self.block(st.other, stream)
        text = self.show(st.guard)

        @cython.locals(s=Session)
        def op(s):
            v = g(s.attrs)
            if v == 1.0:
                s.frames.append([then, 0, PLAIN, None])
            elif v == 0.0:
                s.frames.append([other, 0, PLAIN, None])
            else:
                S.fail(f"`branch ({text})`: the guard is {show_num(v)}, not 0 or 1; a draw is "
                       f"written `branch with (p)`", s, f"branch ({text})")
        return op

    def compile_choose(self, st, stream):
        S = self
        count = self.ex.function(st.count, stream)
        keys = [self.ex.function(k, stream) for k in st.key]
        var = st.var

        @cython.locals(s=Session)
        def op(s):
            a = s.attrs
            c = count(a)
            n = 0 if not c > 0 else (int(c) if c < 1e18 else -1)
            if n < 0 or n > 100_000_000:
                S.fail(f"run: `choose` over {show_num(c)} members cannot finish", s, "choose")
            best = None
            bj = 0
            for j in range(n):
                a[var] = float(j)
                kv = [k(a) for k in keys]
                if best is None or lex_less(kv, best):
                    best = kv
                    bj = j
            a[var] = float(bj)
        return op

    @cython.locals(S=RunState, stage=Stage)
    def compile_run(self, st, stream):
        S = self
        work = self.ex.function(st.work, stream)
        r = st.stage
        base, count, idx = r.base, r.count, r.index
        idxf = self.ex.function(idx, stream) if idx is not None else None
        mode = st.mode
        growing = st.growing
        also = st.also
        shared = base in self.shared_stages
        gfn = None
        if growing is not None and growing.index is not None:
            gfn = self.ex.function(growing.index, stream)
        afns = [(a, self.ex.function(a.index, stream) if a.index is not None else None)
                for a in also]
        stages = self.stages
        ready = self.ready
        if idxf is None and not shared and growing is None:
            stage = stages[base]  # the common run: one stage, not growing

            @cython.locals(s=Session, w=cython.double)
            def op(s):
                w = work(s.attrs)
                if not w > 0:
                    ready.append(s)
                    return True
                stage.add_job(s, w, mode, None)
                return True
            return op

        @cython.locals(s=Session)
        def op(s):
            a = s.attrs
            i = base if idxf is None else S.ref_index(base, count, idxf(a), "stage")
            w = work(a)
            if not w > 0:
                w = 0.0
            if shared:
                others = [S.ref_index(x.base, x.count, f(a), "stage") if f else x.base
                          for x, f in afns]
                if w == 0.0:
                    ready.append(s)
                    return True
                S.start_flow(s, i, others, w)
                return True
            gp = None
            if growing is not None:
                gp = growing.base if gfn is None else S.ref_index(growing.base, growing.count,
                                                                  gfn(a), "pool")
            if w == 0.0:
                ready.append(s)
                return True
            stages[i].add_job(s, w, mode, gp)
            return True
        return op


def fused_op(ops, last):
    """One op doing ``ops`` (sets and observes, which never stop the session) and then
    ``last`` (``None``: nothing), returning what ``last`` returns."""
    if last is None and len(ops) == 1:
        return ops[0]
    if last is not None and len(ops) == 1:
        first = ops[0]

        def op(s):
            first(s)
            return last(s)
        return op
    ops = tuple(ops)

    def op(s):
        for o in ops:
            o(s)
        if last is not None:
            return last(s)
    return op


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
