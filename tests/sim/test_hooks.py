"""The simulator hooks (serq/sim/hooks.py): every event and every iteration is reported,
the records add up to the report's own counters, and observing changes nothing."""
import collections
import json
import pathlib

import pytest

import serq
from serq.sim.hooks import EVENT_KINDS, Hooks

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.sq"))


def golden_report(path):
    """The example's report as pyserq 0.1.2 wrote it (tests/golden), without the version."""
    return without_version((ROOT / "tests" / "golden" / f"{path.stem}.report.json").read_text())


def without_version(text):
    doc = json.loads(text)
    doc.pop("serq_version")
    return doc

# Two sessions, no holds, budget 4, no chunk cap, cost 1: computed by hand (interpreter.md
# §8.3): both prefill 6 then decode 2; residents in arrival order (neither is admitted).
TWO = """
stage engine : step { budget 4; chunk 0; cost 1; }
workload { arrive batch(2); }
session {
  run engine prefill (6);
  run engine decode (2);
  end;
}
run { horizon 100; seed 1; }
"""
# (start, [(serial, job-relative start, tokens, decode)], demand, finished at its end)
TWO_ITERATIONS = [
    (0.0, [(0, 0, 4, False)], 12, []),
    (1.0, [(0, 4, 2, False), (1, 0, 2, False)], 8, [(0, 0)]),
    (2.0, [(1, 2, 4, False)], 5, [(1, 1)]),  # s0's decode (job 2) waits: the prefill took 4
    (3.0, [(0, 0, 1, True), (1, 0, 1, True)], 2, []),
    (4.0, [(0, 1, 1, True), (1, 1, 1, True)], 2, [(0, 2), (1, 3)]),
]


class Recorder(Hooks):
    def __init__(self):
        self.kinds = collections.Counter()
        self.iterations = []
        self.ended = []
        self.admits = []
        self.preempts = []
        self.evicted = 0.0
        self.started = self.finished = 0
        self.last_time = 0.0

    def on_start(self, sim):
        self.started += 1

    def on_event(self, kind, time, serial, sim):
        assert kind in EVENT_KINDS
        assert time >= self.last_time and time == sim.now
        self.last_time = time
        self.kinds[kind] += 1

    def on_iteration(self, it, sim):
        assert it.start == sim.now and not it.ended
        self.iterations.append(it)

    def on_iteration_end(self, it, sim):
        assert it.ended and it.end == sim.now
        self.ended.append(it)

    def on_admit(self, serial, pool, alloc, hit, sim):
        self.admits.append((serial, pool, alloc, hit))

    def on_preempt(self, serial, pool, computed, sim):
        self.preempts.append((serial, pool))

    def on_evict(self, pool, need, before, evicted, sim):
        assert sim.pools[pool].used == before[0]  # eviction never touches `used`
        self.evicted += sum(u for _, u in evicted)

    def on_end(self, sim):
        self.finished += 1


def test_two_sessions_by_hand():
    rec = Recorder()
    report = serq.run(serq.compile(source=TWO), hooks=rec)
    assert report.stages[0].iterations == 5 == len(rec.iterations) == len(rec.ended)
    got = [(it.start, [(s.serial, s.start, s.tokens, s.decode) for s in it.slices], it.demand,
            it.finished) for it in rec.iterations]
    assert got == TWO_ITERATIONS
    assert [it.end for it in rec.iterations] == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert [it.served_before for it in rec.iterations] == [0, 4, 8, 12, 14]
    assert all(it.arrived == 2 and it.budget == 4 and it.cost == 1 for it in rec.iterations)
    assert rec.kinds == {"iteration_end": 5} and rec.started == rec.finished == 1


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_hooks_see_every_event_and_iteration(path):
    program = serq.compile(str(path))
    rec = Recorder()
    report = serq.run(program, hooks=rec)
    assert without_version(report.json()) == golden_report(path)  # observing changes nothing
    assert sum(rec.kinds.values()) == report.events
    assert rec.kinds["arrive"] <= report.arrivals  # batch/closed ones spawn without one
    assert len(rec.iterations) == sum(s.iterations or 0 for s in report.stages)
    assert len(rec.ended) >= len(rec.iterations) - sum(1 for s in report.stages if s.iterations)
    for it in rec.iterations:
        assert sum(s.tokens for s in it.slices) == it.tokens
        assert it.tokens <= it.budget
        assert sum(1 for s in it.slices if s.decode) == it.decoders
        assert all(s.tokens > 0 for s in it.slices)
    assert len(rec.admits) == sum(p.admissions for p in report.pools)
    assert len(rec.preempts) == sum(p.preemptions for p in report.pools)
    assert rec.evicted == pytest.approx(sum(p.evicted_units for p in report.pools))


def test_slices_cover_every_job_exactly():
    """Per finished job, its slices cover its work exactly once, from position 0 on."""
    rec = Recorder()
    serq.run(serq.compile(str(ROOT / "examples" / "vllm_engine.sq"), horizon=20), hooks=rec)
    pos = {}
    for it in rec.iterations:
        for s in it.slices:
            assert s.start == pos.get(s.job, 0.0)
            pos[s.job] = s.start + s.tokens
    finished = {job for it in rec.ended for _, job in it.finished}
    assert finished and finished <= set(pos)


def test_hooks_base_class_does_nothing():
    program = serq.compile(str(ROOT / "examples" / "vllm_engine.sq"), horizon=20)
    assert serq.run(program, hooks=Hooks()).json() == serq.run(program).json()


def test_an_error_in_a_hook_stops_the_run():
    class Boom(Hooks):
        def on_iteration(self, it, sim):
            raise RuntimeError("stop here")
    with pytest.raises(RuntimeError, match="stop here"):
        serq.run(serq.compile(source=TWO), hooks=Boom())
