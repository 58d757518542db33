"""Parse tree to IR: names to slots, constants folded, blocks numbered (language.md 4–5.1).

The linker runs its steps in the reference's order, since that order decides which error a
program with several problems reports.
"""
from __future__ import annotations

import dataclasses
import math
from serq.errors import CompileError

from serq.ir import types as T
from serq.ir.arith import cast_u64
from serq.lang import ast as A
from serq.lang.diagnostics import fail
from serq.lang.fold import FoldError, agg_count, fold_const
from serq.lang.lexer import show_f64
from serq.lang.suggest import closest
from serq.lang.walk import all_stmts
from serq.lang.words import (CONTEXT, DISTS, FUNCTIONS, RENAMED_CONTEXT)
from serq.ir.fold import fold_ir, draws_ir
from serq.lang.claims_link import AGGREGATES, ITERATION_VARS
from serq.lang.claims_link import aggregate as claim_aggregate

NAN_HELP = "help: a constant is a number or `inf`; `0/0` and `inf - inf` are not"

MOMENT_TEXT = {
    "Session": "a session statement, a run or a hold's cache",
    "Evict": "an eviction key or spill clause",
    "Select": "a pool's queue keys, read before selecting a waiting session",
    "Ps": "a ps stage's capacity",
    "Budget": "a step stage's budget or chunk, planned before the iteration",
    "Step": "a step stage's cost, after the iteration",
    "Serve": "a step stage's serve keys",
}
CTX_MOMENTS = {
    "waited": ["Select"], "size": ["Evict"], "age": ["Evict"], "last": ["Evict"],
    "waiting": ["Evict"], "present": ["Ps"], "residents": ["Budget", "Step", "Serve"],
    "decoders": ["Budget", "Step", "Serve"], "kv_decode": ["Budget", "Step", "Serve"],
    "kv_prefill": ["Budget", "Step", "Serve"], "tokens": ["Step"], "prefilled": ["Step"],
    "attention": ["Step"], "decoding": ["Serve"], "admission": ["Serve"],
    "remaining": ["Serve"],
}


# While a gauge is linked, every link error names it first ("gauge `g`: ..."), as the reference
# does; `link_gauges` sets this.
_CONTEXT = [""]


def lerr(message, pos=None, extra=(), caret_len=None):
    fail(_CONTEXT[0] + message, pos, link=True, extra=extra, caret_len=caret_len)


class Family:
    __slots__ = ("name", "base", "count", "array", "decl", "pos")

    def __init__(self, name, base, count, array, decl, pos):
        self.name, self.base, self.count, self.array = name, base, count, array
        self.decl, self.pos = decl, pos


class Linker:
    def __init__(self, parsed, sets, opts):
        self.p = parsed
        self.sets = sets  # name -> A expression
        self.opts = opts
        self.lets = {}  # name -> value (the last)
        self.let_pos = {}
        self.attrs = list(T.BUILTIN_ATTRS)
        self.attr_slot = {n: i for i, n in enumerate(self.attrs)}
        self.attr_pos = {}
        self.observes = []
        self.obs_slot = {}
        self.blocks = []
        self.pools = {}
        self.stages = {}
        self.pool_list = []
        self.stage_list = []
        self.leased = []

    # -- entry ----------------------------------------------------------------------------

    def link(self) -> T.Program:
        p = self.p
        declared = [d.name for d in p.lets]
        for name in self.sets:
            if name not in declared:
                shown = ", ".join(dict.fromkeys(declared))
                lerr(f"unknown --set constant `{name}`",
                     extra=(f"help: --set overrides a declared `let`; available constants: "
                            f"{shown}",))
        # the reference's order: families, names the language supplies, constants, a name
        # both a constant and an attribute, then pools and stages
        self.declare_families()
        self.collect_attrs()
        self.check_supplied_names()
        self.fold_lets()
        for name in self.lets:
            if name in self.attr_slot:
                lerr(f"`{name}` is both a `let` constant and a session attribute")
        pools = self.link_pools()
        self.stage_ir = self.link_stages()
        w = p.workload
        arrival = self.link_arrival(w)
        init = w.init if w and w.init is not None else []
        turn = w.turn if w and w.turn is not None else []
        self.collect_leases([init, turn, self.session])
        for blk in (init, turn):
            if any(type(s) not in (A.SetS, A.ObserveS) for s in blk):
                lerr("workload blocks may only `set` and `observe`")
        self.link_block(init, [])
        self.link_block(turn, [])
        self.link_block(self.session, [])
        horizon, warmup, seed, arrivals = self.run_settings()
        hidden = self.link_hidden(w)
        gauges = self.link_gauges()
        from serq.lang.claims_link import link_claims
        claims = link_claims(self, lerr, _CONTEXT)
        from serq.lang.lint import lint
        lint(self)
        trace = self.opts.get("trace")
        if trace is None and w is not None:
            trace = w.trace
        prog = T.Program(
            version=T.IR_VERSION_CLAIMS if claims or self.uses_only else T.IR_VERSION,
            attrs=tuple(self.attrs), observes=tuple(self.observes),
            pools=tuple(pools), stages=tuple(self.stage_ir), arrival=arrival, trace=trace,
            trace_ordered=bool(w and w.ordered), init=0, turn=1, session=2,
            blocks=tuple(tuple(b) for b in self.blocks), horizon=horizon, warmup=warmup,
            seed=seed, arrivals=arrivals, hidden=tuple(hidden),
            share=p.share[0] if p.share else None, gauges=tuple(gauges),
            claims=tuple(claims))
        return prog

    # -- constants ------------------------------------------------------------------------

    def const_lookup(self, name, pos):
        if name in self.lets:
            return self.lets[name]
        if name == "inf":
            return math.inf
        near = closest(name, list(self.lets))
        if near is not None:
            at = self.let_pos[near]
            extra = (f"help: did you mean constant `{near}`?",
                     f"note: `{near}` declared at {at.line}:{at.col}")
        else:
            extra = ("help: declare this constant or use the name of an existing constant",)
        raise FoldError(f"`{name}` is not a constant", pos, extra)

    def check_agg_var(self, e):
        """An aggregate's index may not be another name (reported at the keyword)."""
        v = e.var
        what = None
        if v in self.lets:
            what = "a `let` constant"
        elif v in self.attr_slot:
            what = "a session attribute"
        elif any(d.name == v for d in self.p.pools):  # also while the lets are folded
            what = "a pool"
        elif any(d.name == v for d in self.p.stages):
            what = "a stage"
        elif v in CONTEXT or v == "inf":
            what = "a name the language supplies"
        if what:
            lerr(f"`{e.kind} {v} in`: `{v}` is also {what}", e.pos,
                 extra=("help: give the index a name of its own",))

    def fold(self, e, what=None):
        """A constant; with `what`, one that may not be NaN ("{what} is NaN")."""
        def look(name, pos=None):
            return self.const_lookup(name, pos)
        look.agg_check = self.check_agg_var
        try:
            v = fold_const(e, look)
        except FoldError as err:
            lerr(err.message, err.pos, err.extra)
        if what is not None and v != v:
            lerr(f"{what} is NaN", extra=(NAN_HELP,))
        return v

    def fold_lets(self):
        for d in self.p.lets:
            if d.name in self.sets:
                v = self.sets[d.name]
                if not isinstance(v, float):
                    try:
                        v = fold_const(v, self.const_lookup)
                    except FoldError as err:
                        lerr(f"--set {d.name}: {err.message}", extra=err.extra)
                if v != v:
                    lerr(f"--set {d.name}: the value is NaN", extra=(NAN_HELP,))
            else:
                v = self.fold(d.expr)
                if v != v:
                    lerr(f"`let {d.name}` is NaN", extra=(NAN_HELP,))
            self.lets[d.name] = v
            self.let_pos.setdefault(d.name, d.pos)

    # -- pools and stages -----------------------------------------------------------------

    def declare_families(self):
        for kind, decls, table, lst in (("pool", self.p.pools, self.pools, self.pool_list),
                                        ("stage", self.p.stages, self.stages,
                                         self.stage_list)):
            for d in decls:
                if d.name in table:
                    first = table[d.name].pos
                    lerr(f"duplicate {kind} `{d.name}`", d.pos,
                         extra=(f"note: first declared at {first.line}:{first.col}",
                                "help: rename or remove the duplicate declaration"))
                n = d.size if d.size is not None else 1
                table[d.name] = Family(d.name, len(lst), n, d.size is not None, d, d.pos)
                lst.extend([d] * n)

    def member_map(self, owner, target, what):
        """`admit via S` / `memory P` across families: one for one, or one for all."""
        if target.count == owner.count:
            return [target.base + i for i in range(owner.count)]
        if target.count == 1:
            return [target.base] * owner.count
        lerr(f"`{owner.name}`: `{what}` names a family of {target.count}, and `{owner.name}` "
             f"is a family of {owner.count}: one for one, or one for all")

    def link_pools(self):
        out = []
        for d in self.p.pools:
            fam = self.pools[d.name]
            cap = math.inf if d.cap is None else self.fold(d.cap, f"pool `{d.name}`: cap")
            block = None
            if d.block is not None:
                block = self.fold(d.block, f"pool `{d.name}`: block")
                if not block > 0:
                    lerr(f"pool `{d.name}`: block must be positive")
            evict = T.EvictLru() if d.evict is None else T.EvictBy(
                tuple(self.expr(k) for k in d.evict))
            queue = None if d.queue is None else tuple(self.expr(k) for k in d.queue)
            spill = None
            if d.spill is not None:
                to, to_pos, via, via_pos, work, when = d.spill
                tf = self.family(self.pools, to, to_pos, "pool")
                vf = self.family(self.stages, via, via_pos, "stage")
                spill = T.Spill(tf.base, vf.base, self.expr(work), self.expr(when))
            admit = [None] * fam.count
            if d.admit_via is not None:
                sf = self.family(self.stages, d.admit_via[0], d.admit_via[1], "stage")
                admit = self.member_map(fam, sf, "admit via")
            for i in range(fam.count):
                out.append(T.Pool(d.name, i if fam.array else None, cap, block, evict,
                                  d.preempt, queue, spill, admit[i]))
        return out

    def link_stages(self):
        out = []
        for d in self.p.stages:
            fam = self.stages[d.name]
            if d.kind == "fifo":
                n = self.fold(d.arg, f"stage `{d.name}`: fifo server count")
                if not (math.isfinite(n) and n >= 1 and n == math.floor(n)):
                    lerr(f"stage `{d.name}`: fifo servers must be a positive integer")
                kinds = [T.Fifo(int(n))] * fam.count
            elif d.kind == "ps":
                kinds = [T.Ps(self.expr(d.arg))] * fam.count
            elif d.kind == "delay":
                kinds = [T.Delay()] * fam.count
            else:
                budget = T.Num(math.inf) if d.budget is None else self.expr(d.budget)
                cost = self.expr(d.cost)
                chunk = T.Num(0.0) if d.chunk is None else self.expr(d.chunk)
                if d.serve is None:
                    serve = T.ServeBy(())
                elif d.serve == "first":
                    serve = T.ServeBy((T.Cond(T.Ctx("Decoding"), T.Num(0.0), T.Num(1.0)),))
                elif d.serve == "excl":
                    serve = T.ServeExclusivePrefill()
                else:
                    serve = T.ServeBy(tuple(self.expr(k) for k in d.serve))
                mem = [None] * fam.count
                if d.memory is not None:
                    pf = self.family(self.pools, d.memory[0], d.memory[1], "pool")
                    mem = self.member_map(fam, pf, "memory")
                only = None
                if d.only is not None:  # extension: `serve only (e)` (IR 11)
                    self.in_claim = True  # its names are those of an IR-11 program
                    try:
                        only = self.expr(d.only)
                    finally:
                        self.in_claim = False
                    self.uses_only = True
                kinds = [T.Step(budget, cost, chunk, serve, m, only) for m in mem]
            for i in range(fam.count):
                out.append(T.Stage(d.name, i if fam.array else None, kinds[i]))
        return out

    @staticmethod
    def suggest(table, name, what):
        """The help (and note) lines of an unknown pool or stage: the near name and where
        it is declared, or the generic help."""
        near = closest(name, list(table))
        if near is None:
            return (f"help: declare this {what} or use the name of an existing {what}",)
        at = table[near].pos
        return (f"help: did you mean {what} `{near}`?",
                f"note: `{near}` declared at {at.line}:{at.col}")

    def family(self, table, name, pos, what):
        f = table.get(name)
        if f is None:
            lerr(f"unknown {what} `{name}`", pos, extra=self.suggest(table, name, what))
        return f

    # -- attributes -----------------------------------------------------------------------

    def collect_attrs(self):
        w = self.p.workload
        blocks = [w.init if w and w.init else [], w.turn if w and w.turn else [],
                  self.session]
        hoisted = {id(s) for _, _, _, h in self.p.hoisted for s in h.body[:len(h.bindings)]}
        for b in blocks:
            for s in all_stmts(b):
                if type(s) in (A.SetS, A.ChooseS) and s.name not in self.attr_slot:
                    self.attr_slot[s.name] = len(self.attrs)
                    self.attrs.append(s.name)
                    if id(s) not in hoisted:  # a binding is declared at no `set`
                        self.attr_pos[s.name] = s.pos

    def check_supplied_names(self):
        lets = list(dict.fromkeys(d.name for d in self.p.lets if not d.generated))
        named = set(lets) | set(self.attrs[9:])
        # the reference goes down its table of context variables, then `inf`
        for name in list(CONTEXT) + ["inf"]:
            if name in named:
                what = "a `let` constant" if name in lets else "a session attribute"
                if name in ("now", "inf"):
                    where = "every expression"
                else:
                    where = ", or ".join(MOMENT_TEXT[m] for m in CTX_MOMENTS[name])
                extra = (f"help: give the {what[2:]} a name of its own "
                         f"(docs/api/context.md lists the context variables)",)
                lerr(f"`{name}` is a name the language supplies, read in {where}; {what} "
                     f"named `{name}` would be read there instead", extra=extra)

    def collect_leases(self, blocks):
        for b in blocks:
            for s in all_stmts(b):
                if type(s) is A.HoldS and s.lease is not None and any(
                        same_written(s.lease[0], hp.ref) for hp in s.pools):
                    try:  # an unknown pool is reported where the hold names it
                        self.leased.append(self.cref(s.lease[0], "pool"))
                    except CompileError:
                        pass

    # -- workload and run -----------------------------------------------------------------

    def link_arrival(self, w):
        if w is None or w.arrival is None:
            return T.NoArrival()
        kind, e, pos = w.arrival
        if kind == "renewal":
            return T.Renewal(self.expr(e))
        v = self.fold(e, {"poisson": "the poisson rate", "batch": "the batch size",
                          "closed": "the closed population"}.get(kind))
        if kind == "poisson":
            return T.Poisson(v)
        n = cast_u64(v)
        return T.Closed(n) if kind == "closed" else T.Batch(n)

    def run_settings(self):
        r = self.p.run
        o = self.opts

        def get(key):
            what = "arrivals" if key == "arrivals" else f"the {key}"
            return self.fold(r[key][0], what) if key in r else None

        horizon = o.get("horizon")
        if horizon is None:
            horizon = get("horizon")
        if horizon is None:
            lerr("no horizon (run { horizon T; })")
        warmup = o.get("warmup")
        if warmup is None:
            warmup = get("warmup")
        warmup = 0.0 if warmup is None else float(warmup)
        seed = o.get("seed")
        if seed is None:
            s = get("seed")
            seed = 1 if s is None else cast_u64(s)
        arrivals = o.get("arrivals")
        if arrivals is None:
            a = get("arrivals")
            arrivals = None if a is None else cast_u64(a)
        horizon = float(horizon)
        if warmup >= horizon:
            lerr("warmup must be below the horizon")
        return horizon, warmup, int(seed), arrivals

    def link_hidden(self, w):
        out = []
        for name, pos in (w.hidden if w else []):
            if name not in self.attr_slot:
                lerr(f"hidden `{name}`: no `set` or `choose` makes it a session attribute")
            out.append(self.attr_slot[name])
        return out

    def link_gauges(self):
        out = []
        try:
            for g in self.p.gauges:
                _CONTEXT[0] = f"gauge `{g.name}`: "
                out.append(T.Gauge(g.name, self.expr(g.expr)))
        finally:
            _CONTEXT[0] = ""
        return out

    # -- blocks and statements ------------------------------------------------------------

    def link_block(self, stmts, holds) -> int:
        bid = len(self.blocks)
        out = []
        self.blocks.append(out)
        for s in stmts:
            self.stmt(s, out, holds)
        return bid

    def stmt(self, s, out, holds):
        t = type(s)
        if t is A.SetS:
            out.append(T.Set(self.attr_slot[s.name], self.expr(s.expr)))
        elif t is A.ObserveS:
            k = self.obs_slot.get(s.name)
            if k is None:
                k = self.obs_slot[s.name] = len(self.observes)
                self.observes.append(s.name)
            out.append(T.Observe(k, self.expr(s.expr)))
        elif t is A.RunS:
            stage = self.cref(s.stages[0], "stage")
            also = tuple(self.cref(r, "stage") for r in s.stages[1:])
            fam = self.stages[s.stages[0].name]
            is_step = fam.decl.kind == "step"
            mode = s.written_mode or "Plain"
            if is_step != (mode != "Plain"):
                lerr("`prefill`/`decode` are required on a step stage and not allowed "
                     "elsewhere")
            if s.growing is not None and not is_step:
                lerr("`growing` needs a step stage")
            work = self.expr(s.work)
            growing = None
            if s.growing is not None:
                growing = self.cref(s.growing, "pool")
            out.append(T.Run(stage, mode, work, growing, also))
        elif t is A.HoldS:
            pools = []
            for hp in s.pools:
                ref = self.cref(hp.ref, "pool")
                pools.append(T.HoldPool(ref, self.expr(hp.units),
                                        None if hp.reserve is None else self.expr(hp.reserve)))
            reuse = None if s.reuse is None else self.expr(s.reuse)
            idx = len(out)
            out.append(None)
            refs = [hp.ref for hp in pools]
            cache = None if s.cache is None else self.expr(s.cache)  # before the body
            body = self.link_block(s.body, holds + [(s, refs)])
            lease = None
            if s.lease is not None:
                lr = s.lease[0]
                if not any(same_written(lr, hp.ref) for hp in s.pools):
                    shown = lr.name if lr.member is None else f"{lr.name}.{lr.member}"
                    lerr(f"`lease {shown}`: the hold does not take that pool (write it as "
                         f"the hold does, index included)")
                lref = self.cref(lr, "pool")
                lease = T.Lease(lref, self.expr(s.lease[1]))
            out[idx] = T.Hold(tuple(pools), reuse, body, cache, lease)
        elif t is A.GrowS:
            out.append(T.Grow(self.cref(s.ref, "pool"), self.expr(s.amount)))
        elif t is A.LoadS:
            ref = self.cref(s.ref, "pool")
            self.check_enclosing(s.ref, ref, holds, "load", lease_ok=False)
            out.append(T.Load(ref, self.expr(s.amount)))
        elif t is A.DropS:
            out.append(T.Drop(self.cref(s.ref, "pool")))
        elif t is A.ReleaseS:
            ref = self.cref(s.ref, "pool")
            self.check_enclosing(s.ref, ref, holds, "release", lease_ok=True)
            out.append(T.Release(ref))
        elif t is A.BranchS:
            g = self.expr(s.guard)
            if s.draw:
                g = T.Sample("Bernoulli", (g,))
            idx = len(out)
            out.append(None)
            then = self.link_block(s.then, holds)
            other = self.link_block(s.other, holds)
            out[idx] = T.Branch(g, then, other)
        elif t is A.LoopS:
            idx = len(out)
            out.append(None)
            out[idx] = T.Loop(self.link_block(s.body, holds))
        elif t is A.ChooseS:
            out.append(T.Choose(self.attr_slot[s.name], self.expr(s.count),
                                tuple(self.expr(k) for k in s.keys)))
        elif t is A.TurnS:
            out.append(T.Turn())
        elif t is A.EndS:
            out.append(T.End())
        else:
            raise AssertionError(f"unlinked statement {s!r}")

    def check_enclosing(self, aref, ref, holds, verb, lease_ok):
        for _, refs in holds:
            if ref in refs:
                return
        if lease_ok and ref in self.leased:
            return
        shown = show_written(aref)
        fam = self.pools.get(aref.name)
        taken = [r for _, refs in holds for r in refs] + self.leased
        same_name = fam is not None and any(r.base == fam.base for r in taken)
        if same_name:
            lerr(f"`{verb} {shown}` outside a hold of `{shown}`: write the pool as the hold "
                 f"does, index included")
        if verb == "release":
            lerr(f"`release {shown}` outside a hold of `{shown}`: it takes an enclosing "
                 f"hold's allocation, or a lease of it")
        lerr(f"`load {shown}` outside a hold of `{shown}`: it acts on an enclosing hold's "
             f"allocation")

    # -- expressions ----------------------------------------------------------------------

    def cref(self, r, what, env=None, call=None) -> T.CRef:
        """A pool or stage reference; ``call`` is the (position, name) of the function whose
        argument it is, where an unindexed array is reported."""
        table = self.pools if what == "pool" else self.stages
        name = r.name if r.member is None else f"{r.name}.{r.member}"
        fam = table.get(name)
        if fam is None:
            lerr(f"unknown {what} `{name}`", r.pos, extra=self.suggest(table, name, what))
        if r.index is None:
            if fam.array:
                lerr(f"{what} `{name}` is an array; index it", call[0] if call else None,
                     caret_len=len(call[1]) if call else None)
            return T.CRef(fam.base, fam.count, None)
        ix = self.expr(r.index, env)
        if not draws_ir(ix):
            v = fold_ir(ix)
            if v is not None:
                if not (0 <= v < fam.count and v == math.floor(v)):
                    lerr(f"{what} `{name}[{show_f64(v)}]` is out of range: `{name}` has "
                         f"{fam.count} member(s)", r.pos)
                ix = T.Num(v)
        return T.CRef(fam.base, fam.count, ix)

    def expr(self, e, env=None):
        t = type(e)
        if t is A.Num:
            return T.Num(e.value)
        if t is A.Binary:
            return T.Binary(e.op, self.expr(e.left, env), self.expr(e.right, env))
        if t is A.Name or t is A.Ref:
            return self.name(e.name, e.pos, env)
        if t is A.Call:
            return self.call(e, env)
        if t is A.Unary:
            return T.Unary(e.op, self.expr(e.operand, env))
        if t is A.Cond:
            return T.Cond(self.expr(e.cond, env), self.expr(e.then, env),
                          self.expr(e.other, env))
        if t is A.Sample:
            spec = DISTS.get(e.dist)
            if spec is None:
                lerr(f"unknown distribution `{e.dist}`", e.pos)
            if len(e.args) != spec[1]:
                lerr(f"`~{e.dist}` takes {spec[1]} argument(s)", e.pos)
            return T.Sample(spec[0], tuple(self.expr(a, env) for a in e.args))
        if t is A.Agg:
            return self.aggregate(e, env)
        if t is A.Dotted:
            return self.dotted(e)
        if t is A.Fixed:
            return e.expr
        raise AssertionError(f"unlinked expression {e!r}")

    def name(self, n, pos, env):
        if env and n in env:
            return T.Num(env[n])
        slot = self.attr_slot.get(n)
        if slot is not None:
            return T.Attr(slot)
        if n in self.lets:
            return T.Num(self.lets[n])
        if self.in_claim and n in ITERATION_VARS:
            return T.Ctx(ITERATION_VARS[n])
        if n in CONTEXT:
            return T.Ctx(CONTEXT[n])
        if n == "inf":
            return T.Num(math.inf)
        if n in RENAMED_CONTEXT:
            lerr(f"the context variable `{n}` is now `{RENAMED_CONTEXT[n]}`", pos)
        cands = list(self.lets) + self.attrs
        near = closest(n, cands)
        if near is not None:
            where = self.let_pos.get(near) or self.attr_pos.get(near)
            extra = [f"help: did you mean name `{near}`?"]
            if where is not None and "." not in near:  # a queue's mark: no note
                extra.append(f"note: `{near}` declared at {where.line}:{where.col}")
            lerr(f"unknown name `{n}`", pos, extra=tuple(extra))
        lerr(f"unknown name `{n}`", pos,
             extra=("help: declare a `let` constant or assign a session attribute before "
                    "using it",))

    def dotted(self, e):
        name = f"{e.queue}.{e.member}"
        slot = self.attr_slot.get(name)
        if slot is not None:
            return T.Attr(slot)
        if name in self.lets:
            return T.Num(self.lets[name])
        from serq.lang.queue_decl import dotted_unknown
        dotted_unknown(e)

    def call(self, e, env):
        if e.name == "blocksize":
            if len(e.args) != 1:
                lerr(f"`blocksize` takes one pool, got {len(e.args)} argument(s)", e.pos)
            a = e.args[0]
            if type(a) is not A.Ref:
                lerr("`blocksize` takes a pool, not an expression", e.pos)
            ref = self.cref(a, "pool", env, (e.pos, e.name))
            block = self.pool_list[ref.base].block
            fam = self.pools[a.name if a.member is None else f"{a.name}.{a.member}"]
            if block is None:
                lerr(f"`blocksize({a.name})`: pool `{fam.name}` has no `block`", a.pos)
            return T.Num(self.fold(block))
        if self.in_claim and e.name in AGGREGATES:
            return claim_aggregate(self, e, lerr)
        spec = FUNCTIONS.get(e.name)
        if spec is None:
            lerr(f"unknown function `{e.name}`", e.pos)
        fun, kinds = spec
        if len(e.args) != len(kinds):
            lerr(f"`{e.name}` takes {len(kinds)} argument(s), got {len(e.args)}", e.pos)
        args = []
        for k, a in zip(kinds, e.args):
            if k == "e":
                args.append(T.ArgExpr(self.expr(a, env)))
            else:
                if type(a) is not A.Ref:
                    what = "pool" if k == "p" else "stage"
                    lerr(f"`{e.name}` expects a {what} name here", e.pos)
                if k == "p":
                    args.append(T.ArgPool(self.cref(a, "pool", env, (e.pos, e.name))))
                else:
                    args.append(T.ArgStage(self.cref(a, "stage", env, (e.pos, e.name))))
        return T.Call(fun, tuple(args))

    def aggregate(self, e, env):
        try:
            n = agg_count(e, self.const_lookup, env)
        except FoldError as err:
            lerr(err.message, err.pos, err.extra)
        v = e.var
        self.check_agg_var(e)
        self.agg_terms += n
        if self.agg_terms > 4096:
            lerr("aggregates write out more than 4096 terms", e.pos)
        total = None
        for k in range(n):
            env2 = dict(env or {})
            env2[v] = float(k)
            term = self.expr(e.body, env2)
            if total is None:
                total = term
            elif e.kind == "sum":
                total = T.Binary("Add", total, term)
            else:
                fun = "Max" if e.kind == "max" else "Min"
                total = T.Call(fun, (T.ArgExpr(total), T.ArgExpr(term)))
        return total

    agg_terms = 0
    in_claim = False  # linking a claim: its iteration variables and aggregates are names
    uses_only = False  # a step stage says `serve only (e)`: the IR is version 11


def same_written(a, b) -> bool:
    """Whether two parse trees are written alike (positions apart)."""
    if type(a) is not type(b):
        return False
    if not dataclasses.is_dataclass(a):
        if isinstance(a, list):
            return len(a) == len(b) and all(same_written(x, y) for x, y in zip(a, b))
        return a == b
    for f in dataclasses.fields(a):
        if f.name == "pos" or f.name.endswith("_pos"):
            continue
        if not same_written(getattr(a, f.name), getattr(b, f.name)):
            return False
    return True


def show_written(r) -> str:
    name = r.name if r.member is None else f"{r.name}.{r.member}"
    return name if r.index is None else f"{name}[…]"
