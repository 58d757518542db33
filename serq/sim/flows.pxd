# C declarations of serq/sim/flows.py (issue 10): a flow's amounts and a shared stage's
# capacity as C doubles, its flows and jobs as typed dicts, so that the flow operations (Sim's
# FlowOps, typed with @cython.locals) read them without Python attribute look-ups. Cython
# checks them against flows.py, which stays the definition. Every field is `public`: the
# monitors and the tests read them as attributes.

cimport cython
from serq.sim.stages cimport Job, Stage


@cython.final
cdef class Flow:
    cdef public Job job
    cdef public list stages
    cdef public double remaining
    cdef public double rate


cdef class SharedStage(Stage):
    cdef public double cap
    cdef public dict flows

    cpdef void record(self, double now) noexcept  # (Stage.record's signature)
    cpdef void add_job(self, object owner, double work, str mode, object growing)
    cpdef int finish(self, object jid, object epoch) except -1
