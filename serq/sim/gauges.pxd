# C declarations of serq/sim/gauges.py (issue 10): a gauge's node typed, its change points as
# C arrays of doubles, so that engine.read_gauges keeps a reading with C stores. Cython checks
# them against gauges.py, which stays the definition.

cimport cython

from serq.sim.exprnodes cimport Expr


@cython.final
cdef class Gauge:
    cdef readonly Expr node
    cdef double* times
    cdef double* values
    cdef readonly Py_ssize_t n
    cdef Py_ssize_t cap
    @cython.locals(cap=Py_ssize_t)
    cdef int grow(self) except -1
    cpdef tuple points(self)
    cpdef Gauge detach(self)
    cpdef release(self)
