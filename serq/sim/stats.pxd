# C declarations of serq/sim/stats.py for the modules that call it compiled (`cimport`): the
# accumulators' fields as C numbers and their per-event updates as C calls (issue 10). Cython
# checks them against stats.py, which stays the definition; this file only exports them.

cimport cython


@cython.final
cdef class Welford:
    cdef public Py_ssize_t n
    cdef public double _mean
    cdef public double m2

    cpdef void add(self, double x) noexcept


@cython.final
cdef class TimeAvg:
    cdef public double value
    cdef public double last
    cdef public double integral
    cdef public double start

    cpdef void set(self, double t, double v) noexcept


@cython.final
cdef class LogHist:
    cdef public Py_ssize_t count
    cdef public double sum
    cdef public dict _buckets
    cdef public object _zero
    cdef public double _lastq
    cdef public list _lastb

    cpdef void add(self, double x)
    cpdef void add_repeat(self, double x, Py_ssize_t k)
