"""The continuous-batching step engine (interpreter.md §8): residents, the budget and chunk
planned before an iteration, the serving order, admission of waiting holds inside an
iteration, growth of ``growing`` pools, the iteration's cost, and inter-token latency.
"""
from __future__ import annotations

import math
from operator import itemgetter

try:
    import cython
except ImportError:  # Cython not installed: the no-op stand-in, the module runs interpreted
    from serq import _cython_shim as cython

from serq.ir import types as T
from serq.sim.pools import EPS, total_key
from serq.sim.exprs import K
from serq.sim.scheduler import EV_ITER
from serq.sim.stages import Stage

if cython.compiled:  # C types: job, hold and session fields, the run's fields and context
    # variables, the accumulators' updates
    from cython.cimports.serq.sim.context import Context
    from cython.cimports.serq.sim.exprnodes import Expr
    from cython.cimports.serq.sim.pools import (Hold, HoldEntry, PoolCore, admit_request,
                                                 grow_entry, innermost)
    from cython.cimports.serq.sim.sessions import execute
    from cython.cimports.serq.sim.sessions import Session
    from cython.cimports.serq.sim.stages import Job
    from cython.cimports.serq.sim.state import RunState
    from cython.cimports.serq.sim.stats import LogHist, TimeAvg, Welford
    from cython.cimports.serq.sim.states import GROWING, IN_STAGE, QUEUED, READY
else:
    from serq.sim.context import Context
    from serq.sim.exprnodes import Expr
    from serq.sim.pools import Hold, HoldEntry, PoolCore, admit_request, grow_entry, innermost
    from serq.sim.sessions import execute
    from serq.sim.state import RunState
    from serq.sim.sessions import Session
    from serq.sim.stages import Job
    from serq.sim.stats import LogHist, TimeAvg, Welford
    from serq.sim.states import GROWING, IN_STAGE, QUEUED, READY

NAN = math.nan
U64_MAX = float(1 << 64)
ZERO_COST_LIMIT = 100_000
_EPS = cython.declare(cython.double, EPS)  # (a C double where compiled)
first = itemgetter(0)  # the sort key of a (key, job) pair


@cython.final
@cython.cclass
class Growth:
    """What a ``growing`` job advances: its owner's hold and entry on the pool it grows, and
    the owner (``Job.gent``, fixed while the job is resident). For a growing decode with one
    KV entry whose hold is marked grown, also that entry (``e1``) and the job's ``[job,
    tokens]`` pair of the assignment (``pair``): ``Job.dge`` is then this record, the fast
    path of ``start_iteration``. Compiled, a cclass (``step.pxd``): its fields read as C."""
    __slots__ = ("h", "e", "o", "e1", "pair")

    def __init__(self, h, e, o):
        self.h = h
        self.e = e
        self.o = o
        self.e1 = None
        self.pair = None


@cython.final
@cython.cclass
class Token:
    """A session's last token (§8.7, ``Session.last_token``): the turn it came in, when, on
    which stage, whether a decode token came in this turn so far (``decoded``), and whether
    the session was preempted since (``preempted``: set by ``PoolOps.preempt``). A resident
    decode's job keeps its owner's (``Job.tok``). Compiled, a cclass (``step.pxd``): the
    time reads and writes as a C double."""
    __slots__ = ("turn", "at", "stage", "decoded", "preempted")

    def __init__(self, turn, at, stage, decoded):
        self.turn = turn
        self.at = at
        self.stage = stage
        self.decoded = decoded
        self.preempted = False


@cython.cclass
class StepStage(Stage):
    """A step stage (§8). Compiled, a ``cclass`` with C fields (``step.pxd``): the iteration's
    counters and accumulators hold no Python object, and the per-iteration operations are C
    calls among themselves."""
    settles = True
    is_step = True

    def __init__(self, sim, index, decl):
        super().__init__(sim, index, decl)
        k = decl.kind
        ex = sim.ex
        # machine expressions read no session: an attribute there reads NaN
        self.na = [NAN] * len(sim.p.attrs)
        # The expressions are kept as their nodes (``exprnodes.Expr``: compiled, ``ev`` is a
        # C call). Budget and chunk: a constant (the common case) is kept as its value and
        # read in place of a call (``plan``); ``budget_e``/``chunk_e`` are None then
        self.budget_e, self.budget_k = const_or_node(ex, k.budget)
        self.chunk_e, self.chunk_k = const_or_node(ex, k.chunk)
        self.planned_budget = 0.0  # the iteration being planned's (``plan``)
        self.planned_chunk = 0.0
        self.cost_e = ex.expr(k.cost, track=False)  # see Sim.totals_read
        self.memory = k.memory
        self.exclusive = type(k.serve) is T.ServeExclusivePrefill
        keys = k.serve.keys if type(k.serve) is T.ServeBy else ()
        self.serve_keys = [ex.expr(e) for e in keys] or None
        # `serve only (e)` (extension, IR 11): the residents an iteration may serve
        self.only_e = ex.expr(k.only) if k.only is not None else None
        self.residents = []
        self.rver = 0  # bumped at every insertion into or removal from ``residents``
        self.mark = 0  # the mark of the iteration being planned (``Job.mark``: served)
        # the running iteration's assignment, [[job, tokens], ...] (None while none runs); its
        # epoch is ``epoch``, the number of iterations launched (``running`` gives both)
        self.assigned = None
        self.epoch = 0
        self.iterations = 0
        self.prefill_avg = TimeAvg(0.0, 0.0)
        self.decode_avg = TimeAvg(0.0, 0.0)
        self.mixed_avg = TimeAvg(0.0, 0.0)
        self.decodes_avg = TimeAvg(0.0, 0.0)
        self.batch = Welford()
        self.step_cost = Welford()
        self.itl = LogHist()
        self.via_pools = []  # pools declared `admit via` this stage
        self.zero_time = -1.0  # guard against cost-0 iterations that never end (a hang)
        self.zero_count = 0
        # when the last iteration ended, until step_stats records it (-1.0: none pending; a
        # time, a C double where compiled)
        self.idle_at = -1.0
        self.hook_iteration = None  # the running iteration's hooks.Iteration (hooks on)

    # -- statistics -------------------------------------------------------------------------
    def reset_stats(self, now):
        self.flush_idle()
        super().reset_stats(now)
        self.prefill_avg.reset(now)
        self.decode_avg.reset(now)
        self.mixed_avg.reset(now)
        self.decodes_avg.reset(now)

    @cython.locals(t=cython.double)
    def flush_idle(self):
        """Record the end of the last iteration (all flags 0), if not recorded yet.

        ``iter_end`` leaves it pending: when the next iteration starts at the same time,
        setting the averages to 0 and then to the new values at one instant ends in the
        same state as setting the new values (the first setting's 0 contributes
        ``0 * 0``), so the next start skips it; otherwise it is recorded at its time first.
        """
        t = self.idle_at
        if t >= 0.0:
            self.idle_at = -1.0
            self.step_stats(t, 0, 0.0)

    @cython.locals(pre=TimeAvg, dec=TimeAvg, mix=TimeAvg, decs=TimeAvg, v=cython.Py_ssize_t)
    def step_stats(self, now, decoders, prefilled):
        """The iteration-kind flags and the decode count (ints), each ``TimeAvg.set`` skipped
        for a 0 that stays 0 (its piece ``0 * dt`` is 0.0, which leaves the integral as it
        is, and a 0 value makes ``last`` irrelevant)."""
        pre = self.prefill_avg
        v = 1 if prefilled > 0 and decoders == 0 else 0
        if v or pre.value:
            pre.set(now, v)
        dec = self.decode_avg
        v = 1 if decoders > 0 and prefilled == 0 else 0
        if v or dec.value:
            dec.set(now, v)
        mix = self.mixed_avg
        v = 1 if decoders > 0 and prefilled > 0 else 0
        if v or mix.value:
            mix.set(now, v)
        decs = self.decodes_avg
        if decoders or decs.value:
            decs.set(now, decoders)

    def step_fields(self, end):
        self.flush_idle()
        itl = self.itl
        return dict(iterations=self.iterations, prefill_only=self.prefill_avg.mean(end),
                    decode_only=self.decode_avg.mean(end), mixed=self.mixed_avg.mean(end),
                    mean_decodes=self.decodes_avg.mean(end),
                    mean_decode_batch=self.batch.mean if self.batch.n else NAN,
                    mean_decode_step=self.step_cost.mean if self.step_cost.n else NAN,
                    mean_itl=itl.mean, itl_p50=itl.quantile(0.5), itl_p99=itl.quantile(0.99))

    # -- jobs -------------------------------------------------------------------------------
    @cython.locals(j=Job, r=Job, o=Session, seq=cython.double, umax=cython.double,
                   res=list, pos=cython.Py_ssize_t)
    def add_job(self, owner, work, mode, growing):
        j = self.new_job(owner, work, mode, growing)
        j.decode = mode == "Decode"
        umax = U64_MAX
        o = owner
        seq = o.adm_seq if o is not None else umax
        # The residents are in admission order (a job without an owner last; ties in the
        # order they came): the new job goes after every one admitted no later than its
        # owner, a place found from the end, where most new jobs go.
        res = self.residents
        pos = len(res)
        while pos > 0:
            r = res[pos - 1]
            o = r.owner
            if not (o.adm_seq if o is not None else umax) > seq:
                break
            pos -= 1
        res.insert(pos, j)
        self.rver += 1
        j.mark = 0
        j.gone = False  # (set when it leaves: remove_job, iter_end)
        j.kv = None
        j.kv1 = None
        j.gent = None
        j.dge = None
        j.tok = None

    def remove_job(self, j):
        leave(self, j)
        assign = self.assigned
        if assign is not None:
            for k, a in enumerate(assign):
                if a[0] is j:
                    del assign[k]
                    break

    def present(self):
        return len(self.residents)

    def busy(self):
        return len(self.assigned) if self.assigned is not None else 0

    @property
    def running(self):
        """``(epoch, assignment)`` of the running iteration, or None."""
        return (self.epoch, self.assigned) if self.assigned is not None else None

    def work_left(self):
        total = -0.0
        for j in self.jobs.values():
            total += j.work
        return total

    # -- planning (§8.2) ------------------------------------------------------------------------
    def kv_entries(self, owner):
        """The owner's entries in the memory pool, over all its holds, in the order the
        kv_decode / kv_prefill totals sum them. A resident job keeps this list (``Job.kv``): its owner's holds cannot
        change while the job is resident (ending or preempting it removes the job first);
        only the allocations do, and they are read anew at each sum."""
        if owner is None or self.memory is None:
            return ()
        m = self.memory
        return [e for h in owner.holds for e in h.entries if e.pool == m]

    @cython.locals(ctx=Context, dec=cython.Py_ssize_t, kvb=cython.double, kvp=cython.double,
                   nres=cython.double, ndec=cython.double)
    def totals(self):
        """Set the pre-iteration context: residents, decoders, kv_decode, kv_prefill."""
        ctx = self.sim.ctx
        res = self.residents
        dec, kvb, kvp = self.kv_split(res)
        nres = float(len(res))
        ndec = float(dec)
        ctx.nres = nres
        ctx.ndec = ndec
        ctx.kvb = kvb
        ctx.kvp = kvp
        return (nres, ndec, kvb, kvp)

    @cython.locals(dec=cython.Py_ssize_t, kvb=cython.double, kvp=cython.double,
                   h=cython.double, j=Job)
    def kv_split(self, jobs):
        """``decodes, kv_decode, kv_prefill`` of ``jobs``: how many decode, and the units
        their owners hold in the memory pool, summed over the decodes and over the others
        (§8.2), in the jobs' order (the units are finite: no NaN to order)."""
        dec = 0
        kvb = 0.0
        kvp = 0.0
        for j in jobs:
            h = job_units(self, j)
            if j.decode:
                dec += 1
                kvb += h
            else:
                kvp += h
        return dec, kvb, kvp

    @cython.locals(ctx=Context)
    def set_totals(self, t):
        ctx = self.sim.ctx
        ctx.nres, ctx.ndec, ctx.kvb, ctx.kvp = t

    @cython.locals(sim=RunState)
    def plan(self, totals=True):
        """Budget and chunk (``planned_budget``, ``planned_chunk``: fields, not a returned
        tuple, so that compiled they stay C numbers), evaluated with the pre-iteration totals;
        returns the totals, or None where they are not computed (``totals`` false and no
        expression reads them: ``Sim.totals_read``)."""
        sim = self.sim
        t = self.totals() if totals or sim.totals_read else None
        sim.cur = None
        self.planned_budget = self.budget_k if self.budget_e is None else self.budget_e.ev(self.na)
        self.planned_chunk = self.chunk_k if self.chunk_e is None else self.chunk_e.ev(self.na)
        return t

    @staticmethod
    def wants(j, chunk):
        """What job ``j`` asks of an iteration with chunk ``chunk`` (§8.3; ``job_want``)."""
        return job_want(j, chunk)

    @cython.locals(budget=cython.double, chunk=cython.double, want=cython.double,
                   r=cython.double)
    def budget_left(self):
        self.plan()
        budget = self.planned_budget
        chunk = self.planned_chunk
        want = 0.0
        for j in self.residents:
            want += job_want(j, chunk)
        r = budget - want
        return r if r > 0 else 0.0

    # -- serving order (§8.4) ---------------------------------------------------------------------
    @cython.locals(sim=RunState, ctx=Context, o=Session, f=Expr, key=list)
    def order(self, totals):
        res = self.residents
        keys = self.serve_keys
        if keys is None:
            return res
        sim = self.sim
        ctx = sim.ctx
        self.set_totals(totals)
        ranked = []
        for j in res:
            o = j.owner
            ctx.decoding = 1.0 if j.decode else 0.0
            ctx.admission = o.adm_seq if o is not None else U64_MAX
            ctx.remaining = j.work
            sim.cur = o
            a = o.attrs if o is not None else self.na
            key = []
            for f in keys:
                key.append(total_key(f.ev(a)))
            ranked.append((key, j))
        ranked.sort(key=first)
        return [j for _, j in ranked]

    # -- an iteration (§8.3, §8.5) -------------------------------------------------------------------
    def settle(self, pending_now):
        if self.assigned is not None or pending_now:
            return 0
        if self.residents or self.waiting():
            self.start_iteration()
        return 0

    @cython.locals(pl=PoolCore)
    def waiting(self):
        """Whether a hold waits in the queue of a pool admitted via this stage (§8.8)."""
        for pl in self.via_pools:
            if pl.queue:
                return True
        return False

    @cython.locals(keyed=cython.bint, exclusive=cython.bint, resident_prefill=cython.bint,
                   budget=cython.double, chunk=cython.double, left=cython.double,
                   mark=cython.Py_ssize_t, pre0=cython.Py_ssize_t, attn=cython.double,
                   admitted=cython.bint, ntok=cython.double, dec=cython.Py_ssize_t,
                   npre=cython.double, kvb=cython.double, kvp=cython.double, full=cython.bint,
                   check=cython.bint, ver=cython.Py_ssize_t, visited=cython.bint,
                   decode=cython.bint, want=cython.double, tokens=cython.double,
                   cap=cython.double, need=cython.double, hk=cython.double,
                   grown=cython.bint, preempted=cython.bint, eps=cython.double, j=Job,
                   h=Hold, e=HoldEntry, o=Session, sim=RunState, assign=list, res=list,
                   pair=list, dge=Growth, ge=Growth)
    def start_iteration(self):
        """Plan and start an iteration (§8.3, §8.5): serve the residents in the serving order
        (§8.4), each its want within the budget left (under ``exclusive prefill``: one
        prefill alone, or the decodes), growing their ``growing`` holds, then admit a waiting
        hold where budget is left, and serve again.

        The order is taken anew after each job visited (the serve keys may read what a
        growth changed). Without keys it is the residents list itself, so one pass over it
        serves the batch; when a growth changed the list (``rver``: a preemption, a spill
        job) or an admission added to it, the pass starts again, skipping the jobs already
        visited: each job visited is marked (``Job.mark``), and the marks are read once a
        pass may meet a marked job (with keys, always)."""
        sim = self.sim
        keys = self.serve_keys
        keyed = keys is not None
        exclusive = self.exclusive
        only = self.only_e
        totals = self.plan(totals=keyed or only is not None)
        budget = self.planned_budget
        chunk = self.planned_chunk
        if sim.hooks is not None:
            sim.hooks.iter_begin(self, budget, chunk)
        if only is not None:
            only = self.only_filter(totals)
        res = self.residents
        # under exclusive prefill, decodes wait while a prefill is resident
        resident_prefill = False
        if exclusive:
            for j in res:
                if not j.decode:
                    resident_prefill = True
                    break
        left = budget
        assign = []
        self.mark += 1
        mark = self.mark
        pre0 = sim.n_preemptions
        eps = _EPS
        attn = 0.0
        # the totals of the cost, summed as jobs are given tokens; valid unless a job was
        # preempted, a hold admitted or a prefill served alone meanwhile (then
        # ``assignment_totals`` sums again)
        admitted = False
        ntok = 0.0
        dec = 0
        npre = 0.0
        kvb = 0.0
        kvp = 0.0
        full = False
        check = keyed  # whether a pass may meet a job visited already (marked)
        while not full:
            ver = self.rver
            visited = False
            # without keys: the residents list itself
            for j in self.order(totals):
                if visited and keyed:
                    break  # the order anew
                if check and j.mark == mark:
                    continue
                j.mark = mark
                if only is not None and not only(j):
                    continue
                visited = True
                dge = j.dge
                if dge is not None and left >= 1.0 and j.work >= 1.0:
                    # the common decode: one token, no growth needed; what the general
                    # steps below do in that case (see where dge is set)
                    e = dge.e
                    if dge.o.status != GROWING and not e.pos + 1.0 - e.alloc > eps:
                        e.pos += 1.0
                        pair = dge.pair
                        pair[1] = 1.0  # (the pair of a previous iteration, reused)
                        assign.append(pair)
                        ntok += 1.0
                        dec += 1
                        kvb += dge.e1.alloc
                        left -= 1.0
                        if left <= 0:
                            full = True
                            break
                        continue
                decode = j.decode
                want = job_want(j, chunk)
                if exclusive and resident_prefill and decode:
                    tokens = 0.0
                else:
                    cap = budget if exclusive and not decode else left
                    tokens = want if (want <= cap or cap != cap) else cap  # f64::min
                if not tokens > 0:
                    continue
                # ge: j.gent, (hold, entry, owner) of a growing job with an owner
                ge = j.gent
                if ge is None and j.growing is not None and j.owner is not None:
                    o = j.owner
                    if o.status == GROWING:
                        continue
                    ge = growing_entry(sim, o, j.growing)
                    j.gent = ge
                if ge is not None:
                    h = ge.h
                    e = ge.e
                    o = ge.o
                    if o.status == GROWING:
                        continue
                    need = e.pos + tokens - e.alloc
                    if need > eps:
                        grown = grow_entry(sim, o, j.growing, e, need, j)
                        if self.rver != ver:  # the list changed under the pass
                            check = True
                            if grown:
                                ver = -1  # serve this job, then start again
                            else:
                                break  # start again
                        if not grown:
                            continue
                    if not decode:
                        attn += tokens * (e.pos + tokens / 2.0)
                    if not exclusive:  # (exclusive: once the batch is final, below)
                        e.pos += tokens
                        h.grown = True
                elif not decode:
                    attn += tokens * tokens / 2.0
                if exclusive and not decode:  # a prefill alone
                    assign.clear()
                    left = budget
                assign.append([j, tokens])
                ntok += tokens
                hk = job_units(self, j)
                if decode:
                    dec += 1
                    kvb += hk
                    if ge is not None and j.kv1 is not None and not exclusive:
                        # a growing decode with one KV entry, its hold now marked grown
                        # (for good): later tokens take the fast path above, with the
                        # job's [job, tokens] pair of the assignment made once (a job is in
                        # one assignment at a time, once, and nothing keeps an assignment
                        # after its iteration ended)
                        ge.e1 = j.kv1
                        ge.pair = [j, 1.0]
                        j.dge = ge
                else:
                    npre += tokens
                    kvp += hk
                left -= tokens
                if left <= 0 or (exclusive and not decode):
                    full = True
                    break
                if ver < 0:
                    break
            else:  # every resident visited: admit a waiting hold, if one fits
                if left > 0 and not sim.n_preemptions > pre0 and self.waiting():
                    if self.admit_bound(budget if exclusive else left):
                        check = True
                        admitted = True
                        continue
                break
        if exclusive:  # the batch is final: advance its growing holds
            assign = [a for a in assign if not a[0].gone]
            for j, tokens in assign:
                ge = j.gent
                if ge is not None:
                    ge.e.pos += tokens
                    ge.h.grown = True
        preempted = sim.n_preemptions > pre0
        if not assign and not preempted:
            return
        if preempted or admitted or exclusive:
            ntok, dec, npre, kvb, kvp = self.assignment_totals(assign)
        # (the totals as numbers, not a tuple of objects; the class itself: no lookup)
        if type(self) is _STEP_STAGE or type(self).launch is _LAUNCH:
            launch_iteration(self, assign, attn, ntok, dec, npre, kvb, kvp, chunk)
        else:  # a subclass replaced ``launch`` (tests/faults.py): that one is called
            self.launch(assign, attn, (ntok, dec, npre, kvb, kvp), chunk)

    @cython.locals(ntok=cython.double, npre=cython.double, tokens=cython.double, j=Job)
    def assignment_totals(self, assign):
        """``tokens, decodes, prefill tokens, kv_decode, kv_prefill`` of the final assignment;
        fails if a growth preempted a job that was given tokens."""
        sim = self.sim
        ntok = 0.0
        npre = 0.0
        for j, tokens in assign:
            if j.gone:
                o = j.owner
                sim.fail(f"run: at time {sim_time(sim)}, a growth on step stage "
                         f"`{self.decl.name}` preempted session "
                         f"{o.serial if o is not None else '?'}, which had already been "
                         f"given tokens in the same iteration (the reference panics here)",
                         o, "step iteration")
            ntok += tokens
            if not j.decode:
                npre += tokens
        dec, kvb, kvp = self.kv_split([j for j, _ in assign])
        return ntok, dec, npre, kvb, kvp

    def only_filter(self, totals):
        """``serve only (e)``: whether the iteration may serve a resident, ``e`` read once
        per resident and iteration with the pre-iteration totals and the resident's own
        ``decoding``/``admission``/``remaining`` (as a serve key; docs/claims.md)."""
        sim = self.sim
        f = self.only_e
        seen = {}

        def allowed(j):
            v = seen.get(j.id)
            if v is None:
                prev = sim.cur
                self.set_totals(totals)
                o = j.owner
                sim.ctx.decoding = 1.0 if j.decode else 0.0
                sim.ctx.admission = o.adm_seq if o is not None else U64_MAX
                sim.ctx.remaining = j.work
                sim.cur = o
                v = seen[j.id] = f.ev(o.attrs if o is not None else self.na) != 0.0
                sim.cur = prev
            return v
        return allowed

    def launch(self, assign, attn, sums, chunk=0.0):
        """Evaluate the iteration's cost and schedule its end (``launch_iteration``); ``sums``
        holds the assignment's tokens, decodes, prefill tokens, kv_decode and kv_prefill."""
        ntok, dec, npre, kvb, kvp = sums
        launch_iteration(self, assign, attn, ntok, dec, npre, kvb, kvp, chunk)

    @cython.locals(s=Session, sim=RunState, pl=PoolCore)
    def admit_bound(self, left):
        """Admit one waiting hold of an ``admit via`` pool inside the iteration (§8.8)."""
        sim = self.sim
        for pl in self.via_pools:
            sim.admit_budget = (self, left)
            req = pl.next_waiter()
            if req is None:
                sim.admit_budget = None
                continue
            ok = sim.req_fits(req)
            sim.admit_budget = None
            if not ok:
                return False
            if req is pl.queue[0]:
                pl.queue.popleft()
            else:
                pl.queue.remove(req)
            admit_request(sim, req)
            ready = sim.ready
            while ready:
                s = ready.popleft()
                if s.status == READY:
                    execute(sim, s)
            return True
        return False

    @cython.locals(now=cython.double, warm=cython.bint, px=cython.double, nrep=cython.Py_ssize_t,
                   w=cython.double, fin=cython.bint, x=cython.double, eps=cython.double,
                   j=Job, tokens=cython.double, itl=LogHist, sim=RunState, last=Token,
                   assign=list, done=list, ep=cython.Py_ssize_t)
    def iter_end(self, epoch):
        assign = self.assigned
        ep = epoch
        if assign is None or ep != self.epoch:
            return
        self.assigned = None
        sim = self.sim
        now = sim.now
        eps = _EPS
        self.flush_idle()
        self.idle_at = now  # step_stats(now, 0, 0.0), pending (see flush_idle)
        done = None  # the jobs done, a list once there is one
        # Each job's work, then its token: a token reads nothing another job's work update
        # writes, so one pass does both in the reference's order.
        warm = sim.warm
        # the latencies go to the histogram in runs of equal values (px, nrep): most tokens
        # of an iteration follow the previous iteration's
        itl = self.itl
        px = 0.0
        nrep = 0  # (px is the run's value once nrep > 0)
        # every job of the assignment is still resident: remove_job takes a job out of the
        # running assignment as it takes it out of the stage
        for j, tokens in assign:
            w = j.work - tokens
            j.work = w
            fin = w <= eps
            if fin:
                if done is None:
                    done = [j]
                else:
                    done.append(j)
            last = j.tok
            if last is not None:
                # what ``token`` does for a decode whose owner's token record is settled:
                # only the time of its last token moves
                x = now - last.at
                last.at = now
            elif (j.decode or fin) and j.owner is not None:
                xo = self.token(j.owner, j.decode)
                if j.decode:
                    # The record now says (turn, now, self, decoded, not preempted): it stays
                    # so while j is resident (the turn changes only as the session runs; a
                    # preemption, which sets ``preempted``, removes j), so later tokens of j
                    # take the path above.
                    j.tok = j.owner.last_token
                if xo is None:
                    continue
                x = xo
            else:
                continue
            if not warm:
                continue
            if nrep > 0 and x == px:
                nrep += 1
            else:
                if nrep:
                    itl.add_repeat(px, nrep)
                px = x
                nrep = 1
        if nrep:
            itl.add_repeat(px, nrep)
        if done is not None:
            for j in done:
                leave(self, j)
                self.job_done(j)
        if sim.hooks is not None:
            sim.hooks.iter_end(self, done if done is not None else [])

    @cython.locals(sim=RunState, last=Token, now=cython.double, decoded=cython.bint)
    def token(self, s, decode):
        """Session ``s`` has a token now (a decode's, or a prefill's last): its inter-token
        latency (§8.7), or None where it has none; ``s.last_token`` becomes (turn, now,
        self, decoded, not preempted) (``decoded``: a decode token in this turn so far), the
        record kept (a job's ``tok`` may refer to it)."""
        sim = self.sim
        now = sim.now
        turn = s.attrs[sim.p.slot_turn]
        last = s.last_token
        if last is None or last.turn != turn:
            s.last_token = Token(turn, now, self, decode)
            return None
        decoded = last.decoded
        x = (now - last.at if decode or decoded or (last.preempted and last.stage is self)
             else None)
        last.at = now
        last.stage = self
        last.decoded = decoded or decode
        last.preempted = False
        return x


@cython.cfunc
@cython.locals(self=StepStage, assign=list, attn=cython.double, ntok=cython.double,
               dec=cython.Py_ssize_t, npre=cython.double, kvb=cython.double, kvp=cython.double,
               chunk=cython.double, cost=cython.double, now=cython.double, batch=Welford,
               step_cost=Welford, sim=RunState, ctx=Context, epoch=object, idle_t=cython.double)
def launch_iteration(self, assign, attn, ntok, dec, npre, kvb, kvp, chunk) -> cython.void:
    """Evaluate the iteration's cost and schedule its end (step stage ``self``: the stage's
    ``launch``, with the totals as numbers)."""
    sim = self.sim
    ctx = sim.ctx
    ctx.ntok = ntok
    ctx.ndec = float(dec)
    ctx.npre = npre
    ctx.nres = float(len(self.residents))
    ctx.kvb = kvb
    ctx.kvp = kvp
    ctx.attn = attn
    sim.cur = None
    cost = self.cost_e.ev(self.na)
    if not cost > 0:
        cost = 0.0
        if sim.now == self.zero_time:
            self.zero_count += 1
            if self.zero_count > ZERO_COST_LIMIT:
                sim.fail(f"run: step stage `{self.decl.name}` ran {ZERO_COST_LIMIT} "
                         f"iterations of cost 0 at time {sim_time(sim)}, and the clock "
                         f"cannot move (a hold that can never grow preempts itself at "
                         f"every iteration?); give the iterations a positive cost or the "
                         f"pool more room", None, "step iteration")
        else:
            self.zero_time = sim.now
            self.zero_count = 1
    if sim.hooks is not None:  # the batch formed, not running yet: the claims read here
        sim.hooks.batch(self, chunk)
    self.epoch += 1
    epoch = self.epoch
    self.assigned = assign
    self.iterations += 1
    now = sim.now
    idle_t = self.idle_at
    if idle_t >= 0.0:
        if idle_t == now:
            self.idle_at = -1.0  # see flush_idle
        else:
            self.flush_idle()
    self.step_stats(now, dec, npre)
    if sim.warm and dec > 0:
        batch = self.batch
        step_cost = self.step_cost
        batch.add(dec)
        step_cost.add(cost)
    sim.schedule(now + cost, EV_ITER, self.index, epoch, None)
    if sim.hooks is not None:
        sim.hooks.iter_launch(self, assign, cost, (ntok, dec, npre, kvb, kvp))


def const_or_node(ex, e):
    """``(None, value)`` for an expression that is a constant (``exprs``' folded node), else
    ``(node, 0.0)``."""
    n = ex.expr(e)
    if n.shape == K:
        return None, n.value
    return n, 0.0


@cython.cfunc
@cython.locals(st=StepStage, j=Job, res=list, k=cython.Py_ssize_t)
def leave(st, j) -> cython.void:
    """Job ``j`` leaves step stage ``st`` (done, or its owner preempted or ended): out of
    its jobs and residents (found by identity: ``list.remove`` would compare each by
    ``==``, a call each where compiled), its growth records dropped (its pair refers to it:
    a cycle, left to the cyclic GC otherwise)."""
    del st.jobs[j.id]
    j.gone = True
    res = st.residents
    for k in range(len(res)):
        if res[k] is j:
            del res[k]
            break
    st.rver += 1
    j.dge = None
    j.gent = None


@cython.cfunc
@cython.locals(sim=RunState, h=Hold)
def growing_entry(sim, o, g) -> Growth:
    """The hold and entry a ``growing`` job of owner ``o`` advances on pool ``g`` (fixed
    while the job is resident)."""
    h = innermost(o, g)
    if h is None:
        name = sim.p.pools[g].name
        sim.fail(f"`growing {name}` outside a hold of it", o, f"growing {name}")
    return Growth(h, h.entry(g), o)


@cython.cfunc
@cython.locals(j=Job, chunk=cython.double, w=cython.double)
def job_want(j, chunk) -> cython.double:
    """What job ``j`` asks of an iteration (§8.3): a decode one token (its work, if less),
    a prefill its work, at most ``chunk`` when ``chunk > 0``."""
    w = j.work
    if j.decode:
        return 1.0 if w >= 1.0 else w
    if chunk > 0:
        return chunk if chunk < w else w
    return w


@cython.cfunc
@cython.locals(st=StepStage, j=Job, h=cython.double, e=HoldEntry)
def job_units(st, j) -> cython.double:
    """Units job ``j``'s owner holds in the memory pool of step stage ``st`` (its cached
    entries, read anew)."""
    e = j.kv1
    if e is not None:  # one entry: its allocation is the sum (never -0.0)
        return e.alloc
    h = 0.0
    for e in job_kv(st, j):
        h += e.alloc
    return h


@cython.cfunc
@cython.locals(st=StepStage, j=Job)
def job_kv(st, j):
    """``j.kv``, computed on first use; ``j.kv1`` is its entry when it has one only."""
    kv = j.kv
    if kv is None:
        kv = j.kv = st.kv_entries(j.owner)
        j.kv1 = kv[0] if len(kv) == 1 else None
    return kv


def sim_time(sim):
    from serq.sim.fmt import display
    return display(sim.now)


_LAUNCH = getattr(StepStage, "launch")  # the class's own (start_iteration calls it in C)
_STEP_STAGE = StepStage  # the class itself (tests/faults.py replaces the module's name)


class StepOps:
    def init_steps(self):
        for pl in self.pools:
            v = pl.admit_via
            if v is not None:
                st = self.stages[v]
                if st.is_step:
                    st.via_pools.append(pl)

    def total_preemptions(self):
        return self.n_preemptions

    def fn_budget_left(self, i):
        st = self.stages[i]
        if not st.is_step:
            self.fail("budget_left needs a step stage", self.cur)
        ab = self.admit_budget
        if ab is not None and ab[0] is st:
            return ab[1]
        prev = self.cur
        saved = (self.ctx.nres, self.ctx.ndec, self.ctx.kvb, self.ctx.kvp)
        r = st.budget_left()
        self.ctx.nres, self.ctx.ndec, self.ctx.kvb, self.ctx.kvp = saved
        self.cur = prev
        return r
