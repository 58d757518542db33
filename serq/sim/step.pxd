# C declarations of serq/sim/step.py (issue 10): the step stage's fields as C numbers and
# typed containers, its per-iteration operations as C calls among themselves. Cython checks
# them against step.py, which stays the definition. Every field is `public`: the hooks, the
# monitors, the claims, the plan export and the tests read them as attributes.

cimport cython
from serq.sim.exprnodes cimport Expr
from serq.sim.pools cimport Hold, HoldEntry
from serq.sim.sessions cimport Session
from serq.sim.stages cimport Job, Stage
from serq.sim.stats cimport LogHist, TimeAvg, Welford


@cython.final
cdef class Growth:
    cdef public Hold h
    cdef public HoldEntry e
    cdef public Session o
    cdef public HoldEntry e1
    cdef public list pair


@cython.final
cdef class Token:
    cdef public object turn
    cdef public double at
    cdef public object stage
    cdef public bint decoded
    cdef public bint preempted


cdef class StepStage(Stage):
    cdef public list na
    cdef public Expr budget_e       # None: a constant, budget_k
    cdef public Expr chunk_e        # None: a constant, chunk_k
    cdef public double budget_k
    cdef public double chunk_k
    cdef public double planned_budget
    cdef public double planned_chunk
    cdef public Expr cost_e
    cdef public object memory
    cdef public bint exclusive
    cdef public object serve_keys
    cdef public Expr only_e
    cdef public list residents
    cdef public Py_ssize_t rver
    cdef public Py_ssize_t mark
    cdef public list assigned
    cdef public Py_ssize_t epoch
    cdef public Py_ssize_t iterations
    cdef public TimeAvg prefill_avg
    cdef public TimeAvg decode_avg
    cdef public TimeAvg mixed_avg
    cdef public TimeAvg decodes_avg
    cdef public Welford batch
    cdef public Welford step_cost
    cdef public LogHist itl
    cdef public list via_pools
    cdef public double zero_time
    cdef public Py_ssize_t zero_count
    cdef public double idle_at
    cdef public object hook_iteration

    cpdef void flush_idle(self)
    cpdef void step_stats(self, double now, Py_ssize_t decoders, double prefilled)
    cpdef void add_job(self, object owner, double work, str mode, object growing)
    cpdef Py_ssize_t present(self)
    cpdef Py_ssize_t busy(self)
    cpdef int settle(self, bint pending_now) except -1
    cpdef plan(self, bint totals=*)
    cpdef list order(self, object totals)
    cpdef bint waiting(self)
    cpdef void start_iteration(self)
    cpdef void launch(self, list assign, double attn, tuple sums, double chunk=*)
    cpdef bint admit_bound(self, double left)
    cpdef token(self, Session s, bint decode)
    cpdef void iter_end(self, object epoch)
    cpdef kv_entries(self, object owner)
    cpdef tuple kv_split(self, list jobs)
    cpdef tuple assignment_totals(self, list assign)

