"""Trace files with arrival times (serq's extension of ir.md §6.1, docs/traces.md): the `at`
column after the header `session,turn,new,out,think,forced,at`, and the replay of those times
by a run. Expected values worked out by hand from docs/traces.md."""
import json
import subprocess
import sys

import pytest

import serq
from serq.errors import IRError, SimulationError
from serq.trace import TIMED_HEADER, has_times, load_trace, read_trace

HEADER = TIMED_HEADER + "\n"


@pytest.fixture
def write(tmp_path):
    counter = iter(range(10**6))

    def _write(text):
        path = tmp_path / f"t{next(counter)}.csv"
        path.write_text(text, encoding="utf-8")
        return str(path)
    return _write


def fails(path):
    with pytest.raises(IRError) as info:
        load_trace(path)
    return str(info.value)


# ---------------------------------------------------------------------------------------
# the format


def test_times_are_read_per_session(write):
    p = write(HEADER + "1,0,100,20,0.5,0,2.5\n1,1,150,30,0,0,\n2,0,40,8,0,1,0.25\n")
    t = load_trace(p)
    assert t.sessions == [[(100.0, 20.0, 0.5, 0.0), (150.0, 30.0, 0.0, 0.0)],
                          [(40.0, 8.0, 0.0, 1.0)]]
    assert t.times == [2.5, 0.25]
    assert has_times(p)
    # read_trace (pyserq's API) gives the sessions, as for any trace
    assert read_trace(p) == t.sessions


def test_later_rows_may_repeat_the_time(write):
    t = load_trace(write(HEADER + "1,0,1,1,0,0,3\n1,1,2,2,0,0,3\n1,2,3,3,0,0,3.0\n"))
    assert t.times == [3.0] and len(t.sessions[0]) == 3


def test_v012_traces_have_no_times(write):
    for text in ("1,0,1,1,0\n", "session,turn,new,out,think,forced\n1,0,1,1,0,0\n",
                 # the timed header alone changes nothing while no row has 7 fields
                 HEADER + "1,0,1,1,0,0\n2,0,2,2,0\n"):
        p = write(text)
        t = load_trace(p)
        assert t.times is None
        assert not has_times(p)
    assert load_trace(write(HEADER + "1,0,1,1,0,0\n2,0,2,2,0\n")).sessions == [
        [(1.0, 1.0, 0.0, 0.0)], [(2.0, 2.0, 0.0, 0.0)]]


def test_seven_fields_without_the_header_are_refused_as_in_v012(write):
    p = write("1,0,1,1,0,0,5\n")
    assert fails(p) == (f"trace {p}: line 1: expected 5 or 6 fields, got 7\n"
                        "help: use session,turn,new,out,think[,forced]")


def test_a_session_without_a_time(write):
    p = write(HEADER + "1,0,1,1,0,0,5\n2,0,1,1,0,0\n")
    assert fails(p) == (f"trace {p}: line 3: this row starts a session but gives no arrival "
                        "time (column 7, `at`)\nhelp: the header on line 1 says the rows carry "
                        "arrival times: give the first row of every session one")
    p = write(HEADER + "1,0,1,1,0,0,\n1,1,1,1,0,0,5\n")
    assert "line 2: this row starts a session but gives no arrival time" in fails(p)


@pytest.mark.parametrize("text,why", [
    ("x", "invalid number `x`\nhelp: replace `at` with the session's arrival time"),
    ("-1", "an arrival time must be finite and not negative, got `-1`"),
    ("inf", "an arrival time must be finite and not negative, got `inf`"),
    ("nan", "an arrival time must be finite and not negative, got `nan`"),
])
def test_bad_times(write, text, why):
    p = write(HEADER + f"1,0,1,1,0,0,{text}\n")
    assert fails(p) == f"trace {p}: line 2: column 7 (at): {why}"


def test_a_later_row_with_another_time(write):
    p = write("# two sessions with one id\n" + HEADER + "4,0,1,1,0,0,1\n4,1,1,1,0,0,2\n")
    assert fails(p) == (f"trace {p}: line 4: column 7 (at): `2` differs from the arrival time "
                        "of the session that starts on line 3\nhelp: a session arrives once: "
                        "leave `at` empty on its later rows, or give the rows of another "
                        "session another id")


def test_the_forced_column_is_required_with_times(write):
    p = write(HEADER + "1,0,1,1,0,,5\n")
    assert fails(p) == (f"trace {p}: line 2: column 6 (forced): invalid number ``\n"
                        "help: replace `forced` with a numeric value")


# ---------------------------------------------------------------------------------------
# the replay

PROGRAM = """
stage server : fifo(1);
workload {
  arrive poisson(1000);
  trace "TRACE";
}
session {
  turn;
  observe arrived = now;
  observe which = new;
  run server (out);
  observe left = now;
  end;
}
run { horizon 100; seed 3; }
"""


def run(trace_path, **kw):
    source = PROGRAM.replace("TRACE", trace_path)
    return serq.run(serq.compile(source=source, **kw))


def samples(report, name):
    return list(report.observes[name].samples)


def test_sessions_start_at_their_times_in_time_order(write):
    # session ids 7, 8, 9 arrive at 5, 1, 1: serial 0 is id 8 (time 1, first in the file
    # among equals), serial 1 is id 9, serial 2 is id 7. Services (`out`) 2, 3, 0.5 on one
    # fifo server: 8 runs [1, 3], 9 waits and runs [3, 6], 7 waits and runs [6, 6.5].
    p = write(HEADER + "7,0,70,0.5,0,0,5\n8,0,80,2,0,0,1\n9,0,90,3,0,0,1\n")
    r = run(p)
    assert r.arrivals == 3 and r.ended == 3
    assert samples(r, "arrived") == [1.0, 1.0, 5.0]
    assert samples(r, "which") == [80.0, 90.0, 70.0]
    assert samples(r, "left") == [3.0, 6.0, 6.5]
    assert r.end == 100.0  # no arrivals limit: the run goes on to the horizon


def test_the_arrivals_limit_applies_to_the_replay(write):
    p = write(HEADER + "1,0,1,1,0,0,0\n2,0,2,1,0,0,10\n3,0,3,1,0,0,20\n")
    r = run(p, arrivals=2)
    assert r.arrivals == 2 and samples(r, "which") == [1.0, 2.0]
    assert r.end == 11.0  # drained when the second session left
    with pytest.raises(SimulationError) as info:
        run(p, arrivals=4)
    assert str(info.value) == ("run: --arrivals 4 asks for more sessions than the trace's 3 "
                               "(it gives arrival times, so it is the arrival process)")


def test_the_horizon_cuts_the_replay(write):
    p = write(HEADER + "1,0,1,1,0,0,0\n2,0,2,1,0,0,150\n")
    r = run(p)
    assert r.arrivals == 1 and samples(r, "which") == [1.0]


@pytest.mark.parametrize("arrive", ["batch(5)", "closed(2)", "none", "renewal(1)"])
def test_times_replace_any_arrival_process(write, arrive):
    p = write(HEADER + "1,0,1,1,0,0,0.5\n2,0,2,1,0,0,4\n")
    source = PROGRAM.replace("TRACE", p).replace("poisson(1000)", arrive)
    r = serq.run(serq.compile(source=source))
    assert r.arrivals == 2 and samples(r, "arrived") == [0.5, 4.0]


def test_without_times_the_trace_replays_as_in_v012(write):
    # the same rows without `at`: poisson(1000) arrivals, each drawing a trace session
    p = write("1,0,1,1,0,0\n2,0,2,1,0,0\n")
    r = run(p)
    assert r.arrivals > 1000


def test_multi_turn_sessions_replay_their_turns(write):
    source = """
stage server : fifo(1);
stage user : delay;
workload { trace "TRACE"; }
session {
  loop {
    turn;
    observe arrived = now;
    run server (out);
    branch (more) { run user (think); } else { end; }
  }
}
run { horizon 100; seed 3; }
"""
    p = write(HEADER + "1,0,10,1,2,0,3\n1,1,20,1,0,0,\n")
    r = serq.run(serq.compile(source=source.replace("TRACE", p)))
    # turn 1 at 3, served [3, 4], thinks 2, turn 2 at 6
    assert samples(r, "arrived") == [3.0, 6.0]


def test_a_replay_is_deterministic(write):
    p = write(HEADER + "1,0,1,1,0,0,0.5\n2,0,2,1,0,0,4\n")
    assert run(p).json() == run(p).json()


def test_the_cli_says_the_times_replace_arrive(write, tmp_path):
    p = write(HEADER + "1,0,1,1,0,0,0.5\n")
    prog = tmp_path / "p.sq"
    prog.write_text(PROGRAM.replace("TRACE", p))
    res = subprocess.run([sys.executable, "-m", "serq", "run", str(prog), "--json"],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0
    assert res.stderr == ("serq: note: the trace gives arrival times: its sessions start at "
                          "those times, in place of the workload's `arrive` (see "
                          "docs/traces.md)\n")
    assert json.loads(res.stdout)["arrivals"] == 1
