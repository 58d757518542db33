"""The checks have teeth (issue 9): each seeded fault of tests/faults.py is caught — by the
invariant monitors (those whose rule they state), by the conformance corpus, and (slow) by
DRT's fixed cases. docs/formal.md has the table these tests keep true."""
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import faults as F  # noqa: E402

BY_NAME = {f.name: f for f in F.FAULTS}

# the monitor that catches each fault on the monitored programs (docs/formal.md's table);
# the other faults change results, not an invariant the monitors state (without a fault
# the monitors hold on these programs and more: tests/sim/test_monitors.py)
MONITOR_CATCHES = {
    "evict_newest": "fast eviction",
    "evict_whole_entry": "fast eviction",
    "eviction_frees_used": "eviction keeps used",
    "serve_longest_first": "greedy fill",
    "release_keeps_a_block": "pool accounting",
    "last_slice_short": "greedy fill",
    "admit_without_fit": "pool accounting",
}


def test_there_are_at_least_ten_faults():
    assert len(F.FAULTS) >= 10 and len(BY_NAME) == len(F.FAULTS)


@pytest.fixture(scope="module")
def programs():
    return F.monitor_programs()


@pytest.mark.parametrize("name", sorted(MONITOR_CATCHES))
def test_the_monitors_catch(name, programs, monkeypatch):
    BY_NAME[name].apply(monkeypatch)
    assert F.caught_by_monitors(programs) == MONITOR_CATCHES[name]


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_the_conformance_corpus_catches(name, monkeypatch):
    BY_NAME[name].apply(monkeypatch)
    assert F.caught_by_conformance() is not None


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_drt_catches(name, monkeypatch):
    BY_NAME[name].apply(monkeypatch)
    assert F.caught_by_drt() is not None


def test_a_patch_undoes_itself():
    from serq.sim.pools import PoolState
    before = PoolState.up
    patch = F.Patch()
    BY_NAME["round_blocks_down"].apply(patch)
    assert PoolState.up is not before
    patch.undo()
    assert PoolState.up is before
