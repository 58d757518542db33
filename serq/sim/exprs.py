"""IR expressions compiled to Python functions, once per run.

Each expression becomes one generated function ``f(a)`` (``a``: the attribute list of the
session, entry snapshot or ``None`` it is read for), so the event loop never walks IR nodes.
The arithmetic is ``serq.ir.arith`` (the reference's f64 answers where Python's differ: division
by zero, ``powf``, ``ln``/``sqrt`` of negatives, NaN signs, ``f64::min``/``max`` ignoring NaN,
``floor``/``ceil`` keeping the sign of zero): its functions are called, and its inline
templates written out for ``+ - *``.

Context variables are read from attributes of the simulator ``S`` (``S.now``, ``S.cx_waited``
…), which each moment sets before it evaluates. A draw names its random stream at compile
time: the stream is a property of where the expression sits, not of the expression.
"""
from __future__ import annotations

import math
import struct

from serq.ir import arith
from serq.ir import types as T
from serq.sim import rng as R

INF = math.inf
NAN = math.nan

CTX_FIELD = {"Now": "S.now", "Waited": "S.cx_waited", "Size": "S.cx_size", "Age": "S.cx_age",
             "Last": "S.cx_last", "Queued": "S.cx_queued", "N": "S.cx_n", "Ntok": "S.cx_ntok",
             "Ndec": "S.cx_ndec", "Npre": "S.cx_npre", "Nres": "S.cx_nres", "Kvb": "S.cx_kvb",
             "Kvp": "S.cx_kvp", "Attn": "S.cx_attn", "Decoding": "S.cx_decoding",
             "Admission": "S.cx_admission", "Remaining": "S.cx_remaining",
             # a claim over iterations (IR 11), set by the claims observer before it reads
             "Demand": "S.cx_demand", "Served": "S.cx_served", "Arrived": "S.cx_arrived"}
CMP = {"Lt": "<", "Le": "<=", "Gt": ">", "Ge": ">=", "Eq": "==", "Ne": "!="}

# The arithmetic is serq.ir.arith's, called by these names (or written inline, see
# ExprCompiler.arith)
HELPERS = {"_div": arith.div, "_pow": arith.powf, "_min": arith.fmin, "_max": arith.fmax,
           "_floor": arith.floor, "_ceil": arith.ceil, "_sqrt": arith.sqrt, "_exp": arith.exp,
           "_ln": arith.ln, "_abs": arith.fabs, "INF": INF, "NAN": NAN, "_log": math.log}
UNARY_FUN = {"Abs": "_abs", "Floor": "_floor", "Ceil": "_ceil", "Sqrt": "_sqrt",
             "Exp": "_exp", "Ln": "_ln"}

# -- samplers, one per law, drawing from a stream's uniform function U --------------------


def d_exp(U, m):
    return -m * math.log(1.0 - U())


def d_uniform(U, a, b):
    return arith.add(a, (b - a) * U())


def d_bernoulli(U, p):
    return 1.0 if U() < p else 0.0


HELPERS.update({"_dexp": d_exp, "_duni": d_uniform, "_dber": d_bernoulli})

FUN_NAME = {"Queue": "queue", "Busy": "busy", "Work": "work", "BudgetLeft": "budget_left",
            "EstLambda": "est_lambda", "EstRho": "est_rho", "EstWait": "est_wait",
            "Used": "used", "Free": "free", "CachedIn": "cachedin", "Holders": "holders",
            "Queued": "queued"}
MAX_DEPTH = 60  # nesting beyond this is split into separate functions (Python's parser limit)


class ExprCompiler:
    """Generates the source of each expression and turns it into a function.

    ``ns`` is the namespace shared by every generated function of a run: the simulator
    ``S``, the helpers, and one uniform function per stream (``U_arrival`` …).
    """

    def __init__(self, ns):
        self.ns = ns
        self.count = 0
        self.temps = 0  # fresh local names of the inline arithmetic
        self.cache = {}
        # the context variables read by the code generated so far (see ``function``)
        self.ctx_used = set()
        self.cache_ctx = {}

    def function(self, e, stream="session", track=True):
        """A function ``f(a)`` evaluating ``e``; draws come from ``stream``. Unless ``track``
        is false, the context variables ``e`` reads are added to ``ctx_used``."""
        key = (expr_key(e), stream)
        f = self.cache.get(key)
        outer = self.ctx_used
        if f is None:
            self.ctx_used = set()
            src = self.gen(e, stream, 0)
            f = self._make(src)
            self.cache[key] = f
            self.cache_ctx[key] = self.ctx_used
            self.ctx_used = outer
        if track:
            outer |= self.cache_ctx[key]
        return f

    def _make(self, src):
        self.count += 1
        name = f"_e{self.count}"
        code = f"def {name}(a):\n    return {src}\n"
        exec(compile(code, f"<serq expr {self.count}>", "exec"), self.ns)
        return self.ns[name]

    def _sub(self, e, stream):
        """A nested expression made into its own function, called by name."""
        f = self._make(self.gen(e, stream, 0))
        return f"{f.__name__}(a)"

    def gen(self, e, stream, depth):
        if depth > MAX_DEPTH:
            return self._sub(e, stream)
        d = depth + 1
        t = type(e)
        if t is T.Num:
            v = e.value
            if v != v:
                return "NAN"
            if v in (INF, -INF):
                return "INF" if v > 0 else "(-INF)"
            return f"({v!r})"
        if t is T.Attr:
            return f"a[{e.slot}]"
        if t is T.Ctx:
            self.ctx_used.add(e.var)
            return CTX_FIELD[e.var]
        if t is T.Unary:
            x = self.gen(e.operand, stream, d)
            if e.op == "Neg":
                return f"(-{x})"
            return f"(1.0 if {x} == 0.0 else 0.0)"
        if t is T.Binary:
            op = e.op
            x = self.gen(e.left, stream, d)
            y = self.gen(e.right, stream, d)
            if op in arith.INLINE_OP:
                return self.arith(op, e.left, x, y)
            if op == "Div":
                return f"_div({x}, {y})"
            if op == "Pow":
                return f"_pow({x}, {y})"
            if op in CMP:
                return f"(1.0 if {x} {CMP[op]} {y} else 0.0)"
            if op == "And":
                return f"(1.0 if ({x}) != 0.0 and ({y}) != 0.0 else 0.0)"
            return f"(1.0 if ({x}) != 0.0 or ({y}) != 0.0 else 0.0)"
        if t is T.Cond:
            c = self.gen(e.cond, stream, d)
            x = self.gen(e.then, stream, d)
            y = self.gen(e.other, stream, d)
            return f"({x} if ({c}) != 0.0 else {y})"
        if t is T.Sample:
            return self.gen_sample(e, stream, d)
        if t is T.Call:
            return self.gen_call(e, stream, d)
        if t is T.Agg:  # a claim `at end` (IR 11): the observer supplies the aggregates
            return f"S.agg_value({e.kind!r}, {e.obs})"
        raise ValueError(f"unknown expression {e!r}")

    def arith(self, op, left, x, y):
        """``x op y`` for ``+ - *`` (``left``: the first operand's IR), inline: plain where
        the first operand cannot be a NaN (a number), else with ``arith``'s rule for two NaN
        operands."""
        sym = arith.INLINE_OP[op]
        if op not in arith.NAN_ORDER_SENSITIVE or (type(left) is T.Num
                                                   and left.value == left.value):
            return arith.INLINE_PLAIN.format(x=x, y=y, op=sym)
        self.temps += 1
        return arith.INLINE_NAN_FIRST.format(x=x, y=y, op=sym, t=f"_t{self.temps}",
                                             l=f"_l{self.temps}")

    def gen_sample(self, e, stream, d):
        args = [self.gen(a, stream, d) for a in e.args]
        need = {"Exp": 1, "Det": 1, "Bernoulli": 1, "Uniform": 2, "Erlang": 2, "H2": 2}[e.dist]
        if len(args) != need:
            return self.bad(f"`~{e.dist.lower()}` takes {need} argument"
                            f"{'s' if need > 1 else ''}, the program gives {len(args)}")
        U = f"U_{stream}"
        # exp and uniform are written inline (no sampler call): the same operations in the
        # same order; uniform only when its low end, read twice, has no draws or calls
        if e.dist == "Exp":
            return f"(-{args[0]} * _log(1.0 - {U}()))"
        if e.dist == "Det":
            return args[0]
        if e.dist == "Uniform":
            if pure(e.args[0]):
                # (the product cannot have two NaN operands: a uniform draw is a number)
                span = arith.INLINE_PLAIN.format(x=f"({args[1]} - {args[0]})", y=f"{U}()",
                                                 op="*")
                return self.arith("Add", e.args[0], args[0], span)
            return f"_duni({U}, {args[0]}, {args[1]})"
        if e.dist == "Bernoulli":
            return f"_dber({U}, {args[0]})"
        if e.dist == "Erlang":
            return f"_derl(R_{stream}, {args[0]}, {args[1]})"
        return f"_dh2(R_{stream}, {args[0]}, {args[1]})"

    @staticmethod
    def bad(message):
        """Code for an expression the IR allows but no run can evaluate (a function given the
        wrong arguments: the reference panics when it reaches one)."""
        text = f"run: {message} (an IR the compiler did not write?)"
        return f"S.fail({text!r}, S.cur)"

    def ref(self, r, kind, stream, d):
        """The member index a CRef selects, as source text."""
        if r.index is None:
            return str(r.base)
        return f"S.ref_index({r.base}, {r.count}, {self.gen(r.index, stream, d)}, None)"

    def gen_call(self, e, stream, d):
        fun = e.fun
        args = e.args

        arity = {"Min": 2, "Max": 2, "Pow": 2, "Price": 3}.get(fun, 1)
        if len(args) != arity:
            return self.bad(f"`{fun.lower()}` takes {arity} argument"
                            f"{'s' if arity > 1 else ''}, the program gives {len(args)}")
        kinds = {"Price": ("stage", "expr", "expr")}.get(fun)
        if kinds is None:
            kinds = (("stage",) if fun in STAGE_FUNS else ("pool",) if fun in POOL_FUNS
                     else ("expr",) * arity)
        for i, kind in enumerate(kinds):
            want = {"expr": T.ArgExpr, "stage": T.ArgStage, "pool": T.ArgPool}[kind]
            if type(args[i]) is not want:
                return self.bad(f"`{fun.lower()}` takes a"
                                f"{' number' if kind == 'expr' else ' ' + kind} as argument "
                                f"{i + 1}")

        def ex(i):
            return self.gen(args[i].expr, stream, d)

        def st(i, kind):
            return self.ref(args[i].ref, kind, stream, d)

        if fun in ("Min", "Max"):
            return f"_{fun.lower()}({ex(0)}, {ex(1)})"
        if fun == "Pow":
            return f"_pow({ex(0)}, {ex(1)})"
        if fun in UNARY_FUN:
            return f"{UNARY_FUN[fun]}({ex(0)})"
        if fun in ("Queue", "Busy", "Work", "BudgetLeft", "EstLambda", "EstRho", "EstWait"):
            return f"S.fn_{FUN_NAME[fun]}({st(0, 'stage')})"
        if fun == "Price":
            return f"S.fn_price({st(0, 'stage')}, {ex(1)}, {ex(2)})"
        return f"S.fn_{FUN_NAME[fun]}({st(0, 'pool')})"


_PACK = struct.Struct("<d").pack


def expr_key(e):
    """A hashable key equal for equal expressions, built without recursion.

    Not ``e`` itself (``Num(-0.0) == Num(0.0)``, but they differ, and a NaN is never equal
    to itself), nor ``repr(e)``: the dataclasses' ``__repr__``, ``__eq__`` and ``__hash__``
    recurse through C, and a program nested thousands of levels deep would overflow the C
    stack (a crash, not an error). Floats are keyed by their bits."""
    out = []
    stack = [e]
    while stack:
        x = stack.pop()
        t = type(x)
        if t is float:
            out.append(_PACK(x))
        elif t is tuple or t is list:
            out.append(len(x))
            stack.extend(reversed(x))
        elif x is None or t is int or t is str or t is bool:
            out.append(x)
        else:  # an IR node: a dataclass with slots
            out.append(t.__name__)
            stack.extend(reversed([getattr(x, f) for f in t.__slots__]))
    return tuple(out)


def pure(e):
    """Whether evaluating ``e`` twice is the same as once: no draws, no function calls."""
    t = type(e)
    if t is T.Num or t is T.Attr or t is T.Ctx:
        return True
    if t is T.Unary:
        return pure(e.operand)
    if t is T.Binary:
        return pure(e.left) and pure(e.right)
    return False


ERLANG_LIMIT = 10_000_000


def d_erlang(rng, k, m):
    if R.erlang_k(k) > ERLANG_LIMIT:
        from serq.errors import SimulationError
        raise SimulationError(f"run: `~erlang(k, m)` with k = {k!r} phases would draw that "
                              f"many numbers; serq refuses more than {ERLANG_LIMIT}")
    return R.sample_erlang(rng, k, m)


STAGE_FUNS = ("Queue", "Busy", "Work", "BudgetLeft", "EstLambda", "EstRho", "EstWait")
POOL_FUNS = ("Used", "Free", "CachedIn", "Holders", "Queued")


def install_samplers(ns):
    ns.update(HELPERS)
    ns["_derl"] = d_erlang
    ns["_dh2"] = R.sample_h2
