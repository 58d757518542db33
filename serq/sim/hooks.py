"""Simulator hooks: an observer the simulator calls at every event and every iteration of a
step engine, for tools built on top of a run (the invariant monitors of formal.md §6.4, the
claims of §2.2, the plan export of batch-invariance.md §4.7).

Contract
--------
Pass an object to ``serq.run(program, hooks=obj)``. Subclass ``Hooks`` and override what you
need (every method here does nothing), or pass any object with all these methods.

* ``on_start(sim)``: once, after the initial spawn and settle (interpreter.md §3.2), before the
  first event.
* ``on_event(kind, time, serial, sim)``: once per popped event, after it was handled and the
  instant settled (§3.3 step 4), so ``sim`` is the state the event left. ``kind`` is one of
  ``EVENT_KINDS`` (``"arrive"``, ``"finish"``, ``"iteration_end"``, ``"lease_end"``,
  ``"warmup"``); ``serial`` is the session concerned (the one that arrived, the owner of the
  job that finished, the lease's holder), else None. Stale events are reported too: the
  number of calls equals the report's ``events``.
* ``on_iteration(it, sim)``: once per iteration of a step stage (the report's
  ``iterations``), when the batch is formed and its cost evaluated (§8.5), with an
  ``Iteration`` record; ``on_iteration_end(it, sim)`` when it ends (§8.6; the same record,
  ``finished`` filled). The last iteration may not end before the horizon.
* ``on_admit(serial, pool, alloc, hit, sim)``: a hold admitted on a pool (§9.4), once per
  pool of the hold; ``hit`` is the session's own cached prefix it keeps (the position it
  starts at; 0 without a ``cache`` clause).
* ``on_preempt(serial, pool, computed, sim)``: a session preempted on ``pool`` (§9.10),
  after it went back to the queue; ``computed`` is the position it had reached.
* ``on_evict(pool, need, before, evicted, sim)``: ``make_room`` evicted (§10): ``before`` is
  ``(used, cached, [(key, size, last, seq), ...])`` of the pool just before (entries in the
  pool's order), ``evicted`` is ``[(key, units), ...]``, per entry the units it lost, in
  the pool's entry order (for ``evict lru``, the order it evicts in); ``need`` the room
  asked for.
* ``on_end(sim)``: once, after the last event, before the report is built (not on a run
  error).
* ``on_attach(sim)``: once, when the run is set up, before anything happens (no session yet;
  ``sim.ex`` compiles expressions of the program's IR for the observer to read).
* ``on_session(serial, attrs, sim)``: a session started (spawned), after its ``init`` block
  and any preset attributes (``attrs``, its attribute list, live), before it runs.
* ``on_batch(stage, chunk, sim)``: an iteration of step stage ``stage`` (index) has formed
  its batch and read its cost, and is not running yet: ``sim``'s context is the cost's
  (``sim.ctx.ntok`` …; ``busy`` of the stage is 0), ``chunk`` the value planned for it. Called
  just before ``on_iteration``'s record is made; the claims over iterations read here.
* An observer whose attribute ``early_observations`` is true gets the observations made
  before the warm-up kept in ``sim.pre_obs[k]`` (values, in order; the report drops them).

``sim`` is the live ``serq.sim.engine.Sim``: read it, never change it. Pools are
``sim.pools[i]`` (``used``, ``cached``, ``entries``, ``holders``, ``queue``), stages
``sim.stages[i]`` (a step stage has ``residents``), sessions ``sim.alive`` (serial ->
session, in arrival order: a new dict at each read) or ``sim.live_session(serial)``. An
exception a hook raises stops the run and propagates from ``serq.run``.

Cost: with no hooks, each site is one ``is None`` test on a path that is already not the
hottest (an iteration, an admission, an eviction, a preemption); the event loop tests it
twice per event. Nothing is allocated for the hooks when they are off.
"""
from __future__ import annotations

from serq.sim.scheduler import EV_ARRIVE, EV_FINISH, EV_LEASE, EventKind

EVENT_KINDS = tuple(k.name.lower() for k in EventKind)  # indexed by the kind's value


class Hooks:
    """The observer interface: every method does nothing. See the module docstring."""

    def on_start(self, sim):
        pass

    def on_event(self, kind, time, serial, sim):
        pass

    def on_iteration(self, it, sim):
        pass

    def on_iteration_end(self, it, sim):
        pass

    def on_admit(self, serial, pool, alloc, hit, sim):
        pass

    def on_preempt(self, serial, pool, computed, sim):
        pass

    def on_evict(self, pool, need, before, evicted, sim):
        pass

    def on_end(self, sim):
        pass

    def on_attach(self, sim):
        pass

    def on_session(self, serial, attrs, sim):
        pass

    def on_batch(self, stage, chunk, sim):
        pass

    early_observations = False


class Slice:
    """One resident's share of an iteration: ``tokens`` of job ``job`` (owned by session
    ``serial``, in its turn ``turn``; both None for an ownerless job), starting ``start``
    tokens into the job; ``decode`` for a decode job, else a prefill (or plain) one.
    ``kv_start`` is the owner's position in the job's ``growing`` pool before the slice
    (prefix hits included), None for a job that grows nothing."""
    __slots__ = ("serial", "turn", "job", "start", "tokens", "decode", "kv_start")

    def __init__(self, serial, turn, job, start, tokens, decode, kv_start):
        self.serial = serial
        self.turn = turn
        self.job = job
        self.start = start
        self.tokens = tokens
        self.decode = decode
        self.kv_start = kv_start

    @property
    def request(self):
        """The request this slice serves: (session serial, turn)."""
        return (self.serial, self.turn)

    def __repr__(self):
        mode = "decode" if self.decode else "prefill"
        return (f"Slice(serial={self.serial}, turn={self.turn}, job={self.job}, "
                f"start={self.start}, tokens={self.tokens}, {mode}, kv_start={self.kv_start})")


class Iteration:
    """An iteration of step stage ``stage`` (index; ``stage_name`` its name), the
    ``number``-th of that stage (1-based), from ``start`` to ``end`` (``now + cost``;
    ``ended`` once it has).

    * ``budget``, ``chunk``: the values planned for it (§8.2); ``cost``: its cost (§8.5).
    * ``slices``: the final assignment, in serving order (``Slice``).
    * ``tokens``, ``prefilled``, ``decoders``: its totals, as its cost read them.
    * ``residents``: the residents when it was planned, as ``(job, serial, decode, work,
      want)`` in the residents list's order (admission order), ``want`` being what each
      could take this iteration (§8.3: a decode ``min(1, work)``, a prefill ``min(work,
      chunk)`` or ``work``).
    * ``demand``: the sum of those wants (the work residents wanted); ``demand_uncapped``
      the same without the chunk cap (a decode 1, a prefill its whole remaining work:
      formal.md §2.2's ``p_i + 1{p_i=0}``).
    * ``served_before``: the tokens of this stage's earlier iterations; ``arrived``: the
      sessions started by its start (spawned so far).
    * ``admitted`` ``[(serial, pool)]``, ``prefix_hits`` ``[(serial, pool, units)]``,
      ``preempted`` ``[(serial, pool)]``, ``evictions`` ``[(pool, key, units)]``: what
      happened in the pools since the previous iteration of any step stage was formed, up
      to this one's formation (so the admissions that fed this batch and the preemptions its
      growth caused); ``key`` is the owner's serial or a dead entry's key (>= 2**62).
      ``admitted_during`` and ``preempted_during`` count those that happened while this
      batch was being formed (an admission by the engine, a preemption its growth caused).
    * ``finished``: ``[(serial, job)]`` of the jobs it finished, filled when it ends.
    """
    __slots__ = ("stage", "stage_name", "number", "start", "end", "ended", "budget", "chunk",
                 "cost", "slices", "tokens", "prefilled", "decoders", "residents", "demand",
                 "demand_uncapped", "served_before", "arrived", "admitted", "prefix_hits",
                 "preempted", "evictions", "finished", "admitted_during", "preempted_during")

    def __repr__(self):
        return (f"Iteration(stage={self.stage_name!r}, number={self.number}, start={self.start},"
                f" end={self.end}, tokens={self.tokens}, slices={len(self.slices)}, "
                f"demand={self.demand})")


class Tee(Hooks):
    """Several observers as one: each call goes to each, in order."""

    def __init__(self, *observers):
        self.observers = observers
        self.early_observations = any(getattr(o, "early_observations", False)
                                      for o in observers)
        for name in ("on_start", "on_event", "on_iteration", "on_iteration_end", "on_admit",
                     "on_preempt", "on_evict", "on_end", "on_attach", "on_session",
                     "on_batch"):
            calls = [f for f in (getattr(o, name, None) for o in observers) if f is not None]
            setattr(self, name, self._fan(calls))

    @staticmethod
    def _fan(calls):
        def call(*args):
            for c in calls:
                c(*args)
        return call


class HookBus:
    """What the simulator calls (``Sim.hooks``): turns its internal state into the calls and
    records of the contract above, and forwards them to the observer."""

    def __init__(self, sim, observer):
        self.sim = sim
        self.obs = observer
        if getattr(observer, "early_observations", False) and sim.p.warmup > 0:
            sim.pre_obs = [[] for _ in sim.p.observes]
        self.first_work = {}  # job id -> its work when first seen (the start of its slices)
        self.served = {}      # stage index -> tokens of its iterations so far
        self.pre = {}         # stage index -> (budget, chunk, residents) being planned
        self.log_admitted = []
        self.log_hits = []
        self.log_preempted = []
        self.log_evictions = []
        self.n_admitted = 0  # admissions (per pool) so far; preemptions so far
        self.n_preempted = 0

    # -- events ------------------------------------------------------------------------------
    def before(self, kind, x, y):
        """The session an event of ``kind`` (with fields ``x, y``: scheduler.EventKind)
        concerns, read before it is handled (a finished job is gone after)."""
        sim = self.sim
        if kind == EV_ARRIVE:
            return sim.next_serial
        if kind == EV_FINISH:
            j = x.finishing(y)  # (x is the stage)
            return j.owner.serial if j is not None and j.owner is not None else None
        if kind == EV_LEASE:
            return x.serial
        return None

    def event(self, kind, time, serial):
        self.obs.on_event(EVENT_KINDS[kind], time, serial, self.sim)

    # -- iterations -----------------------------------------------------------------------------
    def iter_begin(self, stage, budget, chunk):
        first = self.first_work
        wants = stage.wants
        res = []
        for j in stage.residents:
            if j.id not in first:
                first[j.id] = j.work
            o = j.owner
            res.append((j.id, o.serial if o is not None else None, j.decode, j.work,
                        wants(j, chunk)))
        self.pre[stage.index] = (budget, chunk, res, self.n_admitted, self.n_preempted)

    def iter_launch(self, stage, assign, cost, sums):
        sim = self.sim
        budget, chunk, res, n_admitted, n_preempted = self.pre.pop(stage.index)
        it = Iteration()
        it.stage = stage.index
        it.stage_name = stage.decl.name
        it.number = stage.iterations
        it.start = sim.now
        it.end = sim.now + cost
        it.ended = False
        it.budget = budget
        it.chunk = chunk
        it.cost = cost
        it.tokens, it.decoders, it.prefilled = sums[0], sums[1], sums[2]
        it.residents = res
        demand = 0.0
        uncapped = 0.0
        for _, _, decode, work, want in res:
            demand += want
            uncapped += (1.0 if work >= 1.0 else work) if decode else work
        it.demand = demand
        it.demand_uncapped = uncapped
        it.served_before = self.served.get(stage.index, 0.0)
        self.served[stage.index] = it.served_before + sums[0]
        it.arrived = sim.next_serial
        it.slices = [self.slice(j, tokens) for j, tokens in assign]
        it.admitted, self.log_admitted = self.log_admitted, []
        it.prefix_hits, self.log_hits = self.log_hits, []
        it.preempted, self.log_preempted = self.log_preempted, []
        it.evictions, self.log_evictions = self.log_evictions, []
        it.finished = []
        it.admitted_during = self.n_admitted - n_admitted
        it.preempted_during = self.n_preempted - n_preempted
        stage.hook_iteration = it
        self.obs.on_iteration(it, sim)

    def slice(self, j, tokens):
        work0 = self.first_work.setdefault(j.id, j.work)
        o = j.owner
        kv = None
        if j.growing is not None and o is not None:
            h = self.sim.innermost(o, j.growing)
            if h is not None:
                kv = h.entry(j.growing).pos - tokens
        serial = turn = None
        if o is not None:
            serial = o.serial
            turn = int(o.attrs[self.sim.p.slot_turn])
        return Slice(serial, turn, j.id, work0 - j.work, tokens, j.decode, kv)

    def iter_end(self, stage, done):
        it = stage.hook_iteration
        if it is None:
            return
        stage.hook_iteration = None
        it.ended = True
        first = self.first_work
        for j in done:
            it.finished.append((j.owner.serial if j.owner is not None else None, j.id))
            first.pop(j.id, None)
        self.obs.on_iteration_end(it, self.sim)

    # -- pools ----------------------------------------------------------------------------------
    def admit(self, s, entries):
        sim = self.sim
        for e in entries:
            self.n_admitted += 1
            self.log_admitted.append((s.serial, e.pool))
            if e.pos > 0:
                self.log_hits.append((s.serial, e.pool, e.pos))
            self.obs.on_admit(s.serial, e.pool, e.alloc, e.pos, sim)

    def preempt(self, s, pool, computed):
        self.n_preempted += 1
        self.log_preempted.append((s.serial, pool))
        self.obs.on_preempt(s.serial, pool, computed, self.sim)

    def evict_begin(self, pl):
        return (pl.used, pl.cached,
                [(e.key, e.size, e.last, e.seq) for e in pl.entries.values()])

    def evict_end(self, pl, need, before):
        now = pl.entries
        evicted = []
        for key, size, _, _ in before[2]:
            e = now.get(key)
            left = e.size if e is not None else 0.0
            if left < size:
                evicted.append((key, size - left))
                self.log_evictions.append((pl.index, key, size - left))
        self.obs.on_evict(pl.index, need, before, evicted, self.sim)

    def attach(self):
        if hasattr(self.obs, "on_attach"):
            self.obs.on_attach(self.sim)

    def session(self, s):
        if hasattr(self.obs, "on_session"):
            self.obs.on_session(s.serial, s.attrs, self.sim)

    def batch(self, stage, chunk):
        if hasattr(self.obs, "on_batch"):
            self.obs.on_batch(stage.index, chunk, self.sim)

    def start(self):
        self.obs.on_start(self.sim)

    def end(self):
        self.obs.on_end(self.sim)
