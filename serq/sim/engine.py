"""The discrete-event interpreter: state, the event loop and settling.

One ``Sim`` holds the whole run state. Its behaviour is split by concept over mixins:
``sessions.SessionOps`` (spawning, statements, ending), ``stages.StageOps`` (fifo, ps,
delay), ``flows.FlowOps`` (shared stages), ``pools.PoolOps`` (holds, admission, growth,
preemption, cache), ``step.StepOps`` (the continuous-batching engine). This module owns the
clock, the event heap, settling and the end of the run (interpreter.md §3–§4).

Events are tuples ``(time, seq, kind, x, y, z)`` on one heap: ``seq`` is the global
scheduling counter, so simultaneous events run in the order they were scheduled.
"""
from __future__ import annotations

import heapq
import math
from math import log as _log
from collections import deque

from serq.errors import SimulationError
from serq.ir import types as T
from serq.sim.fmt import display as show
from serq.sim import rng as R
from serq.sim.exprs import Context, ExprCompiler
from serq.sim.flows import FlowOps
from serq.sim.pools import PoolOps, PoolState
from serq.sim.sessions import SessionOps
from serq.sim.stages import StageOps, make_stage
from serq.sim.stats import TimeAvg
from serq.sim.step import StepOps

EV_WARMUP, EV_ARRIVE, EV_FINISH, EV_ITER, EV_LEASE = range(5)

SEED_XOR = {"arrival": 0, "workload": 0x9E3779B97F4A7C15, "session": 0x5851F42D4C957F2D,
            "evict": 0x2545F4914F6CDD1D, "trace": 0x6A09E667F3BCC908}
M64 = (1 << 64) - 1

# Guards where the reference hangs: that many events at one instant, or that many passes
# of one loop body at one instant, mean the clock can never move again.
INSTANT_EVENT_LIMIT = 1_000_000
# Programs with more pools or stages than this (arrays) get no generated code per member:
# the code would grow with the declared members, used or not (PoolOps.init_active_pools).
INLINE_LIMIT = 64
# Sessions spawned at one instant (`batch(n)`, `closed(n)`, `poisson(inf)` with an arrivals
# limit): each takes about a kilobyte, so more than this cannot be held in memory.
SESSIONS_AT_ONCE = 100_000_000


class Sim(SessionOps, StageOps, FlowOps, PoolOps, StepOps):
    def __init__(self, program: T.Program, trace=None, times=None):
        self.p = program
        self.defer_index = False  # see ref_index
        self.index_error = None
        # what an attribute reads where no session is (machine expressions, gauges): NaN
        self.na = [math.nan] * len(program.attrs)
        self.now = 0.0
        self.warm = program.warmup <= 0
        self.heap = []
        self.seq = 0
        self.ready = deque()
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
        self.events = 0
        self.limit = program.arrivals
        self.cur = None  # the session whose expressions are being evaluated
        self.ctx = Context()  # the context variables the moments set (see exprs.Context)
        # the observations made before the warm-up, per observation, kept only when an
        # observer asks for them (``Hooks.early_observations``: the claims' aggregates)
        self.pre_obs = None
        self.admit_budget = None
        self.hooks = None  # a hooks.HookBus when an observer is attached (serq.run(hooks=))
        # random streams
        seed = program.seed & M64
        self.rngs = {k: R.Rng((seed ^ x) & M64) for k, x in SEED_XOR.items()}
        self.u_arrival = self.rngs["arrival"].random_f64
        self.ex = ExprCompiler(self)
        # statistics
        self.live_avg = TimeAvg(0.0, 0.0)
        self.obs_names = list(program.observes)
        self.obs = [([], [], [], []) for _ in program.observes]  # samples, times, sessions, turns
        self.gauge_points = [([], []) for _ in program.gauges]
        self.gauge_fns = [self.ex.function(g.expr) for g in program.gauges]
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
        self.record, self.record_from, self.record_sync = make_record(self)
        # whether any expression but a step stage's cost reads the pre-iteration totals
        # (residents, decodes, kv_decode, kv_prefill): if none does, an iteration's plan
        # need not compute them (its cost sets them anew before it reads them)
        self.totals_read = bool(self.ex.ctx_used & {"Nres", "Ndec", "Kvb", "Kvp"})
        if not self.pools and not self.settle_stages and not self.shared_stage_set():
            self.settle = self.settle_plain

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

    # -- events ---------------------------------------------------------------------------
    def schedule(self, t, kind, x=None, y=None, z=None):
        heapq.heappush(self.heap, (t, self.seq, kind, x, y, z))
        self.seq += 1

    # -- the run --------------------------------------------------------------------------
    def start(self):
        p = self.p
        if p.warmup > 0:
            self.schedule(p.warmup, EV_WARMUP)
        arr = p.arrival
        t = type(arr)
        if self.replay is not None:
            self.schedule(self.replay[0], EV_ARRIVE)
        elif t is T.Poisson:
            self.check_poisson(arr.rate)
            self.schedule(0.0, EV_ARRIVE)
        elif t is T.Renewal:
            self.schedule(self.renewal_gap(), EV_ARRIVE)
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
        self.on_arrive = self.on_arrive_replay  # (the event loop reads it when it starts)

    def on_arrive_replay(self, x, y, z):
        i = self.replay_next + 1
        limit = self.limit
        if i < len(self.replay) and (limit is None or self.arrivals < limit - 1):
            self.schedule(self.replay[i], EV_ARRIVE)
        self.replay_next = i
        self.spawn()

    def renewal_gap(self):
        g = self.renewal_fn(self.na)
        if not (g > 0 and g != math.inf):
            self.fail(f"run: a renewal interarrival gap must be positive and finite, "
                      f"the gap expression gave {show(g)} at time {show(self.now)}")
        return g

    def next_gap(self):
        arr = self.p.arrival
        if type(arr) is T.Poisson:
            return R.poisson_gap(self.rngs["arrival"], arr.rate)
        return self.renewal_gap()

    def run(self):
        self.start()
        hooks = self.hooks
        if hooks is not None:
            hooks.start()
        make_loop(self)()  # the event loop (generated: see make_loop)
        p = self.p
        horizon = p.horizon
        limit = self.limit
        gauges = bool(self.gauge_fns)
        if gauges:
            self.read_gauges()
        self.record_sync()
        if limit is None:
            self.now = horizon
        else:
            if self.arrivals < limit or self.live > 0:
                self.now = horizon  # where these two errors are noticed
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

    def instant_fail(self, count=INSTANT_EVENT_LIMIT):
        self.fail(f"run: the clock cannot move past {show(self.now)}: "
                  f"{count} events happened at that instant (a "
                  f"loop of events that takes no time, such as a step stage of "
                  f"cost 0 whose hold preempts itself)")

    # -- event handlers -------------------------------------------------------------------
    def on_warmup(self, x, y, z):
        self.warm = True
        now = self.now
        self.live_avg.reset(now)
        for s in self.stages:
            s.reset_stats(now)
        for pl in self.pools:
            pl.reset_stats(now)
        self.record_from(now)  # the inline averages were all reset at now

    def on_arrive(self, x, y, z):
        limit = self.limit
        if limit is None or self.arrivals < limit - 1:
            arr = self.p.arrival
            if type(arr) is T.Poisson:
                # R.poisson_gap, inline
                g = -_log(1.0 - self.u_arrival())
                try:
                    gap = g / arr.rate
                except ZeroDivisionError:
                    gap = R._ieee_div(g, arr.rate)  # as poisson_gap does
            else:
                gap = self.renewal_gap()
            heapq.heappush(self.heap, (self.now + gap, self.seq, EV_ARRIVE, None, None, None))
            self.seq += 1
        self.spawn()

    def on_finish(self, stage, job, epoch):
        self.stages[stage].finish(job, epoch)

    def on_iter_end(self, stage, epoch, z):
        self.stages[stage].iter_end(epoch)

    def on_lease_end(self, sess, serial, lease_id):
        if sess.serial == serial and self.end_lease_by_id(sess, lease_id):
            self.admit_all()

    # -- settle (interpreter.md §4) ---------------------------------------------------------
    def settle(self):
        self.settle_core()
        self.record()

    def settle_core(self):
        """``settle`` but the statistics (the event loop records them itself)."""
        ready = self.ready
        pools = self.pools
        execute = self.execute
        on_demand = self.pools_on_demand
        while True:
            while ready:
                s = ready.popleft()
                if s.status == 0:
                    execute(s)
            if on_demand:
                self.visit_active_pools(True)
            else:
                for pl in pools:
                    if pl.growers:
                        pl.retry_growers()
                    if pl.queue and pl.admit_via is None:
                        pl.try_admit()
            if not ready:
                break
        heap = self.heap
        now = self.now
        pending_now = bool(heap) and heap[0][0] <= now
        for st in self.settle_stages:
            st.settle(pending_now)
        if self.flows_dirty:
            self.recompute_flows()

    def settle_plain(self):
        """``settle`` of a program without pools, settling stages or flows: only the ready
        queue and the statistics."""
        ready = self.ready
        if ready:
            execute = self.execute
            while ready:
                s = ready.popleft()
                if s.status == 0:
                    execute(s)
        self.record()

    def admit_all(self):
        if self.pools_on_demand:
            self.visit_active_pools(False)
            return
        for pl in self.pools:
            pl.retry_growers()
            pl.try_admit()

    def visit_active_pools(self, settling):
        """The settle's (or "admit all"'s) pass over the pools, in declaration order, over
        the active ones only (see ``PoolOps.init_active_pools``): a pool activated meanwhile
        is visited if it comes later in that order, as it would be in the full pass."""
        active = self.active_pools
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

    def record_active_pools(self, now):
        for pl in self.active_pools:
            pl.record(now)

    def record_stages(self, now):
        for st in self.stages:
            st.record(now)

    def record_all(self):
        """The time averages at the end of a settle (what ``make_record`` generates)."""
        now = self.now
        self.live_avg.set(now, self.live)
        for st in self.stages:
            st.record(now)
        for pl in self.active_pools:
            pl.record(now)

    # -- gauges (interpreter.md §11) ----------------------------------------------------------
    def read_gauges(self):
        now = self.now
        self.cur = None
        for f, (times, values) in zip(self.gauge_fns, self.gauge_points):
            v = f(self.na)
            if times and times[-1] == now:
                values[-1] = v
                if len(values) >= 2 and same_value(values[-2], v):
                    times.pop()
                    values.pop()
            elif not values or not same_value(values[-1], v):
                times.append(now)
                values.append(v)


def make_record(sim):
    """Generated ``record()``, ``record_from(t)`` and ``record_sync()``: ``record()`` is
    ``Sim.record_all`` with every ``TimeAvg.set`` of the common stage and pool kinds written
    inline, so a settle costs one call instead of one per statistic.

    Every inline average is set at every settle and reset all together at the warmup, so
    they all have the same ``last``: the time of the previous settle (``L``, moved by
    ``record_from`` at the warmup). ``record()`` computes ``now - L`` once for all of them,
    the same value each ``now - last`` gives, and leaves their ``last`` fields to
    ``record_sync()``, called when the run ends.
    """
    from serq.sim.pools import PoolState
    from serq.sim.stages import Stage
    ns = {"S": sim, "L": 0.0}
    avgs = []
    lines = ["def record():", "    global L", "    now = S.now", "    dt = now - L", "    L = now"]

    table = ns["ITEMS"] = []  # (name, value, lines before) or a call: what make_loop inlines

    def put(avg, value, pre=()):
        if avg.last != 0.0:
            raise AssertionError("a time average set before the run")
        name = f"T{len(ns)}"
        ns[name] = avg
        avgs.append(name)
        table.append((name, value, pre))
        lines.extend(f"    {line}" for line in pre)
        lines.append(f"    t = {name}; t.integral += t.value * dt; t.value = {value}")

    put(sim.live_avg, "S.live")
    if len(sim.stages) > INLINE_LIMIT:  # large arrays: one call, not code per member
        lines.append("    S.record_stages(now)")
        table.append("S.record_stages(now)")
    for i, st in enumerate(sim.stages if len(sim.stages) <= INLINE_LIMIT else ()):
        if type(st).record is Stage.record:
            ns[f"J{i}"] = st.jobs  # never replaced
            put(st.num_avg, "n", [f"n = len(J{i})"])
            put(st.busy_avg, "1 if n else 0")
        else:
            ns[f"ST{i}"] = st
            lines.append(f"    ST{i}.record(now)")
            table.append(f"ST{i}.record(now)")
    if sim.pools_on_demand:
        lines.append("    S.record_active_pools(now)")
        table.append("S.record_active_pools(now)")
    for i, pl in enumerate(sim.pools if not sim.pools_on_demand else ()):
        ns[f"P{i}"] = pl
        if type(pl).record is PoolState.record:
            put(pl.used_avg, f"P{i}.used")
            put(pl.cached_avg, f"P{i}.cached")
            put(pl.queue_avg, f"len(P{i}.queue)")
            put(pl.holders_avg, f"len(P{i}.holders)")
        else:
            lines.append(f"    P{i}.record(now)")
            table.append(f"P{i}.record(now)")
    lines += ["def record_from(t):", "    global L", "    L = t",
              "def record_sync():"] + [f"    {name}.last = L" for name in avgs] + ["    pass"]
    exec(compile("\n".join(lines) + "\n", "<serq record>", "exec"), ns)
    sim.record_ns = ns
    return ns["record"], ns["record_from"], ns["record_sync"]


LOOP = """
def loop():
    heap = S.heap
    pop = heapq.heappop
    horizon = S.p.horizon
    limit = S.limit
    limited = limit is not None
    gauges = bool(S.gauge_fns)
    handlers = (S.on_warmup, S.on_arrive, S.on_finish, S.on_iter_end, S.on_lease_end)
    finishers = [getattr(st, "finish", None) for st in S.stages]
    iter_ends = [getattr(st, "iter_end", None) for st in S.stages]
    on_arrive = S.on_arrive
    settle_core = S.settle_core
    ready = S.ready
    popleft = ready.popleft
    execute = S.execute
    same_instant = 0
    # every arrival of a limited run may come at one instant (`poisson(inf)`)
    instant_limit = INSTANT_EVENT_LIMIT + (limit if limited else 0)
    now = S.now
    events = S.events
    L = NS["L"]
{load}
    try:
        while True:  # not `while heap:` (see make_loop)
            if not heap or (limited and S.arrivals >= limit and S.live == 0):
                break
            ev = pop(heap)
            t = ev[0]
            if t > horizon:
                heapq.heappush(heap, ev)
                break
            if t > now:
                if gauges:
                    S.read_gauges()
                same_instant = 0
            else:
                same_instant += 1
                if same_instant > instant_limit:
                    S.instant_fail(instant_limit)
            S.now = now = t
            events += 1
{hook_before}
            kind = ev[2]
            if kind == 2:
                finishers[ev[3]](ev[4], ev[5])
            elif kind == 3:
                iter_ends[ev[3]](ev[4])
            elif kind == 1:
                on_arrive(None, None, None)
            else:
                handlers[kind](ev[3], ev[4], ev[5])
                if kind == 0:  # the warmup reset every average (not their values)
                    L = NS["L"]
{reload}
{settle}
            dt = now - L  # record(), inline, its averages in locals
            L = now
{record}
{hook_after}
    finally:
        S.events = events
        NS["L"] = L
{store}
"""

# settle_plain, with the executor's common step inline
SETTLE_PLAIN = """
            while ready:
                s = popleft()
                if s.status != 0:
                    continue
                S.cur = s
                frames = s.frames
                while s.status == 0:
                    if frames:
                        fr = frames[-1]
                        pc = fr[1]
                        ops = fr[0]
                        if pc < len(ops):
                            fr[1] = pc + 1
                            if ops[pc](s):
                                break
                            continue
                    execute(s)  # a frame or the session ends: the executor goes on
                    break"""


def make_loop(sim):
    """The event loop of ``Sim.run``, generated so that the end of each settle, its
    ``record()``, is inline, with each inline time average's integral and value in local
    variables while the loop runs (written back when it stops; the warmup, which resets
    them, reloads them). Where ``settle_plain`` applies, the settle itself is inline too,
    with the executor's common step. The same operations, in the same order, as calling
    ``settle()`` after each event.

    The loop is ``while True`` with a break, not ``while heap:``: CPython 3.11 specializes
    a function's bytecode after 8 calls or 8 unconditional backward jumps, and a ``while
    cond:`` loop ends in a conditional one, so a loop run once would stay unspecialized.
    """
    ns = sim.record_ns
    plain = sim.settle == sim.settle_plain
    load, reload, record, store = [], [], [], []
    for k, item in enumerate(ns["ITEMS"]):
        if type(item) is str:  # a record call of its own
            record.append(f"            {item}")
            continue
        name, value, pre = item
        load.append(f"    i{k} = {name}.integral; v{k} = {name}.value")
        reload.append(f"                    i{k} = {name}.integral")
        record += [f"            {line}" for line in pre]
        record.append(f"            i{k} += v{k} * dt; v{k} = {value}")
        store.append(f"        {name}.integral = i{k}; {name}.value = v{k}")
    settle = SETTLE_PLAIN.strip("\n") if plain else "            settle_core()"
    hooked = sim.hooks is not None  # the hook lines exist only in a hooked run's loop
    src = LOOP.format(hook_before="            hs = HB.before(ev)" if hooked else "",
                      hook_after="            HB.event(ev, hs)" if hooked else "",
load="\n".join(load) or "    pass",
                      reload="\n".join(reload) or "                    pass",
                      settle=settle,
                      record="\n".join(record) or "            pass",
                      store="\n".join(store) or "        pass")
    g = dict(ns)
    g.update(NS=ns, heapq=heapq, INSTANT_EVENT_LIMIT=INSTANT_EVENT_LIMIT, HB=sim.hooks)
    exec(compile(src, "<serq loop>", "exec"), g)
    return g["loop"]


def same_value(x, y):
    """IEEE total-order equality: -0 and +0 differ, NaN equals NaN."""
    if x == y:
        return x != 0 or math.copysign(1.0, x) == math.copysign(1.0, y)
    return x != x and y != y
