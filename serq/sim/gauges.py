"""A gauge's node and change points (interpreter.md §11): where the run keeps what
``engine.read_gauges`` reads, and what the report gets of it.

``Gauge`` holds the gauge's expression (its node, ``exprnodes.Expr``) and its change points:
``n`` points, in ``times`` and ``values``, room for ``cap``. The rule that decides which
points are kept is ``engine.read_gauges``'s (written once, there); this class only stores them.
Interpreted, ``times`` and ``values`` are lists grown by doubling (their items past ``n`` are
unread). Compiled (``gauges.pxd``), they are C arrays of doubles grown by doubling: a reading
costs C stores instead of two float objects kept to the end and two list appends (issue 10:
the gauges of ``mgc_ps.sq`` are read every time the clock moves). The same subscripts read and
write both, so ``read_gauges`` is one source for the two engines.

The points become lists when the report's gauge is first read (``points``,
``report.Gauge.of_points``), bit for bit the values stored:
a C double keeps every float exactly (-0.0, a NaN's payload), and every gauge's value is a
float (a node's ``ev`` gives a C double compiled). ``release`` frees them at once (the run's
out-of-memory handler, ``run.out_of_memory``).
"""
from __future__ import annotations

try:
    import cython
except ImportError:  # Cython not installed: the no-op stand-in, the module runs interpreted
    from serq import _cython_shim as cython

if cython.compiled:
    from cython.cimports.cpython.mem import PyMem_Free
    from cython.cimports.serq.sim.observations import as_list, resized

from serq.sim.observations import DOUBLES


@cython.final
@cython.cclass
class Gauge:
    """One gauge: its node (``node``) and its ``n`` change points (see the module's
    docstring)."""

    def __init__(self, node):
        self.node = node
        self.n = 0
        self.cap = 0
        if not cython.compiled:
            self.times = []
            self.values = []

    def __dealloc__(self):  # compiled only (Cython's finalizer; a plain method interpreted)
        PyMem_Free(self.times)
        PyMem_Free(self.values)

    def grow(self):
        """Double the room for points (at least 64); MemoryError when it cannot (compiled, a
        column already grown keeps its new size: ``cap`` only says how many both hold)."""
        cap = 64 if self.cap == 0 else 2 * self.cap
        if cython.compiled:
            self.times = cython.cast(cython.p_double,
                                     resized(self.times, cap * cython.sizeof(cython.double)))
            self.values = cython.cast(cython.p_double,
                                      resized(self.values, cap * cython.sizeof(cython.double)))
        else:
            more = [0.0] * (cap - self.cap)
            self.times.extend(more)
            self.values.extend(more)
        self.cap = cap
        return 0

    def __len__(self):
        return self.n

    def points(self):
        """``(times, values)``, two new lists (``report.Gauge``'s)."""
        n = self.n
        if not cython.compiled:
            return (self.times[:n], self.values[:n])
        return (as_list(self.times, n, DOUBLES), as_list(self.values, n, DOUBLES))

    def detach(self):
        """Drop the node: the run is over and its report keeps this gauge's points (read
        lazily, ``report.Gauge.of_points``), not the expression, whose nodes read the run's
        stages and pools and would keep the whole run alive as long as the report."""
        self.node = None
        return self

    def release(self):
        """Free the points (the run is over and failed: out of memory)."""
        if cython.compiled:
            PyMem_Free(self.times)
            PyMem_Free(self.values)
            self.times = self.values = cython.NULL
        else:
            self.times = []
            self.values = []
        self.n = self.cap = 0
