# C declarations of serq/sim/scheduler.py for the modules that call it compiled (`cimport`):
# the clock and the event count as C numbers, the heap a list, schedule() a C call (issue 10).
# Cython checks them against scheduler.py, which stays the definition; this file only exports
# them. state.RunState extends it with the run's shared fields.

cimport cython


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


cpdef Event pop(list heap)


cdef class Scheduler:
    cdef public double now
    cdef public list heap
    cdef public Py_ssize_t seq
    cdef public Py_ssize_t events
    cpdef schedule(self, double t, int kind, x=*, y=*, z=*)
