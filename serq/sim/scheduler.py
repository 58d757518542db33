"""The clock and the pending events of a run (interpreter.md §3.1).

The events wait on one binary heap, ordered by ``(time, seq)``: ``seq`` is the global
scheduling counter, so simultaneous events are handled in the order they were scheduled, as
the reference does. ``Scheduler.schedule`` is the only place in ``serq.sim`` that pushes an
event; the event loop (``engine.Sim.loop``, through ``pop``) is the only place that pops one.

What an event is depends on the engine, the order never does:

* interpreted, a tuple ``(time, seq, kind, x, y, z)`` on a list kept by ``heapq``: the
  fastest heap CPython has (its C functions compare the tuples, which order by time, then
  by ``seq``);
* compiled, an ``Event`` (a C struct, ``scheduler.pxd``: the time a C double, ``seq`` a C
  integer) on a list kept by ``push`` and ``pop`` below, which are heapq's own algorithm
  with ``earlier`` as the comparison: a C comparison of two numbers instead of a tuple
  comparison through Python's objects, and no float, int or tuple object made per event
  (issue 10). ``earlier`` is the tuples' order written out (the time decides when the times
  differ, else ``seq``; a NaN time differs from every time, as in a tuple), and the sift is
  heapq's step for step, so both engines pop the same events in the same order.

``TUPLES`` says which: the engine's loop reads it, not its own mode, as a module that
cimports a changed module runs interpreted beside a compiled scheduler (``serq.compiled``).
``len(heap)`` is the number of pending events in both (``run.out_of_memory`` reports it).
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

TUPLES = not cython.compiled  # the heap holds heapq's tuples (else Events)


@cython.final
@cython.freelist(64)
@cython.cclass
class Event:
    """A pending event of the compiled engine (see the module's docstring; its fields, the
    tuple's, are declared in ``scheduler.pxd``). The free list keeps the objects of handled
    events for the next ones: a run has a few pending at a time and makes millions."""


@cython.cfunc
@cython.locals(a=Event, b=Event)
def earlier(a, b) -> cython.bint:
    """``a`` comes before ``b``: ``(a.t, a.seq) < (b.t, b.seq)`` as tuples compare."""
    if a.t != b.t:
        return a.t < b.t
    return a.seq < b.seq


@cython.cfunc
@cython.locals(heap=list, start=cython.Py_ssize_t, pos=cython.Py_ssize_t,
               parent=cython.Py_ssize_t, new=Event)
def sift_down(heap, start, pos):
    """heapq's ``_siftdown``: move the event at ``pos`` up towards ``start`` past every
    parent it comes before."""
    new = heap[pos]
    while pos > start:
        parent = (pos - 1) >> 1
        if not earlier(new, heap[parent]):
            break
        heap[pos] = heap[parent]
        pos = parent
    heap[pos] = new


@cython.cfunc
@cython.locals(heap=list, pos=cython.Py_ssize_t, end=cython.Py_ssize_t,
               child=cython.Py_ssize_t, new=Event)
def sift_up(heap, pos):
    """heapq's ``_siftup``: move the smaller child up until a leaf is reached, then put the
    event that was at ``pos`` there and sift it down."""
    end = len(heap)
    start = pos
    new = heap[pos]
    child = 2 * pos + 1
    while child < end:
        if child + 1 < end and not earlier(heap[child], heap[child + 1]):
            child += 1
        heap[pos] = heap[child]
        pos = child
        child = 2 * pos + 1
    heap[pos] = new
    sift_down(heap, start, pos)


@cython.cfunc
@cython.locals(heap=list, ev=Event)
def push(heap, ev):
    """heapq's ``heappush``, on events."""
    heap.append(ev)
    sift_down(heap, 0, len(heap) - 1)


@cython.ccall
@cython.locals(heap=list, last=Event, first=Event)
def pop(heap) -> Event:
    """heapq's ``heappop``, on events: the first event, taken off the heap."""
    last = heap.pop()
    if not heap:
        return last
    first = heap[0]
    heap[0] = last
    sift_up(heap, 0)
    return first


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
    @cython.locals(t=cython.double, kind=cython.int, ev=Event)
    def schedule(self, t, kind, x=None, y=None, z=None):
        """Schedule an event of ``kind`` (an ``EV_*`` value) at time ``t``."""
        if cython.compiled:
            ev = Event.__new__(Event)
            ev.t = t
            ev.seq = self.seq
            ev.kind = kind
            ev.x = x
            ev.y = y
            ev.z = z
            push(self.heap, ev)
        else:
            heappush(self.heap, (t, self.seq, kind, x, y, z))
        self.seq += 1
