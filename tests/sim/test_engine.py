"""The interpreter on small programs whose answers are worked out by hand (the working is in
each test's docstring), plus determinism and the place a run-time error names.

The conformance corpus checks every number against the reference; these tests say *why* the
numbers are what they are, on cases small enough to follow.
"""
import json

import pytest

import serq
from serq.errors import SimulationError


def run(source, **kw):
    return serq.run(serq.compile(source=source, **kw))


def samples(report, name):
    return report.observe(name).samples


def test_fifo_one_server_serves_in_arrival_order():
    """Three sessions at t=0 with work 1, 2, 3 on one server: they finish at 1, 3, 6;
    the waits are 0, 1, 3 (mean 4/3); mean number in system = (1+2+3 + 2+3 + 3)/100... the
    integral of jobs present is 3*1 + 2*2 + 1*3 = 10 over the horizon 100."""
    r = run("""
        stage svc : fifo(1);
        workload { arrive batch(3); session { request; } }
        server { run svc (serial + 1); observe done = now; }
        run { horizon 100; }
    """)
    assert samples(r, "done") == [1.0, 3.0, 6.0]
    st = r.stage("svc")
    assert st.completed == 3
    assert st.mean_wait == pytest.approx(4 / 3)
    assert st.mean_number == pytest.approx(10 / 100)
    assert r.events == 3 and r.arrivals == 3 and r.ended == 3


def test_processor_sharing_virtual_time():
    """ps(1) with work 1, 2, 3 at t=0: all three share the server (rate 1/3 each) until the
    first finishes at 3, then two share (rate 1/2) for the remaining 1 unit of the second:
    done at 5; the last has 1 left alone: done at 6."""
    r = run("""
        stage svc : ps(1);
        workload { arrive batch(3); session { request; } }
        server { run svc (serial + 1); observe done = now; }
        run { horizon 100; }
    """)
    assert samples(r, "done") == [3.0, 5.0, 6.0]


def test_delay_and_closed_population_respawn():
    """closed(2): two sessions always live. Each waits 1 on a delay stage and ends; every
    end spawns a replacement at once, so by t=3 sessions end at 1, 1, 2, 2, 3, 3."""
    r = run("""
        stage d : delay;
        workload { arrive closed(2); session { request; } }
        server { run d (1); observe done = now; }
        run { horizon 3; }
    """)
    assert samples(r, "done") == [1.0, 1.0, 2.0, 2.0, 3.0, 3.0]
    assert r.arrivals == 8  # 2 at t=0 and one replacement per end


def test_step_engine_prefill_then_decode():
    """One session on a step engine of budget 10 and cost 1 per iteration: the prefill of 5
    tokens takes one iteration (first token at 1), the 3 decode tokens one iteration each
    (2, 3, 4). The ITL gaps are 1, 1, 1."""
    r = run("""
        stage E : step { budget 10; cost 1; }
        workload { arrive batch(1); session { request; } }
        server { run E prefill (5); observe ttft = now; run E decode (3); observe done = now; }
        run { horizon 100; }
    """)
    assert samples(r, "ttft") == [1.0]
    assert samples(r, "done") == [4.0]
    st = r.stage("E")
    assert st.iterations == 4
    assert st.mean_itl == 1.0
    assert st.prefill_only == pytest.approx(1 / 100)
    assert st.decode_only == pytest.approx(3 / 100)


def test_pool_admits_the_waiter_when_the_holder_releases():
    """cap 10, each session holds 6: the second waits until the first's hold ends at 2."""
    r = run("""
        pool mem { cap 10; }
        stage d : delay;
        workload { arrive batch(2); session { request; } }
        server { set t0 = now; hold mem (6) { observe admitted = now - t0; run d (2); } }
        run { horizon 100; }
    """)
    assert samples(r, "admitted") == [0.0, 2.0]
    p = r.pool("mem")
    assert p.admissions == 2
    assert p.mean_wait == pytest.approx(1.0)
    assert p.mean_used == pytest.approx(6 * 4 / 100)


def test_rejected_hold_ends_the_session():
    r = run("""
        pool mem { cap 10; }
        workload { arrive batch(1); session { request; } }
        server { hold mem (11) { observe never = 1; } }
        run { horizon 10; }
    """)
    assert r.observe("never").count == 0
    assert r.pool("mem").rejected == 1
    assert r.ended == 1


def test_same_seed_same_report_and_seed_changes_it():
    src = """
        stage svc : fifo(2);
        workload { arrive poisson(1.5); session { request; } }
        server { set t0 = now; run svc (~exp(1)); observe resp = now - t0; }
        run { horizon 200; }
    """
    a = run(src, seed=3).json()
    b = run(src, seed=3).json()
    c = run(src, seed=4).json()
    assert a == b
    assert a != c
    assert json.loads(a)["seed"] == 3


def test_run_time_error_names_time_and_session():
    with pytest.raises(SimulationError) as info:
        run("""
            stage d : delay;
            workload { arrive batch(2); session { request; } }
            server { run d (1 + serial); branch (serial / 2) { set x = 1; } }
            run { horizon 10; }
        """)
    e = info.value
    assert str(e) == ("`branch (serial / 2)`: the guard is 0.5, not 0 or 1; a draw is written "
                      "`branch with (p)`")
    assert e.time == 2.0 and e.session == 1
    assert isinstance(e, ValueError)


def test_index_out_of_range_is_the_reference_error():
    with pytest.raises(SimulationError, match=r"^stage index 3 out of range \(count 2\)$"):
        run("""
            stage s[2] : delay;
            workload { arrive batch(1); session { request; } }
            server { set i = 3; run s[i] (1); }
            run { horizon 10; }
        """)


def test_run_rejects_a_non_program():
    with pytest.raises(TypeError):
        serq.run("stage s : delay;")


def test_public_api_mirrors_pyserq():
    """The names a pyserq user reaches for are all there (switching is a change of import)."""
    for name in ("compile", "run", "Program", "Report", "Observe", "Gauge", "Pool", "Stage",
                 "Rng", "read_trace", "IR_VERSION", "REPORT_VERSION"):
        assert hasattr(serq, name), name
    r = run("""
        stage svc : fifo(1);
        workload { arrive batch(2); session { request; } }
        server { run svc (1); observe done = now; }
        run { horizon 10; }
    """)
    assert isinstance(r, serq.Report)
    assert isinstance(r.observe("done"), serq.Observe)
    assert isinstance(r.stages[0], serq.Stage)
    assert r.observe("missing") is None and r.stage("missing") is None
    assert r.observe("done").sessions == [0, 1] and r.observe("done").turns == [0, 0]
