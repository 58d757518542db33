# C declarations of serq/sim/scheduler.py for the modules that call it compiled (`cimport`):
# the clock and the event count as C numbers, the heap a list, schedule() a C call (issue 10).
# Cython checks them against scheduler.py, which stays the definition; this file only exports
# them. Not final: engine.Sim subclasses it (with Python mixins).

cdef class Scheduler:
    cdef public double now
    cdef public list heap
    cdef public Py_ssize_t seq
    cdef public Py_ssize_t events
    # the run's state that the event loop and the settle read at every event (engine.Sim)
    cdef public object ready
    cdef public list stages
    cdef public list settle_stages
    cdef public list active_pools
    cdef public object live_avg

    cpdef schedule(self, t, kind, x=*, y=*, z=*)
