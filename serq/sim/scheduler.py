"""The clock and the pending events of a run (interpreter.md §3.1).

An event is a tuple ``(time, seq, kind, x, y, z)`` on one binary heap. ``seq`` is the global
scheduling counter: the heap pops the smallest ``(time, seq)``, so simultaneous events are
handled in the order they were scheduled, as the reference does. ``Scheduler.schedule`` is the
only place in ``serq.sim`` that pushes an event; the event loop (``engine.Sim.loop``) is the
only place that pops one.
"""
from __future__ import annotations

import enum
from heapq import heappush

try:
    import cython
except ImportError:  # Cython not installed: the no-op stand-in, the module runs interpreted
    from serq import _cython_shim as cython


class EventKind(enum.IntEnum):
    """The kinds of event (interpreter.md §3.1) and what ``x, y, z`` of one hold.

    The heap holds the plain int values (``EV_*`` below): an int compares and indexes
    faster than an enum member in the interpreted loop. A member's lower-case name is the
    kind the hooks report (``hooks.EVENT_KINDS``)."""
    WARMUP = 0         # the end of the warm-up; x, y, z unused
    ARRIVE = 1         # an arrival of the arrival process; unused
    FINISH = 2         # stage index, job id, epoch (§7)
    ITERATION_END = 3  # step stage index, epoch, unused (§8.6)
    LEASE_END = 4      # session, its serial, lease id (§9.7)


EV_WARMUP = EventKind.WARMUP.value
EV_ARRIVE = EventKind.ARRIVE.value
EV_FINISH = EventKind.FINISH.value
EV_ITER = EventKind.ITERATION_END.value
EV_LEASE = EventKind.LEASE_END.value


@cython.cclass
class Scheduler:
    """``now``, the event heap and the sequence number, ``schedule()``, and ``events``, the
    count of events the loop has handled.

    ``Sim`` is a ``Scheduler`` (through ``state.RunState``, which adds the run's shared
    fields): the whole interpreter reads ``sim.now``, so the clock stays a plain attribute of
    the run's state rather than one object further away. Compiled, this is a ``cclass``
    (``scheduler.pxd``): the clock a C double and ``schedule`` a C call for code that holds a
    typed reference (``@cython.locals(self=RunState)`` on a method of ``Sim``, or a field
    typed so); other code reads the same fields as attributes. The clock is always a float:
    the times of the events are (the run's start makes ``warmup`` and ``horizon`` floats), in
    both engines."""

    def __init__(self):
        self.now = 0.0
        self.heap = []
        self.seq = 0
        self.events = 0

    @cython.ccall
    def schedule(self, t, kind, x=None, y=None, z=None):
        """Schedule an event of ``kind`` (an ``EV_*`` value) at time ``t``."""
        heappush(self.heap, (t, self.seq, kind, x, y, z))
        self.seq += 1
