"""The discrete-event interpreter: state, the event loop and settling.

One ``Sim`` holds the whole run state. Its behaviour is split by concept over mixins:
``sessions.SessionOps`` (spawning, statements, ending), ``stages.StageOps`` (fifo, ps,
delay), ``flows.FlowOps`` (shared stages), ``pools.PoolOps`` (holds, admission, growth,
preemption, cache), ``step.StepOps`` (the continuous-batching engine). This module owns the
event loop, settling, the time averages and the end of the run (interpreter.md §3–§4); the
clock and the event heap are ``scheduler.Scheduler``'s, and the fields every concept shares
are declared by ``state.RunState`` (C slots, compiled).
"""
from __future__ import annotations

import math
import sys
from heapq import heappop

try:
    import cython
except ImportError:  # Cython not installed: the no-op stand-in, the module runs interpreted
    from serq import _cython_shim as cython

from serq.errors import SimulationError
from serq.ir import types as T
from serq.sim.fmt import display as show
from serq.sim import rng as R
from serq.sim.exprs import Context, ExprCompiler
from serq.sim.flows import FlowOps
from serq.sim.gauges import Gauge
from serq.sim.interrupts import POLL_EVENTS, poll
from serq.sim.observations import Observations
from serq.sim.pools import PoolOps, PoolState
from serq.sim.scheduler import EV_ARRIVE, EV_FINISH, EV_ITER, EV_LEASE, EV_WARMUP, TUPLES
from serq.sim.ready import new_ready_queue
from serq.sim.state import RunState
from serq.sim.sessions import SessionOps
from serq.sim.stages import StageOps, make_stage
from serq.sim.step import StepOps

# Compiled, the C types: the run's fields (the methods typed `self=RunState` read them as C
# slots), the event heap's events and pop (scheduler.pxd), a session's state, a stage's and a
# pool's per-event operations, the accumulator's update and the arrival gap as C calls
# (state.pxd, sessions.pxd, stages.pxd, pools.pxd, stats.pxd, rng.pxd)
if cython.compiled:
    from cython.cimports.serq.sim.exprnodes import Expr
    from cython.cimports.serq.sim.gauges import Gauge
    from cython.cimports.serq.sim.pools import PoolCore
    from cython.cimports.serq.sim.rng import poisson_gap
    from cython.cimports.serq.sim.scheduler import Event, due, pop_until, post
    from cython.cimports.serq.sim.sessions import Session, execute, spawn
    from cython.cimports.serq.sim.stages import Stage
    from cython.cimports.serq.sim.ready import ReadyQueue
    from cython.cimports.serq.sim.state import RunState
    from cython.cimports.serq.sim.stats import TimeAvg
else:
    from serq.sim.exprnodes import Expr
    from serq.sim.pools import PoolCore
    from serq.sim.rng import poisson_gap
    from serq.sim.scheduler import Event, due, pop_until, post
    from serq.sim.sessions import Session, execute, spawn
    from serq.sim.stages import Stage
    from serq.sim.ready import ReadyQueue
    from serq.sim.stats import TimeAvg

SEED_XOR = {"arrival": 0, "workload": 0x9E3779B97F4A7C15, "session": 0x5851F42D4C957F2D,
            "evict": 0x2545F4914F6CDD1D, "trace": 0x6A09E667F3BCC908}
M64 = (1 << 64) - 1

# Guards where the reference hangs: that many events at one instant, or that many passes
# of one loop body at one instant, mean the clock can never move again.
INSTANT_EVENT_LIMIT = 1_000_000
# Sessions spawned at one instant (`batch(n)`, `closed(n)`, `poisson(inf)` with an arrivals
# limit): each takes about a kilobyte, so more than this cannot be held in memory.
SESSIONS_AT_ONCE = 100_000_000
# the largest count a C integer (Py_ssize_t) holds
MAX_COUNT = sys.maxsize
# an arrival's event kind as a C constant (compiled; next_arrival schedules one per arrival)
ARRIVE = cython.declare(cython.int, EV_ARRIVE)
# whether the events are heapq's tuples, as a C constant (settle_state reads it per settle)
HEAPQ = cython.declare(cython.bint, TUPLES)


class Sim(RunState, SessionOps, StageOps, FlowOps, PoolOps, StepOps):
    def __init__(self, program: T.Program, trace=None, times=None):
        RunState.__init__(self)
        self.p = program
        self.defer_index = False  # see ref_index
        self.index_error = None
        # what an attribute reads where no session is (machine expressions, gauges): NaN
        self.na = [math.nan] * len(program.attrs)
        self.warm = program.warmup <= 0
        self.ready = new_ready_queue()
        self.error = None
        # counters
        self.next_serial = 0
        self.next_job = 0
        self.next_adm = 0
        self.next_release = 0
        self.next_dead = 1 << 62
        self.next_lease = 0
        self.live = 0
        self.arrivals = 0
        self.ended = 0
        self.turns = 0
        self.limit = program.arrivals
        self.cur = None  # the session whose expressions are being evaluated
        self.ctx = Context()  # the context variables the moments set (see exprs.Context)
        # the observations made before the warm-up, per observation, kept only when an
        # observer asks for them (``Hooks.early_observations``: the claims' aggregates)
        self.pre_obs = None
        self.admit_budget = None
        self.hooks = None  # a hooks.HookBus when an observer is attached (serq.run(hooks=))
        arr = program.arrival
        self.arrival_rate = arr.rate if type(arr) is T.Poisson else None
        # random streams
        seed = program.seed & M64
        self.rngs = {k: R.Rng((seed ^ x) & M64) for k, x in SEED_XOR.items()}
        self.arrival_rng = self.rngs["arrival"]
        self.ex = ExprCompiler(self)
        # statistics
        self.live_avg = TimeAvg(0.0, 0.0)
        self.obs_names = list(program.observes)
        self.obs = [Observations() for _ in program.observes]
        # each gauge's node (an Expr) and its change points (gauges.Gauge)
        self.gauge_points = [Gauge(self.ex.expr(g.expr)) for g in program.gauges]
        self.gauge_fns = [g.node for g in self.gauge_points]
        # trace: its sessions; with arrival times (a serq extension), they are the arrivals
        self.trace = trace
        self.trace_ordered = program.trace_ordered
        self.replay = None
        if times is not None:
            self.init_replay(times)
        # pools and stages
        self.pools = [PoolState(self, i, pl) for i, pl in enumerate(program.pools)]
        self.stages = [make_stage(self, i, st) for i, st in enumerate(program.stages)]
        self.init_flows()
        self.init_pools()
        self.init_active_pools()
        self.init_steps()
        self.settle_stages = [s for s in self.stages if s.settles]
        self.init_sessions()
        # whether any expression but a step stage's cost reads the pre-iteration totals
        # (residents, decodes, kv_decode, kv_prefill): if none does, an iteration's plan
        # need not compute them (its cost sets them anew before it reads them)
        self.totals_read = bool(self.ex.ctx_used & {"Nres", "Ndec", "Kvb", "Kvp"})
        # the settle's first part is all it has to do (see settle_state)
        self.settle_simple = (not self.pools and not self.settle_stages
                              and not self.shared_stage_set())

    # -- errors ---------------------------------------------------------------------------
    def fail(self, message, session=None, what=None):
        """Stop the run with the reference's message; the place is kept on the error."""
        err = SimulationError(message)
        err.time = self.now
        err.session = session.serial if session is not None else None
        err.statement = what
        raise err

    def ref_index(self, base, count, v, kind):
        """The member a ``CRef`` selects: ``max(v, 0)`` truncated; out of range is an error."""
        if not v > 0:  # NaN and negatives select member 0
            return base
        if v >= count:
            i = int(v) if v < 1.8446744073709552e19 else (1 << 64) - 1
            if i >= count:
                prefix = f"{kind} index" if kind else "index"
                msg = f"{prefix} {i} out of range (count {count})"
                if self.defer_index:
                    # as the reference: the base member is used meanwhile, the statement (or
                    # workload block) goes on, and its last such error stops the run after it
                    self.index_error = (msg, self.cur)
                    return base
                self.fail(msg, self.cur)
        return base + int(v)

    def raise_index_error(self):
        msg, s = self.index_error
        self.index_error = None
        self.fail(msg, s)

    # -- the run --------------------------------------------------------------------------
    def start(self):
        p = self.p
        if p.warmup > 0:
            self.schedule(float(p.warmup), EV_WARMUP)  # a time, a float (Scheduler)
        arr = p.arrival
        t = type(arr)
        if self.replay is not None:
            self.schedule(self.replay[0], EV_ARRIVE)
        elif self.arrival_rate is not None:
            self.check_poisson(arr.rate)
            self.schedule(0.0, EV_ARRIVE)
        elif t is T.Renewal:
            self.schedule(renewal_gap(self), EV_ARRIVE)
        elif t is T.Batch or t is T.Closed:
            self.check_sessions_at_once(arr.n, f"arrive {t.__name__.lower()}({arr.n})")
            for _ in range(arr.n):
                self.spawn()
        elif t is T.Sessions:
            for si in arr.sessions:
                self.spawn(si)
        self.settle()

    def check_poisson(self, rate):
        """Refuse the Poisson rates with which the reference never ends (interpreter.md §3.2).

        A gap is ``-ln(1 - u) / rate``: an infinite rate puts every arrival at time 0, a
        negative one (-0 included) moves the clock backwards. An arrivals limit bounds both
        (the reference then runs them, and so does serq); without one they never end."""
        limit = self.limit
        if rate == math.inf or rate == -math.inf:
            if limit is None:
                self.fail(f"run: `arrive poisson({show(rate)})` starts infinitely many "
                          f"sessions at time 0, so the clock can never move; give the arrival "
                          f"rate a finite value (or set an arrivals limit)")
            self.check_sessions_at_once(limit, f"arrive poisson({show(rate)})` with "
                                               f"`arrivals {limit}")
        elif not math.copysign(1.0, rate) > 0 and limit is None:
            self.fail(f"run: `arrive poisson({show(rate)})`: a negative arrival rate gives "
                      f"negative gaps, so the clock runs backwards and the run never ends; "
                      f"give the arrival rate a positive value (or set an arrivals limit)")

    def check_sessions_at_once(self, n, what):
        """The reference spawns ``n`` sessions at one instant however many; past
        ``SESSIONS_AT_ONCE`` that cannot fit in memory (nor end), so serq refuses it first."""
        if n > SESSIONS_AT_ONCE:
            self.fail(f"run: `{what}` starts {n} sessions at time 0; serq refuses more than "
                      f"{SESSIONS_AT_ONCE} sessions at one instant (they would not fit in "
                      f"memory)")

    # -- trace replay (serq extension: a trace with arrival times, docs/traces.md) -------
    def init_replay(self, times):
        """Replace the program's arrival process by the trace's times: trace session k, in
        time order (stable: file order at equal times), becomes session serial k and starts
        at its time. Nothing else changes (the trace stream is not drawn)."""
        order = sorted(range(len(times)), key=times.__getitem__)
        self.trace = [self.trace[i] for i in order]
        self.replay = [times[i] for i in order]
        self.replay_next = 0
        self.trace_ordered = True
        limit = self.limit
        if limit is not None and limit > len(times):
            self.fail(f"run: --arrivals {limit} asks for more sessions than the trace's "
                      f"{len(times)} (it gives arrival times, so it is the arrival process)")

    def run(self):
        self.start()
        hooks = self.hooks
        if hooks is not None:
            hooks.start()
        self.loop()
        p = self.p
        horizon = p.horizon
        limit = self.limit
        if self.gauge_fns:
            read_gauges(self)
        if limit is None:
            self.now = float(horizon)
        else:
            if self.arrivals < limit or self.live > 0:
                self.now = float(horizon)  # where these two errors are noticed
            if self.arrivals < limit:
                self.fail(f"run: horizon {show(horizon)} reached before requested arrivals: "
                          f"got {self.arrivals}, requested {limit}")
            if self.live > 0:
                self.fail(f"run: failed to drain {self.live} active sessions within horizon "
                          f"{show(horizon)}")
            if self.now <= p.warmup:
                self.fail(f"run: arrivals drained at {show(self.now)} before or at warmup "
                          f"{show(p.warmup)}; no measurement interval")
        if hooks is not None:
            hooks.end()
        return self.now

    @cython.locals(self=RunState, heap=list, horizon=cython.double, t=cython.double,
                   ev=Event, kind=cython.int, finish=cython.int, iteration=cython.int,
                   arrive=cython.int, lease=cython.int, stages=list,
                   limited=cython.bint, gauges=cython.bint, simple=cython.bint,
                   tuples=cython.bint, countdown=cython.Py_ssize_t,
                   same_instant=cython.Py_ssize_t, instant_cap=cython.Py_ssize_t,
                   i=cython.Py_ssize_t)
    @cython.boundscheck(False)  # (an iteration end's stage index is one of stages')
    @cython.wraparound(False)
    def loop(self):
        """The main loop (interpreter.md §3.3): pop the next event, move the clock, handle
        the event (§3.4), settle (§4), until the heap is empty, the next event lies past the
        horizon, or an arrivals limit is reached and every session has ended.

        The gauges are read when the clock is about to move (the state the finished instant
        left). A hook bus, when one is attached, is told of each event before it is handled
        (what it concerns) and after the settle. The loop is ``while True`` with breaks, not
        ``while heap:``: CPython 3.11 specializes a function's bytecode after 8 calls or 8
        unconditional backward jumps, and a ``while cond:`` loop ends in a conditional one,
        so a loop run once would stay unspecialized. Compiled, the clock, the count, the
        event (``scheduler.Event``) and its kind are C numbers and structs, and the settle,
        a stage's ``finish`` and the time averages are C calls. The events are heapq's
        tuples where the scheduler runs interpreted (``scheduler.TUPLES``; its docstring
        says why the two differ).

        Every ``POLL_EVENTS`` events it calls ``interrupts.poll``, which stays interpreted:
        compiled, the loop would otherwise never let CPython act on Ctrl-C, on ``serq.deep``'s
        interrupt of its worker thread, or on another thread's wait for the GIL."""
        heap = self.heap
        horizon = float(self.p.horizon)
        limit = self.limit
        limited = limit is not None
        gauges = bool(self.gauge_fns)
        hooks = self.hooks
        stages = self.stages
        simple = self.settle_simple
        tuples = TUPLES
        # every arrival of a limited run may come at one instant (`poisson(inf)`); the count
        # is a C integer compiled, and one past the largest is never reached: that is the cap
        instant_limit = INSTANT_EVENT_LIMIT + (limit if limited else 0)
        instant_cap = instant_limit if instant_limit < MAX_COUNT else MAX_COUNT
        same_instant = 0
        serial = None
        countdown = POLL_EVENTS
        # the event kinds as locals: compiled, the dispatch compares C integers
        finish, iteration, arrive, lease = EV_FINISH, EV_ITER, EV_ARRIVE, EV_LEASE
        while True:
            if limited and self.arrivals >= limit and self.live == 0:
                break
            if tuples:  # heapq's
                if not heap:
                    break
                t = heap[0][0]
                if t > horizon:
                    break
                t, _, kind, x, y, z = heappop(heap)
            else:       # scheduler.Event, popped by scheduler.pop_until
                ev = pop_until(self, horizon)
                if ev is None:
                    break
                t = ev.t
                kind, x, y, z = ev.kind, ev.x, ev.y, ev.z
            if t > self.now:
                if gauges:
                    read_gauges(self)
                same_instant = 0
            else:
                same_instant += 1
                if same_instant > instant_cap:
                    self.instant_fail(instant_limit)
            self.now = t
            self.events += 1
            countdown -= 1
            if countdown == 0:
                countdown = POLL_EVENTS
                poll()
            if hooks is not None:
                serial = hooks.before(kind, x, y)
            if kind == finish:  # (x is the stage itself: no index to convert and look up)
                if cython.compiled:  # an unchecked cast (x is a Stage)
                    cython.cast(Stage, x).finish(y, z)
                else:
                    x.finish(y, z)
            elif kind == iteration:
                i = x
                st = stages[i]
                st.iter_end(y)  # (compiled: a C call, Stage.iter_end being cpdef)
            elif kind == arrive:
                next_arrival(self)
                spawn(self)
            elif kind == lease:
                self.on_lease_end(x, y, z)
            else:
                self.on_warmup()
            if simple:
                run_ready(self)
            else:
                settle_state(self)
            record(self)
            if hooks is not None:
                hooks.event(kind, t, serial)

    def instant_fail(self, count=INSTANT_EVENT_LIMIT):
        self.fail(f"run: the clock cannot move past {show(self.now)}: "
                  f"{count} events happened at that instant (a "
                  f"loop of events that takes no time, such as a step stage of "
                  f"cost 0 whose hold preempts itself)")

    # -- event handlers (interpreter.md §3.4; a stage's own: finish, iter_end; an
    # -- arrival's: next_arrival, then spawn) ------------------------------------------------
    def on_warmup(self):
        """Reset every time average at the end of the warm-up (integral 0, start and last
        now, the value kept); the settle after records them at now, as after any event."""
        self.warm = True
        now = self.now
        self.live_avg.reset(now)
        for s in self.stages:
            s.reset_stats(now)
        for pl in self.pools:
            pl.reset_stats(now)

    def on_lease_end(self, sess, serial, lease_id):
        if sess.serial == serial and self.end_lease_by_id(sess, lease_id):
            self.admit_all()

    # -- settle (interpreter.md §4) ---------------------------------------------------------
    def settle(self):
        """Settle the instant (interpreter.md §4) and record the time averages."""
        settle_state(self)
        record(self)

    def admit_all(self):
        """"Admit all" (§9.3): retry every pool's stalled growers and admit its queue."""
        visit_active_pools(self, False)


# The event loop's steps, as functions of the run rather than methods of Sim: compiled, the
# loop calls them in C (a method of Sim, a Python class, is looked up and called through
# Python's protocol on every call); interpreted, a call of either costs the same.

@cython.cfunc
@cython.exceptval(-1)
@cython.locals(sim=RunState, i=cython.Py_ssize_t, gap=cython.double)
def next_arrival(sim) -> cython.int:
    """At an arrival (§3.2), schedule the next one unless the arrivals limit is reached with
    this one: the replayed trace's next time, or now plus a gap of the arrival process."""
    limit = sim.limit
    if sim.replay is not None:
        i = sim.replay_next + 1
        if i < len(sim.replay) and (limit is None or sim.arrivals < limit - 1):
            post(sim, sim.replay[i], ARRIVE, None, None, None)
        sim.replay_next = i
    elif limit is None or sim.arrivals < limit - 1:
        rate = sim.arrival_rate
        if rate is not None:
            gap = poisson_gap(sim.arrival_rng, rate)
        else:
            gap = renewal_gap(sim)
        post(sim, sim.now + gap, ARRIVE, None, None, None)
    return 0


@cython.cfunc
@cython.locals(sim=RunState, f=Expr, g=cython.double)
def renewal_gap(sim) -> cython.double:
    """The next gap of a renewal arrival process (§3.2): its expression's value, which must
    be positive and finite."""
    f = sim.renewal_fn
    g = f.ev(sim.na)
    if not (g > 0 and g != math.inf):
        sim.fail(f"run: a renewal interarrival gap must be positive and finite, "
                 f"the gap expression gave {show(g)} at time {show(sim.now)}")
    return g


@cython.cfunc
@cython.exceptval(-1)
@cython.boundscheck(False)  # (i < len(stages))
@cython.wraparound(False)
@cython.locals(sim=RunState, ready=ReadyQueue, heap=list, pending_now=cython.bint,
               stages=list, i=cython.Py_ssize_t, compiled=cython.bint)
def settle_state(sim, compiled=cython.compiled) -> cython.int:
    """The state's part of the settle (§4): run the ready sessions and admit on the pools
    until neither has anything left to do; then start the step iterations and reschedule the
    ps stages, and recompute the shared stages' rates. In a program without pools, settling
    stages or flows (``settle_simple``), only ``run_ready`` has anything to do: the loop
    calls it alone then. ``compiled`` is ``run_ready``'s: the queue's C fields are tested
    compiled (its truth goes through Python's protocol), its truth interpreted."""
    ready = sim.ready
    while True:
        run_ready(sim)
        if sim.active_pools:  # (none active: the pass has nothing to visit)
            visit_active_pools(sim, True)
        if compiled:  # (two tests: one expression of both would make a bool object)
            if ready.head >= ready.tail:
                break
        elif not ready:
            break
    if HEAPQ:
        heap = sim.heap
        pending_now = heap[0][0] <= sim.now if heap else False
    else:
        pending_now = due(sim, sim.now)
    stages = sim.settle_stages
    if cython.compiled:  # unchecked casts: every item is a Stage (no type test per item)
        for i in range(len(stages)):
            cython.cast(Stage, stages[i]).settle(pending_now)
    else:
        for st in stages:
            st.settle(pending_now)
    if sim.flows_dirty:
        sim.recompute_flows()
    return 0


@cython.cfunc
@cython.exceptval(-1)
@cython.locals(sim=RunState, s=Session, ready=ReadyQueue, compiled=cython.bint)
def run_ready(sim, compiled=cython.compiled) -> cython.int:
    """Execute the sessions of the ready queue, in order, each until it blocks (one may be
    in the queue twice, or no longer ready: it is skipped then). Compiled, the queue is a
    ``ready.ReadyQueue``: ``popleft`` is a C call, and the loop tests its C fields (its truth
    would go through Python's protocol, ``PyObject_IsTrue`` and ``__bool__``); interpreted, a
    deque's truth. ``compiled`` is a default, never passed: read once, when the module
    loads, so the interpreted loop pays a local's test per pass, not a global's look-up."""
    ready = sim.ready
    while (ready.head < ready.tail) if compiled else ready:
        s = ready.popleft()
        if s.status == 0:  # READY
            execute(sim, s)
    return 0


@cython.cfunc
@cython.exceptval(-1)
@cython.locals(sim=RunState, settling=cython.bint, active=list, i=cython.Py_ssize_t,
               pl=PoolCore)
def visit_active_pools(sim, settling) -> cython.int:
    """The settle's (or "admit all"'s) pass over the pools, in declaration order, over the
    active ones (all of them but in programs with pool arrays, see
    ``PoolOps.init_active_pools``): a pool activated meanwhile is visited if it comes later
    in that order, as it would be in the full pass."""
    active = sim.active_pools
    i = 0
    while i < len(active):
        pl = active[i]
        if settling:
            if pl.growers:
                pl.retry_growers()
            if pl.queue and pl.admit_via is None:
                pl.try_admit()
        else:
            pl.retry_growers()
            pl.try_admit()
        if i >= len(active) or active[i] is not pl:  # activated before pl: it moved
            i = active.index(pl)
        i += 1
    return 0


@cython.cfunc
@cython.exceptval(-1)
@cython.boundscheck(False)  # (i < len(stages), len(pools))
@cython.wraparound(False)
@cython.locals(sim=RunState, now=cython.double, stages=list, pools=list, i=cython.Py_ssize_t,
               compiled=cython.bint)
def record(sim, compiled=cython.compiled) -> cython.int:
    """Record the time averages at the end of a settle (§12.1): live, every stage's, every
    active pool's (a pool not active yet holds 0 in each: nothing to record). Compiled, the
    lists are indexed in C and their items cast unchecked (each is a ``Stage``, a
    ``PoolCore``): a checked one walks the subclass's bases, per item and event.
    ``compiled``, a default never passed, is ``run_ready``'s (a local's test per call,
    interpreted, not a global's and a module attribute's look-up)."""
    now = sim.now
    sim.live_avg.set(now, sim.live)
    stages = sim.stages
    pools = sim.active_pools
    if compiled:
        for i in range(len(stages)):
            cython.cast(Stage, stages[i]).record(now)
        for i in range(len(pools)):
            cython.cast(PoolCore, pools[i]).record(now)
    else:
        for st in stages:
            st.record(now)
        for pl in pools:
            pl.record(now)
    return 0


@cython.cfunc
@cython.exceptval(-1)
@cython.boundscheck(False)  # k < len(gauges); n - 2 >= 0 where read
@cython.wraparound(False)
@cython.locals(sim=RunState, gauges=list, k=cython.Py_ssize_t, n=cython.Py_ssize_t,
               now=cython.double, v=cython.double, g=Gauge)
def read_gauges(sim) -> cython.int:
    """Read the gauges (interpreter.md §11) in the state the finished instant left: a value
    is kept with its time when it differs from the last one kept (``same_value``), and a
    second reading at one time replaces the first (dropped if it equals the one before).
    A gauge's points are ``g.n`` items of ``g.times`` and ``g.values`` (``gauges.Gauge``:
    lists interpreted, C arrays of doubles compiled, the same subscripts). Compiled, a
    gauge's node (``exprnodes.Expr``) is evaluated with a C call, and its value stays a C
    double: no float object is made per reading."""
    now = sim.now
    sim.cur = None
    na = sim.na
    gauges = sim.gauge_points
    for k in range(len(gauges)):
        if cython.compiled:  # unchecked: every one is a Gauge (Sim.__init__)
            g = cython.cast(Gauge, gauges[k])
        else:
            g = gauges[k]
        v = g.node.ev(na)
        n = g.n
        if n and g.times[n - 1] == now:
            if n >= 2 and same_value(g.values[n - 2], v):
                g.n = n - 1
            else:
                g.values[n - 1] = v
        elif n == 0 or not same_value(g.values[n - 1], v):
            if n == g.cap:
                g.grow()
            g.times[n] = now
            g.values[n] = v
            g.n = n + 1
    return 0


@cython.cfunc
@cython.exceptval(check=False)
@cython.locals(x=cython.double, y=cython.double)
def same_value(x, y) -> cython.bint:
    """IEEE total-order equality: -0 and +0 differ, NaN equals NaN."""
    if x == y:
        return x != 0 or math.copysign(1.0, x) == math.copysign(1.0, y)
    return x != x and y != y
