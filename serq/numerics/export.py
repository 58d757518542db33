"""The plan export (batch-invariance.md §4.7, "what the simulator must emit"):
``serq run FILE --plan PLAN.jsonl`` records, for the program's first step stage, every
iteration's slices and the pool events between iterations, as JSON Lines (schema in
serq.numerics.trace and docs/numerics.md). Built on the simulator hooks (serq/sim/hooks.py):
a duck-typed observer, so this module imports nothing from the simulator.

* A request is a session (``s12``), or a session's turn after the first (``s12.2``).
* A slice's ``start`` is the owner's position in the stage's ``memory`` pool before the slice
  (prefix hits included): the absolute position of its first token. For a job that grows no
  pool the recorder keeps the position itself (0 at admission plus the hit, then the tokens
  served).
* Events: ``admit`` and ``prefix_hit`` (units = the cached prefix kept) on the stage's memory
  pool (any pool when it has none), ``preempt``, ``evict`` (units lost, request ``dead`` for an
  entry whose owner is gone), ``finish`` when a decode job ends (reported with the next
  iteration, or in a final line).
"""
from __future__ import annotations

import json

DEAD_KEY = 2 ** 62


class PlanExportError(ValueError):
    pass


class PlanRecorder:
    """Observer for ``serq.run(program, hooks=...)`` writing the plan to ``stream``."""

    def __init__(self, program, stream, source=""):
        steps = [s for s in program.stages if type(s.kind).__name__ == "Step"]
        if not steps:
            raise PlanExportError(f"--plan: {source or 'the program'} has no step stage "
                                  "(`stage NAME : step { ... }`), so there is no plan to write")
        self.stage = steps[0]
        self.stage_index = program.stages.index(self.stage)
        self.memory = self.stage.kind.memory
        block = program.pools[self.memory].block if self.memory is not None else None
        self.out = stream
        self.header = {"format": "serq-plan", "version": 1, "program": source,
                       "stage": self.stage.name, "block": int(block) if block else None,
                       "memory": program.pools[self.memory].name if self.memory is not None else None,
                       "seed": program.seed, "horizon": program.horizon}
        self.pos = {}           # request -> position kept by the recorder (no memory pool)
        self.pending = []       # events after the last recorded iteration
        self.decode_jobs = set()
        self.steps = 0
        self.turns = {}

    # -- helpers -------------------------------------------------------------------------------
    def rid(self, serial, turn=None, sim=None):
        if turn is None and sim is not None:
            s = sim.live_session(serial)
            if s is not None:
                turn = int(s.attrs[sim.p.slot_turn])
        if turn is None:
            turn = self.turns.get(serial, 1)
        return f"s{serial}" if turn <= 1 else f"s{serial}.{turn}"

    def mine(self, pool):
        return self.memory is None or pool == self.memory

    @staticmethod
    def whole(x, what):
        n = round(x)
        if abs(x - n) > 1e-9:
            raise PlanExportError(f"--plan: {what} of {x!r} tokens is not a whole number; the "
                                  "numerics replay needs whole tokens")
        return int(n)

    # -- hooks ---------------------------------------------------------------------------------
    def on_start(self, sim):
        self.out.write(json.dumps(self.header, sort_keys=True) + "\n")

    def on_event(self, kind, time, serial, sim):
        pass

    def on_admit(self, serial, pool, alloc, hit, sim):
        pass

    def on_preempt(self, serial, pool, computed, sim):
        pass

    def on_evict(self, pool, need, before, evicted, sim):
        pass

    def on_iteration(self, it, sim):
        if it.stage != self.stage_index:
            return
        events = self.pending
        self.pending = []
        for serial, pool in it.admitted:
            if self.mine(pool):
                rid = self.rid(serial, sim=sim)
                events.append(["admit", rid, 0])
                self.pos[rid] = 0
        for serial, pool, units in it.prefix_hits:
            if self.mine(pool):
                rid = self.rid(serial, sim=sim)
                n = self.whole(units, "a prefix hit")
                events.append(["prefix_hit", rid, n])
                self.pos[rid] = n
        for serial, pool in it.preempted:
            if self.mine(pool):
                events.append(["preempt", self.rid(serial, sim=sim), 0])
        for pool, key, units in it.evictions:
            if self.mine(pool):
                who = self.rid(key) if key < DEAD_KEY else "dead"
                events.append(["evict", who, self.whole(units, "an eviction")])
        slices = []
        for s in it.slices:
            if s.serial is None:
                continue
            self.turns[s.serial] = s.turn
            rid = self.rid(s.serial, s.turn)
            n = self.whole(s.tokens, f"a slice of {rid}")
            start = self.whole(s.kv_start, f"the position of {rid}") if s.kv_start is not None \
                else self.pos.get(rid, 0)
            self.pos[rid] = start + n
            if s.decode:
                self.decode_jobs.add(s.job)
            slices.append([rid, start, n, "decode" if s.decode else "prefill"])
        self.out.write(json.dumps({"step": self.steps, "time": it.start, "slices": slices,
                                   "events": events}, separators=(",", ":")) + "\n")
        self.steps += 1

    def on_iteration_end(self, it, sim):
        if it.stage != self.stage_index:
            return
        for serial, job in it.finished:
            if serial is not None and job in self.decode_jobs:
                self.decode_jobs.discard(job)
                self.pending.append(["finish", self.rid(serial), 0])

    def on_end(self, sim):
        if self.pending:
            self.out.write(json.dumps({"step": self.steps, "time": sim.now, "slices": [],
                                       "events": self.pending}, separators=(",", ":")) + "\n")
            self.pending = []
