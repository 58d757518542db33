"""The statements' ops (serq/sim/sessions.py): one ``Op`` class per statement shape, the
straight-line runs fused, an indexed statement kept apart, and the session block stepped from
the session's own fields (no frame until a block is entered)."""
import serq
from serq.sim import sessions as S
from serq.sim.engine import Sim


def sim_of(source):
    return Sim(serq.compile(source=source))


MM1 = """
stage server : fifo(1);
workload { arrive poisson(0.8); }
session { set t0 = now; run server (~exp(1)); observe response = now - t0; end; }
run { horizon 10; seed 1; }
"""


def test_each_statement_is_an_op_and_set_observe_runs_are_fused():
    ops = sim_of(MM1).session_ops
    assert [type(o) for o in ops] == [S.Pair, S.Pair]
    assert (type(ops[0].first), type(ops[0].last)) == (S.SetNow, S.RunSimple)
    assert (type(ops[1].first), type(ops[1].last)) == (S.Observe, S.End)
    assert all(isinstance(o, S.Op) for o in ops)


def test_an_indexed_statement_reports_after_itself_and_is_not_fused():
    """``set i = 1`` and the ``run`` that reads ``s[i]``: the run is ``Deferring`` (its
    index error is reported after it, as the reference does), so the set stays alone."""
    ops = sim_of("""
        stage s[2] : delay;
        workload { arrive poisson(1); }
        session { set i = 1; run s[i] (1); set j = 2; set k = 3; end; }
        run { horizon 10; }
    """).session_ops
    assert [type(o) for o in ops] == [S.SetExpr, S.Deferring, S.Fused]
    assert ops[1].indexed and not ops[0].indexed
    assert type(ops[1].op) is S.RunGeneral


def test_the_session_block_is_not_a_frame():
    """A session steps its session block from ``ops``/``pc``; a frame (a list) is pushed only
    for a block it enters, here the branch's."""
    sim = sim_of("""
        stage d : delay;
        workload { arrive poisson(1); }
        session { run d (1); branch (1) { run d (2); } end; }
        run { horizon 10; }
    """)
    s = sim.spawn()
    assert s.ops is sim.session_ops and s.pc == 0 and not s.frames
    sim.ready.clear()
    sim.execute(s)  # runs `run d (1)`: the session waits in the stage
    assert s.pc == 1 and not s.frames


def test_the_live_sessions_in_arrival_order():
    """The live sessions are on a chain: ``sim.alive`` builds serial -> session from it in
    arrival order, ``sim.live_session`` finds one, and an ended session leaves it (from its
    front, middle or back) with its slot dropped (and reused by the next)."""
    sim = sim_of(MM1)
    a, b, c, d = (sim.spawn() for _ in range(4))
    assert list(sim.alive.items()) == [(s.serial, s) for s in (a, b, c, d)]
    assert sim.live_session(c.serial) is c and sim.live_session(d.serial + 1) is None
    sim.end_session(b)
    sim.end_session(a)
    assert b.link == -1 and a.link == -1
    assert list(sim.alive.values()) == [c, d] and sim.live == 2
    assert sim.live_session(b.serial) is None and sim.live_session(a.serial) is None
    sim.end_session(d)
    assert list(sim.alive.values()) == [c] and sim.live_chain.listed() == [c]
    e = sim.spawn()
    assert list(sim.alive.values()) == [c, e] and sim.live_chain.listed() == [c, e]
    assert sim.live_chain.items[e.link] is e and sim.live_session(e.serial) is e
    sim.end_session(c)
    sim.end_session(e)
    assert sim.alive == {} and (sim.live_chain.first, sim.live_chain.last) == (-1, -1)
