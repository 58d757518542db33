"""Regressions found by DRT (formal.md §6.2: shrunk counterexamples kept as tests), each run on
both sides. The expected values are hand-derived from formal.md §1.2."""
import pytest

import serq
import serq.ref

SIDES = {"sim": serq.run, "ref": serq.ref.run}


@pytest.mark.parametrize("side", SIDES)
def test_a_zero_work_run_yields_to_the_back_of_the_ready_list(side):
    """Fixed DRT cases 64 and 142 found serq.ref running a session on after a zero-work run
    (`run engine decode (out - 1 - ...)` with out = 1) instead of sending it to the back of the
    ready list (§1.2 `run s w`, the first of upstream's DRT findings, §5.3): two sessions
    finish their prefills at the end of the same iteration, session 0 first; session 0's next
    run has no work, so session 1 observes first."""
    program = serq.compile(source="""
        stage e : step { budget 8; cost 1; }
        stage d : delay;
        workload { arrive batch(2); }
        session {
          run e prefill (1);
          branch (serial == 0) { run d (0); }
          observe order = now;
        }
        run { horizon 10; }""")
    o = SIDES[side](program).observe("order")
    assert o.sessions == [1, 0]
    assert o.times == [1.0, 1.0]
