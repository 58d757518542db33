"""``serq.run``: the simulator's run, with a claims observer when the program has claims."""
from __future__ import annotations

from serq.claims.monitor import ClaimMonitor
from serq.deep import deep
from serq.ir import types as T
from serq.sim.hooks import Hooks
from serq.sim.run import run as sim_run


@deep
def run(program, *, hooks=None, check=False):
    """Run ``program`` (a ``serq.Program``) and return its ``Report``; a program with claims
    gets its claims' results in ``Report.claims`` (and the report's ``claims`` section).
    ``hooks``: an observer of the run (``serq.sim.hooks``), called as well. ``check``: the
    invariant monitors (``serq.sim.monitors``) at every event and iteration."""
    if not (isinstance(program, T.Program) and program.claims):
        return sim_run(program, hooks=hooks, check=check)
    monitor = ClaimMonitor(program)
    report = sim_run(program, hooks=monitor if hooks is None else Both(monitor, hooks),
                     check=check)
    report.claims = monitor.results
    return report


class Both(Hooks):
    """Two observers, called in turn (the claims' first)."""

    def __init__(self, first, second):
        self.pair = (first, second)
        self.early_observations = any(getattr(o, "early_observations", False)
                                      for o in self.pair)

    def _call(name):
        def call(self, *args):
            for o in self.pair:
                f = getattr(o, name, None)
                if f is not None:
                    f(*args)
        call.__name__ = name
        return call

    for _name in ("on_start", "on_event", "on_iteration", "on_iteration_end", "on_admit",
                  "on_preempt", "on_evict", "on_end", "on_attach", "on_session", "on_batch"):
        locals()[_name] = _call(_name)
    del _name, _call
