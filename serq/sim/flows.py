"""Shared stages: jobs that hold several stages at once (``run A, B (w)``), their rates under
``share maxmin`` or ``share bottleneck`` (interpreter.md §7.4).

Every job on a shared stage is a *flow*: one id in the job map of every stage it holds, a
remaining amount and a rate. Rates are recomputed at the end of a settle, for the connected
component of the stages that changed; one ``Finish`` event is scheduled for the flow that
ends first, under a global flow epoch.

Compiled, ``Flow`` and ``SharedStage`` are ``cclass``es with C fields (``flows.pxd``), and the
flow operations read them through typed locals: rates and amounts are C doubles (a sum of
rates meets no two different NaNs, which C could keep otherwise than CPython: a rate is 0 or a
share of the stage's constant capacity; a remaining amount is clamped at 0).
"""
from __future__ import annotations

try:
    import cython
except ImportError:  # Cython not installed: the no-op stand-in, the module runs interpreted
    from serq import _cython_shim as cython

from serq.ir import types as T
from serq.sim.scheduler import EV_FINISH

if cython.compiled:  # the C types of the stages and of the run (stages.pxd, state.pxd): their
    # fields are C reads
    from cython.cimports.serq.sim.stages import Job, Stage
    from cython.cimports.serq.sim.state import RunState
else:
    from serq.sim.stages import Job, Stage
    from serq.sim.state import RunState


@cython.final
@cython.cclass
class Flow:
    __slots__ = ("job", "stages", "remaining", "rate")

    def __init__(self, job, stages, remaining):
        self.job = job
        self.stages = stages
        self.remaining = remaining
        self.rate = 0.0


@cython.cclass
class SharedStage(Stage):
    shared = True

    def __init__(self, sim, index, decl):
        super().__init__(sim, index, decl)
        k = decl.kind
        if type(k) is T.Ps:
            sim.ctx.n = 0.0
            self.cap = sim.ex.function(k.capacity)(sim.na)
        elif type(k) is T.Fifo:
            self.cap = float(k.servers)
        else:
            self.cap = 1.0
        self.flows = {}  # id -> Flow, in id (insertion) order

    @cython.locals(f=Flow, total=cython.double)
    def record(self, now):
        n = len(self.jobs)
        self.num_avg.set(now, n)
        total = 0.0
        for f in self.flows.values():
            total += f.rate
        self.busy_avg.set(now, total / self.cap if self.cap else 0.0)

    def add_job(self, owner, work, mode, growing):
        self.sim.start_flow(owner, self.index, [], work)

    def finish(self, jid, epoch):
        self.sim.finish_flow(jid, epoch)
        return 0

    def remove_job(self, j):
        self.sim.end_flow(j.id)

    def work_left(self):
        sim = self.sim
        dt = sim.now - sim.flows_last
        total = -0.0
        for f in self.flows.values():
            total += max(f.remaining - f.rate * dt, 0.0)
        return total


class FlowOps:
    """The flow operations of the run (a mixin of ``engine.Sim``). Compiled, the per-event
    ones are typed ``self=RunState``: the run's fields (the clock, the flows, the flow
    epoch, the stages) are C reads of its struct (``state.pxd``)."""

    def init_flows(self):
        self.flows = {}
        self.flows_last = 0.0
        self.flow_epoch = 0
        self.flows_dirty = False
        self.flows_touched = set()

    def shared_stage_set(self):
        s = getattr(self, "_shared", None)
        if s is None:
            s = set()
            for block in self.p.blocks:
                for st in block:
                    if type(st) is T.Run and st.also:
                        for r in (st.stage,) + tuple(st.also):
                            s.update(range(r.base, r.base + r.count))
            self._shared = s
        return s

    @property
    def shared_stages(self):
        return self.shared_stage_set()

    @cython.locals(self=RunState, f=Flow, now=cython.double, dt=cython.double,
                   r=cython.double)
    def advance_flows(self):
        now = self.now
        dt = now - self.flows_last
        for f in self.flows.values():
            r = f.remaining - f.rate * dt
            f.remaining = r if r > 0 else 0.0
        self.flows_last = now

    @cython.locals(self=RunState, j=Job, f=Flow, st=SharedStage)
    def start_flow(self, owner, first, others, work):
        self.advance_flows()
        idxs = [first] + [i for i in others]
        stages = [self.stages[i] for i in idxs]
        j = stages[0].new_job(owner, work, "Plain", None)  # the owner waits in the first
        jid = j.id
        f = Flow(j, stages, work)
        self.flows[jid] = f
        for st in stages:
            st.jobs[jid] = j
            st.flows[jid] = f
            self.flows_touched.add(st.index)
        self.flows_dirty = True

    @cython.locals(self=RunState, f=Flow, st=SharedStage)
    def end_flow(self, jid):
        f = self.flows.pop(jid, None)
        if f is None:
            return None
        self.advance_flows()
        for st in f.stages:
            st.jobs.pop(jid, None)
            st.flows.pop(jid, None)
            self.flows_touched.add(st.index)
        self.flows_dirty = True
        return f

    @cython.locals(self=RunState, f=Flow, j=Job, st=SharedStage)
    def finish_flow(self, jid, epoch):
        if epoch != self.flow_epoch or jid not in self.flows:
            return
        f = self.end_flow(jid)
        j = f.job
        owner = j.owner
        j.owner = None  # the stages before the last: their statistics only
        for st in f.stages[:-1]:
            st.job_done(j)
        j.owner = owner  # the last one's job_done also sends the owner on
        f.stages[-1].job_done(j)

    @cython.locals(self=RunState, f=Flow, st=SharedStage, s2=SharedStage)
    def recompute_flows(self):
        self.advance_flows()
        self.flows_dirty = False
        touched = self.flows_touched
        self.flows_touched = set()
        # the connected component of the touched stages, through flows
        comp = set(touched)
        frontier = list(touched)
        while frontier:
            st = self.stages[frontier.pop()]
            for f in st.flows.values():
                for s2 in f.stages:
                    if s2.index not in comp:
                        comp.add(s2.index)
                        frontier.append(s2.index)
        ids = sorted({jid for i in comp for jid in self.stages[i].flows})
        flows = [self.flows[jid] for jid in ids]
        if self.p.share == "Bottleneck":
            for f in flows:
                rate = None
                for st in f.stages:
                    share = st.cap / len(st.flows)
                    if rate is None or share < rate:
                        rate = share
                f.rate = rate if rate is not None else 0.0
        else:
            stages = sorted(comp)
            left = {i: self.stages[i].cap for i in stages}
            rising = {i: len(self.stages[i].flows) for i in stages}
            frozen = set()
            while len(frozen) < len(flows):
                best = None
                for i in stages:
                    if rising[i] > 0:
                        v = left[i] / rising[i]
                        if best is None or v < best[0]:
                            best = (v, i)
                if best is None:
                    break
                share = best[0] if best[0] > 0 else 0.0
                st = self.stages[best[1]]
                for jid in sorted(st.flows):
                    if jid in frozen:
                        continue
                    f = st.flows[jid]
                    f.rate = share
                    frozen.add(jid)
                    for s2 in f.stages:
                        left[s2.index] -= share
                        rising[s2.index] -= 1
        self.flow_epoch += 1
        best = None
        for jid, f in self.flows.items():
            if f.rate > 0:
                t = self.now + f.remaining / f.rate
                if best is None or t < best[0]:
                    best = (t, jid, f)
        if best is not None:
            t, jid, f = best
            self.schedule(t, EV_FINISH, f.stages[0], jid, self.flow_epoch)
