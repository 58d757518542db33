# C declarations of serq/sim/observations.py (issue 10): an observation's columns as C arrays,
# add() a C call for the observe statement. Cython checks them against observations.py.

cimport cython
from cpython cimport array as carray

ctypedef void* Block  # what PyMem_Realloc returns


@cython.final
cdef class Observations:
    cdef double* values
    cdef double* times
    cdef long long* serials
    cdef unsigned int* turns
    cdef Py_ssize_t n
    cdef Py_ssize_t cap
    cdef list boxed        # the values as objects, once one was not a float (else None)
    cdef tuple rows        # interpreted: the four lists
    cpdef int add(self, v, double t, long long serial, unsigned int turn) except -1
    @cython.locals(i=Py_ssize_t)
    cpdef int add_value(self, double v, double t, long long serial, unsigned int turn) except -1
    @cython.locals(cap=Py_ssize_t)
    cdef grow(self)
    @cython.locals(i=Py_ssize_t)
    cdef box(self, v, double t, long long serial, unsigned int turn)
    cpdef list samples(self)
    @cython.locals(n=Py_ssize_t)
    cpdef tuple columns(self)
    cpdef release(self)


@cython.locals(out=Block)
cdef Block resized(Block block, size_t nbytes) except NULL

@cython.locals(a=carray.array)
cdef list as_list(Block data, Py_ssize_t n, carray.array template)
