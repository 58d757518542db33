# C declarations of serq/sim/sessions.py (issue 10): a session's fields as C fields, read and
# written by compiled callers without an attribute look-up (its states and frame kinds:
# states.pxd). Cython checks them against sessions.py, which stays the definition.
# Every field is `public`: the pools, stages and step engine write them, and the interpreted
# observers (monitors.py, hooks.py, serq/claims, tests) read them.

cimport cython
from cpython.object cimport PyObject
ctypedef PyObject* Borrowed  # an object pointer without a reference of its own (recycled)
from serq.sim.observations cimport Observations


@cython.final
cdef class Session:
    cdef public Py_ssize_t serial
    cdef public list attrs
    cdef public list ops          # the session block's ops (compiled statements)
    cdef public Py_ssize_t pc     # its next one
    cdef public list frames       # [ops, pc, kind, hold] lists of the blocks entered, innermost
                                  # last; None until the first (see enter_block)
    cdef public Py_ssize_t link   # its slot on the live sessions' chain (RunState.live_chain),
                                  # -1 once ended
    cdef public int status        # READY, QUEUED, IN_STAGE, GROWING or ENDED
    cdef public object job
    cdef public object stage
    cdef public list holds        # the shared empty EMPTY until the first hold, then its own
    cdef public object pending
    cdef public object queued_pool
    cdef public object trace_turns
    cdef public Py_ssize_t trace_pos
    cdef public bint script
    cdef public double adm_seq    # a float in both modes (pools.py writes float(next_adm))
    cdef public dict preempt_pos  # the shared NO_POS until the first preemption
    cdef public bint stuck
    cdef public list leases       # EMPTY until the first lease, then its own
    cdef public object last_token
    cdef public Py_ssize_t spins
    cdef public double spin_time
    cdef public object grow
    cdef public list spare_frame  # its last plain block's frame, for reuse (compiled: Branch)


cdef Py_ssize_t LOOP_SPIN_LIMIT
cdef double U64_MAX
cdef Py_ssize_t SPARE_MAX
cdef Py_ssize_t SPARE_PROBES
cdef list EMPTY

cdef unsigned int u32(double x) noexcept

# the run's last ended sessions, for new_session to recycle (compiled only)
@cython.final
cdef class Spare:
    cdef list slots
    cdef Py_ssize_t at
    cdef keep(self, Session s)

@cython.locals(old=Borrowed)
cdef void put(list a, Py_ssize_t i, object x) noexcept

cdef Session new_session(Py_ssize_t serial, Py_ssize_t nattrs, list ops, Spare spare)
@cython.locals(i=Py_ssize_t, k=Py_ssize_t, j=Py_ssize_t, s=Session, fr=list, a=list,
               slots=list, old=Borrowed, zero=object)
cdef Session recycled(Spare spare, Py_ssize_t nattrs)
cdef enter_block(Session s, list fr)


# SessionOps' spawning, executing and ending, as C calls for a caller holding the run typed
# (sessions.py writes them as functions of the run; the class takes them as methods)
from serq.sim.state cimport RunState
from serq.sim.chain cimport Chain

cpdef Session spawn(RunState self, object init=*)
cdef take_turns(RunState self, Session s, object init)
@cython.locals(a=list)
cdef take_attrs(Session s, object init)
cpdef run_workload_block(RunState self, Session s, list ops)
cpdef execute(RunState self, Session s)
cpdef end_session(RunState self, Session s)
@cython.locals(s=Session)
cpdef dict live_sessions(RunState self)
@cython.locals(ch=Chain, k=Py_ssize_t, s=Session)
cpdef Session live_session(RunState self, Py_ssize_t serial)
cpdef do_turn(RunState self, Session s)


# The statements' ops: one class per statement shape, whose `run` the executor calls through
# the C vtable (sessions.py; `run` returns True when the session stops). The fields hold what
# a statement needs, typed where a C call or C number reads them. `run` is a C method (cdef):
# only this module calls it, and a cpdef one checks for a Python override on every call.
from serq.sim.stages cimport Stage
from serq.sim.exprnodes cimport Expr

cdef class Op:
    cdef readonly bint indexed    # reports its out-of-range indices after it (Deferring)
    cdef bint run(self, Session s) except -1

cdef class CallOp(Op):
    cdef object fn
    cdef bint run(self, Session s) except -1

cdef class Refused(Op):
    cdef object sim
    cdef str msg
    cdef str kind
    cdef bint run(self, Session s) except -1

cdef class SetNow(Op):
    cdef RunState sim
    cdef Py_ssize_t slot
    cdef bint run(self, Session s) except -1

cdef class SetExpr(Op):
    cdef Py_ssize_t slot
    cdef Expr f
    cdef bint run(self, Session s) except -1

cdef class Observe(Op):
    cdef RunState sim
    cdef Py_ssize_t k
    cdef Expr f
    cdef Observations rec
    cdef Py_ssize_t slot_turn
    cdef bint run(self, Session s) except -1

cdef class End(Op):
    cdef RunState sim
    cdef bint run(self, Session s) except -1

cdef class Turn(Op):
    cdef RunState sim
    cdef bint run(self, Session s) except -1

cdef class Loop(Op):
    cdef list body
    cdef bint run(self, Session s) except -1

cdef class Branch(Op):
    cdef object sim
    cdef Expr g
    cdef list then, other
    cdef str text
    cdef bint run(self, Session s) except -1

cdef class Choose(Op):
    cdef object sim
    cdef Expr count
    cdef list keys                # of Expr
    cdef Py_ssize_t var
    cdef bint run(self, Session s) except -1

from serq.sim.ready cimport ReadyQueue

cdef class RunSimple(Op):
    cdef Expr work
    cdef Stage stage
    cdef str mode
    cdef ReadyQueue ready
    cdef bint run(self, Session s) except -1

cdef class RunGeneral(Op):
    cdef RunState sim
    cdef Expr work
    cdef object base, count, growing
    cdef Expr idxf, gfn           # None where the stage or pool is not indexed
    cdef str mode
    cdef list afns
    cdef bint shared
    cdef list stages
    cdef ReadyQueue ready
    cdef bint run(self, Session s) except -1

cdef class Fused(Op):
    cdef tuple ops
    cdef Op last
    cdef bint run(self, Session s) except -1

cdef class Pair(Op):
    cdef readonly Op first, last
    cdef bint run(self, Session s) except -1

cdef class Deferring(Op):
    cdef RunState sim
    cdef readonly Op op
    cdef bint run(self, Session s) except -1
