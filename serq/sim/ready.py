"""The ready queue (interpreter.md §3.3, §4): the sessions that can go on at this instant, in
the order they became ready; the settle (``engine.run_ready``) takes them from the front.

Interpreted, it is a ``collections.deque``; compiled, a ``ReadyQueue`` (``ready.pxd``), whose
operations are C calls for code that holds it typed. ``new_ready_queue`` makes the one that
fits how this module runs, and ``append_ready(q, s)`` is its append as a function (what the
statement ops call). A module of its own, importing nothing of serq: the sessions, the stages
and the engine all use it, and ``state`` (which the sessions import) must not be needed to
load it.
"""
from __future__ import annotations

from collections import deque

try:
    import cython
except ImportError:  # Cython not installed: the no-op stand-in, the module runs interpreted
    from serq import _cython_shim as cython

if cython.compiled:
    from cython.cimports.cpython.list import PyList_GET_ITEM, PyList_GET_SIZE, PyList_SET_ITEM
    from cython.cimports.cpython.ref import Py_DECREF, Py_INCREF


@cython.final
@cython.cclass
class ReadyQueue:
    """The ready queue of the compiled engine (interpreter.md §3.3, §4): the sessions in the
    order they became ready, taken from the front; ``append``, ``popleft``, ``clear`` and its
    truth as ``collections.deque``'s, which the interpreted engine uses (``new_ready_queue``).

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
        if tail < PyList_GET_SIZE(slots):  # (a C read: len() would test for None first)
            # the None a popleft left there: its slot takes ``s`` with a C store (what a
            # list's item assignment does after its bounds and index checks, which the slots
            # head..tail need not: issue 10)
            Py_INCREF(s)
            PyList_SET_ITEM(slots, tail, s)
            Py_DECREF(None)
        else:
            if self.head > 0 and self.head >= tail >> 1:  # drop the front's spent slots
                del slots[:self.head]
                tail -= self.head
                self.head = 0
            slots.append(s)
        self.tail = tail + 1

    def popleft(self):
        """The session at the front, taken off the queue (its slot holds None again). The
        slots are read as ``self.slots``, not held in a local, which would take a reference
        and drop it on return."""
        head = self.head
        if head == self.tail:
            raise IndexError("pop from an empty ready queue")
        s = cython.cast(object, PyList_GET_ITEM(self.slots, head))  # (a new reference)
        Py_DECREF(s)  # (the slot's, handed to s: None takes the slot)
        Py_INCREF(None)
        PyList_SET_ITEM(self.slots, head, None)
        head += 1
        if head == self.tail:
            head = self.tail = 0
        self.head = head
        return s

    def clear(self):
        """Empty the queue."""
        self.slots = []
        self.head = self.tail = 0

    def __len__(self):
        return self.tail - self.head

    def __bool__(self):
        return self.tail > self.head


def new_ready_queue():
    """An empty ready queue: a ``ReadyQueue`` where this module is compiled, else a
    ``collections.deque`` (the fastest queue CPython's interpreter has)."""
    return ReadyQueue() if cython.compiled else deque()


# the queue's append as a function of the queue and the session, ``append_ready(q, s)``: the
# unbound method, called without a look-up of ``q.append`` (compiled, the class's Python-level
# method, looked up at run time: Cython would wrap the C method itself)
append_ready = getattr(ReadyQueue, "append") if cython.compiled else deque.append
