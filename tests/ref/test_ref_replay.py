"""formal.md §5.2: the replay upstream's `make drt` runs, with a seeded synthetic trace of the
same shape (333 sessions, 3,321 turns; 16,605 observations, as upstream's) on the A100 pool,
compared between serq.sim and serq.ref under the step clock, the ns cost and the µs cost.
The default run compares the first 40 conversations under each cost; all 333 run under
`-m slow` (and `serq drt --replay`)."""
import importlib.util

import pytest

import serq
import serq.ref
from serq.ref import drt, replay


def test_the_trace_has_upstream_s_shape_and_regenerates_byte_for_byte(tmp_path):
    corpus = serq.read_trace(str(replay.TRACE))
    assert (len(corpus), sum(len(s) for s in corpus)) == (333, 3321)
    spec = importlib.util.spec_from_file_location(
        "make_trace", replay.ROOT / "tools" / "make_vllm_replay_trace.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    tool.OUT = tmp_path / "t.csv"
    tool.main()
    assert tool.OUT.read_bytes() == replay.TRACE.read_bytes()


def test_explicit_sessions_are_what_the_ordered_trace_means():
    """The IR the two sides compare (the trace as scripted sessions) runs as the example with
    its `trace ... ordered` does."""
    example = serq.run(serq.compile(str(replay.EXAMPLE)))
    explicit = serq.run(replay.program(replay.COSTS["step clock"], horizon=example.horizon))
    assert drt.canonical(explicit) == drt.canonical(example)
    assert sum(o.count for o in example.observes.values()) == 5 * 3321


@pytest.mark.parametrize("cost", replay.COSTS)
def test_the_first_40_conversations_agree(cost):
    row = replay.run_one(cost, replay.COSTS[cost], sessions=40)
    assert row.diff is None, row.diff
    assert row.observations > 0


@pytest.mark.slow
def test_the_whole_replay_agrees_under_each_cost():
    rows = replay.run_all()
    assert [(r.name, r.diff) for r in rows] == [(name, None) for name in replay.COSTS]
    assert all(r.observations == 16605 for r in rows)
