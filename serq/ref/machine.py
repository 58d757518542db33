"""The machine of ``Exec`` (formal.md §1.2): sessions, the event list and the zero-time
commands (``settle``). The step engine's iteration is in :mod:`serq.ref.engine`.

Written from formal.md §1.2 and interpreter.md §3–§6, §9; each rule is one method whose
docstring names its section. Deliberately naive: lists scanned in full, eviction one block at
a time, exact rationals throughout.
"""
from __future__ import annotations

import bisect
from fractions import Fraction

from serq.errors import SimulationError
from serq.ir import types as T
from serq.ref.engine import Engine
from serq.ref.expr import ONE, ZERO, Scope, ev, num
from serq.ref.fragment import check_program, refuse
from serq.ref.pools import Entry, PoolState

NEVER_ADMITTED = Fraction(2 ** 64)  # u64::MAX as an f64 (interpreter.md §8.4)
DEAD_KEY = 2 ** 62                  # dead cache entries' keys start here (§1)
STEP_GUARD = 1_000_000              # commands in one instant before "no progress" is reported


class HoldRec:
    """A hold record (formal.md §1.2 ``HoldRec``): the statement, per pool ``[pool, alloc,
    position]``, and whether a growing run advanced a position (``grown``)."""

    __slots__ = ("stmt", "pools", "grown")

    def __init__(self, stmt, pools):
        self.stmt, self.pools, self.grown = stmt, pools, False

    def on(self, pool):
        return next((r for r in self.pools if r[0] == pool), None)


class Sess:
    """A session (``Sess``): attributes, the frame stack, the holds, the status."""

    def __init__(self, serial, nattrs, script):
        self.serial = serial
        self.attrs = [ZERO] * nattrs
        self.frames = []          # [block, pc, kind] with kind "seq" | "loop" | "hold"
        self.holds = []           # HoldRec, innermost last
        self.status = "ready"     # ready | queued | delay | engine | ended
        self.token = None         # the event number of its delay, or its engine job
        self.job_stage = None     # the delay stage it waits at
        self.script, self.turn_ix = script, 0   # an explicit session's turns, or None
        self.adm_seq = NEVER_ADMITTED
        self.preempt_pos = {}     # pool -> position at its last preemption
        self.stuck = False


class Machine:
    """The whole state: clock, sessions, pools, the event list (``delays`` and ``iterEnd``
    in one list ordered by (time, event number)), the ready list and the counters."""

    def __init__(self, p: T.Program):
        self.p, self.engine_index, self.now = p, check_program(p), ZERO
        self.pools = [PoolState(d) for d in p.pools]
        self.sessions, self.ready = [], []
        self.events = []          # (time, evno, kind, payload), sorted
        self.evno = 0             # the event number shared by delay ends and iteration ends
        self.next_adm, self.next_rel, self.next_dead = 0, 0, DEAD_KEY
        self.popped = self.arrivals = self.ended = self.turns = self.steps = 0
        self.obs = [[] for _ in p.observes]    # (value, time, serial, turn_no)
        self.completed = [0] * len(p.stages)
        self.engine = Engine(self, p.stages[self.engine_index].kind)

    # -- the event list (formal.md §1.2 "Events and the step") --------------------------------
    def schedule(self, time, kind, payload):
        """Add an event with a fresh event number; return the number."""
        self.evno += 1
        bisect.insort(self.events, (time, self.evno, kind, payload), key=lambda e: e[:2])
        return self.evno

    def run(self):
        """``runW``: spawn the workload, settle, then process events with time <= horizon in
        (time, event number) order, settling after each."""
        self.spawn_all()
        self.settle()
        horizon = num(self.p.horizon)
        while self.events and self.events[0][0] <= horizon:
            time, evno, kind, payload = self.events.pop(0)
            self.now = time
            self.popped += 1
            if kind == "iter":
                self.engine.end_iteration(evno)
            elif payload.status == "delay" and payload.token == evno:
                self.completed[payload.job_stage] += 1
                self.make_ready(payload)
            self.settle()
        return horizon

    # -- sessions (interpreter.md §5) ---------------------------------------------------------
    def spawn_all(self):
        """Explicit sessions in order, or ``batch(n)`` sessions with no presets (§5.1)."""
        a = self.p.arrival
        for init in a.sessions if isinstance(a, T.Sessions) else ():
            self.spawn(init.attrs, list(init.turns))
        for _ in range(a.n if isinstance(a, T.Batch) else 0):
            self.spawn((), None)

    def spawn(self, presets, script):
        """§5.1: serial, attributes 0 but ``serial``, the init block, then the presets."""
        s = Sess(len(self.sessions), len(self.p.attrs), script)
        s.attrs[self.p.slot_serial] = Fraction(s.serial)
        self.sessions.append(s)
        self.arrivals += 1
        self.run_workload_block(s, self.p.init)
        for slot, value in presets:
            s.attrs[slot] = num(value)
        s.frames.append([self.p.session, 0, "seq"])
        self.ready.append(s)

    def run_workload_block(self, s, block):
        """The ``init`` and ``turn`` blocks: ``set`` and ``observe`` only, run at once."""
        for stmt in self.p.blocks[block]:
            if not isinstance(stmt, (T.Set, T.Observe)):
                refuse(f"the statement `{type(stmt).__name__.lower()}` in a workload block")
            self.command(s, stmt)

    def make_ready(self, s):
        s.status, s.token = "ready", None
        self.ready.append(s)

    def end_session(self, s):
        """§5.4: detach, release every hold from the innermost out, ended. Cache entries
        stay in the pools."""
        if s.status == "ended":
            return
        self.detach(s)
        while s.holds:
            self.release_hold(s, s.holds.pop())
        s.status, s.frames = "ended", []
        self.ended += 1

    def detach(self, s):
        """§9.11: leave the queue or the engine; a pending delay becomes stale."""
        if s.status == "queued":
            for pool in self.pools:
                pool.queue = [w for w in pool.queue if w[0] is not s]
        elif s.status == "engine":
            self.engine.remove_job(s.token)
        s.status, s.token = "ready", None

    # -- settle (formal.md §1.2 "settle"; interpreter.md §4) ----------------------------------
    def settle(self):
        """Repeat {drain the ready list; admit at every pool not served by the engine} until
        nothing is ready; then, only if the engine is idle and no other event is pending at
        this instant, start an iteration (the scheduler sees every event of the instant)."""
        self.steps = 0
        while True:
            self.drain()
            self.admit_all()
            if not self.ready:
                break
        if self.engine.running is None and self.engine.busy() and not (self.events and self.events[0][0] <= self.now):
            self.engine.start_iteration()

    def drain(self):
        """Run every ready session until it blocks (an engine admission, §8.8)."""
        while self.ready:
            s = self.ready.pop(0)
            if s.status == "ready":
                self.execute(s)

    def execute(self, s):
        """Run a ready session's commands until it blocks (interpreter.md §6)."""
        while s.status == "ready":
            self.steps += 1
            if self.steps > STEP_GUARD:
                raise SimulationError(f"time {float(self.now)}, session {s.serial}: no "
                                      f"progress after {STEP_GUARD} commands in one instant")
            if not s.frames:
                self.end_session(s)
                break
            frame = s.frames[-1]
            block = self.p.blocks[frame[0]]
            if frame[1] >= len(block):
                self.leave_frame(s, frame)
                continue
            stmt = block[frame[1]]
            frame[1] += 1
            if self.command(s, stmt) == "yield":
                break

    def leave_frame(self, s, frame):
        """The end of a block: a loop re-pushes its body (§1.2 ``loop``); leaving a hold body
        releases the hold, sets ``computed := 0`` and admits at once (§1.2, §9.6)."""
        if frame[2] == "loop":
            frame[1] = 0
            return
        s.frames.pop()
        if frame[2] == "hold":
            hold = s.holds.pop()
            self.release_hold(s, hold)
            for r in hold.pools:
                s.preempt_pos.pop(r[0], None)
            s.attrs[self.p.slot_computed] = ZERO
            self.admit_all()

    def command(self, s, stmt):
        """One command (formal.md §1.2; interpreter.md §6). Zero time. Returns "yield" when a
        zero-work run sends the session to the back of the ready list."""
        t = type(stmt)
        sc = Scope(self, s)
        if t is T.Set:
            s.attrs[stmt.slot] = ev(stmt.expr, sc)
        elif t is T.Observe:
            value = ev(stmt.expr, sc)
            turn = int(s.attrs[self.p.slot_turn])
            self.obs[stmt.index].append((value, self.now, s.serial, turn))
        elif t is T.Turn:
            self.turn(s)
        elif t is T.End:
            self.end_session(s)
        elif t is T.Loop:
            s.frames.append([stmt.body, 0, "loop"])
        elif t is T.Branch:
            g = ev(stmt.guard, sc)
            if g not in (ZERO, ONE):
                raise SimulationError(f"time {float(self.now)}, session {s.serial}: the branch "
                                      f"guard is {float(g)}, not 0 or 1")
            s.frames.append([stmt.then if g == ONE else stmt.other, 0, "seq"])
        elif t is T.Run:
            return self.run_stmt(s, stmt, sc)
        else:
            self.hold_stmt(s, stmt, front=False)

    def turn(self, s):
        """§5.2: ``turn_no += 1``; a scripted session copies its next turn's values and sets
        ``more`` to 1 while turns remain; then the turn block runs."""
        p = self.p
        s.attrs[p.slot_turn] += 1
        self.turns += 1
        if s.script is not None:
            if s.turn_ix < len(s.script):
                for slot, value in s.script[s.turn_ix]:
                    s.attrs[slot] = num(value)
                s.turn_ix += 1
            s.attrs[p.slot_more] = ONE if s.turn_ix < len(s.script) else ZERO
        self.run_workload_block(s, p.turn)

    def run_stmt(self, s, stmt, sc):
        """``run s w``: zero work yields to the back of the ready list; a delay ends at
        ``now + w`` with a fresh event number; on the engine it becomes a job (§1.2)."""
        w = max(ev(stmt.work, sc), ZERO)
        stage = stmt.stage.base
        is_engine = stage == self.engine_index
        if is_engine and stmt.mode == "Plain":
            refuse("a plain run on the step engine")
        if not is_engine and (stmt.mode != "Plain" or stmt.growing is not None):
            refuse("a prefill/decode or growing run on a delay stage")
        if w == 0:
            self.ready.append(s)
            return "yield"
        if is_engine:
            s.status = "engine"
            s.token = self.engine.add_job(s, stmt.mode, w, stmt.growing)
        else:
            s.status, s.job_stage = "delay", stage
            s.token = self.schedule(self.now + w, "delay", s)

    # -- holds (formal.md §1.2 "hold", "admit", "release"; interpreter.md §9) ----------------
    def header(self, s, stmt, budget_left=None):
        """The hold's units and needs per pool, evaluated now (``max(·, 0)``; the need is
        ``max(units, reserve)``, the IR's ``fits``)."""
        sc = Scope(self, s, budget_left=budget_left)
        out = []
        for hp in stmt.pools:
            units = max(ev(hp.units, sc), ZERO)
            need = units if hp.reserve is None else max(units, max(ev(hp.reserve, sc), ZERO))
            out.append((hp.ref.base, units, need))
        return out

    def hold_stmt(self, s, stmt, front):
        """``hold`` queues the session at its first pool (at the back; a preempted one at the
        front). A need larger than a pool's capacity is a rejection that ends it (§9.2)."""
        for pool, _, need in self.header(s, stmt):
            if self.pools[pool].up(need) > self.pools[pool].cap:
                self.pools[pool].rejected += 1
                self.end_session(s)
                return
        s.status, s.token = "queued", stmt
        first = self.pools[stmt.pools[0].ref.base]
        if front:
            first.queue.insert(0, [s, True])
        else:
            first.queue.append([s, False])

    def admit_all(self):
        """``admitAll``: for every pool not served by the engine, in declaration order, admit
        queue heads while they fit (FIFO: the first head that does not fit blocks the rest)."""
        for pool in self.pools:
            if pool.decl.admit_via is not None:
                continue
            while pool.queue and self.try_admit(pool, None):
                pass

    def try_admit(self, pool, budget_left):
        """Admit the head of ``pool``'s queue if every pool of its hold fits."""
        s = pool.queue[0][0]
        header = self.header(s, s.token, budget_left)
        if not all(self.pools[q].fits(need) for q, _, need in header):
            return False
        pool.queue.pop(0)
        self.admit(s, s.token, header)
        return True

    def admit(self, s, stmt, header):
        """``admit`` (§1.2, interpreter.md §9.4): with a ``cache`` clause the session's own
        entry is taken out, ``keep = roundDown(min(reuse, own))`` (all of it without
        ``reuse``) and the rest stays as a dead entry in its LRU place; then ``alloc =
        roundUp(units)``, room is made and the units taken. ``cached := max keep``,
        ``admSeq := nextAdm++``, and the body starts."""
        reuse = None if stmt.reuse is None else max(ev(stmt.reuse, Scope(self, s)), ZERO)
        recs, kept = [], ZERO
        for q, units, _ in header:
            pool = self.pools[q]
            keep = ZERO
            if stmt.cache is not None:
                ent = pool.entries.pop(s.serial, None)
                if ent is not None:
                    keep = ent.size
                    if reuse is not None and keep > pool.down(reuse):
                        keep = pool.down(reuse)
                        pool.entries[self.next_dead] = Entry(ent.size - keep, ent.last, ent.seq)
                        self.next_dead += 1
            alloc = pool.up(units)
            pool.allocate(s, alloc)
            pool.admissions += 1
            recs.append([q, alloc, keep])
            kept = max(kept, keep)
        s.adm_seq = Fraction(self.next_adm)
        self.next_adm += 1
        s.attrs[self.p.slot_cached] = kept
        s.holds.append(HoldRec(stmt, recs))
        s.frames.append([stmt.body, 0, "hold"])
        self.make_ready(s)

    def release_hold(self, s, hold):
        """``release`` (§1.2, interpreter.md §9.5) of every pool of a hold: ``used -= alloc``;
        with a cache clause ``keep = roundDown(min(cache, grown ? position : alloc))`` and,
        when positive, the session's entry becomes ``(keep, now, nextRel++)``."""
        for q, alloc, pos in hold.pools:
            pool = self.pools[q]
            pool.free(s, alloc)
            if hold.stmt.cache is None:
                continue
            computed = pos if hold.grown else alloc
            keep = pool.down(min(max(ev(hold.stmt.cache, Scope(self, s)), ZERO), computed))
            if keep > 0:
                pool.entries.pop(s.serial, None)
                pool.entries[s.serial] = Entry(keep, self.now, self.next_rel)
                self.next_rel += 1

    # -- preemption (formal.md §1.2 "Preemption victim"; interpreter.md §9.10) ---------------
    def victim(self, q):
        """On the engine's memory pool the holder that is an engine resident with the largest
        ``admSeq`` (vLLM ``running[-1]``); on another pool the last holder."""
        pool = self.pools[q]
        if q == self.engine.memory:
            residents = [h for h in pool.holders if h.status == "engine"]
            return max(residents, key=lambda h: h.adm_seq, default=None)
        return pool.holders[-1] if pool.holders else None

    def preempt(self, v, q):
        """Remove the victim's job, unwind its stack to its hold on ``q`` releasing every hold
        on the way, set ``computed`` to the position reached and queue the hold again at the
        front of its first pool. ``preempts++``."""
        pool = self.pools[q]
        depth = max(i for i, h in enumerate(v.holds) if h.on(q) is not None)
        computed = v.holds[depth].on(q)[2]
        last = v.preempt_pos.get(q)
        if last is not None and computed <= last and not v.stuck:
            v.stuck = True
            pool.stuck += 1
        v.preempt_pos[q] = computed
        v.attrs[self.p.slot_computed] = computed
        self.detach(v)
        while len(v.holds) > depth:
            self.release_hold(v, v.holds.pop())
            while v.frames.pop()[2] != "hold":
                pass
        parent = v.frames[-1]
        stmt = self.p.blocks[parent[0]][parent[1] - 1]
        pool.preemptions += 1
        self.hold_stmt(v, stmt, front=True)

    def grow(self, s, q, d):
        """Grow the session's innermost hold on ``q`` by ``d`` units rounded up to a block;
        while the pool cannot take it, preempt (§9.8). False if the grower itself was the
        victim."""
        rec = next(h.on(q) for h in reversed(s.holds) if h.on(q) is not None)
        pool = self.pools[q]
        need = pool.up(rec[1] + d) - rec[1]
        if need <= 0:
            return True
        while pool.used + need > pool.cap:
            v = self.victim(q)
            if v is None:
                refuse("a growth that stalls (no preemption victim)")
            self.engine.check_victim(v)
            self.preempt(v, q)
            if v is s:
                return False
        pool.make_room(need)
        pool.used += need
        rec[1] += need
        return True

    # -- reads (interpreter.md §13) -----------------------------------------------------------
    def read(self, fun, base, sc):
        """``used``, ``free``, ``holders``, ``queued``, ``cachedin`` of a pool; ``queue`` and
        ``budget_left`` of a stage (interpreter.md §13)."""
        if fun == "BudgetLeft":
            if base != self.engine_index:
                raise SimulationError("budget_left needs a step stage")
            return sc.budget_left if sc.budget_left is not None else self.engine.budget_left()
        if fun == "Queue":
            return Fraction(len(self.engine.residents) if base == self.engine_index else sum(
                1 for s in self.sessions if s.status == "delay" and s.job_stage == base))
        pool = self.pools[base]
        own = pool.entries.get(sc.sess.serial) if sc.sess is not None else None
        return {"Used": lambda: pool.used, "Free": lambda: pool.cap - pool.used,
                "Holders": lambda: Fraction(len(pool.holders)),
                "Queued": lambda: Fraction(len(pool.queue)),
                "CachedIn": lambda: ZERO if own is None else own.size}[fun]()
