"""Lint: three "almost certainly wrong" patterns, refused as link errors (language.md 5.2).

1. an attribute set from live state and then read in a later hold's header (the header is
   read at admission, not when the `set` ran);
2. a `branch` whose guard is a constant other than 0 and 1;
3. `cached` read, or `reuse` given, in a hold without a `cache` clause.
"""
from __future__ import annotations

from serq.ir import types as T
from serq.ir.show import show_expr, show_ref
from serq.lang.diagnostics import fail

LIVE = frozenset({"CachedIn", "Used", "Free", "Holders", "Queued", "BudgetLeft", "Queue",
                  "Busy", "Work", "Price", "EstLambda", "EstRho", "EstWait"})

NO_CACHE = ("such a hold consumes nothing of the session's cached prefix")


def expr_nodes(e):
    """Pre-order walk of an IR expression (calls before their arguments); iterative, so a
    deep expression costs neither recursion nor a generator per level."""
    stack = [e]
    while stack:
        x = stack.pop()
        yield x
        kids = _expr_children(x)
        if kids:
            stack.extend(reversed(kids))


def _expr_children(e):
    t = type(e)
    if t is T.Binary:
        return (e.left, e.right)
    if t is T.Unary:
        return (e.operand,)
    if t is T.Cond:
        return (e.cond, e.then, e.other)
    if t is T.Sample:
        return tuple(e.args)
    if t is T.Call:
        out = []
        for a in e.args:
            if type(a) is T.ArgExpr:
                out.append(a.expr)
            elif a.ref.index is not None:
                out.append(a.ref.index)
        return out
    return ()


def ref_indices(s):
    """The index expressions of the pools and stages a statement names."""
    t = type(s)
    refs = []
    if t is T.Hold:
        refs = [p.ref for p in s.pools]
    elif t in (T.Grow, T.Load, T.Drop, T.Release):
        refs = [s.ref]
    elif t is T.Run:
        refs = [s.stage] + list(s.also)
    return [r.index for r in refs if r.index is not None]


def reads_attr(e, slot) -> bool:
    return e is not None and any(type(x) is T.Attr and x.slot == slot for x in expr_nodes(e))


def stmt_exprs(s, indices=True):
    t = type(s)
    if t is T.Set or t is T.Observe:
        return [s.expr]
    if not indices:
        return [e for e in stmt_exprs(s) if not any(e is i for i in ref_indices(s))]
    if t is T.Hold:
        out = []
        for p in s.pools:
            if p.ref.index is not None:
                out.append(p.ref.index)
            out.append(p.units)
            if p.reserve is not None:
                out.append(p.reserve)
        for x in (s.reuse, s.cache):
            if x is not None:
                out.append(x)
        if s.lease is not None:
            out.append(s.lease.time)
        return out
    if t in (T.Grow, T.Load):
        return [s.amount] + ([s.ref.index] if s.ref.index is not None else [])
    if t in (T.Drop, T.Release):
        return [s.ref.index] if s.ref.index is not None else []
    if t is T.Run:
        out = [s.work]
        for r in (s.stage,) + tuple(s.also):
            if r.index is not None:
                out.append(r.index)
        return out
    if t is T.Branch:
        return [s.guard]
    if t is T.Choose:
        return [s.count] + list(s.key)
    return []


class Lint:
    def __init__(self, linker):
        self.lk = linker
        self.blocks = linker.blocks
        self.findings = []

    def show(self, e):
        lk = self.lk
        return show_expr(e, lk.attrs, lk.pool_list, lk.stage_list)

    def pool_text(self, ref):
        return show_ref(ref, self.lk.pool_list, self.lk.attrs, self.lk.pool_list,
                        self.lk.stage_list)

    def add(self, msg):
        if msg not in self.findings:
            self.findings.append(msg)

    def run(self):
        n = len(self.blocks)
        order = list(range(2, n)) + [0, 1]
        for b in order:
            block = self.blocks[b]
            for k, s in enumerate(block):
                t = type(s)
                if t is T.Set:
                    self.live_set(s, block[k + 1:])
                elif t is T.Branch and type(s.guard) is T.Num:
                    v = s.guard.value
                    if v not in (0.0, 1.0):
                        from serq.ir.show import show_num_exact
                        g = show_num_exact(v)
                        if 0 < v < 1:
                            self.add(f"`branch ({g})` is not a test: a guard is 0 or 1, and a "
                                     f"constant strictly between them is a probability. Write "
                                     f"`branch with ({g})`.")
                        else:
                            self.add(f"`branch ({g})` is not a test: a guard is 0 or 1.")
                elif t is T.Hold and s.cache is None:
                    self.no_cache(s)
        if self.findings:
            fail("\n".join(self.findings), link=True)

    def live_set(self, s, rest):
        call = next((x for x in expr_nodes(s.expr)
                     if type(x) is T.Call and x.fun in LIVE), None)
        if call is None:
            return
        hold = self.header_reader(s.slot, rest)
        if hold is None:
            return
        pool = next((p.ref for p in hold.pools
                     if reads_attr(p.units, s.slot) or reads_attr(p.reserve, s.slot)),
                    hold.pools[0].ref)
        name = self.lk.attrs[s.slot]
        self.add(f"`{name}` reads {self.show(call)} when the session reaches the `set`, and "
                 f"is used in the header of a hold on `{self.pool_text(pool)}`, which is read "
                 f"when the session is admitted. Write `at admission ({name} = …)` if the "
                 f"admission value is what you meant.")

    def header_reader(self, slot, rest):
        for s in rest:
            t = type(s)
            if t is T.Hold:
                header = [p.units for p in s.pools] + [p.reserve for p in s.pools] + [
                    s.reuse, s.cache]
                if any(reads_attr(e, slot) for e in header):
                    return s
            if (t is T.Set and s.slot == slot) or (t is T.Choose and s.var == slot):
                return None
            if t is T.Branch:
                for b in (s.then, s.other):
                    h = self.header_reader(slot, self.blocks[b])
                    if h is not None:
                        return h
            elif t is T.Loop:
                h = self.header_reader(slot, self.blocks[s.body])
                if h is not None:
                    return h
        return None

    def no_cache(self, hold):
        pool = self.pool_text(hold.pools[0].ref)
        if hold.reuse is not None:
            self.add(f"`reuse` on a hold on `{pool}` that has no `cache` clause: {NO_CACHE}, "
                     f"so the bound has nothing to bound. Write `cache (0)` to consume the "
                     f"prefix and keep nothing, or `cache (ℓ)` to keep ℓ.")
        if self.reads_cached(self.blocks[hold.body]):
            self.add(f"`cached` is read in a hold on `{pool}` that has no `cache` clause: "
                     f"{NO_CACHE}, so `cached` is 0 there. Write `cache (0)` to consume the "
                     f"prefix and keep nothing, `cache (ℓ)` to keep ℓ of what was computed, or "
                     f"read `cached` above the hold, where the admission that set it is the "
                     f"enclosing hold's.")

    def reads_cached(self, block) -> bool:
        for s in block:
            # the reference does not count a pool's or stage's index as reading `cached`
            if any(reads_attr(e, 0) for e in stmt_exprs(s, indices=False)):
                return True
            if type(s) is T.Branch:
                if self.reads_cached(self.blocks[s.then]) or self.reads_cached(
                        self.blocks[s.other]):
                    return True
            elif type(s) is T.Loop and self.reads_cached(self.blocks[s.body]):
                return True
        return False


def lint(linker):
    Lint(linker).run()
