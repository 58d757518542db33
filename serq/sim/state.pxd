# C declarations of serq/sim/state.py (issue 10): the run's shared fields as C slots, so that
# the concepts' methods typed `self=RunState` read them without a __dict__ look-up. Every
# field is `public`: the monitors, hooks, claims, report and tests read them as attributes.
# engine.Sim and the concepts' init_* set them; which concept writes each is noted.

from serq.sim.scheduler cimport Scheduler
from serq.sim.chain cimport Chain
from serq.sim.ready cimport ReadyQueue
from serq.sim.sessions cimport Session, Spare
from serq.sim.stats cimport TimeAvg
from serq.sim.rng cimport Rng
from serq.sim.context cimport Context  # step: the context variables as C doubles


cdef class RunState(Scheduler):
    # engine.Sim: the program, the event loop's and the settle's state
    cdef public object p
    cdef public ReadyQueue ready      # ready.py's queue of sessions
    cdef public list stages
    cdef public list settle_stages
    cdef public list pools
    cdef public list active_pools     # pools.PoolOps
    cdef public TimeAvg live_avg
    cdef public bint warm
    cdef public object limit          # None or an int (an arrivals limit)
    cdef public object hooks          # None or a hooks.HookBus
    cdef public object error
    cdef public bint defer_index
    cdef public object index_error
    cdef public list na
    cdef public Session cur           # the session whose expressions are evaluated, or None
    cdef public Context ctx           # context.Context (C doubles: typed code stores C numbers)
    cdef public object ex             # exprs.ExprCompiler
    cdef public object pre_obs
    cdef public object admit_budget
    cdef public bint totals_read
    cdef public bint settle_simple    # no pools, settling stages or flows: the settle is run_ready
    cdef public object arrival_rate   # the Poisson arrival rate, None for another process
    # counters
    cdef public Py_ssize_t next_serial
    cdef public Py_ssize_t next_job
    cdef public Py_ssize_t next_adm
    cdef public Py_ssize_t next_release
    cdef public Py_ssize_t next_dead
    cdef public Py_ssize_t next_lease
    cdef public Py_ssize_t live
    cdef public Py_ssize_t arrivals
    cdef public Py_ssize_t ended
    cdef public Py_ssize_t turns
    # random streams
    cdef public dict rngs
    cdef public Rng arrival_rng
    # statistics
    cdef public list obs_names
    cdef public list obs
    cdef public list gauge_points
    cdef public list gauge_fns
    # trace and replay
    cdef public object trace
    cdef public bint trace_ordered
    cdef public object replay
    cdef public Py_ssize_t replay_next
    # sessions.SessionOps
    cdef public Py_ssize_t nattrs
    cdef public dict block_cache
    cdef public tuple names
    cdef public list init_ops
    cdef public list turn_ops
    cdef public list session_ops
    cdef public bint closed
    cdef public Chain live_chain      # the live sessions in arrival order: spawn appends,
                                      # end_session unlinks (chain.py)
    cdef public Py_ssize_t slot_serial  # the program's slot_serial, as a C number
    cdef public Spare spare           # compiled: ended sessions, for new_session to recycle
    cdef public object renewal_fn
    # flows.FlowOps
    cdef public dict flows
    cdef public double flows_last
    cdef public Py_ssize_t flow_epoch
    cdef public bint flows_dirty
    cdef public set flows_touched
    # pools.PoolOps
    cdef public bint pools_on_demand
    cdef public Py_ssize_t n_preemptions  # the sum of every pool's preemptions
