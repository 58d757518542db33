# C declarations of serq/sim/scheduler.py for the modules that call it compiled (`cimport`):
# the clock and the event count as C numbers, the heap a list, schedule() a C call (issue 10).
# Cython checks them against scheduler.py, which stays the definition; this file only exports
# them. state.RunState extends it with the run's shared fields.

cimport cython
from cpython.ref cimport PyObject


# a pending event of the compiled engine: the interpreted engine's tuple (t, seq, kind, x, y, z)
# as a C struct, ordered by earlier() (scheduler.py)
@cython.final
cdef class Event:
    cdef public double t
    cdef public Py_ssize_t seq
    cdef public int kind
    cdef public object x
    cdef public object y
    cdef public object z


cdef class Scheduler:
    cdef public double now
    cdef public list heap
    cdef public Py_ssize_t pending    # compiled: the events are the heap's first `pending` slots
    cdef public Py_ssize_t seq
    cdef public Py_ssize_t events
    cpdef schedule(self, double t, int kind, x=*, y=*, z=*)


# the heap's slots are PyObject* to Events (the list's own array): the sifts permute them
ctypedef PyObject* Slot
ctypedef Slot* Slots

cdef extern from "Python.h":
    ctypedef struct PyListObject:
        Slots ob_item

cdef inline bint earlier(Slot a, Slot b) noexcept
cdef inline Slots slots(list heap) noexcept
@cython.locals(new=Slot, parent=Py_ssize_t)
cdef inline void sift_down(Slots items, Py_ssize_t start, Py_ssize_t pos) noexcept
@cython.locals(new=Slot, start=Py_ssize_t, child=Py_ssize_t)
cdef inline void sift_up(Slots items, Py_ssize_t end, Py_ssize_t pos) noexcept
@cython.locals(n=Py_ssize_t, items=Slots, first=Slot)
cpdef Event pop_until(Scheduler sched, double horizon)
@cython.locals(heap=list)
cpdef bint due(Scheduler sched, double now) noexcept
@cython.locals(e=Slot, items=Slots, n=Py_ssize_t)
cpdef int post(Scheduler sched, double t, int kind, x, y, z) except -1
