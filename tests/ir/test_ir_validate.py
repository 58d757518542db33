"""``validate``: the checks of ir.md §13.2, in order, on programs built directly from the IR
types (the compiler calls it the same way).

Expected messages are the spec's (ir.md §13.2 / §13.4, section named in each comment) or were
obtained from the reference build, pyserq 0.1.2, on the same program written as IR ("probed").
"""
import dataclasses
import math

import pytest

from serq.errors import IRError
from serq.ir import types as T
from serq.ir.validate import MOMENT_TEXT, validate

ATTRS = T.BUILTIN_ATTRS + ("p", "q")  # p = 9, q = 10


def ref(base, count=1, index=None):
    return T.CRef(base, count, index)


def num(x):
    return T.Num(float(x))


def ctx(v):
    return T.Ctx(v)


DRAW = T.Sample("Exp", (num(1),))

STEP = T.Stage("E", None, T.Step(budget=num(64), cost=num(0.01), chunk=num(0),
                                  serve=T.ServeBy(()), memory=0))
FIFO = T.Stage("s", None, T.Fifo(1))
POOL = T.Pool("kv", None, 100.0, 8.0, T.EvictLru(), "None", None, None, None)


def program(session=(), **changes):
    """The corpus's base IR (load/cases.jsonl `base`): init sets p, the session holds kv,
    runs s and observes x; extra session statements are appended; fields replaced."""
    blocks = (
        (T.Set(9, num(10)),),
        (),
        (T.Hold((T.HoldPool(ref(0), T.Attr(9)),), None, 3, T.Attr(9), None),
         T.Run(ref(1), "Plain", num(1)),
         T.Observe(0, num(1))) + tuple(session),
        (T.Run(ref(0), "Prefill", T.Attr(9), ref(0)),),
    )
    p = T.Program(version=10, attrs=ATTRS, observes=("x",), pools=(POOL,),
                  stages=(STEP, FIFO), arrival=T.Poisson(1.0), trace=None,
                  trace_ordered=False, init=0, turn=1, session=2, blocks=blocks,
                  horizon=10.0, warmup=0.0, seed=1, arrivals=None)
    return dataclasses.replace(p, **changes)


def message(p) -> str:
    with pytest.raises(IRError) as info:
        validate(p)
    return str(info.value)


def with_pool(**changes):
    return (dataclasses.replace(POOL, **changes),)


def with_step(**changes):
    return (dataclasses.replace(STEP, kind=dataclasses.replace(STEP.kind, **changes)), FIFO)


def test_base_is_valid():
    validate(program())


def test_moment_texts():
    # ir.md §11
    assert MOMENT_TEXT["Admit"] == "a hold's header, read at admission"
    assert MOMENT_TEXT["Gauge"] == "a gauge, read on the deployment's state with no session"


# --- statements (ir.md §13.2 item 2, §13.4) ------------------------------------------------

@pytest.mark.parametrize("stmt, text", [
    (T.Set(99, num(1)), "session: attribute slot 99 out of range"),
    (T.Observe(3, num(1)), "session: observation 3 out of range"),
    (T.Run(ref(2), "Plain", num(1)), "session: stage reference 2..3 out of range"),
    (T.Run(ref(0, 0), "Plain", num(1)), "session: stage reference 0..0 out of range"),
    (T.Drop(ref(1)), "session: pool reference 1..2 out of range"),
    (T.Loop(40), "session: block 40 out of range"),
    (T.Set(9, ctx("Ntok")), "session: `tokens` is read in a session statement, a run or a "
                            "hold's cache, but it exists only in a step stage's cost, after the "
                            "iteration"),
    (T.Set(9, ctx("Nres")), "session: `residents` is read in a session statement, a run or a "
                            "hold's cache, but it exists only in a step stage's budget or chunk, "
                            "planned before the iteration or a step stage's cost, after the "
                            "iteration or a step stage's serve keys"),
    (T.Choose(9, num(2), ()), "session: a `choose` has no key"),
    (T.Hold((T.HoldPool(ref(0), ctx("Size")),), None, 3, None, None),
     "session: `size` is read in a hold's header, read at admission, but it exists only in an "
     "eviction key or spill clause"),
    (T.Hold((T.HoldPool(ref(0), num(1), ctx("Waited")),), None, 3, None, None),
     "session: `waited` is read in a hold's header, read at admission, but it exists only in a "
     "pool's queue keys, read before selecting a waiting session"),
])
def test_statement_checks(stmt, text):
    assert message(program(session=[stmt])) == text


def test_role_prefixes():
    # ir.md §13.4: the init block's statements are prefixed `init: `
    p = program()
    blocks = ((T.Set(99, num(1)),),) + p.blocks[1:]
    assert message(dataclasses.replace(p, blocks=blocks)) == "init: attribute slot 99 out of range"
    blocks = (p.blocks[0], (T.Set(99, num(1)),)) + p.blocks[2:]
    assert message(dataclasses.replace(p, blocks=blocks)) == "turn: attribute slot 99 out of range"


def test_hold_checks_body_after_its_expressions():
    # ir.md §13.2: pools, reuse, cache, lease, then the body index (probed: cache first)
    hold = T.Hold((T.HoldPool(ref(0), num(1)),), None, 99, ctx("N"), None)
    assert message(program(session=[hold])) == (
        "session: `present` is read in a session statement, a run or a hold's cache, but it "
        "exists only in a ps stage's capacity")


def test_top_level_blocks():
    # corpus "blocks empty": init is checked first
    assert message(program(blocks=())) == "init: block 0 out of range"
    assert message(program(turn=50)) == "turn: block 50 out of range"


def test_statements_before_pools():
    # corpus "statement error wins over pool error"
    p = program(session=[T.Set(99, num(1))], pools=with_pool(queue=()))
    assert message(p) == "session: attribute slot 99 out of range"


def test_hidden_attribute_in_statements():
    # corpus: a hidden attribute may be read in a session statement, not at admission
    validate(program(hidden=(10,), session=[T.Set(9, T.Attr(10))]))
    hold = T.Hold((T.HoldPool(ref(0), T.Attr(10)),), None, 3, None, None)
    assert message(program(hidden=(10,), session=[hold])) == (
        "session: `q` is hidden from the scheduler, but is read in a hold's header, read at "
        "admission")


# --- flows (ir.md §13.2 item 4, §13.4) ----------------------------------------------------

PS_A = T.Stage("a", None, T.Ps(num(1)))
PS_B = T.Stage("b", None, T.Ps(num(1)))


def flow(run, share="MaxMin", stages=(STEP, FIFO, PS_A, PS_B)):
    return program(stages=stages, share=share, session=[run])


def test_flows():
    run = T.Run(ref(2), "Plain", num(1), None, (ref(3),))
    validate(flow(run))
    assert message(flow(run, share=None)) == (
        "a run over several stages needs the program's `share` (`share maxmin;` or "
        "`share bottleneck;`)")
    assert message(program(share="MaxMin")) == "`share` without a run over several stages"
    # a shared stage must be ps with a constant above 0 (corpus: "also on a fifo")
    assert message(flow(T.Run(ref(2), "Plain", num(1), None, (ref(1),)))) == (
        "stage `s` is held with another stage by one run, so its capacity is shared: it must "
        "be `ps(φ)` with a constant φ above 0")
    assert message(flow(T.Run(ref(2), "Decode", num(1), None, (ref(3),)))) == (
        "a run on the shared stage `a` is plain: no `prefill`/`decode`, no `growing`")
    assert message(flow(T.Run(ref(2), "Plain", num(1), None, (ref(3), ref(3))))) == (
        "stage `b` is named twice in one run")


def test_flow_checks_plainness_before_repeats():
    # probed: a decode run naming its stage twice reports the mode
    assert message(flow(T.Run(ref(2), "Decode", num(1), None, (ref(2),)))) == (
        "a run on the shared stage `a` is plain: no `prefill`/`decode`, no `growing`")


def test_shared_ps_capacity_inf_passes():
    # ir.md §13.2: `"inf"` passes; 0 does not (probed)
    inf = T.Stage("a", None, T.Ps(T.Num(math.inf)))
    zero = T.Stage("b", None, T.Ps(num(0)))
    run = T.Run(ref(2), "Plain", num(1), None, (ref(3),))
    assert message(flow(run, stages=(STEP, FIFO, inf, zero))) == (
        "stage `b` is held with another stage by one run, so its capacity is shared: it must "
        "be `ps(φ)` with a constant φ above 0")


# --- pools and stages (ir.md §13.2 items 5, 6) -------------------------------------------

@pytest.mark.parametrize("changes, text", [
    (dict(queue=()), "pool `kv`: queue by needs at least one key"),
    (dict(queue=(DRAW,)), "pool `kv`: a queue key may not draw; sample into an attribute first"),
    # probed: each key is checked, then its draw check, before the next key
    (dict(queue=(DRAW, ctx("Size"))),
     "pool `kv`: a queue key may not draw; sample into an attribute first"),
    (dict(evict=T.EvictBy((ctx("N"),))),
     "pool `kv`: `present` is read in an eviction key or spill clause, but it exists only in "
     "a ps stage's capacity"),
    (dict(spill=T.Spill(5, 0, num(1), num(1))), "pool 5 out of range"),
    (dict(spill=T.Spill(0, 9, ctx("Now"), ctx("N"))), "stage 9 out of range"),
    (dict(admit_via=7), "stage 7 out of range"),
])
def test_pool_checks(changes, text):
    assert message(program(pools=with_pool(**changes))) == text


def test_evict_keys_may_draw():
    # corpus "evict key draws (valid)"
    validate(program(pools=with_pool(evict=T.EvictBy((DRAW,)))))


@pytest.mark.parametrize("changes, text", [
    (dict(budget=ctx("Decoding")),
     "stage `E`: `decoding` is read in a step stage's budget or chunk, planned before the "
     "iteration, but it exists only in a step stage's serve keys"),
    # probed: chunk (Budget) is checked before cost (Step)
    (dict(cost=ctx("Decoding"), chunk=ctx("Size")),
     "stage `E`: `size` is read in a step stage's budget or chunk, planned before the "
     "iteration, but it exists only in an eviction key or spill clause"),
    (dict(serve=T.ServeBy((DRAW,))),
     "stage `E`: a serve key may not draw (`~`): it is read for every resident at every "
     "iteration, and the order would change under the scheduler's feet"),
    (dict(memory=5), "pool 5 out of range"),
])
def test_step_checks(changes, text):
    assert message(program(stages=with_step(**changes))) == text


def test_cost_may_read_attention():
    # corpus "attention in cost (valid)"
    validate(program(stages=with_step(cost=ctx("Attn"))))


# --- gauges (ir.md §13.2 item 7, §10) ------------------------------------------------------

def used(index, count=1):
    return T.Call("Used", (T.ArgPool(ref(0, count, index)),))


@pytest.mark.parametrize("expr, text", [
    (ctx("Now"), "gauge `g`: a gauge may not read `now`: it changes between events, and a "
                 "gauge is held constant between them"),
    (T.Attr(9), "gauge `g`: `p` is a session attribute, and a gauge has no session"),
    (T.Attr(99), "gauge `g`: `?` is a session attribute, and a gauge has no session"),
    (DRAW, "gauge `g`: a gauge may not draw (`~`): it reads the state, and a draw would move "
           "the run's streams"),
    (T.Call("Work", (T.ArgStage(ref(1)),)),
     "gauge `g`: a gauge may not read `work(…)`: the work left drains between events, and a "
     "gauge is held constant between them"),
    (T.Call("BudgetLeft", (T.ArgStage(ref(0)),)),
     "gauge `g`: a gauge may not read `budget_left(…)`: it plans the next iteration, which "
     "evaluates the stage's budget and may draw"),
    (T.Call("CachedIn", (T.ArgPool(ref(0)),)),
     "gauge `g`: `cachedin` is the session's own cached prefix, and a gauge has no session"),
    (used(T.Attr(9)), "gauge `g`: a gauge's pool index is a number in range (`kv[0]`, or an "
                      "aggregate's `kv[k]`), not one read from the state"),
    (ctx("Size"), "gauge `g`: `size` is read in a gauge, read on the deployment's state with "
                  "no session, but it exists only in an eviction key or spill clause"),
])
def test_gauge_checks(expr, text):
    assert message(program(gauges=(T.Gauge("g", expr),))) == text


def test_gauge_indices():
    # corpus "gauge index 0 (valid)"; probed: -0 is an index, 1.5 and inf are not
    validate(program(gauges=(T.Gauge("g", used(num(0))),)))
    validate(program(gauges=(T.Gauge("g", used(T.Num(-0.0))),)))
    for bad in (num(1.5), T.Num(math.inf), num(1)):
        with pytest.raises(IRError):
            validate(program(gauges=(T.Gauge("g", used(bad)),)))


def test_gauge_names():
    g = T.Gauge("g", num(1))
    assert message(program(gauges=(g, g))) == "gauge `g`: declared twice"
    assert message(program(gauges=(T.Gauge("x", num(1)),))) == (
        "gauge `x`: is also an `observe`: one name would be two statistics")


# --- workload and run (ir.md §13.2 items 8-13) ---------------------------------------------

def test_renewal():
    renewal = T.Renewal(T.Call("Min", (T.ArgExpr(num(1)), T.ArgExpr(DRAW))))
    validate(program(arrival=renewal))  # corpus "renewal min of constant and draw (valid)"
    assert message(program(arrival=T.Renewal(T.Attr(9)))) == (
        "renewal arrival may use only constants and sampled distributions")
    assert message(program(arrival=T.Renewal(ctx("Now")))) == (
        "renewal arrival may use only constants and sampled distributions")
    # the expression check comes first and is unprefixed (probed)
    assert message(program(arrival=T.Renewal(T.Attr(99)))) == "attribute slot 99 out of range"


def test_arrivals():
    assert message(program(arrivals=0)) == "run: arrivals must be positive"
    assert message(program(arrivals=0, arrival=T.Closed(2))) == "run: arrivals must be positive"
    assert message(program(arrivals=5, arrival=T.Closed(2))) == (
        "run: arrivals applies only to poisson or renewal workloads")


def test_sessions_and_slots():
    sessions = T.Sessions((T.SessionInit(((90, 1.0),)),))
    assert message(program(arrival=sessions)) == "attribute slot 90 out of range"
    # probed: a session's attrs before its turns
    sessions = T.Sessions((T.SessionInit(((70, 1.0),), (((50, 1.0),),)),))
    assert message(program(arrival=sessions)) == "attribute slot 70 out of range"
    assert message(program(slot_computed=99)) == "attribute slot 99 out of range"


def test_hidden():
    assert message(program(hidden=(0,))) == (
        "hidden `cached`: the scheduler sets it, so it cannot be hidden from the scheduler")
    assert message(program(hidden=(10, 10))) == "hidden `q` twice"
    assert message(program(hidden=(99,))) == "hidden: attribute slot 99 out of range"


@pytest.mark.parametrize("horizon, warmup", [
    (10.0, 10.0), (-1.0, 0.0), (10.0, -1.0),  # corpus (warmup = horizon, negatives)
    (math.inf, 0.0), (10.0, math.nan),  # ir.md §13.2 item 13 (no IR text can carry these)
])
def test_run_window(horizon, warmup):
    assert message(program(horizon=horizon, warmup=warmup)) == "run: need 0 <= warmup < horizon"


def test_version():
    assert message(program(version=9)) == "IR version 9 (this interpreter reads 10)"


def test_deep_expressions_do_not_overflow_the_stack():
    # the compiler writes `sum j in N (...)` as N nested additions
    e = num(0)
    for _ in range(20000):
        e = T.Binary("Add", e, ctx("Nres"))
    validate(program(stages=with_step(budget=e)))
    with pytest.raises(IRError):
        validate(program(stages=with_step(budget=T.Binary("Add", e, ctx("Size")))))
