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

from collections import deque

try:
    import cython
except ImportError:  # Cython not installed: the no-op stand-in, the module runs interpreted
    from serq import _cython_shim as cython

from serq.sim.scheduler import Scheduler


@cython.cclass
class RunState(Scheduler):
    """The run's shared fields (see the module's docstring and ``state.pxd`` for the list);
    set by ``engine.Sim`` and the concepts' ``init_*``."""


@cython.final
@cython.cclass
class ReadyQueue:
    """The ready queue of the compiled engine (interpreter.md §3.3, §4): the sessions in the
    order they became ready, taken from the front; ``append``, ``popleft`` and its truth as
    ``collections.deque``'s, which the interpreted engine uses (``new_ready_queue``).

    Why not the deque compiled: its methods are reached through Python's protocol, a method
    look-up and a call per session (about a twentieth of a compiled M/M/1 event, issue 10);
    this class's are C calls for code that holds it typed (the engine's ``run_ready``) and
    plain methods for the rest. Its slots are a list that never shrinks while in use:
    ``head`` is the front, ``tail`` one past the back, the slots outside hold None, and an
    emptied queue starts again at slot 0, so a queue that holds a few sessions at a time
    reuses the same few slots. The front's spent slots are dropped when they are half the
    list (a queue that never empties within an instant)."""

    def __init__(self):
        self.slots = []
        self.head = 0
        self.tail = 0

    def append(self, s):
        """Queue ``s`` at the back."""
        slots = self.slots
        tail = self.tail
        if tail < len(slots):
            slots[tail] = s   # the None a popleft left there
        else:
            if self.head > 0 and self.head >= tail >> 1:  # drop the front's spent slots
                del slots[:self.head]
                tail -= self.head
                self.head = 0
            slots.append(s)
        self.tail = tail + 1

    def popleft(self):
        """The session at the front, taken off the queue."""
        head = self.head
        if head == self.tail:
            raise IndexError("pop from an empty ready queue")
        slots = self.slots
        s = slots[head]
        slots[head] = None
        head += 1
        if head == self.tail:
            head = self.tail = 0
        self.head = head
        return s

    def __len__(self):
        return self.tail - self.head

    def __bool__(self):
        return self.tail > self.head


def new_ready_queue():
    """An empty ready queue: a ``ReadyQueue`` where this module is compiled, else a
    ``collections.deque`` (the fastest queue CPython's interpreter has)."""
    return ReadyQueue() if cython.compiled else deque()
