"""The records of the observations (interpreter.md §12.1): for each ``observe`` statement, every
sample made once warm, with its time, its session's serial and its turn, in the order made.

``Observations`` keeps one statement's four columns. Interpreted, they are four lists, as the
report wants them. Compiled (``observations.pxd``), they are four C arrays -- the values and
times as C doubles, the serials as 64-bit and the turns as 32-bit integers -- grown by doubling:
a sample costs four C stores instead of a float object, a time object, a serial object and a
turn object kept to the end, and four list appends whose arrays are reallocated (and copied)
every eighth of their size (issue 10). The columns become lists when the report's observation is
first read (``columns``, ``report.Observe.of_records``), bit for bit the values stored: a C
double keeps every float exactly (-0.0, a NaN's payload), and a value that is not a float (none
is today: the expressions give floats) switches the values to a list of the objects themselves,
so nothing is ever converted. The ``observe`` op records its value with ``add_value``, a C
double (what its expression gives, ``exprnodes``) that it need not make a float object of.

``release`` frees the columns at once: the run's out-of-memory handler (``run.out_of_memory``)
calls it before it builds its message, which needs memory of its own.
"""
from __future__ import annotations

import array

try:
    import cython
except ImportError:  # Cython not installed: the no-op stand-in, the module runs interpreted
    from serq import _cython_shim as cython

if cython.compiled:
    from cython.cimports.cpython import array as carray
    from cython.cimports.cpython.mem import PyMem_Free, PyMem_Realloc
    from cython.cimports.libc.string import memcpy

# empty arrays of the compiled columns' C types, for as_list
DOUBLES, LONGLONGS, UINTS = array.array("d"), array.array("q"), array.array("I")


@cython.final
@cython.cclass
class Observations:
    """One ``observe`` statement's records (see the module's docstring)."""

    def __init__(self):
        self.n = 0
        self.cap = 0
        self.boxed = None
        self.rows = None if cython.compiled else ([], [], [], [])

    def __dealloc__(self):  # compiled only (Cython's finalizer; a plain method interpreted)
        PyMem_Free(self.values)
        PyMem_Free(self.times)
        PyMem_Free(self.serials)
        PyMem_Free(self.turns)

    def add(self, v, t, serial, turn):
        """Record the sample ``v`` made at time ``t`` by session ``serial`` in turn ``turn``."""
        if cython.compiled and type(v) is not float:
            self.box(v, t, serial, turn)
            return 0
        return self.add_value(v, t, serial, turn)

    def add_value(self, v, t, serial, turn):
        """``add`` for a float ``v`` (compiled, a C double)."""
        if cython.compiled:
            i = self.n
            if i == self.cap:
                self.grow()
            self.values[i] = v
            if self.boxed is not None:
                self.boxed.append(v)
            self.times[i] = t
            self.serials[i] = serial
            self.turns[i] = turn
            self.n = i + 1
        else:
            samples, times, sessions, turns = self.rows
            samples.append(v)
            times.append(t)
            sessions.append(serial)
            turns.append(turn)
        return 0

    def grow(self):
        """Double the compiled columns (at least 64 rows); MemoryError when they cannot (a
        column already grown keeps its new size: ``cap`` only says how many rows all hold)."""
        cap = 64 if self.cap == 0 else 2 * self.cap
        self.values = cython.cast(cython.p_double,
                                  resized(self.values, cap * cython.sizeof(cython.double)))
        self.times = cython.cast(cython.p_double,
                                 resized(self.times, cap * cython.sizeof(cython.double)))
        self.serials = cython.cast(cython.p_longlong,
                                   resized(self.serials, cap * cython.sizeof(cython.longlong)))
        self.turns = cython.cast(cython.p_uint,
                                 resized(self.turns, cap * cython.sizeof(cython.uint)))
        self.cap = cap

    def box(self, v, t, serial, turn):
        """``add`` for a ``v`` that is not a float: the values are kept as objects from now on
        (its C slot holds 0.0, unread)."""
        if self.boxed is None:
            self.boxed = [self.values[i] for i in range(self.n)]
        self.add_value(0.0, t, serial, turn)
        self.boxed[-1] = v

    def __len__(self):
        return self.n if cython.compiled else len(self.rows[0])

    def samples(self):
        """The values, a new list."""
        if not cython.compiled:
            return list(self.rows[0])
        if self.boxed is not None:
            return list(self.boxed)
        return as_list(self.values, self.n, DOUBLES)

    def columns(self):
        """``(samples, times, sessions, turns)``, four new lists (``report.Observe``'s)."""
        if not cython.compiled:
            samples, times, sessions, turns = self.rows
            return (list(samples), list(times), list(sessions), list(turns))
        n = self.n
        return (self.samples(), as_list(self.times, n, DOUBLES),
                as_list(self.serials, n, LONGLONGS), as_list(self.turns, n, UINTS))

    def release(self):
        """Free the records (the run is over and failed: out of memory)."""
        if cython.compiled:
            PyMem_Free(self.values)
            PyMem_Free(self.times)
            PyMem_Free(self.serials)
            PyMem_Free(self.turns)
            self.values = self.times = cython.NULL
            self.serials = cython.NULL
            self.turns = cython.NULL
            self.n = self.cap = 0
            self.boxed = None
        else:
            self.rows = ([], [], [], [])


def resized(block, nbytes):
    """``block`` reallocated to ``nbytes`` (``PyMem_Realloc``); MemoryError when it cannot,
    the block then left as it was (compiled only: the interpreted columns are lists)."""
    out = PyMem_Realloc(block, nbytes)
    if out == cython.NULL:
        raise MemoryError()
    return out


def as_list(data, n, template):
    """The ``n`` C numbers at ``data`` as a list of Python numbers (compiled only): copied into
    an ``array.array`` of ``template``'s type, whose ``tolist`` makes the list in one C loop."""
    a = carray.clone(template, n, False)
    memcpy(a.data.as_voidptr, data, n * template.itemsize)
    return a.tolist()
