"""Pricing determinism (batch-invariance.md §4.7 "Cost hooks"): what does a determinism mode
cost a deployment in TTFT and throughput?

No new syntax: a mode rewrites the cost expression of the program's first step stage, in
memory, and the program is run again with the same seed (common random numbers), so the
v0.1.2 language and IR stay byte-identical and any program with a step stage can be priced.

* ``none``: the cost as written.
* ``batch_invariant(m)``: every iteration costs ``m`` times as much (invariant kernels; the
  anchors of §0: vLLM ≈ 1.01, SGLang 1.34 with CUDA graphs, Thinking Machines 1.6; the
  default is SGLang's until a GPU run calibrates it).
* ``dvr(W, G, f, ρ)``: a fraction ``f`` of decode tokens is deterministic. Every ``W``
  committed tokens of such a request add one verify slice of ``W`` tokens, verified in groups
  of ``G`` padded to one fixed shape: per decode token ``f / (W·G)`` verify passes, each
  priced by the stage's own cost at ``tokens = prefilled = G·W``, ``decoders = 0``. Each
  rollback (ρ per verify, measured by ``serq numerics check --dvr``) recomputes on average
  ``(W − 1)/2`` rejected tokens, added to the iteration's tokens:
  ``f·ρ·(W − 1)/(2W)`` per decode token. Verify passes are amortised into the iterations
  that produce the tokens (an approximation: real engines run them as separate passes).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from serq.ir import types as T

DEFAULT_MULTIPLIER = 1.34
DEFAULT_ROLLBACK = 0.01


@dataclass(frozen=True)
class Mode:
    kind: str                   # none | batch_invariant | dvr
    multiplier: float = DEFAULT_MULTIPLIER
    window: int = 8
    group: int = 8
    fraction: float = 1.0
    rollback: float = DEFAULT_ROLLBACK

    def __str__(self):
        if self.kind == "batch_invariant":
            return f"batch_invariant(x{self.multiplier:g})"
        if self.kind == "dvr":
            return (f"dvr(W {self.window}, G {self.group}, f {self.fraction:g}, "
                    f"rollback {self.rollback:g})")
        return "none"


def substitute(expr, mapping):
    """``expr`` with every context read ``Ctx(var)`` in ``mapping`` replaced."""
    if isinstance(expr, T.Ctx):
        return mapping.get(expr.var, expr)
    if isinstance(expr, tuple):
        return tuple(substitute(e, mapping) for e in expr)
    if dataclasses.is_dataclass(expr) and not isinstance(expr, type):
        changes = {}
        for f in dataclasses.fields(expr):
            v = getattr(expr, f.name)
            new = substitute(v, mapping)
            if new is not v:
                changes[f.name] = new
        return dataclasses.replace(expr, **changes) if changes else expr
    return expr


def _num(x):
    return T.Num(float(x))


def _bin(op, a, b):
    return T.Binary(op, a, b)


def step_stage(program):
    for i, s in enumerate(program.stages):
        if isinstance(s.kind, T.Step):
            return i, s
    raise ValueError("serq numerics cost: the program has no step stage "
                     "(`stage NAME : step { ... }`), so there is no iteration cost to price")


def priced_cost(cost, mode: Mode):
    """The step cost expression under ``mode``."""
    if mode.kind == "none":
        return cost
    if mode.kind == "batch_invariant":
        return _bin("Mul", _num(mode.multiplier), cost)
    if mode.kind == "dvr":
        gw = _num(mode.group * mode.window)
        verify_pass = substitute(cost, {"Ntok": gw, "Npre": gw, "Ndec": _num(0)})
        per_decode = mode.fraction / (mode.window * mode.group)
        recompute = mode.fraction * mode.rollback * (mode.window - 1) / (2 * mode.window)
        ndec = T.Ctx("Ndec")
        inline = substitute(cost, {"Ntok": _bin("Add", T.Ctx("Ntok"), _bin("Mul", ndec, _num(recompute)))})
        return _bin("Add", inline, _bin("Mul", _bin("Mul", ndec, _num(per_decode)), verify_pass))
    raise ValueError(f"unknown determinism mode {mode.kind!r} (none, batch_invariant, dvr)")


def with_mode(program, mode: Mode):
    """A copy of ``program`` whose first step stage is priced under ``mode``."""
    i, stage = step_stage(program)
    kind = dataclasses.replace(stage.kind, cost=priced_cost(stage.kind.cost, mode))
    stages = list(program.stages)
    stages[i] = dataclasses.replace(stage, kind=kind)
    return dataclasses.replace(program, stages=tuple(stages))


def price(program, modes, run):
    """[(mode, report)] for each mode (``run`` is serq.run)."""
    return [(m, run(with_mode(program, m))) for m in modes]


def summary_rows(program, results):
    """Per mode: the engine's iterations and throughput, the observations' means, and each
    relative to the first mode."""
    _, stage = step_stage(program)
    rows = []
    for mode, report in results:
        st = report.stage(stage.name)
        obs = {name: report.observe(name).mean for name in report.observes}
        rows.append(dict(mode=str(mode), iterations=st.iterations, throughput=st.throughput,
                         utilization=st.utilization, mean_itl=st.mean_itl,
                         ended=report.ended, observations=obs))
    return rows
