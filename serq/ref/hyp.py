"""DRT with hypothesis (formal.md §6.3 item 2): programs drawn over the fragment, not one
program, run by serq.sim and serq.ref and compared; hypothesis shrinks a divergence to a
minimal program.

The distribution is tilted towards what upstream's fixed cases barely exercise (6 of 200
preempt): few KV blocks, long outputs, tight budgets and chunk caps, so preemption, eviction
and growth across block boundaries are common. Each program is built as IR (serq.ir.types),
so it can use what the language would spell differently: explicit sessions with presets and
scripted turns, a delay inside a hold, `reuse`/`cache` clauses reading `computed` and
`cachedin`, serve keys, a conditional chunk, engine-admitted or settle-admitted slots.
Needs the ``hypothesis`` package (the ``drt`` extra)."""
from __future__ import annotations

import hypothesis
from hypothesis import HealthCheck, given, settings, strategies as st

from serq.ir import types as T

CACHED, SERIAL, TURN, NEW, OUT, THINK, MORE, FORCED, COMPUTED = range(9)
ARRIVE, KNOWN_SLOT = 9, 10
OBS = ("resumed", "got", "first", "done")
KV, SLOTS, AUX = 0, 1, 2
ENGINE, GATE, TOOL = 0, 1, 2


def n(x):
    return T.Num(float(x))


def a(slot):
    return T.Attr(slot)


def b(op, left, right):
    return T.Binary(op, left, right)


def call(fun, *args):
    return T.Call(fun, tuple(x if isinstance(x, (T.ArgPool, T.ArgStage)) else T.ArgExpr(x)
                             for x in args))


def pool(i):
    return T.ArgPool(T.CRef(i, 1))


def stage(i):
    return T.ArgStage(T.CRef(i, 1))


KNOWN = T.Cond(b("Lt", a(COMPUTED), a(NEW)), a(NEW), b("Add", a(COMPUTED), n(1)))
BUDGET_LEFT = call("BudgetLeft", stage(ENGINE))
SERVE_KEYS = [(), (T.Ctx("Admission"),), (T.Unary("Neg", T.Ctx("Admission")),),
              (T.Cond(T.Ctx("Decoding"), n(0), n(1)),), (T.Ctx("Remaining"),)]


@st.composite
def deployment(draw):
    """Pools kv (LRU, lifo, the engine's memory), slots, aux; stages engine, gate, tool."""
    bs = draw(st.sampled_from([1, 4, 16]))
    blocks = -(-draw(st.integers(32, 120)) // bs)   # 32–120 tokens: a prompt fits alone
    kv = T.Pool("kv", None, float(bs * blocks), float(bs), T.EvictLru(), "Lifo", None, None,
                None)
    via = draw(st.booleans())
    slots = T.Pool("slots", None, float(draw(st.integers(1, 6))), None, T.EvictLru(), "None",
                   None, None, ENGINE if via else None)
    aux = T.Pool("aux", None, float(draw(st.integers(1, 4))), None, T.EvictLru(), "None", None,
                 None, None)
    chunk_c = draw(st.integers(0, 24))
    chunk = draw(st.sampled_from([
        n(chunk_c), T.Cond(b("Gt", b("Add", T.Ctx("Nres"), call("Queued", pool(SLOTS))), n(1)),
                           n(chunk_c), n(0))]))
    coeffs = [draw(st.integers(1, 3))] + [draw(st.integers(0, 2)) for _ in range(5)]
    cost = n(coeffs[0])
    for k, var in zip(coeffs[1:], ("Ntok", "Npre", "Ndec", "Kvb", "Attn")):
        cost = b("Add", cost, b("Mul", n(2 * k if var == "Attn" else k), T.Ctx(var)))
    step = T.Step(n(draw(st.integers(1, 48))), cost, chunk,
                  T.ServeBy(draw(st.sampled_from(SERVE_KEYS))), KV)
    stages = (T.Stage("engine", None, step), T.Stage("gate", None, T.Delay()),
              T.Stage("tool", None, T.Delay()))
    return (kv, slots, aux), stages, via


class Blocks:
    """The IR's block table: 0 is the init block, 1 the turn block; ``add`` returns an index."""

    def __init__(self):
        self.table = [(), ()]

    def add(self, stmts=()):
        self.table.append(tuple(stmts))
        return len(self.table) - 1

    def put(self, i, stmts):
        self.table[i] = tuple(stmts)


@st.composite
def session_program(draw, multi_turn):
    """The request program of the oracle scenarios (formal.md appendix A) with optional parts:
    a cache clause with ``reuse``, a delay inside the hold, an aux hold around it (a second,
    non-memory pool), think times and scripted turns. Returns (blocks, session block)."""
    bl = Blocks()
    cache = draw(st.booleans())
    units = draw(st.sampled_from([KNOWN, call("Min", KNOWN, BUDGET_LEFT),
                                  b("Add", call("Min", call("CachedIn", pool(KV)), KNOWN),
                                    call("Min", KNOWN, BUDGET_LEFT))]))
    reuse = draw(st.sampled_from([None, a(COMPUTED), call("Max", a(COMPUTED), a(NEW))]))
    got = a(CACHED) if cache else n(0)
    first = bl.add([T.Observe(2, T.Ctx("Now"))])
    body = [T.Observe(0, a(COMPUTED)), T.Observe(1, a(CACHED)),
            T.Run(T.CRef(ENGINE, 1), "Prefill", b("Sub", KNOWN, got), T.CRef(KV, 1)),
            T.Branch(b("Eq", KNOWN, a(NEW)), first, bl.add())]
    if draw(st.booleans()):
        body.append(T.Run(T.CRef(TOOL, 1), "Plain", n(draw(st.integers(0, 3)))))
    body.append(T.Run(T.CRef(ENGINE, 1), "Decode",
                      b("Sub", b("Sub", a(OUT), n(1)), b("Sub", KNOWN, a(NEW))), T.CRef(KV, 1)))
    hold = T.Hold((T.HoldPool(T.CRef(SLOTS, 1), n(1)), T.HoldPool(T.CRef(KV, 1), units, KNOWN)),
                  reuse if cache else None, bl.add(body),
                  b("Add", a(NEW), a(OUT)) if cache else None, None)
    if draw(st.booleans()):
        hold = T.Hold((T.HoldPool(T.CRef(AUX, 1), n(1)),), None, bl.add([hold]), None, None)
    gate = T.Run(T.CRef(GATE, 1), "Plain", a(ARRIVE))
    done = T.Observe(3, T.Ctx("Now"))
    if not multi_turn:
        return bl.table, bl.add([gate, hold, done])
    more = bl.add([T.Run(T.CRef(TOOL, 1), "Plain", a(THINK)), T.Turn()])
    loop = bl.add([hold, done, T.Branch(a(MORE), more, bl.add([T.End()]))])
    return bl.table, bl.add([gate, T.Turn(), T.Loop(loop)])


@st.composite
def programs(draw):
    """A whole program: deployment, session program and 1–6 explicit sessions."""
    pools, stages, _ = draw(deployment())
    multi = draw(st.booleans())
    blocks, session = draw(session_program(multi))
    sessions = []
    for _ in range(draw(st.integers(1, 6))):
        arrive = float(draw(st.integers(0, 6)))
        if multi:
            turns = tuple(((NEW, float(draw(st.integers(1, 32)))),
                           (OUT, float(draw(st.integers(1, 80)))),
                           (THINK, float(draw(st.integers(0, 8)))))
                          for _ in range(draw(st.integers(1, 3))))
            sessions.append(T.SessionInit(((ARRIVE, arrive),), turns))
        else:
            sessions.append(T.SessionInit(((ARRIVE, arrive), (NEW, float(draw(
                st.integers(1, 32)))), (OUT, float(draw(st.integers(1, 80)))))))
    attrs = T.BUILTIN_ATTRS + ("arrive", "known")
    prog = T.Program(T.IR_VERSION, attrs, OBS, pools, stages, T.Sessions(tuple(sessions)),
                     None, False, 0, 1, session, tuple(blocks), 3000.0, 0.0, 1, None)
    return T.Program.from_json(prog.to_json())


def run(count, seed=0, save_dir=None, progress=None):
    """Draw ``count`` programs (hypothesis seed ``seed``) and compare each; return (programs
    run, failing outcomes). A failure is the divergence hypothesis shrank to a minimal program
    (written to ``save_dir/hyp-<seed>/`` when given)."""
    from serq.ref import drt
    from serq.ref.fragment import OutsideFragment
    seen = {"n": 0, "last": None}

    @hypothesis.seed(seed)
    @settings(max_examples=count, database=None, deadline=None, print_blob=False,
              suppress_health_check=list(HealthCheck))
    @given(programs())
    def check(program):
        seen["n"] += 1
        out = drt.compare(f"hyp-{seed}", program)
        seen["last"] = out
        if out.diff is not None:
            raise AssertionError(out.diff)
        if progress is not None:
            progress(seen["n"], count, 0)

    try:
        check()
    except AssertionError:
        out = seen["last"]
        if save_dir is not None:
            drt.save(out, save_dir)
        return seen["n"], [out]
    except OutsideFragment as e:
        raise AssertionError(f"the generator left the fragment: {e}") from None
    return seen["n"], []
