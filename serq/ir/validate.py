"""``validate``: the reference's IR checks, in its order, with its messages (ir.md §13.2).

The loader runs it on every IR text and the compiler on every program it links, so it takes
any ``Program`` and raises ``IRError`` on the first failure. Expressions are walked with an
explicit stack: the compiler writes aggregates out as deeply nested trees.
"""
from __future__ import annotations

import json
import math

from serq.errors import IRError
from serq.ir import types as T

# ---------------------------------------------------------------------------------------
# moments: where an expression is evaluated (ir.md §11)

SESSION = "Session"
ADMIT = "Admit"
SELECT = "Select"
EVICT = "Evict"
PS = "Ps"
BUDGET = "Budget"
STEP = "Step"
SERVE = "Serve"
GAUGE = "Gauge"
CLAIM = "Claim"  # IR 11: a claim over iterations (serq.ir.claims_check)

MOMENT_TEXT = {
    SESSION: "a session statement, a run or a hold's cache",
    ADMIT: "a hold's header, read at admission",
    SELECT: "a pool's queue keys, read before selecting a waiting session",
    EVICT: "an eviction key or spill clause",
    PS: "a ps stage's capacity",
    BUDGET: "a step stage's budget or chunk, planned before the iteration",
    STEP: "a step stage's cost, after the iteration",
    SERVE: "a step stage's serve keys",
    GAUGE: "a gauge, read on the deployment's state with no session",
    CLAIM: "a claim over iterations, read when an iteration starts",
}

# context variables: source name, and the moments that supply them (``Now``: all but Gauge)
CTX_NAME = {
    "Now": "now", "Waited": "waited", "Size": "size", "Age": "age", "Last": "last",
    "Queued": "waiting", "N": "present", "Ntok": "tokens", "Ndec": "decoders",
    "Npre": "prefilled", "Nres": "residents", "Kvb": "kv_decode", "Kvp": "kv_prefill",
    "Attn": "attention", "Decoding": "decoding", "Admission": "admission",
    "Remaining": "remaining", "Demand": "demand", "Served": "served", "Arrived": "arrived",
}
CTX_MOMENTS = {
    "Waited": (SELECT,),
    "Size": (EVICT,), "Age": (EVICT,), "Last": (EVICT,), "Queued": (EVICT,),
    "N": (PS,),
    "Ntok": (STEP,), "Npre": (STEP,), "Attn": (STEP,),
    "Ndec": (BUDGET, STEP, SERVE), "Nres": (BUDGET, STEP, SERVE),
    "Kvb": (BUDGET, STEP, SERVE), "Kvp": (BUDGET, STEP, SERVE),
    "Decoding": (SERVE,), "Admission": (SERVE,), "Remaining": (SERVE,),
    # IR 11 (claims): read only by a claim over iterations, checked by claims_check
    "Demand": (CLAIM,), "Served": (CLAIM,), "Arrived": (CLAIM,),
}

# messages
GAUGE_NOW = ("a gauge may not read `now`: it changes between events, and a gauge is held "
             "constant between them")
GAUGE_DRAW = ("a gauge may not draw (`~`): it reads the state, and a draw would move the "
              "run's streams")
GAUGE_CALL = {
    "Work": ("a gauge may not read `work(…)`: the work left drains between events, and a "
             "gauge is held constant between them"),
    "BudgetLeft": ("a gauge may not read `budget_left(…)`: it plans the next iteration, "
                   "which evaluates the stage's budget and may draw"),
    "CachedIn": "`cachedin` is the session's own cached prefix, and a gauge has no session",
}
GAUGE_INDEX = ("a gauge's {} index is a number in range (`kv[0]`, or an aggregate's "
               "`kv[k]`), not one read from the state")
CHOOSE_NO_KEY = "a `choose` has no key"
NEEDS_SHARE = ("a run over several stages needs the program's `share` (`share maxmin;` or "
               "`share bottleneck;`)")
SHARE_WITHOUT_FLOW = "`share` without a run over several stages"
SHARED_NOT_PS = ("stage `{}` is held with another stage by one run, so its capacity is "
                 "shared: it must be `ps(φ)` with a constant φ above 0")
SHARED_RUN_NOT_PLAIN = ("a run on the shared stage `{}` is plain: no `prefill`/`decode`, "
                        "no `growing`")
NAMED_TWICE = "stage `{}` is named twice in one run"
QUEUE_EMPTY = "queue by needs at least one key"
QUEUE_DRAW = "a queue key may not draw; sample into an attribute first"
SERVE_DRAW = ("a serve key may not draw (`~`): it is read for every resident at every "
              "iteration, and the order would change under the scheduler's feet")
GAUGE_TWICE = "declared twice"
GAUGE_IS_OBSERVE = "is also an `observe`: one name would be two statistics"
RENEWAL_IMPURE = "renewal arrival may use only constants and sampled distributions"
ARRIVALS_ZERO = "run: arrivals must be positive"
ARRIVALS_CLOSED = "run: arrivals applies only to poisson or renewal workloads"
HIDDEN_SET_BY_SCHEDULER = ("hidden `{}`: the scheduler sets it, so it cannot be hidden from "
                           "the scheduler")
BAD_RUN_WINDOW = "run: need 0 <= warmup < horizon"

SLOT_FIELDS = ("slot_cached", "slot_serial", "slot_turn", "slot_new", "slot_out",
               "slot_think", "slot_more", "slot_forced", "slot_computed")


_USIZE = (1 << 64) - 1


def _span(ref: T.CRef) -> tuple[int, int]:
    """The stages a run's reference covers, ``[base, base + max(count, 1))`` (wrapping)."""
    return ref.base, (ref.base + max(ref.count, 1)) & _USIZE


class _Invalid(Exception):
    """A failed check deep in a walk; the section that catches it adds its prefix."""


def uses_extension(p: T.Program) -> bool:
    """Whether the program carries claims or a step stage's ``serve only``: the two
    extensions an IR of version 11 may carry (docs/claims.md)."""
    return bool(p.claims) or any(type(s.kind) is T.Step and s.kind.only is not None
                                 for s in p.stages)


def validate(program: T.Program, for_run: bool = False) -> None:
    """Raise ``IRError`` with the reference's message for the first check that fails.

    With ``for_run`` (the interpreter's entry), also refuse what the reference's checks let
    through by wrapping its ``usize`` sums and then panics on at run time: a pool or stage
    reference ``base..base+count`` past the 64-bit range."""
    if for_run:
        check_fields(program)
    _Validator(program, for_run).run()


_U64_FIELDS = ("version", "init", "turn", "session", "seed") + SLOT_FIELDS
_SEQUENCE_FIELDS = ("attrs", "observes", "pools", "stages", "blocks", "hidden", "gauges",
                    "claims")
U64_MAX = (1 << 64) - 1
_ARRIVALS = (T.Poisson, T.Renewal, T.Closed, T.Batch, T.Sessions, T.NoArrival)


def _kind(v) -> str:
    """A Python value as serde names what it found (``invalid type: string "x"``)."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return f"boolean `{str(v).lower()}`"
    if isinstance(v, int):
        return f"integer `{v}`"
    if isinstance(v, float):
        return f"floating point `{v!r}`"
    if isinstance(v, str):
        return f"string {json.dumps(v, ensure_ascii=False)}"
    return type(v).__name__


def check_fields(p: T.Program) -> None:
    """The scalar fields' types and ranges, which ``Program.from_json`` checks while it
    reads and a ``Program`` edited in Python (``dataclasses.replace``) skips: ``TypeError``
    for a wrong type, ``ValueError`` (``IRError``) for a value out of range, with the
    loader's words."""
    def bad_type(name, v, expected):
        raise TypeError(f"Program.{name}: invalid type: {_kind(v)}, expected {expected}")

    for name in _U64_FIELDS:
        v = getattr(p, name)
        if type(v) is not int:
            bad_type(name, v, "u64")
        if not 0 <= v <= U64_MAX:
            raise IRError(f"Program.{name}: invalid value: {_kind(v)}, expected u64")
    if p.arrivals is not None:
        if type(p.arrivals) is not int:
            bad_type("arrivals", p.arrivals, "u64")
        if not 0 <= p.arrivals <= U64_MAX:
            raise IRError(f"Program.arrivals: invalid value: {_kind(p.arrivals)}, "
                          f"expected u64")
    for name in ("horizon", "warmup"):
        v = getattr(p, name)
        if type(v) is not float and type(v) is not int:
            bad_type(name, v, "f64")
    for name in ("trace", "share"):
        v = getattr(p, name)
        if v is not None and type(v) is not str:
            bad_type(name, v, "a string")
    if type(p.trace_ordered) is not bool:
        bad_type("trace_ordered", p.trace_ordered, "a boolean")
    if type(p.arrival) not in _ARRIVALS:
        bad_type("arrival", p.arrival, "an arrival (Poisson, Renewal, Closed, Batch, Sessions "
                                       "or NoArrival)")
    a = p.arrival
    if type(a) is T.Poisson:
        if type(a.rate) is not float and type(a.rate) is not int:
            bad_type("arrival", a.rate, "f64 (the Poisson rate)")
        if a.rate != a.rate:
            raise IRError("Program.arrival: the Poisson rate is NaN")
    elif type(a) is T.Batch or type(a) is T.Closed:
        if type(a.n) is not int:
            bad_type("arrival", a.n, "u64 (the number of sessions)")
        if not 0 <= a.n <= U64_MAX:
            raise IRError(f"Program.arrival: invalid value: {_kind(a.n)}, expected u64")
    for name in _SEQUENCE_FIELDS:
        v = getattr(p, name)
        if not isinstance(v, (tuple, list)):
            bad_type(name, v, "a sequence")
    for name in ("attrs", "observes"):
        for v in getattr(p, name):
            if type(v) is not str:
                bad_type(name, v, "a string")


def _role(p: T.Program, block: int) -> str:
    if block == p.init:
        return "init: "
    if block == p.turn:
        return "turn: "
    return "session: "


def draws(e) -> bool:
    """Whether an expression samples anywhere, CRef indices included."""
    stack = [e]
    while stack:
        e = stack.pop()
        t = type(e)
        if t is T.Sample:
            return True
        if t is T.Call:
            for a in e.args:
                if type(a) is T.ArgExpr:
                    stack.append(a.expr)
                elif a.ref.index is not None:
                    stack.append(a.ref.index)
        elif t is T.Unary:
            stack.append(e.operand)
        elif t is T.Binary:
            stack += (e.left, e.right)
        elif t is T.Cond:
            stack += (e.cond, e.then, e.other)
    return False


def is_pure(e) -> bool:
    """A renewal gap may use only constants, draws and arithmetic on them."""
    stack = [e]
    while stack:
        e = stack.pop()
        t = type(e)
        if t is T.Num:
            continue
        if t is T.Sample:
            stack += e.args
        elif t is T.Call:
            for a in e.args:
                if type(a) is not T.ArgExpr:
                    return False
                stack.append(a.expr)
        elif t is T.Unary:
            stack.append(e.operand)
        elif t is T.Binary:
            stack += (e.left, e.right)
        elif t is T.Cond:
            stack += (e.cond, e.then, e.other)
        else:
            return False
    return True


class _Validator:
    def __init__(self, p: T.Program, for_run: bool = False):
        self.p = p
        self.for_run = for_run
        self.nattrs = len(p.attrs)
        self.npools = len(p.pools)
        self.nstages = len(p.stages)
        self.hidden = frozenset(p.hidden)

    # -- expressions ----------------------------------------------------------------------

    def expr(self, e, moment: str) -> None:
        """Depth-first, left to right; the first failure wins."""
        stack = [e]
        while stack:
            e = stack.pop()
            t = type(e)
            if t is T.Num:
                continue
            if t is tuple:  # (what, n, ref): a CRef argument of a Call
                what, n, ref = e
                self.cref(ref, n, what, moment)
                continue
            if t is T.Ctx:
                v = e.var
                if moment == GAUGE and v == "Now":
                    raise _Invalid(GAUGE_NOW)
                if v != "Now" and moment not in CTX_MOMENTS[v]:
                    where = " or ".join(MOMENT_TEXT[m] for m in CTX_MOMENTS[v])
                    raise _Invalid(f"`{CTX_NAME[v]}` is read in {MOMENT_TEXT[moment]}, "
                                   f"but it exists only in {where}")
            elif t is T.Attr:
                a = e.slot
                if moment == GAUGE:
                    name = self.p.attrs[a] if a < self.nattrs else "?"
                    raise _Invalid(f"`{name}` is a session attribute, and a gauge has no "
                                   f"session")
                if a >= self.nattrs:
                    raise _Invalid(f"attribute slot {a} out of range")
                if moment != SESSION and a in self.hidden:
                    raise _Invalid(f"`{self.p.attrs[a]}` is hidden from the scheduler, but "
                                   f"is read in {MOMENT_TEXT[moment]}")
            elif t is T.Sample:
                if moment == GAUGE:
                    raise _Invalid(GAUGE_DRAW)
                stack.extend(reversed(e.args))
            elif t is T.Call:
                if moment == GAUGE and e.fun in GAUGE_CALL:
                    raise _Invalid(GAUGE_CALL[e.fun])
                for a in reversed(e.args):
                    ta = type(a)
                    if ta is T.ArgExpr:
                        stack.append(a.expr)
                    elif ta is T.ArgPool:
                        stack.append(("pool", self.npools, a.ref))
                    else:
                        stack.append(("stage", self.nstages, a.ref))
            elif t is T.Unary:
                stack.append(e.operand)
            elif t is T.Binary:
                stack += (e.right, e.left)
            elif t is T.Cond:
                stack += (e.other, e.then, e.cond)
            elif t is T.Agg:  # IR 11: only a claim `at end` reads one
                raise _Invalid(f"an aggregate of the observations is read only by a claim "
                               f"`at end`, but is read in {MOMENT_TEXT[moment]}")
            else:
                raise TypeError(f"not an IR expression: {e!r}")

    def cref(self, r: T.CRef, n: int, what: str, moment: str) -> None:
        end = (r.base + r.count) & _USIZE  # the reference's usize sum wraps
        if r.count == 0 or end > n:
            raise _Invalid(f"{what} reference {r.base}..{end} out of range")
        if self.for_run and r.base + r.count > n:
            raise _Invalid(f"{what} reference {r.base}..{r.base + r.count} out of range "
                           f"(there are {n}; the reference's check wraps the sum to {end} "
                           f"and lets it through, then panics when the run reads it)")
        ix = r.index
        if ix is None:
            return
        if moment == GAUGE:
            k = ix.value if type(ix) is T.Num else None
            if k is None or not (k >= 0 and math.isfinite(k) and k == int(k)
                                 and k < r.count):
                raise _Invalid(GAUGE_INDEX.format(what))
        self.expr(ix, moment)

    def pool_ref(self, r: T.CRef, moment: str = SESSION) -> None:
        self.cref(r, self.npools, "pool", moment)

    def stage_ref(self, r: T.CRef, moment: str = SESSION) -> None:
        self.cref(r, self.nstages, "stage", moment)

    # -- statements -----------------------------------------------------------------------

    def slot(self, a: int) -> None:
        if a >= self.nattrs:
            raise _Invalid(f"attribute slot {a} out of range")

    def block_index(self, b: int) -> None:
        if b >= len(self.p.blocks):
            raise _Invalid(f"block {b} out of range")

    def stmt(self, s) -> None:
        t = type(s)
        if t is T.Set:
            self.slot(s.slot)
            self.expr(s.expr, SESSION)
        elif t is T.Observe:
            if s.index >= len(self.p.observes):
                raise _Invalid(f"observation {s.index} out of range")
            self.expr(s.expr, SESSION)
        elif t is T.Hold:
            for hp in s.pools:
                self.pool_ref(hp.ref)
                self.expr(hp.units, ADMIT)
                if hp.reserve is not None:
                    self.expr(hp.reserve, ADMIT)
            if s.reuse is not None:
                self.expr(s.reuse, ADMIT)
            if s.cache is not None:
                self.expr(s.cache, SESSION)
            if s.lease is not None:
                self.pool_ref(s.lease.ref)
                self.expr(s.lease.time, SESSION)
            self.block_index(s.body)
        elif t is T.Grow or t is T.Load:
            self.pool_ref(s.ref)
            self.expr(s.amount, SESSION)
        elif t is T.Drop or t is T.Release:
            self.pool_ref(s.ref)
        elif t is T.Run:
            self.stage_ref(s.stage)
            for r in s.also:
                self.stage_ref(r)
            self.expr(s.work, SESSION)
            if s.growing is not None:
                self.pool_ref(s.growing)
        elif t is T.Branch:
            self.expr(s.guard, SESSION)
            self.block_index(s.then)
            self.block_index(s.other)
        elif t is T.Loop:
            self.block_index(s.body)
        elif t is T.Choose:
            self.slot(s.var)
            self.expr(s.count, SESSION)
            if not s.key:
                raise _Invalid(CHOOSE_NO_KEY)
            for k in s.key:
                self.expr(k, SESSION)
        elif t is not T.Turn and t is not T.End:
            raise TypeError(f"not an IR statement: {s!r}")

    # -- sections, in the reference's order -----------------------------------------------

    def run(self) -> None:
        p = self.p
        if p.version != T.IR_VERSION and not (p.version == T.IR_VERSION_CLAIMS
                                               and uses_extension(p)):
            raise IRError(f"IR version {p.version} (this interpreter reads {T.IR_VERSION})")
        for b, block in enumerate(p.blocks):
            try:
                for s in block:
                    self.stmt(s)
            except _Invalid as e:
                raise IRError(_role(p, b) + str(e)) from None
        for role, b in (("init", p.init), ("turn", p.turn), ("session", p.session)):
            if b >= len(p.blocks):
                raise IRError(f"{role}: block {b} out of range")
        self.flows()
        for pool in p.pools:
            self.pool(pool)
        for stage in p.stages:
            self.stage(stage)
        self.gauges()
        self.arrival()
        for name in SLOT_FIELDS:
            a = getattr(p, name)
            if a >= self.nattrs:
                raise IRError(f"attribute slot {a} out of range")
        self.hidden_slots()
        if not (math.isfinite(p.horizon) and 0 <= p.warmup < p.horizon):
            raise IRError(BAD_RUN_WINDOW)

    def flows(self) -> None:
        """Runs over several stages (``also``) share those stages' capacity."""
        p = self.p
        runs = [s for block in p.blocks for s in block if type(s) is T.Run]
        shared = set()
        for r in runs:
            if r.also:
                for ref in (r.stage, *r.also):
                    lo, hi = _span(ref)
                    shared.update(range(lo, min(hi, self.nstages)))
        if shared and p.share is None:
            raise IRError(NEEDS_SHARE)
        if not shared and p.share is not None:
            raise IRError(SHARE_WITHOUT_FLOW)
        for k in sorted(shared):
            kind = p.stages[k].kind
            if not (type(kind) is T.Ps and type(kind.capacity) is T.Num
                    and kind.capacity.value > 0):
                raise IRError(SHARED_NOT_PS.format(p.stages[k].name))
        if not shared:
            return
        for r in runs:
            ref = r.stage
            lo, hi = _span(ref)
            if not any(lo <= k < hi for k in shared):
                continue
            if r.mode != "Plain" or r.growing is not None:
                raise IRError(SHARED_RUN_NOT_PLAIN.format(p.stages[ref.base].name))
            bases = [ref.base]
            for a in r.also:
                if a.base in bases:
                    raise IRError(NAMED_TWICE.format(p.stages[a.base].name))
                bases.append(a.base)

    def pool(self, pool: T.Pool) -> None:
        prefix = f"pool `{pool.name}`: "
        try:
            if pool.queue is not None:
                if not pool.queue:
                    raise _Invalid(QUEUE_EMPTY)
                for key in pool.queue:
                    self.expr(key, SELECT)
                    if draws(key):
                        raise _Invalid(QUEUE_DRAW)
            if type(pool.evict) is T.EvictBy:
                for key in pool.evict.keys:
                    self.expr(key, EVICT)
        except _Invalid as e:
            raise IRError(prefix + str(e)) from None
        if pool.spill is not None:
            sp = pool.spill
            if sp.to >= self.npools:
                raise IRError(f"pool {sp.to} out of range")
            if sp.via >= self.nstages:
                raise IRError(f"stage {sp.via} out of range")
            try:
                self.expr(sp.work, EVICT)
                self.expr(sp.when, EVICT)
            except _Invalid as e:
                raise IRError(prefix + str(e)) from None
        if pool.admit_via is not None and pool.admit_via >= self.nstages:
            raise IRError(f"stage {pool.admit_via} out of range")

    def stage(self, stage: T.Stage) -> None:
        kind = stage.kind
        try:
            if type(kind) is T.Ps:
                self.expr(kind.capacity, PS)
            elif type(kind) is T.Step:
                self.expr(kind.budget, BUDGET)
                self.expr(kind.chunk, BUDGET)
                self.expr(kind.cost, STEP)
                if type(kind.serve) is T.ServeBy:
                    for key in kind.serve.keys:
                        self.expr(key, SERVE)
                        if draws(key):
                            raise _Invalid(SERVE_DRAW)
        except _Invalid as e:
            raise IRError(f"stage `{stage.name}`: {e}") from None
        if type(kind) is T.Step and kind.memory is not None and kind.memory >= self.npools:
            raise IRError(f"pool {kind.memory} out of range")

    def gauges(self) -> None:
        seen = set()
        observes = set(self.p.observes)
        for g in self.p.gauges:
            prefix = f"gauge `{g.name}`: "
            try:
                self.expr(g.expr, GAUGE)
            except _Invalid as e:
                raise IRError(prefix + str(e)) from None
            if g.name in seen:
                raise IRError(prefix + GAUGE_TWICE)
            if g.name in observes:
                raise IRError(prefix + GAUGE_IS_OBSERVE)
            seen.add(g.name)

    def arrival(self) -> None:
        p = self.p
        a = p.arrival
        if type(a) is T.Renewal:
            try:
                self.expr(a.gap, SESSION)
            except _Invalid as e:
                raise IRError(str(e)) from None
            if not is_pure(a.gap):
                raise IRError(RENEWAL_IMPURE)
        if p.arrivals is not None:
            if p.arrivals == 0:
                raise IRError(ARRIVALS_ZERO)
            if type(a) is not T.Poisson and type(a) is not T.Renewal:
                raise IRError(ARRIVALS_CLOSED)
        if type(a) is T.Sessions:
            for s in a.sessions:
                for turn in (s.attrs, *s.turns):
                    for slot, _ in turn:
                        if slot >= self.nattrs:
                            raise IRError(f"attribute slot {slot} out of range")

    def hidden_slots(self) -> None:
        p = self.p
        seen = set()
        for h in p.hidden:
            if h >= self.nattrs:
                raise IRError(f"hidden: attribute slot {h} out of range")
            if h == p.slot_cached or h == p.slot_computed:
                raise IRError(HIDDEN_SET_BY_SCHEDULER.format(p.attrs[h]))
            if h in seen:
                raise IRError(f"hidden `{p.attrs[h]}` twice")
            seen.add(h)
