# C declarations of serq/sim/pools.py for the modules that call it compiled (`cimport`): a
# pool's state, its cache entries, the requests, holds and leases as C structs with C numbers,
# and the per-event pool rules as C calls (issue 10). Cython checks them against pools.py,
# which stays the definition; this file only exports them. Every field is `public`: the
# monitors, hooks, report, DRT and the step engine read them from Python.

cimport cython

from serq.sim.exprnodes cimport Expr
from serq.sim.stats cimport TimeAvg, Welford
from serq.sim.state cimport RunState
from serq.sim.sessions cimport Session


@cython.final
cdef class Entry:
    cdef public object key
    cdef public double size
    cdef public double last
    cdef public long long seq
    cdef public object snap


@cython.final
cdef class Req:
    cdef public object session
    cdef public HoldTemplate tmpl
    cdef public list pools
    cdef public list units
    cdef public object needs
    cdef public double queued_at
    cdef public bint resumed


@cython.final
cdef class HoldEntry:
    cdef public Py_ssize_t pool
    cdef public double alloc
    cdef public double pos


@cython.final
cdef class Hold:
    cdef public HoldTemplate tmpl
    cdef public list entries
    cdef public object lease_pool
    cdef public bint grown

    cpdef HoldEntry entry(self, Py_ssize_t pool)


@cython.final
cdef class Lease:
    cdef public long long id
    cdef public Py_ssize_t pool
    cdef public double alloc
    cdef public double computed
    cdef public Expr cache


@cython.final
cdef class HoldTemplate:
    cdef public object stmt
    cdef public list refs
    cdef public list units
    cdef public list reserves
    cdef public Expr reuse
    cdef public object body
    cdef public Expr cache
    cdef public object lease_ref
    cdef public Expr lease_idx
    cdef public Expr lease_time


# not final: PoolState (pools.py) is its Python subclass, whose methods can be replaced
cdef class PoolCore:
    cdef public RunState sim
    cdef public Py_ssize_t index
    cdef public object decl
    cdef public double cap
    cdef public object block
    cdef public double used
    cdef public double cached
    cdef public list holders
    cdef public dict entries
    cdef public bint lru_sorted
    cdef public object queue
    cdef public object growers
    cdef public bint lifo
    cdef public object admit_via
    cdef public object queue_keys
    cdef public object evict_keys
    cdef public object spill
    cdef public bint engine_memory
    cdef public bint active
    cdef public TimeAvg used_avg
    cdef public TimeAvg cached_avg
    cdef public TimeAvg queue_avg
    cdef public TimeAvg holders_avg
    cdef public Welford wait
    cdef public Py_ssize_t admissions
    cdef public Py_ssize_t evicted_entries
    cdef public double evicted_units
    cdef public Py_ssize_t preemptions
    cdef public Py_ssize_t spills
    cdef public Py_ssize_t rejected
    cdef public Py_ssize_t stuck

    cdef void record(self, double now)
    cpdef void add_entry(self, Entry ent)
    cpdef double up(self, double x)
    cpdef double down(self, double x)
    cpdef bint fits(self, double need)
    cpdef Req next_waiter(self)
    cpdef void try_admit(self)
    cpdef void retry_growers(self)
    cpdef void evict(self, double need, double cap)


# the innermost hold of a session on a pool; making room in a pool; admitting a request;
# growing a hold (pools.py: PoolOps.admit and PoolOps.grow are the last two)
cpdef Hold innermost(Session s, Py_ssize_t pi)
cdef void make_room(RunState sim, PoolCore pl, double need) except *
cpdef void admit_request(RunState sim, Req req) except *
cpdef bint grow_hold(RunState sim, Session s, Py_ssize_t pi, double d, object job) except? -1
cpdef bint grow_entry(RunState sim, Session s, Py_ssize_t pi, HoldEntry e, double d,
                      object job) except? -1
