# cython: boundscheck=False, wraparound=False
"""Items kept in the order they came in, appended at the end and taken out from anywhere:
the run's live sessions (``RunState.live_chain``; interpreter.md §5, the sessions alive in
arrival order) and a fifo stage's jobs (``FifoStage.chain``; §7.1, those in service first,
then the queue, in arrival order). Each item takes a slot, linked to the slots before and
after it: appending and taking out are a few C integer moves, where a map of ids would cost
an insertion, a removal and an int object per session and per job (issue 10). The rule is
written once, here, for both.

The links are the chain's, not the items' (the item keeps its slot, ``Session.link``,
``Job.link``): compiled, a session and a job stay final classes with their own free lists
(Cython gives a subclass of a shared ``Link`` class none: every session and job would cost an
allocator call and its release, about 9 % more instructions on M/M/1, measured), and the links
are C arrays that hold no object and need no reference counting. (The slots are always in
range: compiled, ``items`` is indexed without bounds checks, the directive above.)
"""
from __future__ import annotations

try:
    import cython
except ImportError:  # Cython not installed: the no-op stand-in, the module runs interpreted
    from serq import _cython_shim as cython

if cython.compiled:
    from cython.cimports.cpython.mem import PyMem_Free, PyMem_Realloc


@cython.final
@cython.cclass
class Chain:
    """Items in slots ``0 …``: ``items[k]`` the item in slot ``k`` (None when the slot is
    free), ``prv[k]`` and ``nxt[k]`` the slots before and after it (-1 at the ends), ``first``
    and ``last`` the ends (-1: the chain is empty). A free slot is reused by the next
    ``append`` (the free slots are linked through ``nxt`` from ``free``). Compiled, ``prv``
    and ``nxt`` are C arrays of ``cap`` slots; interpreted, lists."""

    def __init__(self):
        self.items = []
        self.first = -1
        self.last = -1
        self.free = -1
        self.cap = 0
        if not cython.compiled:
            self.prv = []
            self.nxt = []

    def __dealloc__(self):
        if cython.compiled:
            PyMem_Free(self.prv)
            PyMem_Free(self.nxt)

    @cython.locals(k=cython.Py_ssize_t, last=cython.Py_ssize_t)
    def append(self, x):
        """Put ``x`` last; its slot (the caller keeps it, for ``unlink``)."""
        k = self.free
        if k >= 0:
            self.free = self.nxt[k]
            self.items[k] = x
        else:
            k = len(self.items)
            if k == self.cap:
                self.grow()
            self.items.append(x)
        last = self.last
        self.prv[k] = last
        self.nxt[k] = -1
        if last < 0:
            self.first = k
        else:
            self.nxt[last] = k
        self.last = k
        return k

    def grow(self):
        """Room for more slots: twice as many (at least 16)."""
        cap = 2 * self.cap if self.cap else 16
        if cython.compiled:
            p: cython.p_Py_ssize_t
            n: cython.p_Py_ssize_t
            p = cython.cast(cython.p_Py_ssize_t,
                            PyMem_Realloc(self.prv, cap * cython.sizeof(cython.Py_ssize_t)))
            if p == cython.NULL:
                raise MemoryError()
            self.prv = p
            n = cython.cast(cython.p_Py_ssize_t,
                            PyMem_Realloc(self.nxt, cap * cython.sizeof(cython.Py_ssize_t)))
            if n == cython.NULL:
                raise MemoryError()
            self.nxt = n
        else:
            self.prv += [-1] * (cap - self.cap)
            self.nxt += [-1] * (cap - self.cap)
        self.cap = cap
        return 0

    @cython.locals(p=cython.Py_ssize_t, n=cython.Py_ssize_t)
    def unlink(self, k):
        """Take the item in slot ``k`` out; the slot becomes free."""
        p = self.prv[k]
        n = self.nxt[k]
        if p < 0:
            self.first = n
        else:
            self.nxt[p] = n
        if n < 0:
            self.last = p
        else:
            self.prv[n] = p
        self.nxt[k] = self.free
        self.free = k
        self.items[k] = None

    def after(self, k):
        """The slot after slot ``k`` (-1: ``k`` is the last)."""
        return self.nxt[k]

    def before(self, k):
        """The slot before slot ``k`` (-1: ``k`` is the first)."""
        return self.prv[k]

    @cython.locals(k=cython.Py_ssize_t)
    def listed(self):
        """The items, first to last: a new list (the observers')."""
        out = []
        k = self.first
        while k >= 0:
            out.append(self.items[k])
            k = self.nxt[k]
        return out
