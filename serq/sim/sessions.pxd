# C declarations of serq/sim/sessions.py (issue 10): a session's fields as C fields, read and
# written by compiled callers without an attribute look-up (its states and frame kinds:
# states.pxd). Cython checks them against sessions.py, which stays the definition.
# Every field is `public`: the pools, stages and step engine write them, and the interpreted
# observers (monitors.py, hooks.py, serq/claims, tests) read them.

cimport cython


@cython.final
cdef class Session:
    cdef public Py_ssize_t serial
    cdef public list attrs
    cdef public list frames       # [ops, pc, kind, hold] lists, innermost last
    cdef public int status        # READY, QUEUED, IN_STAGE, GROWING or ENDED
    cdef public object job
    cdef public object stage
    cdef public object holds      # () until the first hold, then a list
    cdef public object pending
    cdef public object queued_pool
    cdef public object trace_turns
    cdef public Py_ssize_t trace_pos
    cdef public bint script
    cdef public double adm_seq    # a float in both modes (pools.py writes float(next_adm))
    cdef public dict preempt_pos  # the shared NO_POS until the first preemption
    cdef public bint stuck
    cdef public object leases     # () until the first lease, then a list
    cdef public object last_token
    cdef public Py_ssize_t spins
    cdef public double spin_time
    cdef public object grow


cdef Py_ssize_t LOOP_SPIN_LIMIT

cdef unsigned int u32(double x) noexcept
cdef Session new_session(Py_ssize_t serial, Py_ssize_t nattrs, list frame)


# SessionOps' spawning, executing and ending, as C calls for a caller holding the run typed
# (sessions.py writes them as functions of the run; the class takes them as methods)
from serq.sim.state cimport RunState

cpdef Session spawn(RunState self, object init=*)
cpdef run_workload_block(RunState self, Session s, list ops)
cpdef execute(RunState self, Session s)
cpdef end_session(RunState self, Session s)
cpdef do_turn(RunState self, Session s)
