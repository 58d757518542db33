"""The step engine of ``Exec`` (formal.md §1.2 "startIteration / assign", §1.3, §1.4;
interpreter.md §8): jobs in admission order, one iteration = the greedy fill of the budget in
serving order, growths that may preempt, admissions while budget is left."""
from __future__ import annotations

from fractions import Fraction

from serq.errors import SimulationError
from serq.ref.expr import ONE, ZERO, Scope, ev
from serq.ref.fragment import refuse


class Job:
    """``Job{owner, mode, left, growing?}``."""

    __slots__ = ("owner", "mode", "left", "growing")

    def __init__(self, owner, mode, left, growing):
        self.owner, self.mode, self.left, self.growing = owner, mode, left, growing


class Engine:
    """The engine's residents (``jobs``, in serving-candidate order) and its running
    iteration (``iter`` and ``iterEnd``)."""

    def __init__(self, machine, decl):
        self.m = machine
        self.decl = decl
        self.memory = decl.memory
        self.residents = []
        self.running = None       # (event number, [(job, tokens)]) of the running iteration
        self.building = None      # the batch being assigned (to refuse a served victim)
        self.iterations = 0

    def add_job(self, owner, mode, work, growing):
        """``run 0 w``: the job goes after every job whose session's ``admSeq <=`` its own, so
        jobs stay in admission order (§1.2)."""
        job = Job(owner, mode, work, None if growing is None else growing.base)
        i = 0
        while i < len(self.residents) and self.residents[i].owner.adm_seq <= owner.adm_seq:
            i += 1
        self.residents.insert(i, job)
        return job

    def remove_job(self, job):
        """A preempted (or ended) session's job leaves the residents and the batch."""
        self.residents.remove(job)
        if self.running is not None:
            self.running = (self.running[0], [a for a in self.running[1] if a[0] is not job])

    def busy(self):
        """Busy if it has jobs or an engine-admitted pool has a queue (§1.2)."""
        return bool(self.residents) or any(
            p.queue for p in self.m.pools if p.decl.admit_via == self.m.engine_index)

    # -- the moment before an iteration (interpreter.md §8.2) -------------------------------
    def kv_of(self, sess):
        """Units the session holds on the engine's memory pool, over all its holds."""
        if self.memory is None:
            return ZERO
        return sum((r[1] for h in sess.holds for r in h.pools if r[0] == self.memory), ZERO)

    def stats(self, entries):
        """``IterStats`` (§1.2) of ``entries``, (job, tokens) pairs: tokens, decoders,
        prefilled, the KV units of the decode and of the prefill owners, and the residents."""
        dec = [j.owner for j, _ in entries if j.mode == "Decode"]
        pre = [j.owner for j, _ in entries if j.mode != "Decode"]
        return {"Ntok": sum((t for _, t in entries), ZERO), "Ndec": Fraction(len(dec)),
                "Npre": sum((t for j, t in entries if j.mode != "Decode"), ZERO),
                "Kvb": sum(map(self.kv_of, dec), ZERO), "Kvp": sum(map(self.kv_of, pre), ZERO),
                "Nres": Fraction(len(self.residents))}

    def totals(self):
        """The moment before an iteration (interpreter.md §8.2): every resident, no tokens."""
        return self.stats([(j, ZERO) for j in self.residents])

    def budget_and_chunk(self, ctx):
        sc = Scope(self.m, None, ctx)
        return ev(self.decl.budget, sc), ev(self.decl.chunk, sc)

    @staticmethod
    def want(job, chunk):
        """``wantOf`` (formal.md §1.4): 1 for a decode, ``min(left, chunk)`` for a prefill when
        a chunk cap is set (> 0), else ``left``."""
        if job.mode == "Decode":
            return min(ONE, job.left)
        return min(job.left, chunk) if chunk > 0 else job.left

    def budget_left(self):
        """``budget_left(engine)`` outside an admission: ``max(budget − Σ want, 0)``."""
        budget, chunk = self.budget_and_chunk(self.totals())
        return max(budget - sum((self.want(j, chunk) for j in self.residents), ZERO), ZERO)

    # -- serving order (§1.3, interpreter.md §8.4) ------------------------------------------
    def order(self, ctx):
        """``serve by ()``: the residents (admission order). ``serve by (keys)``: a stable
        ascending sort by the keys, read with the pre-iteration totals."""
        keys = self.decl.serve.keys
        if not keys:
            return list(self.residents)

        def key(job):
            c = dict(ctx, Decoding=ONE if job.mode == "Decode" else ZERO,
                     Admission=job.owner.adm_seq, Remaining=job.left)
            return tuple(ev(k, Scope(self.m, job.owner, c)) for k in keys)
        return sorted(self.residents, key=key)

    # -- one iteration ------------------------------------------------------------------
    def start_iteration(self):
        """``startIteration``/``assign`` (§1.2): walk the jobs in serving order with ``left =
        budget``; each takes ``t = min(want, left)``; a growth past its allocation may preempt
        (a grower that is its own victim gets nothing); when the jobs run out with budget left
        and nobody preempted, admit the head of the engine's queue and go on. The iteration
        exists if the batch is non-empty or something was preempted; it lasts
        ``max(1, cost)`` (a cost below 1 is refused)."""
        m = self.m
        ctx = self.totals()
        budget, chunk = self.budget_and_chunk(ctx)
        left, batch, served, attn = budget, [], set(), ZERO
        preempts0 = self.preemptions()
        self.building = batch
        while True:
            job = next((j for j in self.order(ctx) if id(j) not in served), None)
            if job is None:
                if left > 0 and self.preemptions() == preempts0 and self.admit(left):
                    continue
                break
            served.add(id(job))
            t = min(self.want(job, chunk), left)
            if t <= 0:
                continue
            if job.growing is not None:
                hold = next(h for h in reversed(job.owner.holds) if h.on(job.growing))
                rec = hold.on(job.growing)
                need = rec[2] + t - rec[1]
                if need > 0 and not m.grow(job.owner, job.growing, need):
                    continue
                if job.mode == "Prefill":
                    attn += t * (rec[2] + t / 2)
                rec[2] += t
                hold.grown = True
            elif job.mode == "Prefill":
                attn += t * t / 2
            batch.append((job, t))
            left -= t
            if left <= 0:
                break
        self.building = None
        if not batch and self.preemptions() == preempts0:
            return
        cost = ev(self.decl.cost, Scope(m, None, dict(self.stats(batch), Attn=attn)))
        if cost < 1:
            refuse(f"an iteration cost of {float(cost)} (below 1; Exec lasts max(1, cost))")
        self.iterations += 1
        self.running = (m.schedule(m.now + cost, "iter", None), batch)

    def preemptions(self):
        return sum(p.preemptions for p in self.m.pools)

    def check_victim(self, victim):
        """A victim already served in this iteration: the reference panics (interpreter.md
        §8.3, probe p46); this is reported as an error instead."""
        if self.building and any(j.owner is victim for j, _ in self.building):
            raise SimulationError(f"time {float(self.m.now)}: a growth preempts session "
                                  f"{victim.serial}, already served in this iteration")

    def admit(self, left):
        """Admission by the engine (interpreter.md §8.8): the head of the first non-empty
        engine-admitted queue, if it fits with ``budget_left = left``; then every ready
        session runs until it blocks (the newcomer becomes a job)."""
        m = self.m
        for pool in m.pools:
            if pool.decl.admit_via == m.engine_index and pool.queue:
                if not m.try_admit(pool, left):
                    return False
                m.drain()
                return True
        return False

    def end_iteration(self, evno):
        """``endIteration``: each batch entry's tokens leave its job; finished jobs leave the
        engine and their sessions become ready, in batch order."""
        if self.running is None or self.running[0] != evno:
            return
        batch, self.running = self.running[1], None
        done = []
        for job, t in batch:
            if job in self.residents:
                job.left -= t
                if job.left <= 0:
                    done.append(job)
        for job in done:
            self.residents.remove(job)
            self.m.completed[self.m.engine_index] += 1
            self.m.make_ready(job.owner)
