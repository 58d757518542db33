"""The Report of a serq.ref run: the observations exactly as made, the counters of every
pool and stage; the time averages the reference semantics does not define are NaN
(interpreter.md §12 describes them; ``Exec`` has none)."""
from __future__ import annotations

import math

from serq.ir import types as T
from serq.ref.machine import Machine
from serq.report import Observe, Pool, Report, Stage

NAN = math.nan


def run(program) -> Report:
    """Run ``program`` (a ``serq.Program``) with the reference semantics."""
    if not isinstance(program, T.Program):
        raise TypeError("serq.ref.run() takes a serq.Program")
    m = Machine(program)
    end = float(m.run())
    return build_report(m, end)


def build_report(m, end):
    p = m.p
    observes = [Observe(name, [float(v) for v, _, _, _ in rec], [float(t) for _, t, _, _ in rec],
                        [s for _, _, s, _ in rec], [n for _, _, _, n in rec])
                for name, rec in zip(p.observes, m.obs)]
    stages = []
    for i, st in enumerate(p.stages):
        done = m.completed[i]
        stages.append(Stage(st.name, st.index, NAN, NAN, done, done / end if end > 0 else NAN,
                            NAN, NAN, m.engine.iterations if i == m.engine_index else 0))
    pools = [Pool(d.name, d.index, NAN, NAN, NAN, NAN, NAN, pl.admissions,
                  pl.evicted_entries, float(pl.evicted_units), pl.preemptions, 0,
                  pl.rejected, pl.stuck) for d, pl in zip(p.pools, m.pools)]
    return Report(horizon=p.horizon, end=end, warmup=p.warmup, seed=p.seed, events=m.popped,
                  arrivals=m.arrivals, ended=m.ended, turns=m.turns, mean_live=NAN,
                  observes=observes, stages=stages, pools=pools)
