# C declarations of serq/sim/fnnodes.py (issue 10): the nodes of the functions that read the
# run's stages and pools, the run typed, each function's rule (`of`) a C method on the typed
# stage or pool, so that a node (a gauge's, a statement's) is evaluated with C calls. Cython
# checks them against fnnodes.py, which stays the definition.

cimport cython

from serq.sim.exprnodes cimport Expr
from serq.sim.pools cimport Entry, PoolCore
from serq.sim.sessions cimport Session
from serq.sim.stages cimport Stage
from serq.sim.state cimport RunState


cdef class Member(Expr):
    cdef RunState sim
    cdef Py_ssize_t base
    cdef Py_ssize_t count
    cdef Expr x                       # the node selecting the member, or None (base)
    cdef Py_ssize_t at(self, a) except -1


# each function is its final class's `ev`, on the member stage_of/pool_of selects (C functions
# the C compiler inlines there)
cdef class StageFn(Member):
    cdef Stage st                     # the stage `base`, once read (x is None)


cdef Stage stage_of(StageFn f, a)


cdef class QueueFn(StageFn):
    cpdef double ev(self, a) except? -1.0


cdef class BusyFn(StageFn):
    cpdef double ev(self, a) except? -1.0


cdef class WorkFn(StageFn):
    cpdef double ev(self, a) except? -1.0


cdef class EstLambdaFn(StageFn):
    cpdef double ev(self, a) except? -1.0


cdef class EstRhoFn(StageFn):
    cpdef double ev(self, a) except? -1.0


cdef class EstWaitFn(StageFn):
    cpdef double ev(self, a) except? -1.0


cdef class PoolFn(Member):
    pass


cdef PoolCore pool_of(PoolFn f, a)


cdef class UsedFn(PoolFn):
    cpdef double ev(self, a) except? -1.0


cdef class FreeFn(PoolFn):
    cpdef double ev(self, a) except? -1.0


cdef class HoldersFn(PoolFn):
    cpdef double ev(self, a) except? -1.0


cdef class QueuedFn(PoolFn):
    cpdef double ev(self, a) except? -1.0


cdef class CachedInFn(PoolFn):
    cpdef double ev(self, a) except? -1.0


cdef class BudgetLeftFn(Member):
    cpdef double ev(self, a) except? -1.0


cdef class Price(Member):
    cdef Expr h
    cdef Expr d
    cpdef double ev(self, a) except? -1.0


cdef class Fail(Expr):
    cdef object sim
    cdef str text
    cpdef double ev(self, a) except? -1.0


cdef class Aggregate(Expr):
    cdef object sim
    cdef object kind
    cdef object obs
    cpdef double ev(self, a) except? -1.0
