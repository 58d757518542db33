"""``Program.from_json``: an IR text to a validated ``Program``, with the reference's
leniency and its exact messages (ir.md §1.5, §13.1).

The IR's Rust types are declared here as ``serq.ir.serde`` descriptors, in the reference's
declaration order (variant order shows in ``unknown variant`` messages, field counts in
``invalid length`` ones), each building the matching ``serq.ir.types`` value.
"""
from __future__ import annotations

from serq.errors import IRError
from serq.ir import types as T
from serq.ir.serde import (NO_DEFAULT, U32_MAX, U64_MAX, Bool, DeError, Enum, F64, Opt,
                           Real, Seq, Str, Struct, Tuple, UInt, from_str)
from serq.ir.claims_check import check_claims
from serq.ir.validate import validate

U32 = UInt("u32", U32_MAX)
U64 = UInt("u64", U64_MAX)
USIZE = UInt("usize", U64_MAX)
FLOAT = F64()
REAL = Real()
STRING = Str()
BOOL = Bool()


def _ident(x):
    return x


def _units(names, build=_ident):
    """An enum of unit variants only (operators, functions, context variables ...)."""
    return Enum([(name, None, (lambda n=name: build(n))) for name in names])


def _req(name, ty):
    return (name, ty, NO_DEFAULT)


def _opt(name, ty):
    """An ``Option`` field: may be absent from an object, not from a positional array."""
    return (name, Opt(ty), None)


def _default(name, ty, value):
    """A ``#[serde(default)]`` field: may be absent from an object and end an array."""
    return (name, ty, value, True)


# ---------------------------------------------------------------------------------------
# expressions

def _claim(name, given, kind, expr):
    return T.Claim(name, given, kind[0], kind[1], expr)


def _claim_schema(EXPR):
    kind = Enum([("EveryIteration", USIZE, lambda s: ("EveryIteration", s)),
                 ("SomeIteration", USIZE, lambda s: ("SomeIteration", s)),
                 ("AtEnd", None, lambda: ("AtEnd", None))])
    return Struct("struct Claim", [_req("name", STRING), _opt("given", EXPR),
                                   _req("kind", kind), _req("expr", EXPR)], _claim)


def _schema(ext: bool):
    """The ``Program`` descriptor: v0.1.2's (IR 10), or with ``ext`` the IR-11 extension's
    (claims, ``Agg``, the iteration variables, a step stage's ``only``; docs/claims.md),
    built separately so that IR-10 texts keep v0.1.2's messages (variant lists included)."""
    CTX_VAR = _units(T.CTX_VARS + (T.CLAIM_CTX_VARS if ext else ()))
    FUN = _units(T.FUNS)
    DIST = _units(T.DISTS)
    UNOP = _units(T.UNOPS)
    BINOP = _units(T.BINOPS)

    EXPR = Enum([])  # filled below: it is recursive
    OPT_EXPR = Opt(EXPR)
    EXPRS = Seq(EXPR)

    CREF = Struct("struct CRef", [_req("base", USIZE), _req("count", USIZE),
                                  _opt("index", EXPR)], T.CRef)

    ARG = Enum([
        ("Expr", EXPR, T.ArgExpr),
        ("Pool", CREF, T.ArgPool),
        ("Stage", CREF, T.ArgStage),
    ])


    def _tuple_variant(enum: str, name: str, items, build):
        return (name, Tuple(items, build, f"tuple variant {enum}::{name}"), _ident,
                "tuple variant")


    EXPR.__init__([
        ("Num", REAL, T.Num),
        ("Attr", USIZE, T.Attr),
        ("Ctx", CTX_VAR, T.Ctx),
        _tuple_variant("CExpr", "Sample", [DIST, EXPRS], T.Sample),
        _tuple_variant("CExpr", "Call", [FUN, Seq(ARG)], T.Call),
        _tuple_variant("CExpr", "Unary", [UNOP, EXPR], T.Unary),
        _tuple_variant("CExpr", "Binary", [BINOP, EXPR, EXPR], T.Binary),
        _tuple_variant("CExpr", "Cond", [EXPR, EXPR, EXPR], T.Cond),
    ] + ([_tuple_variant("CExpr", "Agg", [_units(T.AGG_KINDS), USIZE], T.Agg)] if ext else []))

    # ---------------------------------------------------------------------------------------
    # statements


    def _struct_variant(enum: str, name: str, fields, build):
        return (name, Struct(f"struct variant {enum}::{name}", fields, build), _ident,
                "struct variant")


    def _hold(pools, reuse, body, cache, lease):
        return T.Hold(tuple(T.HoldPool(*p) for p in pools), reuse, body, cache,
                      None if lease is None else T.Lease(*lease))


    STMT = Enum([
        ("Turn", None, T.Turn),
        _tuple_variant("CStmt", "Set", [USIZE, EXPR], T.Set),
        _tuple_variant("CStmt", "Observe", [USIZE, EXPR], T.Observe),
        _struct_variant("CStmt", "Hold", [
            _req("pools", Seq(Tuple([CREF, EXPR, OPT_EXPR]))),
            _opt("reuse", EXPR),
            _req("body", USIZE),
            _opt("cache", EXPR),
            _opt("lease", Tuple([CREF, EXPR])),
        ], _hold),
        _tuple_variant("CStmt", "Grow", [CREF, EXPR], T.Grow),
        ("Drop", CREF, T.Drop),
        ("Release", CREF, T.Release),
        _tuple_variant("CStmt", "Load", [CREF, EXPR], T.Load),
        _struct_variant("CStmt", "Run", [
            _req("stage", CREF),
            _req("mode", _units(T.RUN_MODES)),
            _req("work", EXPR),
            _opt("growing", CREF),
            _default("also", Seq(CREF), ()),
        ], T.Run),
        _tuple_variant("CStmt", "Branch", [EXPR, USIZE, USIZE], T.Branch),
        ("Loop", USIZE, T.Loop),
        _struct_variant("CStmt", "Choose", [
            _req("var", USIZE),
            _req("count", EXPR),
            _req("key", EXPRS),
        ], T.Choose),
        ("End", None, T.End),
    ])

    # ---------------------------------------------------------------------------------------
    # deployment

    SPILL = Struct("struct CSpill", [_req("to", USIZE), _req("via", USIZE), _req("work", EXPR),
                                     _req("when", EXPR)], T.Spill)

    POOL = Struct("struct CPool", [
        ("name", STRING, NO_DEFAULT),
        _default("index", Opt(U32), None),
        ("cap", REAL, NO_DEFAULT),
        _opt("block", FLOAT),
        _req("evict", Enum([("Lru", None, T.EvictLru), ("By", EXPRS, T.EvictBy)])),
        _req("preempt", _units(T.PREEMPTS)),
        _opt("queue", EXPRS),
        _opt("spill", SPILL),
        _opt("admit_via", USIZE),
    ], T.Pool)

    STEP = Struct("struct CStep", [
        _req("budget", EXPR),
        _req("cost", EXPR),
        _req("chunk", EXPR),
        _req("serve", Enum([("By", EXPRS, T.ServeBy),
                            ("ExclusivePrefill", None, T.ServeExclusivePrefill)])),
        _opt("memory", USIZE),
    ] + ([_default("only", Opt(EXPR), None)] if ext else []), T.Step)

    STAGE = Struct("struct CStage", [
        _req("name", STRING),
        _default("index", Opt(U32), None),
        _req("kind", Enum([
            ("Fifo", USIZE, T.Fifo),
            ("Ps", EXPR, T.Ps),
            ("Delay", None, T.Delay),
            ("Step", STEP, _ident),
        ])),
    ], T.Stage)

    # ---------------------------------------------------------------------------------------
    # workload and program

    PAIRS = Seq(Tuple([USIZE, FLOAT]))

    SESSION = Struct("struct SessionInit", [
        _req("attrs", PAIRS),
        _default("turns", Seq(PAIRS), ()),
    ], T.SessionInit)

    ARRIVAL = Enum([
        ("Poisson", FLOAT, T.Poisson),
        ("Renewal", EXPR, T.Renewal),
        ("Closed", USIZE, T.Closed),
        ("Batch", USIZE, T.Batch),
        ("Sessions", Seq(SESSION), T.Sessions),
        ("None", None, T.NoArrival),
    ])

    GAUGE = Struct("struct Gauge", [_req("name", STRING), _req("expr", EXPR)], T.Gauge)

    PROGRAM = Struct("struct Program", [
        _req("version", U32),
        _req("attrs", Seq(STRING)),
        _req("observes", Seq(STRING)),
        _req("pools", Seq(POOL)),
        _req("stages", Seq(STAGE)),
        _req("arrival", ARRIVAL),
        _opt("trace", STRING),
        _req("trace_ordered", BOOL),
        _req("init", USIZE),
        _req("turn", USIZE),
        _req("session", USIZE),
        _req("blocks", Seq(Seq(STMT))),
        _req("horizon", FLOAT),
        _req("warmup", FLOAT),
        _req("seed", U64),
        _default("arrivals", Opt(USIZE), None),
        _req("slot_cached", USIZE),
        _req("slot_serial", USIZE),
        _req("slot_turn", USIZE),
        _req("slot_new", USIZE),
        _req("slot_out", USIZE),
        _req("slot_think", USIZE),
        _req("slot_more", USIZE),
        _req("slot_forced", USIZE),
        _req("slot_computed", USIZE),
        _req("hidden", Seq(USIZE)),
        _default("share", Opt(_units(T.SHARES)), None),
        _default("gauges", Seq(GAUGE), ()),
    ] + ([_default("claims", Seq(_claim_schema(EXPR)), ())] if ext else []), T.Program)
    return PROGRAM


PROGRAM = _schema(False)
PROGRAM_11 = _schema(True)

# the reference's version pre-check reads this one-field struct first
VERSION = Struct("struct Version", [_req("version", U32)], _ident)


def load_program(text: str) -> T.Program:
    """Parse an IR text as the reference does, then ``validate`` it.

    A text that reads as ``{"version": V}`` (other keys ignored) with V other than 10 is
    refused by version alone; otherwise serde_json's message is prefixed ``IR: ``."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as e:  # the reference fails the same way, as a ValueError
        raise IRError(str(e)) from None
    try:
        version = from_str(VERSION, data)
    except DeError:
        version = None
    try:
        program = from_str(PROGRAM_11 if version == T.IR_VERSION_CLAIMS else PROGRAM, data)
    except DeError as e:
        # The reference reads ``{"version": V}`` before the whole; a text the whole reads
        # also reads as that, and ``validate`` then says the same about V, so the pre-check
        # is needed only for a text that fails.
        try:
            version = from_str(VERSION, data)
        except DeError:
            version = T.IR_VERSION
        if version != T.IR_VERSION:
            raise IRError(f"IR version {version} (this interpreter reads {T.IR_VERSION})")
        raise IRError(f"IR: {e.msg}") from None
    validate(program)
    if program.version == T.IR_VERSION_CLAIMS:
        check_claims(program)
    return program
