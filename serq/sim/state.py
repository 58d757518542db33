"""The state of a run that every part of the interpreter reads (interpreter.md §3, §5, §12).

``RunState`` is the clock and the heap (``scheduler.Scheduler``, its base) plus the fields the
sessions, stages, pools, flows and the step engine share: the program, the ready queue, the
counters (serials, jobs, admissions, the live, arrived, ended and turn counts), the session
whose expressions are being evaluated, the random streams, the observation records, the
stage and pool lists. ``engine.Sim`` sets them in its ``__init__`` and each concept's
``init_*``; this class only gives them a place.

Why a class of its own: compiled (``state.pxd``), the fields are C slots of the object, so a
method typed ``@cython.locals(self=RunState)`` (or code holding a ``RunState`` reference) reads
and writes them from the struct, with C numbers for the counters and flags, instead of looking
each one up in the instance's ``__dict__`` through ``Sim``'s bases -- the largest single cost
left in a compiled run's profile (issue 10). Interpreted, it is a plain class and the fields
are ordinary attributes; the observers (monitors, hooks, claims, report) read them so in both
modes (every field is ``public``).
"""
from __future__ import annotations

try:
    import cython
except ImportError:  # Cython not installed: the no-op stand-in, the module runs interpreted
    from serq import _cython_shim as cython

from serq.sim.scheduler import Scheduler


@cython.cclass
class RunState(Scheduler):
    """The run's shared fields (see the module's docstring and ``state.pxd`` for the list);
    set by ``engine.Sim`` and the concepts' ``init_*``."""
