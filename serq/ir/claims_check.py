"""What a claim and a step stage's ``serve only`` may read (extension, IR 11; formal.md §2.2,
§2.3), with pyserq 0.1.3's messages, which name no position.

The claims are checked in declaration order; for each: declared twice, then its ``given``,
then whether its stage is a step stage, then its expression. An expression is walked
depth-first, left to right (a call before its arguments); the first failure wins.

pyserq 0.1.3 describes the moments of the context variables with its own table (it has
moments v0.1.2 lacks: the iteration body, claims, preempt keys); the texts below are that
table, used only in messages about claims and ``only``, so v0.1.2 programs keep v0.1.2's.
"""
from __future__ import annotations

from serq.errors import IRError
from serq.ir import types as T

GIVEN, ITER, END, ONLY = "Given", "Iter", "End", "Only"

MOMENT_TEXT = {
    GIVEN: "a claim's `given`, read on one session's attributes",
    ITER: "a claim over iterations, read when an iteration starts",
    END: "a claim `at end`, read when the run ends",
    ONLY: "a step stage's serve keys or `only`",
}

_BUDGET = "a step stage's budget or chunk, planned before the iteration"
_COST = "a step stage's cost, after the iteration"
_SERVE = "a step stage's serve keys or `only`"
_BODY = "a step stage's iteration body, read as the iteration is planned"
_CLAIM = "a claim over iterations, read when an iteration starts"
_PREEMPT = "a pool's preempt keys, read for each candidate victim"
_TOTALS = (_BUDGET, _COST, _SERVE, _BODY, _CLAIM)

# IR context variable -> (source name, where pyserq 0.1.3 supplies it)
CTX = {
    "Waited": ("waited", ("a pool's queue keys, read before selecting a waiting session",)),
    "Size": ("size", ("an eviction key or spill clause",)),
    "Age": ("age", ("an eviction key or spill clause",)),
    "Last": ("last", ("an eviction key or spill clause",)),
    "Queued": ("waiting", ("an eviction key or spill clause",)),
    "N": ("present", ("a ps stage's capacity",)),
    "Nres": ("residents", _TOTALS), "Ndec": ("decoders", _TOTALS),
    "Kvb": ("kv_decode", _TOTALS), "Kvp": ("kv_prefill", _TOTALS),
    "Ntok": ("tokens", (_COST, _BODY, _CLAIM)), "Npre": ("prefilled", (_COST, _BODY, _CLAIM)),
    "Attn": ("attention", (_COST, _CLAIM)),
    "Decoding": ("decoding", (_SERVE, _PREEMPT)), "Admission": ("admission", (_SERVE, _PREEMPT)),
    "Remaining": ("remaining", (_SERVE,)),
    "Demand": ("demand", (_CLAIM,)), "Served": ("served", (_CLAIM,)),
    "Arrived": ("arrived", (_CLAIM,)),
}
# which moments read which context variables
READS = {
    ITER: frozenset({"Nres", "Ndec", "Kvb", "Kvp", "Ntok", "Npre", "Attn", "Demand", "Served",
                     "Arrived"}),
    ONLY: frozenset({"Nres", "Ndec", "Kvb", "Kvp", "Decoding", "Admission", "Remaining"}),
    GIVEN: frozenset(), END: frozenset(),
}

FUN_NAME = {"Queue": "queue", "Busy": "busy", "Work": "work", "Used": "used", "Free": "free",
            "CachedIn": "cachedin", "Holders": "holders", "Queued": "queued", "Price": "price",
            "BudgetLeft": "budget_left", "EstLambda": "est_lambda", "EstRho": "est_rho",
            "EstWait": "est_wait"}
ITER_CALLS = frozenset({"Queue", "Busy", "Used", "Free", "Holders", "Queued"})
AGG_NAME = {"Total": "total", "Count": "count", "Largest": "largest", "Smallest": "smallest",
            "PrefixTotal": "prefix_total"}


class _Invalid(Exception):
    pass


def check_claims(p: T.Program) -> None:
    """Raise ``IRError`` for the first claim or ``only`` that reads what it may not."""
    for st in p.stages:
        k = st.kind
        if type(k) is T.Step and k.only is not None:
            try:
                walk(k.only, ONLY, p)
            except _Invalid as e:
                raise IRError(f"stage `{st.name}`: {e}") from None
    seen = set()
    for c in p.claims:
        try:
            if c.name in seen:
                raise _Invalid("declared twice")
            seen.add(c.name)
            if c.given is not None:
                walk(c.given, GIVEN, p)
            if c.stage is not None:
                if c.stage >= len(p.stages):
                    raise _Invalid(f"stage {c.stage} out of range")
                st = p.stages[c.stage]
                if type(st.kind) is not T.Step:
                    name = st.name if st.index is None else f"{st.name}[{st.index}]"
                    raise _Invalid(f"stage `{name}` is not a `step` stage: only a step "
                                   f"stage has iterations")
            walk(c.expr, END if c.stage is None else ITER, p)
        except _Invalid as e:
            raise IRError(f"claim `{c.name}`: {e}") from None


def walk(e, moment, p) -> None:
    stack = [e]
    while stack:
        e = stack.pop()
        t = type(e)
        if t is T.Num:
            continue
        if t is T.Ctx:
            ctx(e.var, moment)
        elif t is T.Attr:
            if e.slot >= len(p.attrs):
                raise _Invalid(f"attribute slot {e.slot} out of range")
            attr(p.attrs[e.slot], moment)
        elif t is T.Sample:
            if moment == ONLY:
                raise _Invalid("a serve key or `only` may not draw (`~`): it is read for every "
                               "resident at every iteration")
            raise _Invalid("a claim may not draw (`~`): it reads and does not act, and a draw "
                           "would move the run's streams")
        elif t is T.Agg:
            if e.obs >= len(p.observes):
                raise _Invalid(f"observation {e.obs} out of range")
            if moment != END:
                raise _Invalid(f"`{AGG_NAME[e.kind]}(…)` aggregates the run's observations and "
                               f"is read only by a claim `at end`, but is read in "
                               f"{MOMENT_TEXT[moment]}")
        elif t is T.Call:
            call(e.fun, moment)
            for a in reversed(e.args):
                if type(a) is T.ArgExpr:
                    stack.append(a.expr)
                else:
                    n = len(p.pools) if type(a) is T.ArgPool else len(p.stages)
                    if a.ref.count == 0 or a.ref.base + a.ref.count > n:
                        raise _Invalid("reference out of range")
                    if a.ref.index is not None:
                        stack.append(a.ref.index)
        elif t is T.Unary:
            stack.append(e.operand)
        elif t is T.Binary:
            stack += (e.right, e.left)
        elif t is T.Cond:
            stack += (e.other, e.then, e.cond)


def ctx(v, moment):
    if v == "Now":
        if moment == GIVEN:
            raise _Invalid("a claim's `given` may not read `now`: it is a condition on one "
                           "session's attributes")
        if moment == ONLY:
            raise _Invalid(ONLY_NOW)
        return
    if v not in READS[moment]:
        name, where = CTX[v]
        raise _Invalid(f"`{name}` is read in {MOMENT_TEXT[moment]}, but it exists only in "
                       f"{' or '.join(where)}")


def attr(name, moment):
    if moment == ITER:
        raise _Invalid(f"`{name}` is a session attribute, and a claim over iterations reads "
                       f"the stage, not a session")
    if moment == END:
        raise _Invalid(f"`{name}` is a session attribute, and a claim `at end` reads the run, "
                       f"not a session")


ONLY_NOW = ("a serve key or `only` may not read `now` or `work(…)`: an engine whose residents "
            "it all excludes waits for an event, and the clock moving is none")


def call(fun, moment):
    name = FUN_NAME.get(fun)
    if name is None:  # a constant function: min, max, floor …
        return
    if moment == GIVEN:
        raise _Invalid(f"`{name}(…)` reads the deployment's state, and {MOMENT_TEXT[GIVEN]} "
                       f"reads the session's attributes and the constants")
    if moment == END:
        raise _Invalid(f"`{name}(…)` reads the deployment's state, and {MOMENT_TEXT[END]} "
                       f"reads the constants, `now` and the aggregates of the observations")
    if moment == ITER and fun not in ITER_CALLS:
        raise _Invalid(f"a claim over iterations may not read `{name}(…)`: it reads the "
                       f"deployment as the iteration starts through `queue`, `busy`, `used`, "
                       f"`free`, `holders` and `queued` (`work` drains between events, "
                       f"`budget_left` plans an iteration, `cachedin` is a session's)")
    if moment == ONLY and fun == "Work":
        raise _Invalid(ONLY_NOW)
