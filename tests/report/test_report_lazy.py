"""A run's report keeps the run's records and makes its lists on first access (issue 10:
turning 320 k samples into Python lists was about a quarter of the M/M/1 benchmark's run).

What is checked: a list or a statistic asks the records once and no more; the summary asks
only for the samples; a run's report equals, field by field and in its JSON, the report built
from the same lists eagerly; it pickles; and it does not keep the run alive.
"""
import gc
import math
import pickle
import weakref

import serq
from serq.report import Gauge, Observe

MM1 = """
stage server : fifo(1);
workload { arrive poisson(0.8); }
session { set t0 = now; run server (~exp(1)); observe response = now - t0; end; }
gauge busy = queue(server);
run { horizon 200; seed 3; }
"""


class Records:
    """A stand-in for ``serq.sim.observations.Observations``, counting the reads."""

    def __init__(self, cols):
        self.cols = cols
        self.calls = []

    def samples(self):
        self.calls.append("samples")
        return list(self.cols[0])

    def columns(self):
        self.calls.append("columns")
        return tuple(list(c) for c in self.cols)


class Points:
    """A stand-in for ``serq.sim.gauges.Gauge``'s points, counting the reads."""

    def __init__(self, times, values):
        self.lists = (times, values)
        self.calls = 0

    def points(self):
        self.calls += 1
        return tuple(list(c) for c in self.lists)


def test_observe_reads_its_records_once_and_the_summary_only_the_samples():
    recs = Records(([1.0, 3.0], [0.5, 1.5], [0, 1], [0, 2]))
    o = Observe.of_records("lat", recs)
    assert recs.calls == []
    # hand (as test_report_model): samples 1 and 3 -> mean 2, cv2 0.5, p99 3, ci +inf
    assert (o.count, o.mean, o.ci, o.cv2, o.p99) == (2, 2.0, math.inf, 0.5, 3.0)
    assert recs.calls == ["samples"]
    assert o.samples is o.samples and o.samples == [1.0, 3.0]
    assert (o.times, o.sessions, o.turns) == ([0.5, 1.5], [0, 1], [0, 2])
    assert o.turns is o.turns and recs.calls == ["samples", "columns"]
    assert o._records is None  # every list made: the records are no longer held
    assert o == Observe("lat", [1.0, 3.0], [0.5, 1.5], [0, 1], [0, 2])


def test_the_other_columns_first_make_all_four_at_once():
    recs = Records(([2.0], [1.0], [7], [0]))
    o = Observe.of_records("x", recs)
    assert o.sessions == [7] and o.samples == [2.0] and recs.calls == ["columns"]
    assert o._records is None


def test_gauge_reads_its_points_once():
    kept = Points([0.0, 2.0], [1.0, 0.0])
    g = Gauge.of_points("busy", kept, 0.0, 4.0)
    assert kept.calls == 0
    # hand (as test_report_model): 1 on [0,2), 0 on [2,4] -> mean 0.5, min 0, max 1
    assert (g.mean, g.min, g.max) == (0.5, 0.0, 1.0)
    assert g.times == [0.0, 2.0] and g.values == [1.0, 0.0] and kept.calls == 1
    assert g == Gauge("busy", [0.0, 2.0], [1.0, 0.0], 0.0, 4.0)


def test_a_runs_report_equals_the_eager_one_and_pickles():
    report = serq.run(serq.compile(source=MM1))
    o, g = report.observe("response"), report.gauge("busy")
    eager_o = Observe("response", list(o.samples), list(o.times), list(o.sessions),
                      list(o.turns))
    eager_g = Gauge("busy", list(g.times), list(g.values), g.warmup, g.end)
    assert o == eager_o and g == eager_g and o.count == len(o.samples) > 100
    back = pickle.loads(pickle.dumps(report))
    assert back == report and back.json() == report.json()
    assert back.observe("response").samples == o.samples
    # a summary given without records (a report read back from JSON) survives pickling
    given = pickle.loads(pickle.dumps(Observe("x", stats=(5, 1.0, math.inf, 0.25, 2.0))))
    assert (given.count, given.mean, given.cv2, given.p99, given.samples) == (5, 1.0, 0.25,
                                                                              2.0, [])
    g = pickle.loads(pickle.dumps(Gauge("g", warmup=0.0, end=4.0, stats=(0.5, 0.1, 0.0, 1.0))))
    assert (g.mean, g.ci, g.min, g.max, g.times) == (0.5, 0.1, 0.0, 1.0, [])


def test_the_report_does_not_keep_the_run_alive():
    from serq.sim import engine
    made = []
    original = engine.Sim.run

    def run_and_watch(sim):
        made.append(weakref.ref(sim))
        return original(sim)

    engine.Sim.run = run_and_watch
    try:
        report = serq.run(serq.compile(source=MM1))
    finally:
        engine.Sim.run = original
    gc.collect()
    assert made and made[0]() is None
    assert report.gauge("busy").values and report.observe("response").samples
