# C declarations of serq/sim/rng.py for the modules that call it compiled (`cimport`): the
# generator's state and draws, and the samplers, as C (issue 10). Cython checks them against
# the annotations of rng.py, which stay the definition; this file only exports them.

cimport cython


@cython.final
cdef class Rng:
    cdef unsigned long long _seed
    cdef str _backend
    cdef unsigned int[::1] _key
    cdef unsigned long long _ctr
    cdef Py_ssize_t _nblocks
    cdef object _arr
    cdef Py_ssize_t _base
    cdef Py_ssize_t _n
    cdef Py_ssize_t _i
    cdef double[::1] _f
    cdef Py_ssize_t _fl
    cdef unsigned int[::1] _w
    cdef Py_ssize_t _wn

    cdef _refill(self)
    cdef unsigned int[::1] _ints(self)
    cdef double _f64_slow(self) except? -1.0
    cdef unsigned int _u32_slow(self)
    cdef unsigned long long _u64_slow(self)
    cpdef double random_f64(self) except? -1.0
    cpdef unsigned int next_u32(self)
    cpdef unsigned long long next_u64(self)


cpdef double _ieee_div(double a, double b)
cpdef double sample_exp(Rng rng, double mean) except? -1.0
cpdef double sample_uniform(Rng rng, double a, double b) except? -1.0
cpdef unsigned long long erlang_k(double k) noexcept
cpdef double sample_erlang(Rng rng, double k, double m) except? -1.0
cpdef double sample_h2(Rng rng, double m, double c2) except? -1.0
cpdef double sample_bernoulli(Rng rng, double p) except? -1.0
cpdef double poisson_gap(Rng rng, double rate) except? -1.0
