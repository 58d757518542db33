"""The IR's JSON text, byte for byte as the reference writes it.

The reference serialises with serde_json's pretty printer: externally tagged enums, fields in
declaration order, a few fields omitted when empty, floats in Rust's layout (positional for
1e-5 <= |x| < 1e16, otherwise ``d.ddde±X``), and infinities as the strings ``"inf"`` /
``"-inf"`` in the two "real" fields (``Num`` and pool ``cap``) but as ``null`` elsewhere.
"""
from __future__ import annotations

import json as _json
import math

from serq.deep import deep
from serq.ir import types as T

# ---------------------------------------------------------------------------------------
# numbers


def fmt_float(x: float) -> str:
    """A finite or non-finite f64 as serde_json writes it (non-finite: ``null``)."""
    if x != x or x in (math.inf, -math.inf):
        return "null"
    r = repr(x)
    if "e" not in r:
        return r
    mant, exp = r.split("e")
    e = int(exp)
    if e == -5:  # Rust keeps 1e-5 <= |x| < 1e-4 positional
        neg = mant.startswith("-")
        digits = mant.lstrip("-").replace(".", "")
        return ("-" if neg else "") + "0.0000" + digits.rstrip("0")
    return f"{mant}e{'-' if e < 0 else '+'}{abs(e)}"


def real(x: float):
    """The value of a "real" field: a float, or the strings ``"inf"``/``"-inf"``."""
    if x == math.inf or x != x:  # the reference's adapter writes NaN as "inf" too
        return "inf"
    if x == -math.inf:
        return "-inf"
    return float(x)


# ---------------------------------------------------------------------------------------
# IR values -> JSON trees (dicts keep insertion order; floats stay floats, ints stay ints)


def expr_value(e):
    t = type(e)
    if t is T.Num:
        return {"Num": real(e.value)}
    if t is T.Attr:
        return {"Attr": e.slot}
    if t is T.Ctx:
        return {"Ctx": e.var}
    if t is T.Binary:
        return {"Binary": [e.op, expr_value(e.left), expr_value(e.right)]}
    if t is T.Call:
        return {"Call": [e.fun, [arg_value(a) for a in e.args]]}
    if t is T.Unary:
        return {"Unary": [e.op, expr_value(e.operand)]}
    if t is T.Cond:
        return {"Cond": [expr_value(e.cond), expr_value(e.then), expr_value(e.other)]}
    if t is T.Sample:
        return {"Sample": [e.dist, [expr_value(a) for a in e.args]]}
    if t is T.Agg:
        return {"Agg": [e.kind, e.obs]}
    raise TypeError(f"not an IR expression: {e!r}")


def opt_expr(e):
    return None if e is None else expr_value(e)


def ref_value(r: T.CRef):
    return {"base": r.base, "count": r.count, "index": opt_expr(r.index)}


def arg_value(a):
    t = type(a)
    if t is T.ArgExpr:
        return {"Expr": expr_value(a.expr)}
    if t is T.ArgPool:
        return {"Pool": ref_value(a.ref)}
    return {"Stage": ref_value(a.ref)}


def stmt_value(s):
    t = type(s)
    if t is T.Set:
        return {"Set": [s.slot, expr_value(s.expr)]}
    if t is T.Observe:
        return {"Observe": [s.index, expr_value(s.expr)]}
    if t is T.Run:
        d = {"stage": ref_value(s.stage), "mode": s.mode, "work": expr_value(s.work),
             "growing": None if s.growing is None else ref_value(s.growing)}
        if s.also:
            d["also"] = [ref_value(r) for r in s.also]
        return {"Run": d}
    if t is T.Hold:
        return {"Hold": {
            "pools": [[ref_value(p.ref), expr_value(p.units), opt_expr(p.reserve)]
                      for p in s.pools],
            "reuse": opt_expr(s.reuse),
            "body": s.body,
            "cache": opt_expr(s.cache),
            "lease": None if s.lease is None else [ref_value(s.lease.ref),
                                                   expr_value(s.lease.time)],
        }}
    if t is T.Turn:
        return "Turn"
    if t is T.End:
        return "End"
    if t is T.Branch:
        return {"Branch": [expr_value(s.guard), s.then, s.other]}
    if t is T.Loop:
        return {"Loop": s.body}
    if t is T.Choose:
        return {"Choose": {"var": s.var, "count": expr_value(s.count),
                           "key": [expr_value(k) for k in s.key]}}
    if t is T.Grow:
        return {"Grow": [ref_value(s.ref), expr_value(s.amount)]}
    if t is T.Load:
        return {"Load": [ref_value(s.ref), expr_value(s.amount)]}
    if t is T.Drop:
        return {"Drop": ref_value(s.ref)}
    if t is T.Release:
        return {"Release": ref_value(s.ref)}
    raise TypeError(f"not an IR statement: {s!r}")


def pool_value(p: T.Pool):
    d = {"name": p.name}
    if p.index is not None:
        d["index"] = p.index
    d["cap"] = real(p.cap)
    d["block"] = p.block
    d["evict"] = "Lru" if type(p.evict) is T.EvictLru else {
        "By": [expr_value(k) for k in p.evict.keys]}
    d["preempt"] = p.preempt
    d["queue"] = None if p.queue is None else [expr_value(k) for k in p.queue]
    d["spill"] = None if p.spill is None else {
        "to": p.spill.to, "via": p.spill.via, "work": expr_value(p.spill.work),
        "when": expr_value(p.spill.when)}
    d["admit_via"] = p.admit_via
    return d


def kind_value(k):
    t = type(k)
    if t is T.Fifo:
        return {"Fifo": k.servers}
    if t is T.Ps:
        return {"Ps": expr_value(k.capacity)}
    if t is T.Delay:
        return "Delay"
    serve = ("ExclusivePrefill" if type(k.serve) is T.ServeExclusivePrefill
             else {"By": [expr_value(e) for e in k.serve.keys]})
    d = {"budget": expr_value(k.budget), "cost": expr_value(k.cost),
         "chunk": expr_value(k.chunk), "serve": serve, "memory": k.memory}
    if k.only is not None:
        d["only"] = expr_value(k.only)
    return {"Step": d}


def stage_value(s: T.Stage):
    d = {"name": s.name}
    if s.index is not None:
        d["index"] = s.index
    d["kind"] = kind_value(s.kind)
    return d


def arrival_value(a):
    t = type(a)
    if t is T.Poisson:
        return {"Poisson": a.rate}
    if t is T.Renewal:
        return {"Renewal": expr_value(a.gap)}
    if t is T.Closed:
        return {"Closed": a.n}
    if t is T.Batch:
        return {"Batch": a.n}
    if t is T.NoArrival:
        return "None"
    out = []
    for s in a.sessions:
        d = {"attrs": [[slot, v] for slot, v in s.attrs]}
        if s.turns:
            d["turns"] = [[[slot, v] for slot, v in turn] for turn in s.turns]
        out.append(d)
    return {"Sessions": out}


def program_value(p: T.Program):
    d = {
        "version": p.version,
        "attrs": list(p.attrs),
        "observes": list(p.observes),
        "pools": [pool_value(x) for x in p.pools],
        "stages": [stage_value(x) for x in p.stages],
        "arrival": arrival_value(p.arrival),
        "trace": p.trace,
        "trace_ordered": p.trace_ordered,
        "init": p.init,
        "turn": p.turn,
        "session": p.session,
        "blocks": [[stmt_value(s) for s in b] for b in p.blocks],
        "horizon": p.horizon,
        "warmup": p.warmup,
        "seed": p.seed,
    }
    if p.arrivals is not None:
        d["arrivals"] = p.arrivals
    for name in ("slot_cached", "slot_serial", "slot_turn", "slot_new", "slot_out",
                 "slot_think", "slot_more", "slot_forced", "slot_computed"):
        d[name] = getattr(p, name)
    d["hidden"] = list(p.hidden)
    if p.share is not None:
        d["share"] = p.share
    if p.gauges:
        d["gauges"] = [{"name": g.name, "expr": expr_value(g.expr)} for g in p.gauges]
    if p.claims:
        d["claims"] = [claim_value(c) for c in p.claims]
    return d


def claim_value(c: T.Claim):
    """pyserq 0.1.3's shape: ``given`` only when present, ``kind`` a unit or a tagged stage."""
    d = {"name": c.name}
    if c.given is not None:
        d["given"] = expr_value(c.given)
    d["kind"] = "AtEnd" if c.stage is None else {c.kind: c.stage}
    d["expr"] = expr_value(c.expr)
    return d


# ---------------------------------------------------------------------------------------
# JSON trees -> text (serde_json's pretty printer)


def _dump(v, ind, out):
    t = type(v)
    if t is float:
        out.append(fmt_float(v))
    elif t is str:
        out.append(_json.dumps(v, ensure_ascii=False))
    elif v is None:
        out.append("null")
    elif v is True:
        out.append("true")
    elif v is False:
        out.append("false")
    elif t is int:
        out.append(str(v))
    elif t is list:
        if not v:
            out.append("[]")
            return
        pad = "\n" + "  " * (ind + 1)
        out.append("[")
        first = True
        for x in v:
            out.append(pad if first else "," + pad)
            first = False
            _dump(x, ind + 1, out)
        out.append("\n" + "  " * ind + "]")
    else:
        if not v:
            out.append("{}")
            return
        pad = "\n" + "  " * (ind + 1)
        out.append("{")
        first = True
        for k, x in v.items():
            out.append(pad if first else "," + pad)
            first = False
            out.append(_json.dumps(k, ensure_ascii=False))
            out.append(": ")
            _dump(x, ind + 1, out)
        out.append("\n" + "  " * ind + "}")


def dumps(value) -> str:
    out = []
    _dump(value, 0, out)
    return "".join(out)


@deep
def program_to_json(p: T.Program) -> str:
    return dumps(program_value(p))


def program_from_json(text: str) -> T.Program:
    from serq.ir.load import load_program
    return load_program(text)
