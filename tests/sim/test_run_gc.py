"""A run raises the cyclic collector's first threshold while it runs and gives the caller's
thresholds back after it, also after an error (serq.sim.run.young_gc, issue 10); the cycles a
run makes are still collected (its memory does not grow with its length)."""
import gc
import tracemalloc

import pytest

import serq
from serq.errors import SimulationError
from serq.sim.hooks import Hooks
from serq.sim.run import GC_YOUNG

MM1 = """stage server : fifo(1);
workload { arrive poisson(0.8); }
session { set t0 = now; run server (~exp(1)); observe response = now - t0; end; }
run { horizon %s; seed 3; }
"""


class Seen(Hooks):
    def on_start(self, sim):
        self.threshold = gc.get_threshold()


@pytest.fixture
def thresholds():
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*saved)


def test_threshold_raised_during_the_run_and_restored(thresholds):
    seen = Seen()
    serq.run(serq.compile(source=MM1 % 100), hooks=seen)
    assert seen.threshold == (GC_YOUNG, 10, 10)
    assert gc.get_threshold() == (700, 10, 10)


def test_threshold_restored_after_an_error(thresholds):
    bad = serq.compile(source=MM1 % 100, arrivals=1000)  # the horizon comes first
    with pytest.raises(SimulationError):
        serq.run(bad)
    assert gc.get_threshold() == (700, 10, 10)


def test_a_threshold_of_the_caller_kept(thresholds):
    for mine in [(0, 10, 10), (GC_YOUNG * 2, 5, 5)]:
        gc.set_threshold(*mine)
        seen = Seen()
        serq.run(serq.compile(source=MM1 % 100), hooks=seen)
        assert seen.threshold == mine
        assert gc.get_threshold() == mine


def test_memory_does_not_grow_with_the_run(thresholds):
    """A run ten times as long holds about as much memory at its end (its observations
    aside: the samples are kept, so they are left out by observing nothing)."""
    source = MM1.replace("observe response = now - t0; ", "")

    def peak(horizon):
        program = serq.compile(source=source % horizon)
        tracemalloc.start()
        serq.run(program)
        size = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return size

    peak(1000)
    assert peak(40_000) < 2 * peak(4_000) + 4_000_000
