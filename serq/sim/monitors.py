"""Runtime invariant monitors (formal.md §6.4): the pathwise theorems of the Lean model,
asserted at every event and every iteration of a run, built on the simulator hooks.

``serq.run(program, check=True)`` (CLI ``serq run FILE --check``) attaches ``Monitors``; a
broken invariant stops the run with a ``SimulationError`` naming the invariant, the time, the
session and the state that broke it (``err.invariant``, ``err.time``, ``err.session``). What
it establishes is what §6.8 says: the invariants *held on every executed event* of the runs
made with it, nothing about runs not made.

The invariants (each a method below, named by ``INVARIANTS``):

* ``pool accounting`` (Core ``Step.invariant``, §1.1): after every event, per pool,
  ``used = Σ`` the allocations of its holds and leases, the holders are exactly the
  sessions holding it, ``cached = Σ`` entry sizes, every entry positive, and
  ``used + cached <= cap`` (a spill tier may exceed its cap: interpreter.md §10).
* ``eviction keeps used`` and ``eviction makes room`` (``makeRoom_room``): ``make_room``
  never changes ``used``, and ends with the room asked for or an empty cache.
* ``fast eviction`` (``makeRoomFast_eq``): on an ``evict lru`` pool without spill, what the
  simulator's eviction (its in-order loop, or its closed form for large entries) left equals
  what evicting one block at a time from the least recently released entry leaves,
  recomputed here from the entries before (up to ``PIECES_CHECKED`` blocks per request).
* ``greedy fill`` (``assign_eq_fillIter``, ``fillAmounts_*``, §1.4): an iteration served in
  admission order with no admission or preemption while it was formed and no stalled
  grower is exactly the greedy fill of the budget over the residents' wants; under
  ``serve by`` keys, the same conditions give no slice above its want, every slice but the
  last its whole want, and ``Σ tokens = min(budget, demand)`` (under ``serve only``, the
  per-slice checks only: the monitors do not evaluate which residents it admits).
* ``decode-first shape`` (``serve_preserves_shape``, §1.3): served in admission order with no
  chunk cap, if the residents were all decodes before all prefills at an iteration, and the
  next iteration's residents came from it by the greedy step (same sessions in the same
  order, prefills finished into decodes, new prefills at the end), they still are.
* ``rate bound`` (``served_rate``, §1.5): on a step stage with a constant budget ``R`` and a
  cost that is at least a constant ``T > 0`` whatever the batch (read off the IR),
  ``served · T <= R · start`` at every iteration start.
* ``jobs from runs`` (``reach_sub``, §1.5): every job of every stage comes from a ``run`` of
  the program on that stage in that mode (or from a spill transfer), and an owned job is
  what its session waits for.
"""
from __future__ import annotations

import math

from serq.errors import SimulationError
from serq.ir import types as T
from serq.sim.fmt import display
from serq.sim.hooks import Hooks
from serq.sim.states import GROWING, IN_STAGE

INVARIANTS = ("pool accounting", "eviction keeps used", "eviction makes room",
              "fast eviction", "greedy fill", "decode-first shape", "rate bound",
              "jobs from runs")
EPS = 1e-9
# the one-block-at-a-time eviction is recomputed up to this many blocks per room request;
# past it (holds of millions of blocks) the comparison is skipped and counted as such
PIECES_CHECKED = 1_000_000
# cost variables, all >= 0 whatever the batch (interpreter.md §8.5)
NONNEG_CTX = {"Ntok", "Ndec", "Npre", "Nres", "Kvb", "Kvp", "Attn"}


def close(a, b, scale=1.0):
    """Equal up to the rounding of sums taken in a different order."""
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b), scale)


def greedy_fill(wants, budget):
    """``fillIter`` (formal.md §1.4): each want in order takes ``min(want, left)``; zeros
    dropped; stops when the budget is spent. The float steps of interpreter.md §8.3."""
    left = budget
    out = []
    for key, want in wants:
        t = want if (want <= left or left != left) else left
        if not t > 0:
            continue
        out.append((key, t))
        left -= t
        if left <= 0:
            break
    return out


def want_of(decode, work, chunk):
    """``wantOf`` (§1.4): a decode 1 (or what is left), a prefill its work up to the chunk."""
    if decode:
        return 1.0 if work >= 1.0 else work
    if chunk > 0:
        return chunk if chunk < work else work
    return work


def lower_bound(e):
    """A constant the expression is at least whatever the cost variables (all >= 0) are,
    or None when this simple reading cannot tell (only constants, those variables, +, *,
    max and min are read)."""
    t = type(e)
    if t is T.Num:
        return e.value
    if t is T.Ctx:
        return 0.0 if e.var in NONNEG_CTX else None
    if t is T.Binary and e.op in ("Add", "Mul"):
        a, b = lower_bound(e.left), lower_bound(e.right)
        if a is None or b is None or a < 0 or b < 0:
            return None
        return a + b if e.op == "Add" else a * b
    if t is T.Call and e.fun in ("Max", "Min") and e.args:
        bounds = [lower_bound(a.expr) if type(a) is T.ArgExpr else None for a in e.args]
        if any(b is None for b in bounds):
            return max((b for b in bounds if b is not None), default=None) \
                if e.fun == "Max" else None
        return max(bounds) if e.fun == "Max" else min(bounds)
    return None


def run_table(p):
    """``(stage, mode, growing pool)`` of every job a ``run`` of the program can make, and
    the stages a flow (``also``) or a spill transfer can put a plain ownerless job on."""
    table = set()
    flows = set()
    for block in p.blocks:
        for st in block:
            if type(st) is not T.Run:
                continue
            members = members_of(st.stage)
            grows = members_of(st.growing) if st.growing is not None else [None]
            for m in members:
                for g in grows:
                    table.add((m, st.mode, g))
            if st.also:
                for r in (st.stage,) + tuple(st.also):
                    flows.update(members_of(r))
    spills = {pl.spill.via for pl in p.pools if pl.spill is not None}
    return table, flows, spills


def members_of(ref):
    return list(range(ref.base, ref.base + ref.count)) if ref.index is not None else [ref.base]


class Monitors(Hooks):
    """The monitors of the module docstring, as a ``Hooks`` observer."""

    def __init__(self, program):
        self.p = program
        self.runs, self.flow_stages, self.spill_stages = run_table(program)
        self.tiers = {pl.spill.to for pl in program.pools if pl.spill is not None}
        self.rates = {}  # step stage -> (R, T) where the rate invariant applies
        for i, st in enumerate(program.stages):
            k = st.kind
            if type(k) is T.Step and type(k.budget) is T.Num and \
                    0 < k.budget.value < math.inf:
                c = lower_bound(k.cost)
                if c is not None and c > 0:
                    self.rates[i] = (k.budget.value, c)
        # step stages served in admission order, read off the IR (not the simulator's state,
        # which a bug could have changed): the exact fill and the shape apply to those
        # `serve only (e)` (IR 11) serves only the residents e admits: the fill is then over
        # those, which the monitors do not evaluate (only the per-slice checks apply)
        self.restricted = {i for i, st in enumerate(program.stages)
                           if type(st.kind) is T.Step and getattr(st.kind, "only", None)
                           is not None}
        self.admission_order = {i for i, st in enumerate(program.stages)
                                if type(st.kind) is T.Step and type(st.kind.serve) is T.ServeBy
                                and not st.kind.serve.keys} - self.restricted
        self.exclusive = {i for i, st in enumerate(program.stages)
                          if type(st.kind) is T.Step
                          and type(st.kind.serve) is T.ServeExclusivePrefill}
        self.shape = {}  # step stage -> its previous iteration, for the shape invariant
        self.events = 0
        self.iterations = 0
        self.evictions = 0
        self.evictions_unchecked = 0  # too many blocks to recompute one at a time
        self.fills = 0      # iterations checked against the exact greedy fill
        self.shapes = 0     # iterations where the shape premise held and was checked
        self.rate_checks = 0

    # -- failing ------------------------------------------------------------------------------
    def broken(self, sim, name, serial, state):
        who = f", session {serial}" if serial is not None else ""
        err = SimulationError(f"check: invariant `{name}` broken at time {display(sim.now)}"
                              f"{who}: {state}")
        err.time = sim.now
        err.session = serial
        err.statement = None
        err.invariant = name
        raise err

    # -- hooks --------------------------------------------------------------------------------
    def on_start(self, sim):
        self.check_state(sim)

    def on_event(self, kind, time, serial, sim):
        self.events += 1
        self.check_state(sim)

    def on_end(self, sim):
        self.check_state(sim)

    def on_iteration(self, it, sim):
        self.iterations += 1
        stage = sim.stages[it.stage]
        self.check_fill(sim, stage, it)
        self.check_shape(sim, stage, it)
        rate = self.rates.get(it.stage)
        if rate is not None:
            self.check_rate(sim, it, *rate)

    def on_evict(self, pool, need, before, evicted, sim):
        self.evictions += 1
        pl = sim.pools[pool]
        if pl.used != before[0]:
            self.broken(sim, "eviction keeps used", None,
                        f"pool `{pl.decl.name}`: used was {display(before[0])} before "
                        f"evicting and is {display(pl.used)} after")
        if pl.spill is None and pl.entries and pl.used + pl.cached + need > pl.cap + EPS:
            self.broken(sim, "eviction makes room", None,
                        f"pool `{pl.decl.name}`: asked for {display(need)} with used "
                        f"{display(pl.used)}, cached {display(pl.cached)}, cap "
                        f"{display(pl.cap)} and {len(pl.entries)} entries left")
        if pl.evict_keys is None and pl.spill is None:
            self.check_fast_eviction(sim, pl, need, before)

    # -- the pools ------------------------------------------------------------------------------
    def check_state(self, sim):
        for pl in sim.pools:
            self.check_pool(sim, pl)
        self.check_jobs(sim)

    def check_pool(self, sim, pl):
        name = pl.decl.name
        held = 0.0
        holders = set()
        for s in sim.alive.values():
            mine = 0.0
            has = False
            for h in s.holds:
                for e in h.entries:
                    if e.pool == pl.index:
                        mine += e.alloc
                        has = True
            for ls in s.leases:
                if ls.pool == pl.index:
                    mine += ls.alloc
                    has = True
            if has:
                held += mine
                holders.add(s.serial)
        scale = pl.cap if pl.cap != math.inf else held
        if not close(pl.used, held, scale):
            self.broken(sim, "pool accounting", None,
                        f"pool `{name}`: used {display(pl.used)} but its holds and leases "
                        f"allocate {display(held)}")
        listed = {s.serial for s in pl.holders}
        if listed != holders:
            extra = sorted(listed - holders)
            missing = sorted(holders - listed)
            serial = (extra or missing)[0]
            self.broken(sim, "pool accounting", serial,
                        f"pool `{name}`: holders listed but holding nothing {extra}, holding "
                        f"but not listed {missing}")
        total = 0.0
        for e in pl.entries.values():
            if not e.size > EPS:
                self.broken(sim, "pool accounting", None,
                            f"pool `{name}`: cache entry {e.key} has size {display(e.size)}")
            total += e.size
        if not close(pl.cached, total, scale):
            self.broken(sim, "pool accounting", None,
                        f"pool `{name}`: cached {display(pl.cached)} but its entries hold "
                        f"{display(total)}")
        if pl.index not in self.tiers and pl.used + pl.cached > pl.cap + EPS * max(1.0, scale):
            self.broken(sim, "pool accounting", None,
                        f"pool `{name}`: used {display(pl.used)} + cached "
                        f"{display(pl.cached)} exceeds its cap {display(pl.cap)}")

    def check_fast_eviction(self, sim, pl, need, before):
        """Evict one block at a time from the least (release time, release number) entry,
        starting from ``before``; compare with what the simulator left."""
        used, cached, entries = before
        sizes = {key: size for key, size, _, _ in entries}
        order = sorted(entries, key=lambda e: (e[2], e[3]))
        cap = pl.cap + EPS
        k = 0
        pieces = 0
        while used + cached + need > cap and k < len(order):
            pieces += 1
            if pieces > PIECES_CHECKED:
                self.evictions_unchecked += 1
                return
            key = order[k][0]
            size = sizes[key]
            piece = pl.block if pl.block is not None else size
            if piece > size:
                piece = size
            size -= piece
            cached -= piece
            if size <= EPS:
                del sizes[key]
                k += 1
            else:
                sizes[key] = size
        got = {key: e.size for key, e in pl.entries.items()}
        if got != sizes or not close(cached, pl.cached, pl.cap):
            diff = sorted(set(got.items()) ^ set(sizes.items()))[:4]
            self.broken(sim, "fast eviction", None,
                        f"pool `{pl.decl.name}`: evicting {display(need)} left the entries "
                        f"{_entries(got)}, one block at a time from the least recently "
                        f"released leaves {_entries(sizes)} (differing: {diff})")

    # -- the step engine ------------------------------------------------------------------------
    def check_fill(self, sim, stage, it):
        if it.stage in self.exclusive or it.admitted_during or it.preempted_during:
            return
        for job, serial, _, _, _ in it.residents:
            j = stage.jobs.get(job)
            if j is None or (j.owner is not None and j.owner.status == GROWING):
                return  # a stalled grower gets nothing: outside the fill theorem
        wants = [(job, want_of(decode, work, it.chunk))
                 for job, _, decode, work, _ in it.residents]
        got = [(s.job, s.tokens) for s in it.slices]
        if it.stage in self.admission_order:
            want = greedy_fill(wants, it.budget)
            if got != want:
                self.broken(sim, "greedy fill", _first_serial(it),
                            f"stage `{it.stage_name}` iteration {it.number}: budget "
                            f"{display(it.budget)}, wants {_pairs(wants)} in admission "
                            f"order; the greedy fill is {_pairs(want)}, the batch was "
                            f"{_pairs(got)}")
            self.fills += 1
            return
        wanted = dict(wants)
        for k, (job, tokens) in enumerate(got):
            w = wanted.get(job)
            if w is None or tokens > w or (k < len(got) - 1 and tokens != w):
                self.broken(sim, "greedy fill", _first_serial(it),
                            f"stage `{it.stage_name}` iteration {it.number}: job {job} got "
                            f"{display(tokens)} of its want {display(w)} at place {k} of "
                            f"{len(got)} in the serving order {_pairs(got)}")
        if it.stage in self.restricted:
            return
        demand = sum(w for _, w in wants)
        total = sum(t for _, t in got)
        if it.budget == it.budget and not close(total, min(it.budget, demand), demand):
            self.broken(sim, "greedy fill", _first_serial(it),
                        f"stage `{it.stage_name}` iteration {it.number}: served "
                        f"{display(total)} tokens, min(budget {display(it.budget)}, demand "
                        f"{display(demand)}) wanted")

    def check_shape(self, sim, stage, it):
        """``serve_preserves_shape`` stepwise: premise at the previous iteration, premise
        between the two, conclusion now."""
        if it.stage not in self.admission_order:
            return
        cur = [(serial, job, decode) for job, serial, decode, _, _ in it.residents]
        prev = self.shape.get(it.stage)
        capped = it.chunk > 0
        clean = not (it.admitted_during or it.preempted_during) and not any(
            j.owner is not None and j.owner.status == GROWING
            for j in (stage.jobs.get(job) for _, job, _ in cur) if j is not None)
        self.shape[it.stage] = (cur, capped, clean, _shaped(cur))
        if prev is None:
            return
        before, was_capped, was_clean, was_shaped = prev
        if was_capped or not was_clean or not was_shaped or not _greedy_successor(before, cur):
            return
        self.shapes += 1
        if not _shaped(cur):
            bad = next(serial for k, (serial, _, decode) in enumerate(cur)
                       if decode and any(not d for _, _, d in cur[:k]))
            self.broken(sim, "decode-first shape", bad,
                        f"stage `{it.stage_name}` iteration {it.number}: residents (session,"
                        f" decode) {[(s, d) for s, _, d in cur]} came by a greedy step from "
                        f"{[(s, d) for s, _, d in before]}, which had all decodes first")

    def check_rate(self, sim, it, rate, period):
        self.rate_checks += 1
        lhs = it.served_before * period
        rhs = rate * it.start
        if lhs > rhs + 1e-9 * max(1.0, lhs, rhs):
            self.broken(sim, "rate bound", _first_serial(it),
                        f"stage `{it.stage_name}`: served {display(it.served_before)} tokens "
                        f"before the iteration starting at {display(it.start)}, but with "
                        f"budget R = {display(rate)} and every iteration costing at least "
                        f"T = {display(period)}, served * T <= R * start must hold "
                        f"({display(lhs)} > {display(rhs)})")

    # -- jobs -----------------------------------------------------------------------------------
    def check_jobs(self, sim):
        runs = self.runs
        for st in sim.stages:
            i = st.index
            for j in st.listed():
                o = j.owner
                if o is None:
                    if j.mode == "Plain" and j.growing is None and (
                            i in self.spill_stages or i in self.flow_stages):
                        continue
                    self.broken(sim, "jobs from runs", None,
                                f"stage `{st.decl.name}` has an ownerless job {j.id} "
                                f"({j.mode}) that no spill or flow makes")
                if (i, j.mode, j.growing) not in runs and not (
                        i in self.flow_stages and j.mode == "Plain"):
                    self.broken(sim, "jobs from runs", o.serial,
                                f"stage `{st.decl.name}` has job {j.id} ({j.mode}, growing "
                                f"{j.growing}) that no `run` of the program makes")
                if st.is_step and (o.job is not j or o.stage is not st
                                   or o.status not in (IN_STAGE, GROWING)):
                    self.broken(sim, "jobs from runs", o.serial,
                                f"stage `{st.decl.name}` has job {j.id} of session "
                                f"{o.serial}, which is not waiting for it (status "
                                f"{o.status})")

    def summary(self):
        """What was checked: events, iterations, evictions, and how many iterations each
        conditional invariant applied to."""
        return {"events": self.events, "iterations": self.iterations,
                "evictions": self.evictions, "evictions_unchecked": self.evictions_unchecked,
                "greedy_fill_exact": self.fills,
                "decode_first_shape": self.shapes, "rate_bound": self.rate_checks}


    def describe(self):
        """One line: what held, on how much."""
        s = self.summary()
        return (f"every invariant held on {s['events']} events and {s['iterations']} "
                f"iterations ({s['evictions']} evictions; exact greedy fill on "
                f"{s['greedy_fill_exact']}, decode-first shape on {s['decode_first_shape']}, "
                f"rate bound on {s['rate_bound']} iterations)")


def _shaped(cur):
    """All decodes before all prefills."""
    seen_prefill = False
    for _, _, decode in cur:
        if not decode:
            seen_prefill = True
        elif seen_prefill:
            return False
    return True


def _greedy_successor(before, cur):
    """Whether ``cur`` comes from ``before`` as the Serve model's step allows: the sessions
    still there keep their order, a decode stays the same job, a prefill stays the same job
    or became a decode, and sessions that are new are prefills after all the others."""
    old = {serial: (job, decode) for serial, job, decode in before}
    if len(old) != len(before) or None in old:
        return False  # ownerless jobs or a session twice: not the model's residents
    order = [serial for serial, _, _ in before]
    kept = []
    new_seen = False
    for serial, job, decode in cur:
        if serial in old:
            if new_seen:
                return False
            pj, pd = old[serial]
            if pd and (job != pj or not decode):
                return False
            if not pd and job != pj and not decode:
                return False
            kept.append(serial)
        else:
            if decode or serial is None:
                return False
            new_seen = True
    rank = {s: k for k, s in enumerate(order)}
    return all(rank[a] < rank[b] for a, b in zip(kept, kept[1:]))


def _first_serial(it):
    for s in it.slices:
        if s.serial is not None:
            return s.serial
    return None


def _pairs(pairs):
    return "[" + ", ".join(f"{k}:{display(v)}" for k, v in pairs[:12]) + (
        ", …]" if len(pairs) > 12 else "]")


def _entries(sizes):
    items = sorted(sizes.items())
    return "{" + ", ".join(f"{k}: {display(v)}" for k, v in items[:8]) + (
        ", …}" if len(items) > 8 else "}")
