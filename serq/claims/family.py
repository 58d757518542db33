"""The workload family of a program's claims, and one program per workload (formal.md §2.2,
§6.5; docs/claims.md "serq verify").

As in the Lean generator's family: a workload is n sessions, each with values for the
attributes the `init` block *draws* and an arrival time; the program's `init` then runs with
those values in place of the draws, and the session starts with a leading delay of its arrival
time. Under `batch` every session arrives at 0 and under a constant `renewal(g)` the i-th at
(i+1)·g (the family fixes them); under `poisson` or a drawn `renewal` the arrival times range
over a grid. ``given`` selects the family's members (a workload with a session failing it is
outside the family).

A workload becomes an IR program (`Workload.program`): arrival `Sessions` (each session
preset with its drawn values, the attributes `init` derives from them without reading the
state, and an added attribute `arrive`), an empty `init` block, and a session block that
starts with a delay of `arrive` on an added `delay` stage and then runs the original `init`
statements (minus the draws) and the original session.
"""
from __future__ import annotations

import dataclasses
import itertools
import math

from serq.ir import types as T
from serq.ir.fold import draws_ir, fold_ir

ARRIVE = "arrive"  # the added attribute: the session's arrival time
DELAY = "arrive"   # the added delay stage


class FamilyError(ValueError):
    """The program's workload is outside what `serq verify` enumerates."""


@dataclasses.dataclass(frozen=True)
class Family:
    """The bounded family F(n ≤ max_sessions, values, times) of a program."""
    program: T.Program
    drawn: tuple          # (slot, name) of the attributes `init` draws, in order
    values: dict          # name -> tuple of values
    times: object         # tuple of arrival times, or a function i -> time (fixed)
    max_sessions: int

    def describe(self) -> str:
        parts = [f"n ≤ {self.max_sessions}"]
        for _, name in self.drawn:
            parts.append(f"{name} ∈ {show_set(self.values[name])}")
        if callable(self.times):
            parts.append(self.times.__doc__)
        else:
            parts.append(f"arrival times ∈ {show_set(self.times)}")
        return "F(" + ", ".join(parts) + ")"

    def workloads(self):
        """Every workload, by n, then in lexicographic order (arrival times non-decreasing:
        sessions are numbered in arrival order)."""
        combos = list(itertools.product(*(self.values[n] for _, n in self.drawn)))
        for n in range(1, self.max_sessions + 1):
            if callable(self.times):
                for vs in itertools.product(combos, repeat=n):
                    yield Workload(self, tuple(vs), tuple(self.times(i) for i in range(n)))
            else:
                for ts in itertools.combinations_with_replacement(self.times, n):
                    for vs in itertools.product(combos, repeat=n):
                        yield Workload(self, tuple(vs), ts)

    def size(self, cap=None) -> int:
        """The number of workloads; with ``cap``, counting stops once it passes ``cap`` (the
        count of a family too large to run can have millions of digits)."""
        c = 1
        for _, n in self.drawn:
            c *= len(self.values[n])
        total = 0
        for n in range(1, self.max_sessions + 1):
            t = 1 if callable(self.times) else math.comb(len(self.times) + n - 1, n)
            total += t * c ** n
            if cap is not None and total > cap:
                return total
        return total


@dataclasses.dataclass(frozen=True)
class Workload:
    family: Family
    values: tuple   # per session: the drawn attributes' values
    times: tuple    # per session: its arrival time

    def describe(self) -> str:
        names = [n for _, n in self.family.drawn]
        out = []
        for i, (vs, t) in enumerate(zip(self.values, self.times)):
            attrs = ", ".join(f"{n} = {show(v)}" for n, v in zip(names, vs))
            out.append(f"session {i}: arrives at {show(t)}" + (f", {attrs}" if attrs else ""))
        return "; ".join(out)

    def program(self) -> T.Program:
        return build_program(self.family.program, self.family.drawn, self.values, self.times)


def show(v) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def show_set(vs) -> str:
    vs = list(vs)
    if len(vs) > 2 and all(float(v).is_integer() for v in vs) and \
            [int(v) for v in vs] == list(range(int(vs[0]), int(vs[-1]) + 1)):
        return f"{{{show(vs[0])}..{show(vs[-1])}}}"
    return "{" + ", ".join(show(v) for v in vs) + "}"


# ---------------------------------------------------------------------------------------
# the family of a program


def drawn_attributes(p: T.Program):
    out = []
    for s in p.blocks[p.init]:
        if type(s) is T.Set and draws_ir(s.expr) and s.slot not in [x for x, _ in out]:
            out.append((s.slot, p.attrs[s.slot]))
    return tuple(out)


def family_of(p: T.Program, max_sessions=3, values=None, times=None) -> Family:
    """The bounded family of ``p``: ``values`` name -> values for the drawn attributes
    (default 0, 1, 2 each), ``times`` the arrival-time grid when the arrival law leaves the
    times free (default 0, one mean gap, two mean gaps)."""
    a = p.arrival
    if p.trace is not None:
        raise FamilyError("serq verify: a trace workload is outside the family it enumerates "
                          "(sessions with drawn attributes and arrival times)")
    if type(a) is T.Closed:
        raise FamilyError("serq verify: a closed workload (`arrive closed(n)`) is outside the "
                          "family it enumerates; write `arrive batch(n)` for n sessions at 0")
    if type(a) in (T.Sessions, T.NoArrival):
        raise FamilyError("serq verify: the program's sessions are given explicitly; the "
                          "family is made of generated sessions (write `arrive batch(n)`, "
                          "`renewal(g)` or `poisson(λ)`)")
    drawn = drawn_attributes(p)
    values = dict(values or {})
    for name in values:
        if name not in [n for _, n in drawn]:
            shown = ", ".join(n for _, n in drawn) or "none"
            raise FamilyError(f"serq verify: --values {name}: `{name}` is not an attribute the "
                              f"`init` block draws (those are: {shown})")
    for _, name in drawn:
        values.setdefault(name, (0.0, 1.0, 2.0))
    fixed = fixed_times(a)
    if fixed is not None and times is None:
        grid = fixed
    elif times is not None:
        grid = tuple(sorted(set(float(t) for t in times)))
    else:
        gap = mean_gap(a)
        grid = (0.0, gap, 2 * gap)
    return Family(p, drawn, values, grid, max_sessions)


def fixed_times(a):
    """The arrival times the family fixes: ``batch`` at 0, a constant ``renewal(g)`` at
    (i+1)·g; None when they are free."""
    if type(a) is T.Batch:
        def at_zero(i):
            """arrivals all at 0 (batch)"""
            return 0.0
        return at_zero
    if type(a) is T.Renewal:
        g = fold_ir(a.gap)
        if g is not None:
            def every(i, g=g):
                return (i + 1) * g
            every.__doc__ = f"arrivals at (i+1)·{show(g)} (renewal)"
            return every
    return None


def mean_gap(a) -> float:
    """The mean gap of a Poisson stream (to 12 significant digits: 1/2e-05 is 50000)."""
    if type(a) is T.Poisson:
        return float(f"{1.0 / a.rate:.12g}")
    return 1.0


# ---------------------------------------------------------------------------------------
# one workload as a program


def build_program(p: T.Program, drawn, values, times) -> T.Program:
    slots = [s for s, _ in drawn]
    arrive_slot = len(p.attrs)
    delay_stage = len(p.stages)
    init = p.blocks[p.init]
    kept = [s for s in init if not (type(s) is T.Set and s.slot in slots)]
    lead = T.Run(stage=T.CRef(delay_stage, 1, None), mode="Plain", work=T.Attr(arrive_slot),
                 growing=None)
    blocks = list(p.blocks)
    blocks[p.init] = ()
    blocks[p.session] = (lead,) + tuple(kept) + tuple(p.blocks[p.session])
    sessions = []
    for vs, t in zip(values, times):
        attrs = dict(zip(slots, (float(v) for v in vs)))
        attrs.update(derived(init, attrs, slots))
        attrs[arrive_slot] = float(t)
        sessions.append(T.SessionInit(tuple(sorted(attrs.items()))))
    return dataclasses.replace(
        p, attrs=p.attrs + (ARRIVE,),
        stages=p.stages + (T.Stage(DELAY, None, T.Delay()),),
        arrival=T.Sessions(tuple(sessions)), arrivals=None, blocks=tuple(blocks))


def derived(init, attrs, drawn_slots):
    """The attributes `init` computes from the drawn ones without reading the state (so that
    `given` sees them at the session's start, as it would after `init`)."""
    known = dict(attrs)
    out = {}
    for s in init:
        if type(s) is not T.Set or s.slot in drawn_slots:
            continue
        v = fold_ir(substitute(s.expr, known))
        if v is None:
            known.pop(s.slot, None)
            continue
        known[s.slot] = out[s.slot] = v
    return out


def substitute(e, known):
    t = type(e)
    if t is T.Attr:
        v = known.get(e.slot)
        return e if v is None else T.Num(v)
    if t is T.Binary:
        return T.Binary(e.op, substitute(e.left, known), substitute(e.right, known))
    if t is T.Unary:
        return T.Unary(e.op, substitute(e.operand, known))
    if t is T.Cond:
        return T.Cond(substitute(e.cond, known), substitute(e.then, known),
                      substitute(e.other, known))
    if t is T.Call:
        return T.Call(e.fun, tuple(T.ArgExpr(substitute(a.expr, known))
                                   if type(a) is T.ArgExpr else a for a in e.args))
    return e
