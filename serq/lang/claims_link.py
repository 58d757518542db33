"""Linking claims (extension, IR 11; formal.md §2.2): names to slots, the claim's stage to a
stage index, and the aggregates ``total``/``count``/``largest``/``smallest``/``prefix_total``
to ``Agg`` nodes. Only what has a source position is checked here (unknown names, stages and
observations, the aggregate's argument); what a claim may read is checked on the IR by
``serq.ir.claims_check``, as pyserq 0.1.3 does (its messages carry no position).

The iteration variables (``demand``, ``served``, ``arrived``) and the aggregates are names
only inside a claim: elsewhere they stay what they are in v0.1.2 (unknown names and
functions), so a v0.1.2 program links exactly as before.
"""
from __future__ import annotations

from serq.ir import types as T
from serq.lang import ast as A

# source name -> IR aggregate kind
AGGREGATES = {"total": "Total", "count": "Count", "largest": "Largest",
              "smallest": "Smallest", "prefix_total": "PrefixTotal"}
# source name -> IR context variable, read only by a claim over iterations
ITERATION_VARS = {"demand": "Demand", "served": "Served", "arrived": "Arrived"}


def link_claims(lk, lerr, context):
    """The ``Claim`` list of the program, in declaration order. ``context`` is the linker's
    error prefix cell: every message names the claim first (``claim `c`: …``)."""
    out = []
    lk.in_claim = True
    try:
        for d in lk.p.claims:
            context[0] = f"claim `{d.name}`: "
            given = lk.expr(d.given) if d.given is not None else None
            stage = claim_stage(lk, d, lerr) if d.stage is not None else None
            out.append(T.Claim(d.name, given, d.kind, stage, lk.expr(d.expr)))
    finally:
        lk.in_claim = False
        context[0] = ""
    return out


def claim_stage(lk, d, lerr):
    """The absolute index of the stage a claim over iterations watches: a stage, or a member
    of a stage array named by a constant index."""
    r = d.stage
    ref = lk.cref(r, "stage", None, (d.pos, d.name))
    if ref.index is None:
        return ref.base
    if type(ref.index) is not T.Num:
        lerr(f"the stage `{r.name}[…]` of a claim is a member named by a constant index", r.pos)
    return ref.base + int(ref.index.value)


def aggregate(lk, e, lerr):
    """``total(obs)`` and its kin: the argument must be an observation's bare name."""
    a = e.args[0] if len(e.args) == 1 else None
    if type(a) is not A.Ref or a.index is not None or a.member is not None:
        lerr(f"`{e.name}` takes the name of an `observe`, as `{e.name}(latency)`", e.pos,
             caret_len=len(e.name))
    k = lk.obs_slot.get(a.name)
    if k is None:
        lerr(f"`{e.name}({a.name})`: `{a.name}` is not an `observe` of the program", a.pos)
    return T.Agg(AGGREGATES[e.name], k)
