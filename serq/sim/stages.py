"""Stages other than ``step``: fifo, processor sharing, delay (interpreter.md §7.1–§7.3),
the statistics every stage keeps and its price estimator (the stage functions of expressions
that read them, ``queue``, ``busy``, ``work``, ``est_*``, ``price`` (§13), are
``fnnodes``').
"""
from __future__ import annotations

import sys
from heapq import heappop, heappush
from operator import attrgetter

try:
    import cython
except ImportError:  # Cython not installed: the no-op stand-in, the module runs interpreted
    from serq import _cython_shim as cython

from serq.ir import types as T
from serq.sim.exprs import K as CONSTANT
from serq.sim.scheduler import EV_FINISH
if cython.compiled:  # C types: the accumulators' updates, a job's owner and the run's fields
    # are C (stats.pxd, sessions.pxd, state.pxd); a ps heap's slots as C pointers, and the
    # scheduler's post a C call; a fifo's jobs on a chain (chain.pxd); arith's add a C call
    # (PsStage.advance stays small enough for the C compiler to inline)
    from cython.cimports.serq.ir.arith import add
    from cython.cimports.serq.sim.chain import Chain
    from cython.cimports.cpython.ref import Py_DECREF, Py_INCREF, PyObject
    from cython.cimports.cpython.sequence import PySequence_Fast_ITEMS
    from cython.cimports.serq.sim.scheduler import post
    from cython.cimports.serq.sim.sessions import Session
    from cython.cimports.serq.sim.state import RunState
    from cython.cimports.serq.sim.stats import TimeAvg, Welford
    from cython.cimports.serq.sim.states import IN_STAGE, QUEUED, READY
else:
    from serq.ir.arith import add
    from serq.sim.chain import Chain
    from serq.sim.scheduler import post
    from serq.sim.state import RunState
    from serq.sim.stats import TimeAvg, Welford
    # sessions.py imports this module; interpreted, a type in @cython.locals is not used
    # (_cython_shim), so the name stands in without importing it
    Session = object
    from serq.sim.states import IN_STAGE, QUEUED, READY

ALPHA = 0.01
BETA = 1.0 - ALPHA  # the EWMA weight of the past, computed once (the same value)
NAN = float("nan")


@cython.final
@cython.freelist(64)
@cython.cclass
class Job:
    """A job on a stage. ``Stage.new_job`` makes every one and sets its fields (compiled: C
    fields, ``stages.pxd``); ``gone`` says it has left its stage (a fifo's, a ps
    stage's), ``link`` its slot on a fifo stage's chain (``FifoStage``), ``decode`` and
    the last six the step engine's, set by ``StepStage.add_job`` (the other kinds never
    read them: no string comparison of the mode per job).

    Compiled, a job is one of the few objects a run makes per event: a free list keeps the
    memory of 64 ended ones for the next (no allocator call, and a reused object does not
    count towards the cyclic collector's next pass, as a new one does). Its ``id`` is a C
    number: no int object per job. No trashcan: jobs do not refer to each other (a fifo's
    chain links their slots), so freeing one never recurses into another."""
    __slots__ = ("id", "owner", "work", "mode", "growing", "enqueued", "started", "tag",
                 "gone", "decode", "link", "mark", "kv", "kv1", "gent", "dge", "tok")


@cython.cclass
class Stage:
    """What every stage has: its jobs, statistics and a price estimator.

    The jobs are ``jobs``, a map of id to job in id order (the order they came in), except
    on a fifo stage, which links them itself (``jobs`` None): ``listed`` and ``finishing``
    answer for every kind (the monitors, the hooks).

    Compiled, a ``cclass`` with C fields (``stages.pxd``): the per-event operations below
    (``new_job``, ``job_done``, ``record``, a kind's ``add_job``/``fill``/``finish``) are C
    calls among themselves, and their float fields hold no float object. The kind flags are
    class attributes, which subclasses (``StepStage``, ``SharedStage``) set."""
    settles = False
    is_step = False
    shared = False

    def __init__(self, sim, index, decl):
        self.sim = sim
        self.index = index
        self.decl = decl
        self.jobs = {}
        self.num_avg = TimeAvg(0.0, 0.0)
        self.busy_avg = TimeAvg(0.0, 0.0)
        self.completed = 0
        self.wait = Welford()
        self.service = Welford()
        # estimator (EWMA of service, wait, and the gap between job starts)
        self.e_n = 0
        self.e_service = 0.0
        self.e_wait = 0.0
        self.e_gap = 0.0
        self.e_gaps = 0
        self.e_last = 0.0

    def reset_stats(self, now):
        self.num_avg.reset(now)
        self.busy_avg.reset(now)

    @cython.locals(n=cython.Py_ssize_t)
    def record(self, now):
        """The stage's time averages at ``now`` (§12.1): the jobs present, and whether any
        is (1.0 or 0.0: interpreted, a float times a float is CPython's fast path)."""
        n = len(self.jobs)
        self.num_avg.set(now, n)
        self.busy_avg.set(now, 1.0 if n else 0.0)

    @cython.locals(j=Job, t=cython.double, o=Session)
    def new_job(self, owner, work, mode, growing):
        """A new job of ``work`` on this stage, its owner (when it has one) waiting in it;
        in ``jobs`` unless the stage keeps its jobs itself (a fifo, a delay, a ps stage)."""
        sim = self.sim
        if cython.compiled:  # the type's C allocation, no __init__ to look for
            j = Job.__new__(Job)
        else:                # interpreted, a call of the class is the cheaper (-480 instr.)
            j = Job()
        j.id = sim.next_job
        sim.next_job += 1
        t = sim.now
        j.owner = owner
        j.work = work
        j.mode = mode
        j.growing = growing
        j.enqueued = t
        j.started = t
        j.tag = 0.0
        if self.jobs is not None:
            self.jobs[j.id] = j
        if owner is not None:
            o = owner
            o.status = IN_STAGE
            o.job = j
            o.stage = self
        return j

    @cython.locals(now=cython.double, start=cython.double, wait=cython.double,
                   service=cython.double, gap=cython.double, o=Session)
    def job_done(self, j):
        sim = self.sim
        now = sim.now
        start = j.started
        wait = start - j.enqueued
        service = now - start
        # the price estimator: EWMAs of service, wait and the gap between starts (the first
        # of each sets it; e_n and e_gaps say whether there was one, counted no further:
        # interpreted, an int past 256 is a new object per increment)
        if self.e_n == 0:
            self.e_service = service
            self.e_wait = wait
            self.e_n = 1
        else:
            self.e_service = BETA * self.e_service + ALPHA * service
            self.e_wait = BETA * self.e_wait + ALPHA * wait
            gap = start - self.e_last
            if self.e_gaps == 0:
                self.e_gap = gap
                self.e_gaps = 1
            else:
                self.e_gap = BETA * self.e_gap + ALPHA * gap
        self.e_last = start
        if sim.warm:
            self.completed += 1
            self.wait.add(wait)
            self.service.add(service)
        o = j.owner
        if o is not None:  # the owner goes on
            o.status = READY
            o.job = None
            o.stage = None
            sim.ready.append(o)
        return 0

    def est_lambda(self):
        if self.e_gaps == 0 or not self.e_gap > 0:
            return 0.0
        return 1.0 / self.e_gap

    def est_rho(self):
        """The estimated load, capped below 1 (§13: ``est_rho``, and ``price``'s rho)."""
        return min(self.est_lambda() * self.e_service, 0.99)

    def row(self, end, span):
        """The report row of this stage (interpreter.md §12.3)."""
        d = self.decl
        return dict(name=d.name, index=d.index, mean_number=self.num_avg.mean(end),
                    utilization=self.busy_avg.mean(end), completed=self.completed,
                    throughput=self.completed / span if span else NAN,
                    mean_wait=self.wait.mean if self.wait.n else NAN,
                    mean_service=self.service.mean if self.service.n else NAN,
                    **self.step_fields(end))

    def step_fields(self, end):
        return dict(iterations=0, prefill_only=0.0, decode_only=0.0, mixed=0.0,
                    mean_decodes=0.0, mean_decode_batch=NAN, mean_decode_step=NAN,
                    mean_itl=NAN, itl_p50=NAN, itl_p99=NAN)

    # kind-specific
    def add_job(self, owner, work, mode, growing):
        """A job for ``owner`` (None: a spill transfer) of ``work`` (> 0)."""
        raise NotImplementedError

    def finish(self, jid, epoch):
        """A ``Finish`` event of this stage (§7): job ``jid`` may be done (on a fifo stage
        ``jid`` is the job itself)."""
        raise NotImplementedError

    def listed(self):
        """The jobs on the stage, in the order they came in (the monitors')."""
        return list(self.jobs.values())

    def finishing(self, jid):
        """The job a ``Finish`` event of this stage names (its ``jid``), if it is still on
        the stage, else None (the hooks ask before the event is handled)."""
        return self.jobs.get(jid)

    def settle(self, pending_now):
        """The stage's part of the settle (§4), for a stage whose kind ``settles``; the
        others have none. Compiled, a C method of every stage (``stages.pxd``), so that
        ``engine.settle_state`` calls a ps or step stage's own in C; its C result is an
        ``int``, -1 on an error, so the caller tests no error state after every call."""
        return 0

    def present(self):
        return len(self.jobs)

    def busy(self):
        return len(self.jobs)

    def work_left(self):
        """The work left on the stage (§13 ``work``)."""
        raise NotImplementedError

    def remove_job(self, j):
        """Take a job away (its owner was preempted or ended)."""
        raise NotImplementedError

    def iter_end(self, epoch):
        pass


@cython.final
@cython.cclass
class FifoStage(Stage):
    """``fifo(c)`` (§7.1): ``c`` servers, one queue served in arrival order; and ``delay``
    (§7.3), every job started as it comes and finished after its work: a fifo stage whose
    servers are never all busy (the same events, statistics and stage functions: wait 0,
    ``busy`` and ``queue`` the jobs present, ``work`` what is left of theirs).

    The jobs are on ``chain`` in the order they came in (``jobs`` is None; a job's ``link``
    its slot there): the first ``running`` are in service, and ``queued`` is the first that
    waits (None: none waits). A job starts only from the head
    of the queue or on an empty queue, so every job in service came in before every queued
    one, and started in the order it came in. Its ``Finish`` event carries the job itself,
    not its id: the finish takes it off the chain with a few C integer moves, where a map of
    ids would cost an insertion and a removal per job (issue 10). A job taken away (``remove_job``)
    is unlinked and ``gone``, and its pending finish is ignored.

    Compiled, the class is final, as ``PsStage``: its methods are C calls without the test
    for an override in a Python subclass (one per record, add, start and finish)."""

    def __init__(self, sim, index, decl):
        super().__init__(sim, index, decl)
        self.jobs = None
        # a count beyond any number of jobs (fifo(1e300), a delay) means the same: kept
        # within a C size
        k = decl.kind
        self.servers = min(k.servers, sys.maxsize) if type(k) is T.Fifo else sys.maxsize
        self.running = 0
        self.count = 0
        self.chain = Chain()
        self.queued = None

    @cython.locals(n=cython.Py_ssize_t)
    def record(self, now):
        n = self.count
        self.num_avg.set(now, n)
        self.busy_avg.set(now, 1.0 if n else 0.0)

    @cython.locals(j=Job)
    def add_job(self, owner, work, mode, growing):
        j = self.new_job(owner, work, mode, growing)
        j.gone = False
        j.link = self.chain.append(j)
        self.count += 1
        if self.queued is None:  # it heads the queue (empty while a server is free: fill)
            self.queued = j
            if self.running < self.servers:
                self.fill()

    @cython.locals(j=Job, ch=Chain, k=cython.Py_ssize_t, now=cython.double)
    def fill(self):
        """The free servers take the queue's jobs from its head: each starts now and
        finishes after its work. The one place a job starts (``add_job`` puts a job at the
        head of an empty queue, ``finish`` and ``remove_job`` free a server): interpreted,
        no call per start but the chain's ``after``."""
        sim = self.sim
        now = sim.now
        ch = self.chain
        j = self.queued
        while j is not None and self.running < self.servers:
            j.started = now
            self.running += 1
            post(sim, now + j.work, EV_FINISH, self, j, None)
            k = ch.after(j.link)
            j = None if k < 0 else ch.items[k]
        self.queued = j
        return 0

    @cython.locals(j=Job)
    def finish(self, jid, epoch):
        j = jid  # the job itself (fill)
        if j.gone:  # taken away (remove_job)
            return 0
        self.unlink(j)
        self.running -= 1
        self.job_done(j)
        if self.queued is not None:
            self.fill()
        return 0

    def unlink(self, j):
        """Take job ``j`` off the stage: off the chain, and ``gone``."""
        self.chain.unlink(j.link)
        j.gone = True
        self.count -= 1

    @cython.locals(i=cython.Py_ssize_t, jobs=list)
    def remove_job(self, j):
        """Take job ``j`` away: where it is on the chain (in arrival order, the first
        ``running`` in service) says whether a server is freed or the queue loses a job
        (a rare event: a walk of the chain)."""
        jobs = self.chain.listed()
        i = jobs.index(j)
        self.unlink(j)
        if i < self.running:  # in service: the queue's head takes its server
            self.running -= 1
            self.fill()
        elif j is self.queued:
            self.queued = jobs[i + 1] if i + 1 < len(jobs) else None

    def listed(self):
        return self.chain.listed()

    @cython.locals(j=Job)
    def finishing(self, jid):
        j = jid
        return None if j.gone else j

    def present(self):
        return self.count

    def busy(self):
        return self.running

    @cython.locals(i=cython.Py_ssize_t, j=Job, k=cython.Py_ssize_t)
    def work_left(self):
        """The work left on the stage: in service, what is left of each job's (in the order
        they started), then the queued jobs' (in queue order)."""
        now = self.sim.now
        total = -0.0
        i = 0
        for j in self.chain.listed():
            if i < self.running:
                total += max(j.started + j.work - now, 0.0)
            else:
                total += j.work
            i += 1
        return total


@cython.final
@cython.cclass
class PsStage(Stage):
    """``ps(c)`` (§7.2): processor sharing, the capacity ``c`` (an expression of ``n``, the
    number of jobs) shared evenly. A job's tag is the virtual time it finishes at; the job
    with the least ``(tag, id)`` finishes first, at the time ``reschedule`` computes after
    every change (a ``Finish`` of an older ``epoch`` is stale). The ``Finish`` carries the
    stage and the job themselves (as every stage's does: the loop calls the stage's
    ``finish`` with no index to convert and look up), and ``epoch``, an int object: it moves on
    only when a ``Finish`` of it is pending (``due``),
    the one change that must make a pending one stale; after its ``Finish`` came, the next
    one takes the same epoch (no int object made per reschedule, the same events stale as
    with a new epoch every time). As the epoch only grows and each new value is a new
    object (or one of CPython's cached small ints, one per value), a ``Finish`` is of the
    current epoch exactly when it carries the ``epoch`` object itself: ``finish`` tests
    that, with no conversion of the int. A stale ``Finish`` is still an event (§3.1: counted,
    the clock moves to it, the gauges are read and the time averages recorded there), so it
    stays on the heap.

    Compiled, the class is final: its methods are C calls without the test for an override
    in a Python subclass.

    The stage keeps its jobs itself (``jobs`` is None): ``count`` of them, on a heap by
    ``(tag, id)``: interpreted, heapq's tuples ``(tag, id, job)`` (the job is never
    compared: the ids differ); compiled, the Jobs themselves in the first ``held`` slots of
    ``tags`` (``push_tag``, ``top_tag``). A job that leaves (``leave``: finished or
    removed) is marked ``gone`` and stays on the heap until it comes to the top (it still
    takes part in the comparisons, as heapq's tuple does). Where a map of ids would cost an
    insertion, a removal and an int object per job (issue 10). The order the jobs came in,
    which only the monitors and ``work`` ask for (``listed``), is their ids' (``new_job``
    numbers them as they come): it is not kept per job.

    Interpreted, an instance keeps its fields in its ``__dict__``, whose keys CPython 3.11
    shares between the instances of the class, and reads specialized, only up to 29 of them
    (``SHARED_KEYS_MAX_SIZE``): with a 30th every read of a field of the stage became a
    look-up in its dict (+5 % instructions on mgc_ps). A ps stage has 27: add no field
    here or in ``Stage`` without counting."""
    settles = True

    def __init__(self, sim, index, decl):
        super().__init__(sim, index, decl)
        self.jobs = None
        node = sim.ex.expr(decl.kind.capacity)
        self.cap_node = node  # compiled: its ``ev`` a C call
        # a constant capacity (``ps(4)``): its value, the node's answer at every n
        self.cap_const = node.shape == CONSTANT
        self.cap = node.value if self.cap_const else 0.0
        self.v = 0.0
        self.v_last = 0.0
        self.rate = 0.0
        self.count = 0
        self.tags = []
        self.held = 0
        self.epoch = 0
        self.due = False
        self.dirty = False

    @cython.locals(n=cython.Py_ssize_t)
    def record(self, now):
        n = self.count
        self.num_avg.set(now, n)
        self.busy_avg.set(now, 1.0 if n else 0.0)

    @cython.locals(j=Job, now=cython.double)
    def add_job(self, owner, work, mode, growing):
        j = self.new_job(owner, work, mode, growing)
        now = self.sim.now
        self.advance(now)
        j.tag = self.v + work
        j.gone = False
        self.count += 1
        if cython.compiled:
            push_tag(self, j)
        else:
            heappush(self.tags, (j.tag, j.id, j))
        self.dirty = True

    def settle(self, pending_now):
        if self.dirty:
            self.reschedule()
        return 0

    @cython.locals(sim=RunState, now=cython.double, n=cython.Py_ssize_t, phi=cython.double,
                   tags=list, delay=cython.double, j=Job)
    def reschedule(self):
        """The rate after a change (§7.2), and the ``Finish`` of the job with the least tag."""
        sim = self.sim
        now = sim.now
        n = self.count
        if n:
            sim.cur = None
            if self.cap_const:
                phi = self.cap
            else:  # (``n`` is read by a ps capacity only, which sets it first: validate.py)
                sim.ctx.n = float(n)
                phi = self.cap_node.ev(sim.na)
        else:
            phi = 0.0
        self.advance(now)
        self.rate = phi / n if n else 0.0
        if self.due:  # the pending Finish becomes stale
            self.epoch += 1
            self.due = False
        self.dirty = False
        if cython.compiled:
            j = top_tag(self)
        else:
            tags = self.tags
            while tags and tags[0][2].gone:
                heappop(tags)
            j = tags[0][2] if tags else None
        if j is None or not self.rate > 0:
            return 0
        delay = (j.tag - self.v) / self.rate
        post(sim, now + (delay if delay > 0 else 0.0), EV_FINISH, self, j, self.epoch)
        self.due = True
        return 0

    @cython.locals(j=Job)
    def finish(self, jid, epoch):
        if epoch is not self.epoch:  # stale: the epoch has moved on (see the class)
            return 0
        self.due = False  # (this is the Finish of the epoch)
        j = jid  # the job itself (reschedule)
        if j.gone:
            return 0
        self.leave(j)
        self.advance(self.sim.now)
        if j.tag > self.v:
            self.v = j.tag
        self.job_done(j)
        return 0

    def remove_job(self, j):
        self.leave(j)

    def leave(self, j):
        """Job ``j`` leaves the stage (finished or removed): gone, dropped from the heap
        when it comes to the top (``reschedule``)."""
        j.gone = True
        self.count -= 1
        self.dirty = True

    @cython.locals(k=Job)
    def listed(self):
        """The jobs on the stage in the order they came in: the heap's, by id (see the
        class)."""
        if cython.compiled:
            heap = self.tags[:self.held]
        else:
            heap = [t[2] for t in self.tags]
        return sorted([k for k in heap if not k.gone], key=job_id)

    @cython.locals(j=Job)
    def finishing(self, jid):
        j = jid
        return None if j.gone else j

    @cython.locals(x=cython.double)
    def advance(self, now):
        """The virtual time at ``now`` (§7.2): ``v`` grows by ``rate`` per unit of time."""
        x = self.rate * (now - self.v_last)
        self.v = add(self.v, x) if x != x else self.v + x  # of two NaNs the first (arith)
        self.v_last = now

    def present(self):
        return self.count

    def busy(self):
        return self.count

    def work_left(self):
        now = self.sim.now
        v = self.v + self.rate * (now - self.v_last)
        total = -0.0
        for j in self.listed():
            total += max(j.tag - v, 0.0)
        return total


job_id = attrgetter("id")  # a job's id (PsStage.listed's order)


# A ps stage's compiled heap (PsStage): heapq's algorithm on the Jobs, ``before`` the
# comparison, the sifts moving the list's slots as C pointers (``stages.pxd``), as
# scheduler.py's on the events.

def before(a, b):
    """Job ``a`` comes before ``b`` on a ps stage's heap: ``(a.tag, a.id) < (b.tag, b.id)``
    as the interpreted engine's tuples compare (the tag decides when the tags differ, a NaN
    differing from every tag, else the id). The heap holds only Jobs: cast, not tested."""
    x = cython.cast(Job, a)
    y = cython.cast(Job, b)
    if x.tag != y.tag:
        return x.tag < y.tag
    return x.id < y.id


def sift_tag(items, pos):
    """heapq's ``_siftdown`` from the root: the job at ``pos`` moves up past every parent it
    comes before. The slots are only permuted: no reference count changes."""
    new = items[pos]
    while pos > 0:
        parent = (pos - 1) >> 1
        if not before(new, items[parent]):
            break
        items[pos] = items[parent]
        pos = parent
    items[pos] = new


def push_tag(st, j):
    """heapq's ``heappush`` on a ps stage's compiled heap: the first ``st.held`` slots of
    ``st.tags`` (the slots after hold None: a list that shrinks and grows again by one
    reallocates its array every few jobs)."""
    tags = st.tags
    n = st.held
    if n < len(tags):
        tags[n] = j
    else:
        tags.append(j)
    st.held = n + 1
    sift_tag(PySequence_Fast_ITEMS(tags), n)
    return 0


def top_tag(st):
    """The job with the least ``(tag, id)`` on a ps stage's compiled heap (None when it has
    none), after popping the gone jobs above it: heapq's ``heappop`` step for step (the last
    job takes the root, the smaller child moves up until a leaf is reached, ``_siftup``, and
    the last job is sifted from there, ``_siftdown``), as ``scheduler.pop_until`` is, so both
    engines see the same first job after every change, ties and NaN tags included (the order
    is then not a total one, and the heap's shape decides)."""
    items = PySequence_Fast_ITEMS(st.tags)
    end = st.held
    while end:
        first = cython.cast(Job, items[0])
        if not first.gone:
            st.held = end
            return first
        end -= 1
        items[0] = items[end]
        Py_INCREF(None)
        items[end] = cython.cast(cython.pointer(PyObject), None)
        if end:
            last = items[0]
            pos = 0
            child = 1
            while child < end:
                if child + 1 < end and not before(items[child], items[child + 1]):
                    child += 1
                items[pos] = items[child]
                pos = child
                child = 2 * pos + 1
            items[pos] = last
            sift_tag(items, pos)
        Py_DECREF(first)  # the slot's reference (``first`` holds its own)
    st.held = 0
    return None


def make_stage(sim, index, decl):
    k = type(decl.kind)
    if index in sim.shared_stage_set():
        from serq.sim.flows import SharedStage
        return SharedStage(sim, index, decl)
    if k is T.Fifo or k is T.Delay:
        return FifoStage(sim, index, decl)
    if k is T.Ps:
        return PsStage(sim, index, decl)
    from serq.sim.step import StepStage
    return StepStage(sim, index, decl)


class StageOps:
    """The stages' operations on the run (a mixin of ``engine.Sim``). The stage functions of
    expressions (``queue``, ``busy``, ``work``, ``est_*``, ``price``; §13) are nodes of
    ``fnnodes``, which call a stage's own (``present``, ``busy``, ``work_left``,
    ``est_lambda``, ``est_rho``) through its C type."""

    def detach_job(self, s):
        """Remove a session's job from its stage (preemption, ending)."""
        j = s.job
        if j is not None:
            s.stage.remove_job(j)
            s.job = None
            s.stage = None
