# C declarations of serq/sim/scheduler.py for the modules that call it compiled (`cimport`):
# the clock and the event count as C numbers, the heap a list, schedule() a C call (issue 10).
# Cython checks them against scheduler.py, which stays the definition; this file only exports
# them. state.RunState extends it with the run's shared fields.

cdef class Scheduler:
    cdef public double now
    cdef public list heap
    cdef public Py_ssize_t seq
    cdef public Py_ssize_t events
    cpdef schedule(self, t, kind, x=*, y=*, z=*)
