"""The parse tree: what the source says, before names are resolved.

Every node keeps the ``Pos`` of the token that starts it (or that errors should point at), so
the linker can report ``line:col`` with a caret under the offending name.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

# ---------------------------------------------------------------------------------------
# expressions


@dataclass(slots=True)
class Num:
    value: float
    pos: Any


@dataclass(slots=True)
class Name:
    """A bare identifier: an attribute, a `let`, a context variable, `inf`, `self`..."""
    name: str
    pos: Any


@dataclass(slots=True)
class Dotted:
    """``Q.x``: a queue's mark, local or pool."""
    queue: str
    member: str
    pos: Any


@dataclass(slots=True)
class Ref:
    """A pool or stage reference ``name[index].member`` (index and member optional); also a
    call argument written as a lone name, which may be a value instead."""
    name: str
    index: Optional[Any]
    member: Optional[str]
    pos: Any
    bracket_pos: Any = None  # position of the index expression, for range errors


@dataclass(slots=True)
class Call:
    name: str
    args: list
    pos: Any


@dataclass(slots=True)
class Sample:
    dist: str
    args: list
    pos: Any  # the distribution's name


@dataclass(slots=True)
class Unary:
    op: str  # "Neg" | "Not"
    operand: Any
    pos: Any


@dataclass(slots=True)
class Binary:
    op: str
    left: Any
    right: Any
    pos: Any


@dataclass(slots=True)
class Cond:
    cond: Any
    then: Any
    other: Any
    pos: Any


@dataclass(slots=True)
class Agg:
    kind: str  # "max" | "min" | "sum"
    var: str
    var_pos: Any
    count: Any
    body: Any
    pos: Any


@dataclass(slots=True)
class Fixed:
    """An already-linked IR expression standing in the tree (queue `self`, substituted
    values): the linker passes it through."""
    expr: Any
    pos: Any


# ---------------------------------------------------------------------------------------
# statements


@dataclass(slots=True)
class TurnS:
    pos: Any


@dataclass(slots=True)
class EndS:
    pos: Any


@dataclass(slots=True)
class RequestS:
    gateway: Optional[str]
    pos: Any
    name_pos: Any = None


@dataclass(slots=True)
class SetS:
    name: str
    expr: Any
    pos: Any  # the name


@dataclass(slots=True)
class ObserveS:
    name: str
    expr: Any
    pos: Any


@dataclass(slots=True)
class HoldPoolS:
    ref: Ref
    units: Any
    reserve: Optional[Any]


@dataclass(slots=True)
class HoldS:
    pools: list
    reuse: Optional[Any]
    body: list
    cache: Optional[Any]
    lease: Optional[tuple]  # (Ref, expr)
    pos: Any
    bindings: list = field(default_factory=list)  # [(name, expr, pos)], hoisted ones only
    bound: tuple = ()  # every name its `at admission` binds


@dataclass(slots=True)
class GrowS:
    ref: Ref
    amount: Any
    pos: Any


@dataclass(slots=True)
class DropS:
    ref: Ref
    pos: Any


@dataclass(slots=True)
class ReleaseS:
    ref: Ref
    pos: Any


@dataclass(slots=True)
class LoadS:
    ref: Ref
    amount: Any
    pos: Any


@dataclass(slots=True)
class RunS:
    stages: list  # [Ref]; the first is the stage, the rest `also`
    mode: Optional[str]  # None: decided by the linker from the words written
    work: Any
    growing: Optional[Ref]
    pos: Any
    written_mode: Optional[str] = None  # "Prefill"/"Decode" when the source says so


@dataclass(slots=True)
class BranchS:
    guard: Any
    then: list
    other: list
    pos: Any
    draw: bool = False  # `branch with (p)`


@dataclass(slots=True)
class LoopS:
    body: list
    pos: Any


@dataclass(slots=True)
class ChooseS:
    name: str
    count: Any
    keys: list
    pos: Any


@dataclass(slots=True)
class QueueCallS:
    """``Q[i].verb (args) [from S[k]] [to P (m)];``, expanded at assembly."""
    queue: str
    index: Optional[Any]
    verb: str
    args: list
    source: Optional[Ref]
    to: Optional[tuple]  # (Ref, expr)
    pos: Any
    verb_pos: Any = None


# ---------------------------------------------------------------------------------------
# declarations


@dataclass(slots=True)
class LetD:
    name: str
    expr: Any
    pos: Any
    generated: bool = False  # queue constants such as `L.latency.time`


@dataclass(slots=True)
class PoolD:
    name: str
    size: Optional[int]
    pos: Any
    cap: Any = None
    block: Any = None
    evict: Any = None  # None = lru, else list of key exprs
    preempt: str = "None"
    queue: Any = None  # None = fifo, else list of keys
    spill: Any = None  # (to name, to pos, via name, via pos, work, when)
    admit_via: Any = None  # (name, pos)


@dataclass(slots=True)
class StageD:
    name: str
    size: Optional[int]
    pos: Any
    kind: str  # "fifo" | "ps" | "delay" | "step"
    arg: Any = None  # fifo servers / ps capacity
    budget: Any = None
    cost: Any = None
    chunk: Any = None
    serve: Any = None  # None = admission; "excl"; list of keys
    memory: Any = None  # (name, pos)
    only: Any = None  # `serve only (e)` (extension, IR 11)


@dataclass(slots=True)
class GaugeD:
    name: str
    expr: Any
    pos: Any


@dataclass(slots=True)
class ClaimD:
    """``claim NAME [given (g)] : every|some iteration of STAGE (e);`` or ``… : at end (e);``
    (extension, IR 11; formal.md §2.2). ``kind``: "EveryIteration", "SomeIteration", "AtEnd"."""
    name: str
    pos: Any
    given: Any
    kind: str
    stage: Any  # A.Ref or None
    expr: Any
