"""IR expressions printed back as source text (lint messages, run-time errors)."""
from __future__ import annotations

import math

from serq.ir import types as T
from serq.ir.floats import display, lower_exp

OP_TEXT = {"Add": "+", "Sub": "-", "Mul": "*", "Div": "/", "Pow": "^", "Lt": "<",
           "Le": "<=", "Gt": ">", "Ge": ">=", "Eq": "==", "Ne": "!=", "And": "&&",
           "Or": "||"}
LEVEL = {"Or": 1, "And": 2, "Lt": 3, "Le": 3, "Gt": 3, "Ge": 3, "Eq": 3, "Ne": 3,
         "Add": 4, "Sub": 4, "Mul": 5, "Div": 5, "Pow": 7}
FUN_SOURCE = {"Min": "min", "Max": "max", "Abs": "abs", "Floor": "floor", "Ceil": "ceil",
              "Sqrt": "sqrt", "Exp": "exp", "Ln": "ln", "Pow": "pow", "Queue": "queue",
              "Busy": "busy", "Work": "work", "Used": "used", "Free": "free",
              "CachedIn": "cachedin", "Holders": "holders", "Queued": "queued",
              "Price": "price", "BudgetLeft": "budget_left", "EstLambda": "est_lambda",
              "EstRho": "est_rho", "EstWait": "est_wait"}
DIST_SOURCE = {"Exp": "exp", "Det": "det", "Uniform": "uniform", "Erlang": "erlang",
               "H2": "h2", "Bernoulli": "bernoulli"}
CTX_SOURCE = {"Now": "now", "Waited": "waited", "Size": "size", "Age": "age", "Last": "last",
              "Queued": "waiting", "N": "present", "Nres": "residents", "Ndec": "decoders",
              "Kvb": "kv_decode", "Kvp": "kv_prefill", "Ntok": "tokens", "Npre": "prefilled",
              "Attn": "attention", "Decoding": "decoding", "Admission": "admission",
              "Remaining": "remaining"}


def show_num_exact(x: float) -> str:
    if x != x:
        return "nan"
    if x in (math.inf, -math.inf):
        return "inf" if x > 0 else "-inf"
    if x == int(x) and abs(x) < 1e15:
        return display(x)
    p, s = display(x), lower_exp(x)
    return p if len(p) <= len(s) else s


def show_num(x: float) -> str:
    if math.isfinite(x) and x != int(x):
        r = float(f"{x:.11e}")
        if r != int(r):
            return show_num_exact(r)
    return show_num_exact(x)


def show_expr(e, attrs=(), pools=(), stages=(), level=0) -> str:
    t = type(e)
    if t is T.Num:
        s = show_num(e.value)
        return f"({s})" if e.value < 0 and level >= 6 else s
    if t is T.Attr:
        return attrs[e.slot] if e.slot < len(attrs) else "?"
    if t is T.Ctx:
        return CTX_SOURCE.get(e.var, e.var)
    if t is T.Sample:
        return "~" + DIST_SOURCE[e.dist] + "(" + ", ".join(
            show_expr(a, attrs, pools, stages) for a in e.args) + ")"
    if t is T.Call:
        return FUN_SOURCE[e.fun] + "(" + ", ".join(
            show_arg(a, attrs, pools, stages) for a in e.args) + ")"
    if t is T.Unary:
        s = ("-" if e.op == "Neg" else "!") + show_expr(e.operand, attrs, pools, stages, 6)
        return f"({s})" if level > 6 else s
    if t is T.Binary:
        lv = LEVEL[e.op]
        if e.op == "Pow":
            s = (show_expr(e.left, attrs, pools, stages, 8) + " ^ "
                 + show_expr(e.right, attrs, pools, stages, 6))
        else:
            s = (show_expr(e.left, attrs, pools, stages, lv) + f" {OP_TEXT[e.op]} "
                 + show_expr(e.right, attrs, pools, stages, lv + 1))
        return f"({s})" if level > lv else s
    if t is T.Cond:
        s = (show_expr(e.cond, attrs, pools, stages, 1) + " ? "
             + show_expr(e.then, attrs, pools, stages, 0) + " : "
             + show_expr(e.other, attrs, pools, stages, 0))
        return f"({s})" if level > 0 else s
    return "?"


def show_ref(r, table, attrs=(), pools=(), stages=()) -> str:
    name = table[r.base].name if r.base < len(table) else "?"
    if r.index is None:
        return name
    return f"{name}[{show_expr(r.index, attrs, pools, stages)}]"


def show_arg(a, attrs, pools, stages) -> str:
    if type(a) is T.ArgExpr:
        return show_expr(a.expr, attrs, pools, stages)
    if type(a) is T.ArgPool:
        return show_ref(a.ref, pools, attrs, pools, stages)
    return show_ref(a.ref, stages, attrs, pools, stages)
