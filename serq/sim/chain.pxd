# C declarations of serq/sim/chain.py (issue 10): a chain's slots' links as C arrays, append
# and unlink as C calls. state.pxd's RunState (the live sessions) and stages.pxd's FifoStage
# (its jobs) hold a Chain; a Session and a Job keep their slot (`link`). `items`, `first` and
# `last` are public: the observers and the tests read them.

cimport cython


@cython.final
cdef class Chain:
    cdef public list items            # slot -> its item, None for a free slot
    cdef public Py_ssize_t first      # the first item's slot, -1 when empty
    cdef public Py_ssize_t last       # the last item's
    # C only (a module that runs interpreted beside a compiled chain reads the public ones):
    cdef Py_ssize_t free              # the first free slot (the next ones through nxt), or -1
    cdef Py_ssize_t cap               # the slots prv and nxt have room for
    cdef Py_ssize_t *prv              # slot -> the slot before, -1 for the first
    cdef Py_ssize_t *nxt              # slot -> the slot after, -1 for the last

    cpdef Py_ssize_t append(self, object x) except -1
    @cython.locals(cap=Py_ssize_t)
    cdef int grow(self) except -1
    cpdef void unlink(self, Py_ssize_t k) noexcept
    cpdef Py_ssize_t after(self, Py_ssize_t k) noexcept
    cpdef Py_ssize_t before(self, Py_ssize_t k) noexcept
    cpdef list listed(self)
