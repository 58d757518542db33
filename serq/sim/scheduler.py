"""The clock and the pending events of a run (interpreter.md §3.1).

The events wait on one binary heap, ordered by ``(time, seq)``: ``seq`` is the global
scheduling counter, so simultaneous events are handled in the order they were scheduled, as
the reference does. ``post`` (``Scheduler.schedule``'s body) is the only place in ``serq.sim``
that pushes an event; the event loop (``engine.Sim.loop``, through ``pop_until``) is the only
place that pops one.

What an event is depends on the engine, the order never does:

* interpreted, a tuple ``(time, seq, kind, x, y, z)`` on a list kept by ``heapq``: the
  fastest heap CPython has (its C functions compare the tuples, which order by time, then
  by ``seq``);
* compiled, an ``Event`` (a C struct, ``scheduler.pxd``: the time a C double, ``seq`` a C
  integer) in the first ``pending`` slots of the list, kept by ``post`` and ``pop_until``
  below, which are heapq's own algorithm with ``earlier`` as the comparison: a C comparison
  of two numbers instead of a tuple comparison through Python's objects, and no float, int
  or tuple object made per event (issue 10). ``earlier`` is the tuples' order written out
  (the time decides when the times differ, else ``seq``; a NaN time differs from every
  time, as in a tuple), and the sift is heapq's step for step, so both engines pop the same
  events in the same order. The sifts move the slots' pointers in C. The list never
  shrinks: a pop moves the popped event to the slot it frees (the last in use, whose event
  goes to the root), and a ``post`` fills in again the event of the first slot past the
  pending ones (appending a new one only when every slot is in use). So a run makes one
  Event object per pending event, not one per event, and a pop and a push change no
  reference count and never resize the list. The loop takes an event's fields before it
  handles the event (it schedules nothing before), so the event it popped may be the next
  one a ``post`` fills in.

``TUPLES`` says which: the engine's loop reads it, not its own mode, as a module that
cimports a changed module runs interpreted beside a compiled scheduler (``serq.compiled``).
``pending_events`` is the number of pending events in both (``run.out_of_memory`` reports
it), ``due`` whether one is pending at a time (the settle's question).
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
    FINISH = 2         # the stage itself, job (id), epoch (§7)
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


def earlier(a, b):
    """``a`` comes before ``b``: ``(a.t, a.seq) < (b.t, b.seq)`` as tuples compare (the two
    are ``PyObject*`` to Events, ``scheduler.pxd``). The casts are read in place: no
    reference is taken, so a comparison changes no reference count (issue 10)."""
    if cython.cast(Event, a).t != cython.cast(Event, b).t:
        return cython.cast(Event, a).t < cython.cast(Event, b).t
    return cython.cast(Event, a).seq < cython.cast(Event, b).seq


def slots(heap):
    """The heap's slots: the list's own array of ``PyObject*`` (``scheduler.pxd``; the
    list is never a tuple, so no test of its type, as ``PySequence_Fast_ITEMS`` makes)."""
    return cython.cast(cython.pointer(PyListObject), heap).ob_item


def sift_down(items, start, pos):
    """heapq's ``_siftdown`` on the heap's slots (``items``, ``scheduler.pxd``): move the
    event at ``pos`` up towards ``start`` past every parent it comes before. The slots are
    only permuted, so no reference count changes."""
    new = items[pos]
    while pos > start:
        parent = (pos - 1) >> 1
        if not earlier(new, items[parent]):
            break
        items[pos] = items[parent]
        pos = parent
    items[pos] = new


def sift_up(items, end, pos):
    """heapq's ``_siftup`` on the first ``end`` slots: move the smaller child up until a leaf
    is reached, then put the event that was at ``pos`` there and sift it down."""
    start = pos
    new = items[pos]
    child = 2 * pos + 1
    while child < end:
        if child + 1 < end and not earlier(items[child], items[child + 1]):
            child += 1
        items[pos] = items[child]
        pos = child
        child = 2 * pos + 1
    items[pos] = new
    sift_down(items, start, pos)


def pop_until(sched, horizon):
    """heapq's ``heappop``, on events: the first event, taken off the heap, if one is
    pending at ``horizon`` or before; else None.

    The last event in use moves to the root and the popped one to the slot it frees, past
    the pending ones, where the next ``post`` fills it in again (the module's docstring):
    the slots are only permuted, and the list keeps its size (a run has a few pending
    events and pops millions; a list that shrinks and grows again by one reallocates its
    array every few events, issue 10)."""
    n = sched.pending
    if n == 0:
        return None
    items = slots(sched.heap)
    first = items[0]
    if cython.cast(Event, first).t > horizon:
        return None
    n -= 1
    sched.pending = n
    items[0] = items[n]
    items[n] = first
    if n > 0:
        sift_up(items, n, 0)
    return cython.cast(Event, first)


def due(sched, now):
    """An event is pending at ``now`` (or before): the settle's question (§4)."""
    if not cython.compiled:  # TUPLES
        heap = sched.heap
        return bool(heap) and heap[0][0] <= now
    if sched.pending == 0:
        return False
    return cython.cast(Event, slots(sched.heap)[0]).t <= now


def pending_events(sched):
    """The number of events on the heap, in either engine."""
    return len(sched.heap) if TUPLES else sched.pending


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
        self.pending = 0  # compiled: the events are the heap's first ``pending`` slots
        self.seq = 0
        self.events = 0

    @cython.ccall
    @cython.locals(t=cython.double, kind=cython.int)
    def schedule(self, t, kind, x=None, y=None, z=None):
        """Schedule an event of ``kind`` (an ``EV_*`` value) at time ``t``."""
        post(self, t, kind, x, y, z)


def post(sched, t, kind, x, y, z):
    """``Scheduler.schedule``'s body, a function: compiled (``scheduler.pxd``), code that holds
    the run typed calls it in C without the method's check for an override in ``Sim`` (a
    look-up of the version of the instance's dictionary per call). Compiled, heapq's
    ``heappush`` on events: the event of slot ``pending`` (one handled already, the
    module's docstring) is filled in, or a new one appended when every slot is in use, and
    sifted down."""
    if not cython.compiled:  # TUPLES
        heappush(sched.heap, (t, sched.seq, kind, x, y, z))
    else:
        n = sched.pending
        if n == len(sched.heap):
            sched.heap.append(Event.__new__(Event))
        items = slots(sched.heap)
        e = items[n]  # (the slot's event, read in place: no reference taken)
        cython.cast(Event, e).t = t
        cython.cast(Event, e).seq = sched.seq
        cython.cast(Event, e).kind = kind
        cython.cast(Event, e).x = x
        cython.cast(Event, e).y = y
        cython.cast(Event, e).z = z
        sched.pending = n + 1
        sift_down(items, 0, n)
    sched.seq += 1
    return 0
