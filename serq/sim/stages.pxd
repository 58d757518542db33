# C declarations of serq/sim/stages.py for the modules that call it compiled (`cimport`): a
# job's and a stage's fields as C numbers and typed containers, the per-event operations as C
# calls (issue 10). Cython checks them against stages.py, which stays the definition; this
# file only exports them. Every field is `public`: the step engine (a Python subclass of
# Stage), the flows, the monitors, the hooks and the tests read them as attributes.
# A stage's kind flags (`settles`, `is_step`, `shared`) stay class attributes of stages.py:
# a C field would hide the values that Python subclasses (StepStage, SharedStage) give them.

cimport cython
from serq.sim.chain cimport Chain
from serq.sim.exprnodes cimport Expr
from serq.sim.scheduler cimport Slot, Slots
from serq.sim.state cimport RunState
from serq.sim.stats cimport TimeAvg, Welford

# the estimator's weights, as C constants (a session's states: states.pxd)
cdef double ALPHA, BETA
# the kind of the events the stages post (scheduler.EV_FINISH), a C constant
cdef int EV_FINISH


@cython.final
cdef class Job:
    cdef public Py_ssize_t id     # a C number: only a stage that keeps a map of its jobs by
                                  # id (step, shared) makes an int object of it
    cdef public object owner
    cdef public double work
    cdef public str mode
    cdef public object growing
    cdef public double enqueued
    cdef public double started
    cdef public double tag
    cdef public bint gone     # the job has left its stage (fifo, ps): its pending Finish
                              # is ignored, it is dropped off the ps heap later (PsStage)
    cdef public Py_ssize_t link   # its slot on a fifo stage's chain (FifoStage)
    # the step engine's (step.py)
    cdef public bint decode
    cdef public Py_ssize_t mark
    cdef public object kv
    cdef public object kv1
    cdef public object gent
    cdef public object dge
    cdef public object tok


cdef class Stage:
    cdef public RunState sim  # the run (engine.Sim): its clock, schedule() and fields read as C
    cdef public Py_ssize_t index
    cdef public object decl
    cdef public dict jobs             # None on a fifo stage (FifoStage links its jobs)
    cdef public TimeAvg num_avg
    cdef public TimeAvg busy_avg
    cdef public Py_ssize_t completed
    cdef public Welford wait
    cdef public Welford service
    cdef public Py_ssize_t e_n        # 1 once a job is done (the estimator has a sample), else 0
    cdef public double e_service
    cdef public double e_wait
    cdef public double e_gap
    cdef public Py_ssize_t e_gaps     # 1 once there is a gap between starts, else 0
    cdef public double e_last

    cpdef void record(self, double now) noexcept  # (no error check per stage and event)
    cpdef void add_job(self, object owner, double work, str mode, object growing)
    # (finish, job_done, fill: an int, -1 on an error, so that the caller tests no error state
    # after every call, as it does after a void one)
    cpdef int finish(self, object jid, object epoch) except -1
    cpdef Job new_job(self, object owner, double work, str mode, object growing)
    cpdef int job_done(self, Job j) except -1
    cpdef double est_lambda(self)
    cpdef double est_rho(self)
    cpdef int settle(self, bint pending_now) except -1  # (no error test per call: -1 says)
    cpdef void iter_end(self, object epoch)
    cpdef Py_ssize_t present(self)  # (C numbers: the gauges' `queue`/`busy` read no int object)
    cpdef Py_ssize_t busy(self)
    cpdef work_left(self)


# final, as PsStage (below): its overrides of Stage's cpdef methods are not declared again
@cython.final
cdef class FifoStage(Stage):
    cdef public Py_ssize_t servers
    cdef public Py_ssize_t running    # the jobs in service: the first `running` linked
    cdef public Py_ssize_t count      # the jobs on the stage
    cdef public Chain chain           # the jobs, in the order they came in (chain.py)
    cdef public Job queued            # the first job that waits, or None

    cpdef int fill(self) except -1
    cdef void unlink(self, Job j) noexcept


# final: its methods are C calls with no test for an override in a Python subclass. Its
# overrides of Stage's cpdef methods (record, add_job, settle, finish, present, busy,
# work_left) are not declared again here: Cython would take them for overrides of final ones.
@cython.final
cdef class PsStage(Stage):
    cdef public Expr cap_node         # the capacity's node, evaluated in C
    cdef public bint cap_const        # the capacity is a constant: cap
    cdef public double cap
    cdef public double v
    cdef public double v_last
    cdef public double rate
    cdef public Py_ssize_t count      # the jobs on the stage
    cdef public list tags
    cdef public Py_ssize_t held       # compiled: the jobs on the heap, tags[:held]
    cdef public object epoch          # an int object, as the Finish events carry it
    cdef public bint due              # a Finish of epoch is pending
    cdef public bint dirty

    cdef int reschedule(self) except -1
    cdef inline void advance(self, double now) noexcept
    cdef void leave(self, Job j) noexcept


# a ps stage's compiled heap of Jobs (stages.py): the list's slots as C pointers, as the
# scheduler's heap (scheduler.pxd's Slot)
@cython.locals(x=Job, y=Job)
cdef inline bint before(Slot a, Slot b) noexcept
@cython.locals(new=Slot, parent=Py_ssize_t)
cdef void sift_tag(Slots items, Py_ssize_t pos) noexcept
@cython.locals(tags=list, n=Py_ssize_t)
cdef int push_tag(PsStage st, Job j) except -1
@cython.locals(items=Slots, end=Py_ssize_t, first=Job, last=Slot, pos=Py_ssize_t,
               child=Py_ssize_t)
cdef Job top_tag(PsStage st)
