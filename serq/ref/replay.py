"""The replay of formal.md §5.2: a 333-session multi-turn trace (3,321 turns) on the A100 pool
(8010 blocks of 16, 64 sequences, budget 512) under the step clock, the ns cost
``[4e6, 0, 51527, 41053, 138, 2]`` and the µs cost ``[4000, 0, 52, 41, 0, 0]``, run by serq.sim
and by serq.ref and compared as the DRT cases are, with both run times.

The program is examples/vllm_replay.sq; its trace (examples/vllm_replay.csv, synthetic: the
original is not public) is put in as explicit sessions with scripted turns, which is what an
``ordered`` trace means (interpreter.md §5.1–§5.2) and what serq.ref reads.
"""
from __future__ import annotations

import dataclasses
import pathlib
import time

from serq.ir import types as T

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "vllm_replay.sq"
TRACE = ROOT / "examples" / "vllm_replay.csv"
COSTS = {"step clock": [1, 0, 0, 0, 0, 0],
         "ns cost": [4e6, 0, 51527, 41053, 138, 2],
         "µs cost": [4000, 0, 52, 41, 0, 0]}
KNOBS = ("c_it", "c_tok", "c_pre", "c_dec", "c_kv", "c_att")


@dataclasses.dataclass
class Row:
    name: str
    sim_s: float
    ref_s: float
    observations: int
    preemptions: int
    diff: str | None


def program(coeffs, sessions=None, horizon=1e15):
    """The example with cost ``coeffs`` and its trace as explicit sessions (the first
    ``sessions`` of them when given), run to ``horizon`` (by default until it drains)."""
    import serq
    p = serq.compile(str(EXAMPLE), sets={k: repr(v) for k, v in zip(KNOBS, coeffs)},
                     horizon=horizon)
    corpus = serq.read_trace(str(TRACE))
    n = p.arrival.n if sessions is None else sessions
    sessions = tuple(
        T.SessionInit((), tuple(((p.slot_new, new), (p.slot_out, out), (p.slot_think, think),
                                 (p.slot_forced, forced))
                                for new, out, think, forced in corpus[i % len(corpus)]))
        for i in range(n))
    return dataclasses.replace(p, arrival=T.Sessions(sessions), trace=None,
                               trace_ordered=False)


def run_one(name, coeffs, sessions=None):
    """Run one cost on both sides; the times are CPU seconds (``time.process_time``)."""
    import serq
    import serq.ref
    from serq.ref import drt
    p = program(coeffs, sessions)
    t = time.process_time()
    sim = serq.run(p)
    sim_s = time.process_time() - t
    t = time.process_time()
    ref = serq.ref.run(p)
    ref_s = time.process_time() - t
    return Row(name, sim_s, ref_s, sum(o.count for o in sim.observes.values()),
               sim.pool("kv").preemptions, drt.first_difference(sim, ref))


def run_all():
    """One :class:`Row` per cost of §5.2."""
    return [run_one(name, coeffs) for name, coeffs in COSTS.items()]
