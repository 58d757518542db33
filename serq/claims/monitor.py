"""The claims observer of one run (formal.md §2.2, with pyserq 0.1.3's semantics, probed).

* ``given`` is read for each session when it starts (after ``init`` and any preset
  attributes). The first session that fails it puts the claim out of scope: the claim is read
  no more, and its result is ``out_of_scope`` ("session N fails `given`"), keeping the counts
  read until then.
* A claim over iterations of stage S is read at the start of each iteration of S, after the
  batch is formed, in the context of S's cost (``tokens``, ``prefilled``, ``decoders``,
  ``residents``, ``kv_decode``, ``kv_prefill``, ``attention``, ``now``, and ``queue``/
  ``busy``/``used``/``free``/``holders``/``queued``, the iteration not yet running), plus
  ``demand`` (the tokens the residents want with no budget: 1 for a decode, the chunk-capped
  remaining prompt for a prefill), ``served`` (the tokens of S's earlier iterations, the
  warm-up's included) and ``arrived`` (the sessions started so far, this instant's included).
  Every iteration counts, the warm-up's too.
* A claim ``at end`` is read when the run ends, if no session is live then; its aggregates
  run over every value the observation recorded, the warm-up's included. With sessions live
  it is ``not_evaluated`` ("N sessions live at the end").
* A value is true when it is not 0 (NaN is true), as a `branch` guard.
"""
from __future__ import annotations

import math

from serq.report.claims import KIND_NAME, ClaimResult
from serq.sim.hooks import Hooks

NAN = math.nan


class _State:
    __slots__ = ("claim", "given", "expr", "checked", "failures", "first", "out")

    def __init__(self, claim):
        self.claim = claim
        self.given = None
        self.expr = None
        self.checked = 0
        self.failures = 0
        self.first = None
        self.out = None  # the serial of the first session failing `given`


class ClaimMonitor(Hooks):
    """Watches one run for the claims of its program (see the module's docstring), as a
    simulator observer (``serq.sim.hooks``): ``on_attach`` compiles the claims,
    ``on_session`` reads ``given``, ``on_batch`` the claims over iterations, ``on_end`` the
    claims `at end`; ``results`` is then the list of ``ClaimResult``."""

    early_observations = True  # the aggregates count the warm-up's observations

    def __init__(self, program):
        self.program = program
        self.states = [_State(c) for c in program.claims]
        self.by_stage = {}
        for st in self.states:
            if st.claim.stage is not None:
                self.by_stage.setdefault(st.claim.stage, []).append(st)
        self.given = [st for st in self.states if st.claim.given is not None]
        self.served = {k: 0.0 for k in self.by_stage}
        self.sim = None
        self.results = None

    # -- the simulator's calls -------------------------------------------------------------
    def on_attach(self, sim):
        """Compile the claims' expressions with the run's expression compiler (they read the
        simulator's context, never draw, and are not counted as reads of the run's own
        expressions)."""
        self.sim = sim
        ex = sim.ex
        for st in self.states:
            c = st.claim
            if c.given is not None:
                st.given = ex.function(c.given, track=False)
            st.expr = ex.function(c.expr, track=False)
        sim.agg_value = self.aggregate

    def on_session(self, serial, attrs, sim):
        for st in self.given:
            if st.out is None and st.given(attrs) == 0.0:
                st.out = serial

    def on_batch(self, k, chunk, sim):
        states = self.by_stage.get(k)
        if states is None:
            return
        stage = sim.stages[k]
        demand = 0.0
        for j in stage.residents:
            demand += stage.wants(j, chunk)
        sim.ctx.demand = demand
        sim.ctx.served = self.served[k]
        sim.ctx.arrived = float(sim.arrivals)
        prev = sim.cur
        sim.cur = None
        now = sim.now
        na = stage.na
        for st in states:
            if st.out is not None:
                continue
            ok = st.expr(na) != 0.0
            st.checked += 1
            if not ok:
                st.failures += 1
            if st.first is None and ok == (st.claim.kind == "SomeIteration"):
                st.first = now
        sim.cur = prev
        self.served[k] += sim.ctx.ntok

    # -- aggregates (`at end`) ------------------------------------------------------------
    def values(self, k):
        sim = self.sim
        early = sim.pre_obs[k] if sim.pre_obs is not None else []
        return early + sim.obs[k].samples()

    def aggregate(self, kind, k):
        return aggregate(kind, self.values(k))

    # -- the results ----------------------------------------------------------------------
    def on_end(self, sim):
        self.results = self.collect(sim, sim.now)

    def collect(self, sim, end):
        out = []
        for st in self.states:
            c = st.claim
            kind = KIND_NAME[c.kind]
            if st.out is not None:
                out.append(ClaimResult(c.name, kind, "out_of_scope", st.checked, st.failures,
                                       st.first, f"session {st.out} fails `given`"))
            elif c.kind == "AtEnd":
                out.append(self.at_end(st, sim, end))
            elif c.kind == "EveryIteration":
                out.append(ClaimResult(c.name, kind, "fails" if st.failures else "holds",
                                       st.checked, st.failures, st.first))
            else:
                out.append(ClaimResult(c.name, kind, "not_witnessed" if st.first is None
                                       else "witnessed", st.checked, st.failures, st.first))
        return out

    def at_end(self, st, sim, end):
        c = st.claim
        live = sim.live
        if live > 0:
            return ClaimResult(c.name, "at_end", "not_evaluated",
                               note=f"{live} session{'s' if live != 1 else ''} live at the end")
        prev = sim.cur
        sim.cur = None
        ok = st.expr(sim.na) != 0.0
        sim.cur = prev
        if ok:
            return ClaimResult(c.name, "at_end", "holds", 1, 0)
        return ClaimResult(c.name, "at_end", "fails", 1, 1, end)


def aggregate(kind, values):
    """``total``, ``count``, ``largest``, ``smallest`` or ``prefix_total`` of the values in
    the order they were recorded. ``largest``/``smallest`` skip NaN and are 0 for no values
    (as pyserq 0.1.3); ``prefix_total`` sorts ascending and sums the prefix sums,
    ``Σ_k (n−k+1)·v_(k)``, so ``prefix_total([3, 1, 2]) = 1 + 3 + 6 = 10``."""
    if kind == "Count":
        return float(len(values))
    if kind == "Total":
        t = 0.0
        for v in values:
            t += v
        return t
    if kind in ("Largest", "Smallest"):
        if not values:
            return 0.0
        best = values[0]
        for v in values[1:]:  # f64::max / f64::min: a NaN operand is ignored
            if best != best or (v > best if kind == "Largest" else v < best):
                best = v
        return best
    s = 0.0
    acc = 0.0
    for v in sorted(values, key=_total_key):
        s += v
        acc += s
    return acc


def _total_key(x):
    """IEEE total order (-0 < +0, NaN last) as an integer key."""
    import struct
    b = struct.unpack("<q", struct.pack("<d", x))[0]
    return b ^ 0x7FFFFFFFFFFFFFFF if b < 0 else b
