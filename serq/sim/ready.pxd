# C declarations of serq/sim/ready.py (issue 10): the compiled ready queue, its append and
# popleft C calls for code that holds it typed. Cython checks them against ready.py.

cimport cython

# the compiled engine's ready queue: sessions in the list's slots head..tail-1
@cython.final
cdef class ReadyQueue:
    cdef list slots
    cdef Py_ssize_t head
    cdef Py_ssize_t tail
    @cython.locals(slots=list, tail=Py_ssize_t)
    cpdef append(self, s)
    @cython.locals(head=Py_ssize_t)
    cpdef popleft(self)
    cpdef clear(self)
