"""``serq.run``: the simulator's run, with a claims observer when the program has claims."""
from __future__ import annotations

from serq.claims.monitor import ClaimMonitor
from serq.deep import deep
from serq.ir import types as T
from serq.sim.run import run as sim_run


@deep
def run(program):
    """Run ``program`` (a ``serq.Program``) and return its ``Report``; a program with claims
    gets its claims' results in ``Report.claims`` (and the report's ``claims`` section)."""
    if isinstance(program, T.Program) and program.claims:
        return sim_run(program, claims=ClaimMonitor(program))
    return sim_run(program)
