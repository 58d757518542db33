"""The fragment serq.ref accepts, and the refusal that names what is outside it.

formal.md §1.6: the Lean generator refuses anything outside the IR-10 fragment of ``Exec``
(§1.2) rather than approximate it; serq.ref does the same, with the same list. A few
constructs beyond that list are accepted because the oracle scenarios and the regressions of
§3.2/§3.3 need them and their meaning is exact (a chunk *expression* read at iteration start,
``serve by (keys)``, ``budget_left``/``cachedin``/``queued`` reads, a delay inside a hold).
Everything is checked before the run starts, except what only a value can show (a division
by zero, a cost below 1), which is refused when it happens.
"""
from __future__ import annotations

import math

from serq.errors import SerqError
from serq.ir import types as T


class OutsideFragment(SerqError):
    """The program uses a construct outside the fragment serq.ref defines (formal.md §1.6)."""


def refuse(what: str):
    raise OutsideFragment(f"serq.ref: {what} is outside the IR-10 fragment (formal.md §1.6)")


# context variables and functions an expression of the fragment may read (interpreter.md §13)
CTX_OK = {"Now", "Ntok", "Ndec", "Npre", "Nres", "Kvb", "Kvp", "Attn", "Decoding",
          "Admission", "Remaining"}
FUN_OK = {"Min", "Max", "Abs", "Floor", "Ceil", "Pow", "Used", "Free", "CachedIn", "Holders",
          "Queued", "Queue", "BudgetLeft"}
STMT_OK = (T.Turn, T.End, T.Set, T.Observe, T.Hold, T.Run, T.Branch, T.Loop)


def check_program(p: T.Program) -> int:
    """Refuse every construct of §1.6's list; return the index of the one step stage."""
    if p.trace is not None:
        refuse("a trace workload (`trace`)")
    if not isinstance(p.arrival, (T.Sessions, T.Batch, T.NoArrival)):
        refuse(f"the arrival process `{type(p.arrival).__name__.lower()}` (non-explicit workload)")
    if p.warmup != 0 or p.arrivals is not None:
        refuse("a warm-up or an arrivals limit")
    if p.share is not None:
        refuse("`share`")
    if p.version != 10:
        refuse(f"an IR-{p.version} program (claims, `serve only`)")
    if p.gauges:
        refuse(f"the gauge `{p.gauges[0].name}`")
    if not math.isfinite(p.horizon):
        refuse("an infinite horizon")
    engine = _check_stages(p)
    for pool in p.pools:
        _check_pool(p, pool, engine)
    for block in p.blocks:
        for stmt in block:
            _check_stmt(stmt)
    return engine


def _check_stages(p: T.Program) -> int:
    steps = [i for i, s in enumerate(p.stages) if isinstance(s.kind, T.Step)]
    for s in p.stages:
        if s.index is not None:
            refuse(f"the stage family `{s.name}[{s.index}]`")
        if isinstance(s.kind, (T.Fifo, T.Ps)):
            refuse(f"the {type(s.kind).__name__.lower()} stage `{s.name}` (every stage other "
                   "than the step engine is a pure delay)")
    if len(steps) != 1:
        refuse(f"a deployment with {len(steps)} step stages (exactly one engine)")
    step = p.stages[steps[0]].kind
    if isinstance(step.serve, T.ServeExclusivePrefill):
        refuse("`serve exclusive prefill`")
    for e in (step.budget, step.cost, step.chunk, *step.serve.keys):
        check_expr(e)
    return steps[0]


def _check_pool(p: T.Program, pool: T.Pool, engine: int):
    name = pool.name if pool.index is None else f"{pool.name}[{pool.index}]"
    if pool.index is not None:
        refuse(f"the pool family `{name}`")
    if not math.isfinite(pool.cap):
        refuse(f"the unbounded pool `{name}`")
    if not isinstance(pool.evict, T.EvictLru):
        refuse(f"`evict by` on pool `{name}` (non-LRU eviction)")
    if pool.queue is not None:
        refuse(f"`queue by` on pool `{name}`")
    if pool.spill is not None:
        refuse(f"`spill` on pool `{name}`")
    if pool.admit_via is not None and pool.admit_via != engine:
        refuse(f"pool `{name}` admitted by a stage other than the engine")
    memory = p.stages[engine].kind.memory
    if pool.preempt == "Lifo" and memory is not None and p.pools[memory] is not pool:
        refuse(f"`preempt lifo` on pool `{name}`, which is not the engine's memory")


def _check_ref(r: T.CRef, what: str):
    if r.count != 1 or r.index is not None:
        refuse(f"an indexed {what} reference")


def _check_stmt(s):
    if not isinstance(s, STMT_OK):
        refuse(f"the statement `{type(s).__name__.lower()}`")
    exprs = [getattr(s, f) for f in ("expr", "guard", "work", "reuse", "cache")
             if getattr(s, f, None) is not None]
    if isinstance(s, T.Run):
        _check_ref(s.stage, "stage")
        if s.also:
            refuse("`also` (a multi-stage run)")
        if s.growing is not None:
            _check_ref(s.growing, "pool")
    elif isinstance(s, T.Hold):
        if s.lease is not None:
            refuse("`lease`")
        for hp in s.pools:
            _check_ref(hp.ref, "pool")
            exprs += [x for x in (hp.units, hp.reserve) if x is not None]
    for e in exprs:
        check_expr(e)


def check_expr(e):
    """Refuse draws, transcendental functions and the context variables of other moments."""
    if isinstance(e, T.Sample):
        refuse(f"a random draw (`{e.dist.lower()}`)")
    if isinstance(e, T.Num) and not math.isfinite(e.value):
        refuse(f"the number {e.value}")
    if isinstance(e, T.Ctx) and e.var not in CTX_OK:
        refuse(f"the context variable `{e.var.lower()}`")
    children = [getattr(e, f) for f in getattr(e, "__slots__", ())
                if isinstance(getattr(e, f), (T.Num, T.Attr, T.Ctx, T.Sample, T.Call, T.Unary,
                                              T.Binary, T.Cond))]
    if isinstance(e, T.Call):
        if e.fun not in FUN_OK:
            refuse(f"the function `{e.fun.lower()}`")
        for a in e.args:
            if isinstance(a, T.ArgExpr):
                children.append(a.expr)
            else:
                _check_ref(a.ref, "pool or stage")
    for sub in children:
        check_expr(sub)
