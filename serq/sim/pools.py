"""Pools: holds, queues and admission, growth, preemption, leases, the prefix cache,
eviction and spill (interpreter.md §9–§10).

A ``hold`` statement becomes a *request* (``Req``: the pools it names, its units, when it
queued) that waits in its first pool's queue; admitted, it becomes a ``Hold`` (per pool: the
allocation, the computed position, whether a run or load advanced it) with a frame for its
body. Preemption releases the holds down to the victim's and puts a fresh request, re-read
from the same statement, at the front of the queue.
"""
from __future__ import annotations

import math
from bisect import insort
from collections import deque

try:
    import cython
except ImportError:  # Cython not installed: the no-op stand-in, the module runs interpreted
    from serq import _cython_shim as cython

from serq.ir import types as T
from serq.sim import evict
from serq.sim.fmt import display
from serq.sim.scheduler import EV_LEASE
from serq.sim.sessions import NO_POS
from serq.sim.stats import total_order_key as total_key
# Compiled, the C types: the accumulators' updates are C calls (stats.pxd); the run's fields
# (state.pxd) and a session's (sessions.pxd) are C slots for the methods typed with them
if cython.compiled:
    from cython.cimports.serq.sim.exprnodes import Expr
    from cython.cimports.serq.sim.stats import TimeAvg, Welford
    from cython.cimports.serq.sim.state import RunState
    from cython.cimports.serq.sim.sessions import Session, enter_block, live_session
    from cython.cimports.libc.math import ceil, floor
    from cython.cimports.serq.sim.states import ENDED, GROWING, HOLD, IN_STAGE, QUEUED, READY
else:
    from serq.sim.exprnodes import Expr
    from serq.sim.stats import TimeAvg, Welford
    from serq.sim.state import RunState
    from serq.sim.sessions import Session, enter_block, live_session
    from math import ceil, floor
    from serq.sim.states import ENDED, GROWING, HOLD, IN_STAGE, QUEUED, READY

EPS = 1e-9
# past this many pieces of one entry, the rest of it is evicted in one step (serq.sim.evict).
# The one step (``evict.pieces``, exact Python ints) costs as much as about a thousand pieces
# of the compiled loop (a few C operations each) but as some sixty of the interpreted one.
BULK_PIECES = cython.declare(cython.Py_ssize_t, 1024 if cython.compiled else 64)
# Programs with more pools than this (arrays) visit and record only the pools a run names
# (PoolOps.init_active_pools): the cost would grow with the declared members, used or not.
ON_DEMAND_POOLS = 64
NAN = math.nan
# EPS and inf as C doubles where compiled (a module global is a Python float, unboxed at each
# use; EPS stays for the modules that import it)
_EPS = cython.declare(cython.double, EPS)
_PIECES_LIMIT = cython.declare(cython.Py_ssize_t, evict.PIECES_LIMIT)
_INF = cython.declare(cython.double, math.inf)


def _pool_index(pl):
    return pl.index


# The classes below are C structs where compiled (pools.pxd: C numbers, the per-event
# methods C calls for typed callers; issue 10); interpreted, plain classes with slots.


@cython.final
@cython.cclass
class Entry:
    """A prefix-cache entry: its key (owner serial, or a dead key >= 2^62), size, release
    time and release number, and the owner's attributes when it was made (``snapshot``)."""
    __slots__ = ("key", "size", "last", "seq", "snap")

    def __init__(self, key, size, last, seq, snap):
        self.key = key
        self.size = size
        self.last = last
        self.seq = seq
        self.snap = snap


@cython.final
@cython.cclass
class Req:
    """A hold statement's request for its pools, waiting (or about to wait) in a queue."""
    __slots__ = ("session", "tmpl", "pools", "units", "needs", "queued_at", "resumed")

    def __init__(self, session, tmpl, pools, units, queued_at):
        self.session = session
        self.tmpl = tmpl
        self.pools = pools
        self.units = units
        self.needs = None
        self.queued_at = queued_at
        self.resumed = False


@cython.final
@cython.cclass
class HoldEntry:
    __slots__ = ("pool", "alloc", "pos")

    def __init__(self, pool, alloc, pos):
        self.pool = pool
        self.alloc = alloc
        self.pos = pos


@cython.final
@cython.cclass
class Hold:
    """An admitted hold: per pool its allocation and position; ``grown`` once a ``growing``
    run or a ``load`` advanced any position (then every pool's computed value is its
    position, else its allocation)."""
    __slots__ = ("tmpl", "entries", "lease_pool", "grown")

    def __init__(self, tmpl, entries, lease_pool):
        self.grown = False
        self.tmpl = tmpl
        self.entries = entries
        self.lease_pool = lease_pool

    @cython.ccall
    @cython.locals(e=HoldEntry)
    def entry(self, pool: cython.Py_ssize_t) -> HoldEntry:
        for e in self.entries:
            if e.pool == pool:
                return e
        return None


@cython.final
@cython.cclass
class Lease:
    __slots__ = ("id", "pool", "alloc", "computed", "cache")

    def __init__(self, lid, pool, alloc, computed, cache):
        self.id = lid
        self.pool = pool
        self.alloc = alloc
        self.computed = computed
        self.cache = cache


@cython.final
@cython.cclass
class HoldTemplate:
    """What a hold statement compiles to: the nodes (``exprnodes.Expr``) of its header's and
    clauses' expressions."""
    __slots__ = ("stmt", "refs", "units", "reserves", "reuse", "body", "cache", "lease_ref",
                 "lease_idx", "lease_time")


@cython.cclass
class PoolCore:
    """A pool's state (its typed part: ``PoolState`` below is the class the run makes)."""
    __slots__ = ("sim", "index", "decl", "cap", "block", "used", "cached", "holders",
                 "entries", "lru_sorted", "queue", "growers", "lifo", "admit_via",
                 "queue_keys", "evict_keys", "spill", "engine_memory", "active", "used_avg",
                 "cached_avg", "queue_avg", "holders_avg", "wait", "admissions",
                 "evicted_entries", "evicted_units", "preemptions", "spills", "rejected",
                 "stuck")

    def __init__(self, sim, index, decl):
        self.sim = sim
        self.index = index
        self.decl = decl
        self.cap = decl.cap
        self.block = decl.block
        self.used = 0.0
        self.cached = 0.0
        self.holders = []
        self.entries = {}
        # Whether ``entries`` is in (last, seq) order, so that its first entry is the least
        # recently released one (``evict lru`` without a scan). Kept by ``add_entry``.
        self.lru_sorted = True
        self.queue = deque()
        self.growers = deque()
        self.lifo = decl.preempt == "Lifo"
        self.admit_via = decl.admit_via
        ex = sim.ex
        # the expressions as their nodes (``exprnodes.Expr``: compiled, ``ev`` is a C call)
        self.queue_keys = ([ex.expr(k) for k in decl.queue] if decl.queue else None)
        ev = decl.evict
        self.evict_keys = ([ex.expr(k, "evict") for k in ev.keys]
                           if type(ev) is T.EvictBy else None)
        sp = decl.spill
        if sp is not None:
            self.spill = (sp.to, sp.via, ex.expr(sp.work, "evict"), ex.expr(sp.when, "evict"))
        else:
            self.spill = None
        self.engine_memory = False  # set when a step stage declares `memory` this pool
        self.active = False  # see PoolOps.init_active_pools
        self.used_avg = TimeAvg(0.0, 0.0)
        self.cached_avg = TimeAvg(0.0, 0.0)
        self.queue_avg = TimeAvg(0.0, 0.0)
        self.holders_avg = TimeAvg(0.0, 0.0)
        self.wait = Welford()
        self.admissions = 0
        self.evicted_entries = 0
        self.evicted_units = 0.0
        self.preemptions = 0
        self.spills = 0
        self.rejected = 0
        self.stuck = 0

    # -- statistics -------------------------------------------------------------------------
    @cython.cfunc  # (compiled, called by the engine's record only: no Python override check)
    def record(self, now: cython.double) -> cython.void:
        self.used_avg.set(now, self.used)
        self.cached_avg.set(now, self.cached)
        self.queue_avg.set(now, len(self.queue))
        self.holders_avg.set(now, len(self.holders))

    def reset_stats(self, now):
        self.used_avg.reset(now)
        self.cached_avg.reset(now)
        self.queue_avg.reset(now)
        self.holders_avg.reset(now)

    def row(self, end):
        d = self.decl
        return dict(name=d.name, index=d.index, mean_used=self.used_avg.mean(end),
                    mean_cached=self.cached_avg.mean(end), mean_queue=self.queue_avg.mean(end),
                    mean_holders=self.holders_avg.mean(end),
                    mean_wait=self.wait.mean if self.wait.n else NAN,
                    admissions=self.admissions, evicted_entries=self.evicted_entries,
                    evicted_units=self.evicted_units, preemptions=self.preemptions,
                    spills=self.spills, rejected=self.rejected, stuck=self.stuck)

    @cython.ccall
    @cython.locals(tail=Entry)
    def add_entry(self, ent: Entry) -> cython.void:
        """Insert a new cache entry (at the end of ``entries``), keeping ``lru_sorted``: out
        of order when the last entry comes after it by (release time, release number)."""
        entries = self.entries
        if self.lru_sorted and entries:
            tail = next(reversed(entries.values()))
            if tail.last > ent.last or (tail.last == ent.last and tail.seq > ent.seq):
                self.lru_sorted = False
        entries[ent.key] = ent

    # -- blocks -------------------------------------------------------------------------------
    # ``x`` >= 0 (units are clamped), so the C ``ceil``/``floor`` of the compiled module give
    # what ``math.ceil``/``math.floor`` do on a finite quotient; one that overflowed (a tiny
    # block) is inf blocks, as in Rust (``math.ceil`` of inf would raise)
    @cython.ccall
    @cython.locals(b=cython.double, q=cython.double)
    def up(self, x: cython.double) -> cython.double:
        if self.block is None or x == _INF:
            return x
        b = self.block
        q = x / b
        if q == _INF:
            return q * b
        return ceil(q) * b

    @cython.ccall
    @cython.locals(b=cython.double, q=cython.double)
    def down(self, x: cython.double) -> cython.double:
        if self.block is None or x == _INF:
            return x
        b = self.block
        q = x / b
        if q == _INF:
            return q * b
        return floor(q) * b

    @cython.ccall
    def fits(self, need: cython.double) -> cython.bint:
        return self.used + self.up(need) <= self.cap + _EPS

    # -- admission (§9.3) ---------------------------------------------------------------------
    @cython.ccall
    @cython.locals(front=Req, req=Req, best=Req, now=cython.double, sim=RunState, s=Session,
                   f=Expr, k=list)
    def next_waiter(self) -> Req:
        q = self.queue
        if not q:
            return None
        front = q[0]
        keys = self.queue_keys
        if front.resumed or keys is None:
            return front
        sim = self.sim
        now = sim.now
        best = None
        bk = None
        for req in q:
            s = req.session
            sim.cur = s
            sim.ctx.waited = now - req.queued_at
            a = s.attrs
            k = []
            for f in keys:
                k.append(total_key(f.ev(a)))
            if bk is None or k < bk:
                bk = k
                best = req
        return best

    @cython.ccall
    @cython.locals(req=Req, sim=RunState)
    def try_admit(self) -> cython.void:
        if self.admit_via is not None or not self.queue:
            return
        sim = self.sim
        q = self.queue
        while q:
            req = self.next_waiter()
            if not sim.req_fits(req):
                return
            if req is q[0]:
                q.popleft()
            else:
                q.remove(req)
            admit_request(sim, req)

    @cython.ccall
    @cython.locals(pool=cython.Py_ssize_t, d=cython.double, h=Hold, e=HoldEntry,
                   need=cython.double, sim=RunState, s=Session)
    def retry_growers(self) -> cython.void:
        g = self.growers
        sim = self.sim
        while g:
            s = g[0]
            pool, d, job = s.grow
            h = innermost(s, pool)
            e = h.entry(pool)
            need = self.up(e.alloc + d) - e.alloc
            if not self.used + need <= self.cap + _EPS:
                return
            g.popleft()
            s.grow = None
            make_room(sim, self, need)
            self.used += need
            e.alloc += need
            if job is not None:
                s.status = IN_STAGE
                e.pos += d
                h.grown = True
            else:
                s.status = READY
                sim.ready.append(s)

    @cython.ccall
    @cython.locals(sim=RunState, ent=Entry, bsize=cython.double, size=cython.double,
                   cached=cython.double, units=cython.double, used=cython.double,
                   piece=cython.double, same=cython.bint, first=cython.bint,
                   count=cython.Py_ssize_t, n=cython.Py_ssize_t, entries=dict)
    def evict(self, need: cython.double, cap: cython.double) -> cython.void:
        """``make_room``'s loop (§10): the least entry by the pool's eviction key (``evict by``
        keys, else LRU), one piece at a time, each piece spilled where the pool spills.

        Without keys or spill, the least entry stays the least until it is gone (nothing
        else changes the entries meanwhile), so its pieces are taken in a row, and past
        ``BULK_PIECES`` of them, the rest at once (serq.sim.evict: the loop's state is its
        entry's size, the cached total and the evicted units, so it goes on from there
        exactly). Most evictions take a few pieces, which the loop takes faster."""
        sim = self.sim
        prev = sim.cur
        entries = self.entries
        block = self.block
        bsize = block if block is not None else 0.0  # (a C double where compiled)
        keys = self.evict_keys
        spill = self.spill
        same = keys is None and spill is None  # the least entry stays the least while it lasts
        first = same and self.lru_sorted  # ... and it is the first in ``entries``
        # Only the entries present now are candidates: with spill tiers that spill back into
        # this pool, pieces evicted from here could otherwise come back for ever (the reference
        # stops when the entries it started with are gone, even over its cap).
        cands = set(entries.values()) if spill is not None else None
        count = 0  # pieces so far (see evict.PIECES_LIMIT; below)
        while self.used + self.cached + need > cap and entries:
            if first:
                for ent in entries.values():  # the first (compiled: no iterator object)
                    break
            else:
                ent = sim.least_entry(self, cands)
                if ent is None:
                    break
            size = ent.size
            cached = self.cached
            units = self.evicted_units
            used = self.used
            n = 0
            while True:  # its pieces, while it is the least, it lasts and room is short
                piece = bsize if block is not None else size
                if piece > size:
                    piece = size
                size -= piece
                cached -= piece
                units += piece
                if size <= _EPS or not same or not used + cached + need > cap:
                    break
                n += 1
                if n == BULK_PIECES:  # many: the rest at once, where it can (serq.sim.evict)
                    size, cached, units, gone = evict.entry(size, block, cached, units, used,
                                                            need, cap, EPS)
                    break
            if size == ent.size and cached == self.cached:  # (one piece: the others can't)
                raise evict.NoProgress(evict.no_progress(piece, size, cached))
            ent.size = size
            self.cached = cached
            self.evicted_units = units
            if size <= _EPS:
                del entries[ent.key]
                self.evicted_entries += 1
            if spill is not None:
                sim.spill(self, ent, piece)
            # (a count of entries taken where they are taken in a row, each in at most
            # BULK_PIECES passes: the loop ends with them)
            count += 1
            if count >= _PIECES_LIMIT:
                raise evict.NoProgress(evict.too_many(piece))
        sim.cur = prev


class PoolState(PoolCore):
    """A pool's state, as the run makes it. A Python subclass of the typed ``PoolCore`` so
    that a rule can be replaced on the class (tests/faults.py seeds faults that way);
    compiled, a typed call of a method checks that the class still has the compiled one (a
    cached version tag) and is otherwise a C call."""
    __slots__ = ()


@cython.cfunc
@cython.locals(pl=PoolCore)
def snapshot(pl, a):
    """The attributes a cache entry of ``pl`` keeps (a copy of ``a``): an eviction by keys
    or a spill reads them once the owner has ended (§10, ``entry_context``); a pool that
    does neither never reads them, and keeps None."""
    return list(a) if pl.evict_keys is not None or pl.spill is not None else None


@cython.locals(h=Hold, e=HoldEntry, k=cython.Py_ssize_t)
def innermost(s, pi):
    """The innermost hold of ``s`` on pool ``pi`` (§9.8: a grow, load or release names the
    innermost hold of its pool), or None."""
    holds = s.holds
    k = len(holds) - 1
    while k >= 0:
        h = holds[k]
        for e in h.entries:
            if e.pool == pi:
                return h
        k -= 1
    return None


@cython.locals(cap=cython.double)
def make_room(sim, pl, need):
    """Evict from ``pl``'s cache until ``need`` more units fit beside what it holds and
    caches (§10; ``PoolCore.evict`` is the loop). Compiled, a C call that returns at once when
    there is room, the common case."""
    cap = pl.cap + _EPS
    if pl.used + pl.cached + need <= cap or not pl.entries:
        return
    hooks = sim.hooks
    before = None
    if hooks is not None:
        before = hooks.evict_begin(pl)
    try:
        pl.evict(need, cap)
    except evict.NoProgress as e:
        sim.eviction_fail(pl, str(e))
    if hooks is not None:
        hooks.evict_end(pl, need, before)


@cython.locals(s=Session, t=HoldTemplate, k=cython.Py_ssize_t, pi=cython.Py_ssize_t,
               pl=PoolCore, ent=Entry,
               alloc=cython.double, own=cython.double, best_own=cython.double,
               keep=cython.double, excess=cython.double, h=Hold, now=cython.double)
def admit_request(sim, req):
    """A request leaves its queue and becomes a hold (§9.4)."""
    s = req.session
    t = req.tmpl
    a = s.attrs
    sim.cur = s
    s.pending = None
    s.queued_pool = None
    reuse = None
    if t.reuse is not None:
        r = t.reuse.ev(a)
        reuse = r if r > 0 else 0.0
    entries = []
    best_own = 0.0
    now = sim.now
    for k, pi in enumerate(req.pools):
        pl = sim.pools[pi]
        alloc = pl.up(req.units[k])
        own = 0.0
        if t.cache is not None:
            ent = pl.entries.pop(s.serial, None)
            if ent is not None:
                pl.cached -= ent.size
                own = ent.size
                if reuse is not None:
                    keep = pl.down(reuse)
                    if own > keep:
                        excess = own - keep
                        dk = sim.next_dead
                        sim.next_dead += 1
                        pl.add_entry(Entry(dk, excess, ent.last, ent.seq, snapshot(pl, a)))
                        pl.cached += excess
                        own = keep
        make_room(sim, pl, alloc)
        pl.used += alloc
        pl.holders.append(s)
        pl.admissions += 1
        entries.append(HoldEntry(pi, alloc, own))
        if own > best_own:
            best_own = own
    if sim.warm:
        pl = sim.pools[req.pools[0]]
        pl.wait.add(now - req.queued_at)
    s.adm_seq = float(sim.next_adm)
    sim.next_adm += 1
    a[sim.p.slot_cached] = best_own
    lease_pool = None
    if t.lease_ref is not None:
        r = t.lease_ref
        lease_pool = (r.base if t.lease_idx is None
                      else sim.ref_index(r.base, r.count, t.lease_idx.ev(a), "pool"))
        if sim.pools_on_demand:
            sim.activate_pool(lease_pool)
    h = Hold(t, entries, lease_pool)
    if s.holds:
        s.holds.append(h)
    else:
        s.holds = [h]  # the first: the class's () is shared
    enter_block(s, [t.body, 0, HOLD, h])
    s.status = READY
    sim.ready.append(s)
    if sim.hooks is not None:
        sim.hooks.admit(s, entries)


@cython.locals(h=Hold)
def grow_hold(sim, s, pi, d, job):
    """Grow the innermost hold of ``s`` on pool ``pi`` by ``d``; False if it stalled or
    was preempted."""
    h = innermost(s, pi)
    return grow_entry(sim, s, pi, h.entry(pi), d, job)


@cython.locals(pl=PoolCore, need=cython.double)
def grow_entry(sim, s, pi, e, d, job):
    """``grow_hold`` of the entry ``e`` on pool ``pi`` of the innermost hold of ``s`` there
    (a caller that keeps it, the step engine's ``Growth``, passes it)."""
    pl = sim.pools[pi]
    need = pl.up(e.alloc + d) - e.alloc
    if need <= 0:
        return True
    while True:
        if pl.used + need <= pl.cap + _EPS:
            make_room(sim, pl, need)
            pl.used += need
            e.alloc += need
            return True
        victim = sim.victim(pl) if pl.lifo else None
        if victim is None:
            s.status = GROWING
            s.grow = (pi, d, job)
            pl.growers.append(s)
            return False
        sim.preempt(victim, pi)
        if victim is s:
            return False


class PoolOps:
    def init_pools(self):
        self.n_preemptions = 0  # the sum of every pool's ``preemptions``
        for st in self.p.stages:
            k = st.kind
            if type(k) is T.Step and k.memory is not None:
                self.pools[k.memory].engine_memory = True

    def init_active_pools(self):
        """Which pools the settle visits and records. A pool no hold has named yet has no
        queue, growers, holders or entries, and its time averages hold 0: skipping it changes
        nothing. Where the program declares many (arrays: ``pool p[10000]``), only the pools
        a run names are visited (``activate_pool``), so the run's cost and memory grow with
        what it uses; otherwise every pool is, from the start."""
        self.pools_on_demand = len(self.pools) > ON_DEMAND_POOLS
        if not self.pools_on_demand:
            for pl in self.pools:
                pl.active = True
            self.active_pools = self.pools
            return
        self.active_pools = []
        for pl in self.pools:  # the ones named statically elsewhere than in a hold
            d = pl.decl
            if d.admit_via is not None or pl.engine_memory:
                self.activate_pool(pl.index)
            if d.spill is not None:
                self.activate_pool(d.spill.to)

    def activate_pool(self, i):
        pl = self.pools[i]
        if not pl.active:
            pl.active = True
            insort(self.active_pools, pl, key=_pool_index)

    # -- hold statements ----------------------------------------------------------------------
    def compile_hold(self, st, stream):
        ex = self.ex
        t = HoldTemplate()
        t.stmt = st
        t.refs = [(hp.ref, ex.expr(hp.ref.index, stream) if hp.ref.index is not None
                   else None) for hp in st.pools]
        t.units = [ex.expr(hp.units, stream) for hp in st.pools]
        t.reserves = [ex.expr(hp.reserve, stream) if hp.reserve is not None else None
                      for hp in st.pools]
        t.reuse = ex.expr(st.reuse, stream) if st.reuse is not None else None
        t.body = self.block(st.body, stream)
        t.cache = ex.expr(st.cache, stream) if st.cache is not None else None
        if st.lease is not None:
            r = st.lease.ref
            t.lease_ref = r
            t.lease_idx = ex.expr(r.index, stream) if r.index is not None else None
            t.lease_time = ex.expr(st.lease.time, stream)
        else:
            t.lease_ref = None
            t.lease_idx = None
            t.lease_time = None
        S = self

        def op(s):
            S.enqueue(s, S.make_request(s, t), front=False)
            return True
        return op

    @cython.locals(self=RunState, s=Session, t=HoldTemplate, u=cython.double, f=Expr)
    def make_request(self, s, t):
        a = s.attrs
        self.cur = s
        pools = [r.base if x is None else self.ref_index(r.base, r.count, x.ev(a), "pool")
                 for r, x in t.refs]
        if self.pools_on_demand:
            for pi in pools:
                self.activate_pool(pi)
        units = []
        for f in t.units:
            u = f.ev(a)
            units.append(u if u > 0 else 0.0)
        return Req(s, t, pools, units, self.now)

    @cython.locals(self=RunState, s=Session, req=Req, t=HoldTemplate, k=cython.Py_ssize_t,
                   pl=PoolCore, need=cython.double, r=cython.double, rf=Expr,
                   pi=cython.Py_ssize_t)
    def enqueue(self, s, req, front):
        t = req.tmpl
        a = s.attrs
        self.cur = s
        for k, pi in enumerate(req.pools):
            pl = self.pools[pi]
            need = req.units[k]
            rf = t.reserves[k]
            if rf is not None:
                r = rf.ev(a)
                r = r if r > 0 else 0.0
                need = need if need >= r else r
            if pl.up(need) > pl.cap:
                pl.rejected += 1
                self.end_session(s)
                return
        s.status = QUEUED
        s.pending = req
        pl = self.pools[req.pools[0]]
        s.queued_pool = pl
        req.resumed = front
        if front:
            pl.queue.appendleft(req)
        else:
            pl.queue.append(req)

    @cython.locals(self=RunState, s=Session, req=Req, t=HoldTemplate, k=cython.Py_ssize_t,
                   u=cython.double, need=cython.double, r=cython.double, pl=PoolCore,
                   units=list, pools=list, uf=Expr, rf=Expr, pi=cython.Py_ssize_t,
                   ok=cython.bint)
    def req_fits(self, req):
        """Re-evaluate a waiting request's units and needs; does it fit every pool? (Every
        unit is evaluated; the pools are tested in order up to the first without room.)"""
        s = req.session
        t = req.tmpl
        a = s.attrs
        self.cur = s
        units = []
        ok = True
        pools = self.pools
        for k in range(len(req.pools)):
            uf = t.units[k]
            u = uf.ev(a)
            u = u if u > 0 else 0.0
            need = u
            rf = t.reserves[k]
            if rf is not None:
                r = rf.ev(a)
                r = r if r > 0 else 0.0
                need = u if u >= r else r
            units.append(u)
            if ok:
                pi = req.pools[k]
                pl = pools[pi]
                ok = pl.fits(need)
        req.units = units
        return ok

    # a request admitted: the module's admit_request (a C call for typed callers)
    admit = admit_request

    # -- releasing (§9.5–§9.7) ------------------------------------------------------------------
    @cython.locals(self=RunState, s=Session, pi=cython.Py_ssize_t, alloc=cython.double,
                   computed=cython.double, pl=PoolCore, c=cython.double, keep=cython.double,
                   old=Entry, holders=list, kept=list, cache=Expr)
    def release_units(self, s, pi, alloc, computed, cache):
        pl = self.pools[pi]
        pl.used -= alloc
        # s leaves the holders (every place it has: nested holds of one pool); a new list,
        # as a victim search may be going over the old one. (Not ``s in holders`` first:
        # that compares by ==, a call per holder where compiled.)
        holders = pl.holders
        kept = [x for x in holders if x is not s]
        if len(kept) != len(holders):
            pl.holders = kept
        if cache is not None:
            self.cur = s
            c = cache.ev(s.attrs)
            c = c if c > 0 else 0.0
            keep = pl.down(c if c <= computed else computed)
            if keep > 0:
                old = pl.entries.pop(s.serial, None)
                if old is not None:
                    pl.cached -= old.size
                pl.add_entry(Entry(s.serial, keep, self.now, self.next_release,
                                   snapshot(pl, s.attrs)))
                self.next_release += 1
                pl.cached += keep

    @cython.locals(self=RunState, h=Hold, e=HoldEntry)
    def release_hold(self, s, h):
        cache = h.tmpl.cache
        for e in h.entries:
            self.release_units(s, e.pool, e.alloc, e.pos if h.grown else e.alloc, cache)

    @cython.locals(self=RunState, s=Session, h=Hold, e=HoldEntry, computed=cython.double,
                   t=cython.double, ls=Lease)
    def end_hold_scope(self, s):
        h = s.holds.pop()
        cache = h.tmpl.cache
        a = s.attrs
        for e in h.entries:
            computed = e.pos if h.grown else e.alloc
            if e.pool == h.lease_pool:
                self.cur = s
                t = h.tmpl.lease_time.ev(a)
                t = t if t > 0 else 0.0
                lid = self.next_lease
                self.next_lease += 1
                ls = Lease(lid, e.pool, e.alloc, computed, cache)
                if s.leases:
                    s.leases.append(ls)
                else:
                    s.leases = [ls]  # the first: the class's () is shared
                if t != _INF:
                    self.schedule(self.now + t, EV_LEASE, s, s.serial, lid)
            else:
                self.release_units(s, e.pool, e.alloc, computed, cache)
            s.preempt_pos.pop(e.pool, None)
        a[self.p.slot_computed] = 0.0
        self.admit_all()

    @cython.locals(self=RunState, s=Session, ls=Lease)
    def end_lease_by_id(self, s, lid):
        for k, ls in enumerate(s.leases):
            if ls.id == lid:
                del s.leases[k]
                self.release_units(s, ls.pool, ls.alloc, ls.computed, ls.cache)
                return True
        return False

    @cython.locals(self=RunState, s=Session, ls=Lease)
    def release_all(self, s):
        while s.holds:
            self.release_hold(s, s.holds.pop())
        while s.leases:
            ls = s.leases.pop(0)
            self.release_units(s, ls.pool, ls.alloc, ls.computed, ls.cache)

    def innermost(self, s, pi):
        """The innermost hold of ``s`` on pool ``pi``, or None (the module's ``innermost``,
        for the callers that hold the run)."""
        return innermost(s, pi)

    # -- grow, drop, release, load statements ------------------------------------------------------
    def compile_pool_stmt(self, st, stream):
        S = self
        r = st.ref
        base, count = r.base, r.count
        idxf = self.ex.expr(r.index, stream) if r.index is not None else None
        name = self.p.pools[base].name  # the reference names the family, not the member
        t = type(st)

        def pool_of(s):
            return base if idxf is None else S.ref_index(base, count, idxf.ev(s.attrs), "pool")

        if t is T.Drop:
            def op(s):
                pl = S.pools[pool_of(s)]
                ent = pl.entries.pop(s.serial, None)
                if ent is not None:
                    pl.cached -= ent.size
            return op
        if t is T.Release:
            def op(s):
                S.release_stmt(s, pool_of(s))
            return op
        amount = self.ex.expr(st.amount, stream)
        if t is T.Grow:
            def op(s):
                pi = pool_of(s)
                d = amount.ev(s.attrs)
                d = d if d > 0 else 0.0
                if innermost(s, pi) is None:
                    S.fail(f"grow outside a hold of pool `{name}`", s, f"grow {name}")
                if not grow_hold(S, s, pi, d, None):
                    return True
            return op
        def op(s):
            pi = pool_of(s)
            n = amount.ev(s.attrs)
            n = n if n > 0 else 0.0
            h = innermost(s, pi)
            if h is None:
                S.fail(f"`load {name}` outside a hold of `{name}`", s, f"load {name}")
            e = h.entry(pi)
            if e.pos + n > e.alloc + EPS:
                text = f"load {name} ({display(n)})"
                S.fail(f"`{text}`: the hold has {display(e.alloc)} allocated and "
                       f"{display(e.pos)} computed; a load must fit the allocation (grow "
                       f"first)", s, text)
            e.pos += n
            h.grown = True
        return op

    @cython.locals(self=RunState, s=Session, pi=cython.Py_ssize_t, h=Hold, e=HoldEntry,
                   ls=Lease)
    def release_stmt(self, s, pi):
        h = innermost(s, pi)
        if h is not None:
            e = h.entry(pi)
            h.entries.remove(e)
            self.release_units(s, pi, e.alloc, e.pos if h.grown else e.alloc, h.tmpl.cache)
            s.preempt_pos.pop(pi, None)
        else:
            for k, ls in enumerate(s.leases):
                if ls.pool == pi:
                    del s.leases[k]
                    self.release_units(s, ls.pool, ls.alloc, ls.computed, ls.cache)
                    break
        self.admit_all()
        self.cur = s

    # -- growth and preemption (§9.8–§9.10) ---------------------------------------------------
    # a hold grown: the module's grow_hold (a C call for typed callers)
    grow = grow_hold

    @cython.locals(pl=PoolCore, pi=cython.Py_ssize_t, x=Session, best=Session)
    def victim(self, pl):
        pi = pl.index
        if pl.engine_memory:
            best = None
            for x in pl.holders:
                if x.status == IN_STAGE and x.stage.is_step and x.stage.memory == pi:
                    if best is None or x.adm_seq > best.adm_seq:
                        best = x
            return best
        for x in reversed(pl.holders):
            if innermost(x, pi) is not None:
                return x
        return None

    @cython.locals(self=RunState, v=Session, pi=cython.Py_ssize_t, pl=PoolCore, hi=Hold,
                   h=Hold, computed=cython.double)
    def preempt(self, v, pi):
        pl = self.pools[pi]
        hi = innermost(v, pi)
        computed = hi.entry(pi).pos
        prev = v.preempt_pos.get(pi)
        if prev is not None and computed <= prev + _EPS and not v.stuck:
            v.stuck = True
            pl.stuck += 1
        if v.preempt_pos is NO_POS:
            v.preempt_pos = {}
        v.preempt_pos[pi] = computed
        lt = v.last_token
        if lt is not None:
            lt.preempted = True  # (step.Token)
        v.attrs[self.p.slot_computed] = computed
        self.detach(v)
        while True:
            h = v.holds.pop()
            self.release_hold(v, h)
            frames = v.frames
            while frames:
                fr = frames.pop()
                if fr[3] is h:
                    break
            if h is hi:
                break
        req = self.make_request(v, hi.tmpl)
        pl.preemptions += 1
        self.n_preemptions += 1
        self.enqueue(v, req, front=True)
        if self.hooks is not None:
            self.hooks.preempt(v, pi, computed)

    @cython.locals(self=RunState, s=Session, st=cython.int)
    def detach(self, s):
        st = s.status
        if st == QUEUED:
            req = s.pending
            s.queued_pool.queue.remove(req)
            s.pending = None
            s.queued_pool = None
        elif st == IN_STAGE:
            self.detach_job(s)
        elif st == GROWING:
            pi, d, job = s.grow
            self.pools[pi].growers.remove(s)
            s.grow = None
            if job is not None:
                self.detach_job(s)
        s.status = READY

    # -- the prefix cache (§10) --------------------------------------------------------------------
    @cython.locals(self=RunState, pl=PoolCore)
    def fn_used(self, i):
        pl = self.pools[i]
        return pl.used

    @cython.locals(self=RunState, pl=PoolCore)
    def fn_free(self, i):
        pl = self.pools[i]
        return pl.cap - pl.used

    @cython.locals(self=RunState, pl=PoolCore)
    def fn_holders(self, i):
        pl = self.pools[i]
        return float(len(pl.holders))

    @cython.locals(self=RunState, pl=PoolCore)
    def fn_queued(self, i):
        pl = self.pools[i]
        return float(len(pl.queue))

    @cython.locals(self=RunState, s=Session, pl=PoolCore, ent=Entry)
    def fn_cachedin(self, i):
        s = self.cur
        if s is None:
            return 0.0
        ent = self.pools[i].entries.get(s.serial)
        return ent.size if ent is not None else 0.0

    @cython.locals(self=RunState, ent=Entry, owner=Session)
    def entry_context(self, pl, ent, size):
        """Set the Evict moment's context for an entry; the attributes it reads."""
        owner = live_session(self, ent.key)
        self.ctx.size = size
        self.ctx.age = self.now - ent.last
        self.ctx.last = ent.last
        self.ctx.queued = 1.0 if owner is not None and owner.status == QUEUED else 0.0
        self.cur = owner
        return owner.attrs if owner is not None else ent.snap

    @cython.locals(self=RunState, pl=PoolCore, e=Entry, f=Expr, k=list)
    def least_entry(self, pl, cands):
        """The entry ``evict`` takes from next: the least by the ``evict by`` keys, then the
        release number; else by (release time, release number). Only the entries in
        ``cands`` where it is given; None when none of them is left."""
        if cands is not None:
            pool = [e for e in pl.entries.values() if e in cands]
            if not pool:
                return None
        else:
            pool = pl.entries.values()
        keys = pl.evict_keys
        if keys is None:  # (``evict`` takes the first entry itself while they are in order)
            return min(pool, key=lambda e: (e.last, e.seq))
        best = None
        ent = None
        for e in pool:
            a = self.entry_context(pl, e, e.size)
            k = []
            for f in keys:
                k.append(total_key(f.ev(a)))
            k.append(e.seq)
            if best is None or k < best:
                best = k
                ent = e
        return ent

    def eviction_fail(self, pl, why):
        d = pl.decl
        name = d.name if d.index is None else f"{d.name}[{d.index}]"
        block = "none" if pl.block is None else evict.number_text(pl.block)
        self.fail(f"run: cannot make room in pool `{name}` (block {block}) at time "
                  f"{display(self.now)}: {why}; give the pool a larger block", self.cur)

    @cython.locals(self=RunState, pl=PoolCore, ent=Entry, piece=cython.double, tier=PoolCore,
                   te=Entry, w=cython.double, work=Expr, when=Expr)
    def spill(self, pl, ent, piece):
        to, via, work, when = pl.spill
        a = self.entry_context(pl, ent, piece)
        if when.ev(a) == 0:
            return
        w = work.ev(a)
        w = w if w > 0 else 0.0
        tier = self.pools[to]
        make_room(self, tier, 0.0)
        te = tier.entries.get(ent.key)
        snap = snapshot(tier, a) if a is not None else None
        if te is None:
            tier.add_entry(Entry(ent.key, piece, self.now, self.next_release, snap))
        else:
            if tier.lru_sorted and next(reversed(tier.entries.values())) is not te:
                tier.lru_sorted = False  # te moves to the end of the order, not of the dict
            te.size += piece
            te.last = self.now
            te.seq = self.next_release
        self.next_release += 1
        tier.cached += piece
        pl.spills += 1
        if w > 0:  # a transfer of no work starts no job (as a run of zero work)
            self.stages[via].add_job(None, w, "Plain", None)
