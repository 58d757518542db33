"""The IR, version 10, as typed immutable data.

Every class mirrors one construct of ``ir.md``; field order is the JSON output order, so
``serq.ir.json`` can encode a value by walking its fields. Enumerations with no payload
(context variables, operators, functions, distributions, run modes, preemption, share) are
plain strings holding the IR variant name (``"Now"``, ``"Add"``, ``"Min"`` ...): they are
compared often and never carry data, so a string is the simplest exact representation.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Union

IR_VERSION = 10
# the version an IR carrying an extension (claims, a step stage's `serve only`) declares;
# a program using neither stays version 10, byte for byte (formal.md §0, docs/claims.md)
IR_VERSION_CLAIMS = 11

# ---------------------------------------------------------------------------------------
# variant name tables (the order is serde's declaration order, used in error messages)

CTX_VARS = ("Now", "Waited", "Size", "Age", "Last", "Queued", "N", "Ntok", "Ndec", "Npre",
            "Nres", "Kvb", "Kvp", "Attn", "Decoding", "Admission", "Remaining")
# context variables only a claim over iterations reads (IR 11, formal.md §2.2)
CLAIM_CTX_VARS = ("Demand", "Served", "Arrived")
AGG_KINDS = ("Total", "Count", "Largest", "Smallest", "PrefixTotal")
FUNS = ("Min", "Max", "Abs", "Floor", "Ceil", "Sqrt", "Exp", "Ln", "Pow", "Queue", "Busy",
        "Work", "Used", "Free", "CachedIn", "Holders", "Queued", "Price", "BudgetLeft",
        "EstLambda", "EstRho", "EstWait")
DISTS = ("Exp", "Det", "Uniform", "Erlang", "H2", "Bernoulli")
UNOPS = ("Neg", "Not")
BINOPS = ("Add", "Sub", "Mul", "Div", "Pow", "Lt", "Le", "Gt", "Ge", "Eq", "Ne", "And", "Or")
RUN_MODES = ("Plain", "Prefill", "Decode")
PREEMPTS = ("None", "Lifo")
SHARES = ("MaxMin", "Bottleneck")

# ---------------------------------------------------------------------------------------
# expressions


@dataclass(frozen=True, slots=True)
class Num:
    value: float


@dataclass(frozen=True, slots=True)
class Attr:
    slot: int


@dataclass(frozen=True, slots=True)
class Ctx:
    var: str  # one of CTX_VARS


@dataclass(frozen=True, slots=True)
class Sample:
    dist: str  # one of DISTS
    args: tuple


@dataclass(frozen=True, slots=True)
class Call:
    fun: str  # one of FUNS
    args: tuple  # of ArgExpr | ArgPool | ArgStage


@dataclass(frozen=True, slots=True)
class Unary:
    op: str  # one of UNOPS
    operand: "Expr"


@dataclass(frozen=True, slots=True)
class Binary:
    op: str  # one of BINOPS
    left: "Expr"
    right: "Expr"


@dataclass(frozen=True, slots=True)
class Cond:
    cond: "Expr"
    then: "Expr"
    other: "Expr"


@dataclass(frozen=True, slots=True)
class Agg:
    """An aggregate over every value an observation recorded (IR 11; claims `at end` only)."""
    kind: str  # one of AGG_KINDS
    obs: int


Expr = Union[Num, Attr, Ctx, Sample, Call, Unary, Binary, Cond]


@dataclass(frozen=True, slots=True)
class CRef:
    """A family of ``count`` consecutive pools or stages from ``base``, one selected by
    ``index`` (``None``: unindexed, reads ``base``)."""
    base: int
    count: int
    index: Optional[Expr] = None


@dataclass(frozen=True, slots=True)
class ArgExpr:
    expr: Expr


@dataclass(frozen=True, slots=True)
class ArgPool:
    ref: CRef


@dataclass(frozen=True, slots=True)
class ArgStage:
    ref: CRef


Arg = Union[ArgExpr, ArgPool, ArgStage]

# ---------------------------------------------------------------------------------------
# statements


@dataclass(frozen=True, slots=True)
class Turn:
    pass


@dataclass(frozen=True, slots=True)
class End:
    pass


@dataclass(frozen=True, slots=True)
class Set:
    slot: int
    expr: Expr


@dataclass(frozen=True, slots=True)
class Observe:
    index: int
    expr: Expr


@dataclass(frozen=True, slots=True)
class HoldPool:
    ref: CRef
    units: Expr
    reserve: Optional[Expr] = None


@dataclass(frozen=True, slots=True)
class Lease:
    ref: CRef
    time: Expr


@dataclass(frozen=True, slots=True)
class Hold:
    pools: tuple  # of HoldPool
    reuse: Optional[Expr]
    body: int
    cache: Optional[Expr]
    lease: Optional[Lease]


@dataclass(frozen=True, slots=True)
class Grow:
    ref: CRef
    amount: Expr


@dataclass(frozen=True, slots=True)
class Drop:
    ref: CRef


@dataclass(frozen=True, slots=True)
class Release:
    ref: CRef


@dataclass(frozen=True, slots=True)
class Load:
    ref: CRef
    amount: Expr


@dataclass(frozen=True, slots=True)
class Run:
    stage: CRef
    mode: str  # one of RUN_MODES
    work: Expr
    growing: Optional[CRef] = None
    also: tuple = ()  # of CRef; omitted from the JSON when empty


@dataclass(frozen=True, slots=True)
class Branch:
    guard: Expr
    then: int
    other: int


@dataclass(frozen=True, slots=True)
class Loop:
    body: int


@dataclass(frozen=True, slots=True)
class Choose:
    var: int
    count: Expr
    key: tuple  # of Expr


Stmt = Union[Turn, End, Set, Observe, Hold, Grow, Drop, Release, Load, Run, Branch, Loop,
             Choose]

# ---------------------------------------------------------------------------------------
# pools


@dataclass(frozen=True, slots=True)
class EvictLru:
    pass


@dataclass(frozen=True, slots=True)
class EvictBy:
    keys: tuple  # of Expr


@dataclass(frozen=True, slots=True)
class Spill:
    to: int
    via: int
    work: Expr
    when: Expr


@dataclass(frozen=True, slots=True)
class Pool:
    name: str
    index: Optional[int]  # omitted from the JSON when None
    cap: float
    block: Optional[float]
    evict: Union[EvictLru, EvictBy]
    preempt: str  # one of PREEMPTS
    queue: Optional[tuple]  # of Expr; None = fifo
    spill: Optional[Spill]
    admit_via: Optional[int]


# ---------------------------------------------------------------------------------------
# stages


@dataclass(frozen=True, slots=True)
class Fifo:
    servers: int


@dataclass(frozen=True, slots=True)
class Ps:
    capacity: Expr


@dataclass(frozen=True, slots=True)
class Delay:
    pass


@dataclass(frozen=True, slots=True)
class ServeBy:
    keys: tuple  # of Expr; () = admission order


@dataclass(frozen=True, slots=True)
class ServeExclusivePrefill:
    pass


@dataclass(frozen=True, slots=True)
class Step:
    budget: Expr
    cost: Expr
    chunk: Expr
    serve: Union[ServeBy, ServeExclusivePrefill]
    memory: Optional[int]
    only: Optional["Expr"] = None  # `serve only (e)` (IR 11); omitted from the JSON when None


@dataclass(frozen=True, slots=True)
class Stage:
    name: str
    index: Optional[int]  # omitted from the JSON when None
    kind: Union[Fifo, Ps, Delay, Step]


# ---------------------------------------------------------------------------------------
# arrivals


@dataclass(frozen=True, slots=True)
class Poisson:
    rate: float


@dataclass(frozen=True, slots=True)
class Renewal:
    gap: Expr


@dataclass(frozen=True, slots=True)
class Closed:
    n: int


@dataclass(frozen=True, slots=True)
class Batch:
    n: int


@dataclass(frozen=True, slots=True)
class SessionInit:
    attrs: tuple  # of (slot, value)
    turns: tuple = ()  # of tuple of (slot, value); omitted from the JSON when empty


@dataclass(frozen=True, slots=True)
class Sessions:
    sessions: tuple  # of SessionInit


@dataclass(frozen=True, slots=True)
class NoArrival:
    pass


Arrival = Union[Poisson, Renewal, Closed, Batch, Sessions, NoArrival]


@dataclass(frozen=True, slots=True)
class Gauge:
    name: str
    expr: Expr


@dataclass(frozen=True, slots=True)
class Claim:
    """``claim NAME [given (g)] : KIND (expr);`` (IR 11, formal.md §2.2). ``kind`` is
    ``"EveryIteration"``, ``"SomeIteration"`` (with ``stage``, an absolute stage index) or
    ``"AtEnd"`` (``stage`` None)."""
    name: str
    given: Optional["Expr"]
    kind: str
    stage: Optional[int]
    expr: "Expr"


# ---------------------------------------------------------------------------------------
# the program

BUILTIN_ATTRS = ("cached", "serial", "turn_no", "new", "out", "think", "more", "forced",
                 "computed")


@dataclass(frozen=True, slots=True)
class Program:
    """A whole program: the 28 fields of the IR's ``Program``, in output order."""
    version: int
    attrs: tuple
    observes: tuple
    pools: tuple
    stages: tuple
    arrival: Arrival
    trace: Optional[str]
    trace_ordered: bool
    init: int
    turn: int
    session: int
    blocks: tuple  # of tuple of Stmt
    horizon: float
    warmup: float
    seed: int
    arrivals: Optional[int]  # omitted when None
    slot_cached: int = 0
    slot_serial: int = 1
    slot_turn: int = 2
    slot_new: int = 3
    slot_out: int = 4
    slot_think: int = 5
    slot_more: int = 6
    slot_forced: int = 7
    slot_computed: int = 8
    hidden: tuple = ()
    share: Optional[str] = None  # omitted when None
    gauges: tuple = ()  # omitted when empty
    claims: tuple = ()  # of Claim (IR 11); omitted when empty
    # not part of the IR: where a relative trace path is resolved from
    base_dir: Optional[str] = field(default=None, compare=False)

    def to_json(self) -> str:
        """The reference's exact pretty JSON text (no trailing newline)."""
        from serq.ir.json import program_to_json
        return program_to_json(self)

    @classmethod
    def from_json(cls, text: str) -> "Program":
        """Read an IR text, with the reference's leniency, checks and messages. A ``text``
        that is not a ``str`` is a ``TypeError`` with pyserq 0.1.2's words."""
        if not isinstance(text, str):
            raise TypeError(f"argument 's': '{type(text).__name__}' object cannot be "
                            f"converted to 'PyString'")
        from serq.ir.json import program_from_json
        return program_from_json(text)


def _guard_depth() -> None:
    """``repr`` of any IR value, and ``==``/``hash`` of a Program, recurse as deep as the
    program nests: run them under serq.deep (a clear error, never a crash, however deep)."""
    import dataclasses
    from serq.deep import deep
    for value in list(globals().values()):
        if isinstance(value, type) and dataclasses.is_dataclass(value) \
                and value.__module__ == __name__:
            value.__repr__ = deep(value.__repr__)
    Program.__eq__ = deep(Program.__eq__)
    Program.__hash__ = deep(Program.__hash__)


_guard_depth()
