"""Reduction schedules (batch-invariance.md §1.2, §4.3 ``schedule.py``).

A *schedule* is a binary tree whose leaves index the inputs (Lean ``SumTree``); evaluating it
fixes which partial results meet first (``evalWith combine leaf``). Float32 addition is not
associative, so the tree is part of the result: a kernel is batch-invariant exactly when each
output element's tree depends on request-local facts only (``RequestLocalScheduleInvariant``).

Everything here evaluates with *elementwise* operations (one ``combine`` of two equally shaped
arrays per tree node, vectorised over the other axes), never with ``np.sum``/``np.add.reduce``,
whose own tree follows memory layout (§3.2 E4).

``Schedule`` is the small hashable descriptor kernels select (and print); ``Schedule.tree()``
builds the explicit tree and ``Schedule.reduce`` is a vectorised evaluation of that same tree
(tested against ``evaluate(tree)`` bit for bit).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Union

import numpy as np

from serq.numerics import fp


@dataclass(frozen=True, eq=False)
class Leaf:
    index: int


@dataclass(frozen=True, eq=False)
class Node:
    left: "Tree"
    right: "Tree"


Tree = Union[Leaf, Node]


# -- builders ---------------------------------------------------------------------------------
def sequential(n, first=0) -> Tree:
    """``((x0 + x1) + x2) + ...`` (a left fold)."""
    t = Leaf(first)
    for i in range(first + 1, first + n):
        t = Node(t, Leaf(i))
    return t


def right_nested(n, first=0) -> Tree:
    """``x0 + (x1 + (x2 + ...))`` (the right tree of ``chooseByBatchSize3``)."""
    t = Leaf(first + n - 1)
    for i in range(first + n - 2, first - 1, -1):
        t = Node(Leaf(i), t)
    return t


def tree_of_list(items) -> Tree:
    """The fixed halving tree over ``items`` (trees or leaves): each level pairs item i with
    item i + h (h = half the count, rounded down); an odd last item is carried up."""
    level = list(items)
    if not level:
        raise ValueError("a reduction tree needs at least one leaf")
    while len(level) > 1:
        h = len(level) // 2
        nxt = [Node(level[i], level[i + h]) for i in range(h)]
        if len(level) % 2:
            nxt.append(level[2 * h])
        level = nxt
    return level[0]


def pairwise(n, first=0) -> Tree:
    return tree_of_list(Leaf(i) for i in range(first, first + n))


def fold_left(trees) -> Tree:
    t = trees[0]
    for u in trees[1:]:
        t = Node(t, u)
    return t


def blocked(n, block) -> Tree:
    """Pairwise inside consecutive blocks of ``block`` leaves, block results folded left to
    right (the canonical matmul K schedule, §3.2 E3)."""
    return fold_left([pairwise(min(block, n - s), s) for s in range(0, n, block)])


def split(n, k) -> Tree:
    """``k`` contiguous parts (size ⌈n/k⌉), pairwise inside a part, partials folded left to
    right: split-K / a split row reduction."""
    size = -(-n // k)
    return blocked(n, size)


# -- evaluation -------------------------------------------------------------------------------
def _levels(tree, n_values):
    """Compile ``tree`` into levels of (dst, left, right) index arrays over a work vector
    whose first ``n_values`` slots are the inputs (iterative: trees may be thousands deep)."""
    ids, height, levels = {}, {}, {}
    stack = [(tree, False)]
    next_id = n_values
    while stack:
        t, done = stack.pop()
        if type(t) is Leaf:
            if not 0 <= t.index < n_values:
                raise IndexError(f"leaf {t.index} outside {n_values} values")
            ids[id(t)], height[id(t)] = t.index, 0
        elif done:
            a, b = t.left, t.right
            hgt = 1 + max(height[id(a)], height[id(b)])
            ids[id(t)], height[id(t)] = next_id, hgt
            levels.setdefault(hgt, []).append((next_id, ids[id(a)], ids[id(b)]))
            next_id += 1
        else:
            stack.append((t, True))
            stack.append((t.right, False))
            stack.append((t.left, False))
    out = [tuple(np.array(c, dtype=np.intp) for c in zip(*levels[h])) for h in sorted(levels)]
    return out, ids[id(tree)], next_id


def evaluate(tree, values, axis=-1, combine=np.add):
    """``evalWith combine`` along ``axis``, vectorised over the other axes: every node is one
    elementwise ``combine`` (nodes of equal height run together)."""
    v = np.moveaxis(np.asarray(values), axis, -1)
    n = v.shape[-1]
    levels, root, size = _levels(tree, n)
    work = np.empty(v.shape[:-1] + (size,), dtype=v.dtype)
    work[..., :n] = v
    with np.errstate(all="ignore"):        # inf - inf and NaN inputs are legitimate values here
        for dst, a, b in levels:
            work[..., dst] = combine(work[..., a], work[..., b])
    return work[..., root]


def fold_scalar(tree, values, combine=lambda a, b: a + b):
    """A plain Python fold of ``tree`` over a 1-D sequence of numpy scalars (the test oracle
    for ``evaluate``, §4.8 A2)."""
    memo = {}
    stack = [(tree, False)]
    with np.errstate(all="ignore"):
        while stack:
            t, done = stack.pop()
            if type(t) is Leaf:
                memo[id(t)] = values[t.index]
            elif done:
                memo[id(t)] = combine(memo[id(t.left)], memo[id(t.right)])
            else:
                stack += [(t, True), (t.right, False), (t.left, False)]
    return memo[id(tree)]


def _pairwise_fast(v, combine):
    """The halving tree on the last axis with slices (no gathers)."""
    while v.shape[-1] > 1:
        m = v.shape[-1]
        h = m // 2
        nxt = combine(v[..., :h], v[..., h:2 * h])
        if m % 2:
            nxt = np.concatenate([nxt, v[..., 2 * h:]], axis=-1)
        v = nxt
    return v[..., 0]


@dataclass(frozen=True)
class Schedule:
    """A printable, hashable reduction schedule over ``n`` leaves.

    kind: ``sequential``, ``right``, ``pairwise``, ``blocked`` (``block``) or ``split``
    (``parts``)."""
    kind: str
    n: int
    block: int = 0

    def __str__(self):
        extra = f", {self.block}" if self.kind in ("blocked", "split") else ""
        return f"{self.kind}({self.n}{extra})"

    def tree(self) -> Tree:
        k, n = self.kind, self.n
        if k == "sequential":
            return sequential(n)
        if k == "right":
            return right_nested(n)
        if k == "pairwise":
            return pairwise(n)
        if k == "blocked":
            return blocked(n, self.block)
        if k == "split":
            return split(n, self.block)
        raise ValueError(f"unknown schedule kind {k!r}")

    def block_size(self):
        if self.kind == "blocked":
            return self.block
        if self.kind == "split":
            return -(-self.n // self.block)
        return None

    def reduce(self, values, axis=-1, combine=np.add):
        """Vectorised evaluation of ``self.tree()`` (bit-equal to ``evaluate``)."""
        v = values if axis in (-1, values.ndim - 1) else np.moveaxis(values, axis, -1)
        if v.shape[-1] != self.n:
            raise ValueError(f"{self}: got {v.shape[-1]} values")
        if self.kind == "pairwise":
            return _pairwise_fast(v, combine)
        size = self.block_size()
        if size is not None:
            acc = None
            for s in range(0, self.n, size):
                part = _pairwise_fast(v[..., s:s + size], combine)
                acc = part if acc is None else combine(acc, part)
            return acc
        return evaluate(self.tree(), v, -1, combine)


# -- request-local policies (§1.2 RequestLocalScheduleInvariant, §4.3) -----------------------
@dataclass(frozen=True)
class LocalCtx:
    """What a reduction's schedule may depend on (Lean ``LocalKernelCtx``): the op, the
    reduced length, the dtype and a configured block size — never the batch."""
    op: str
    length: int
    dtype: str = "f32"
    block: int = 32


class SchedulePolicy(Protocol):
    def select(self, ctx: LocalCtx) -> Schedule: ...


class CanonicalPolicy:
    """Request-local by construction: ``blocked(length, block)`` for matmul K, the halving
    tree for norms and head-dimension dots (``fixedSplitKVTree`` for attention lives in the
    attention kernel, whose splits are absolute positions)."""
    name = "canonical"

    def select(self, ctx: LocalCtx, step=None) -> Schedule:
        if ctx.op == "matmul.k":
            return Schedule("blocked", ctx.length, ctx.block)
        return Schedule("pairwise", ctx.length)


class BatchSizePolicy:
    """The seed's ``chooseByBatchSize3``: batch size 1 gets the left tree ``(a+b)+c``, any
    larger batch the right tree ``a+(b+c)``. Deliberately *not* request-local."""
    name = "batch-size"

    def select(self, ctx: LocalCtx, step=None) -> Schedule:
        n_requests = 1 if step is None else step.n_requests
        return Schedule("sequential" if n_requests == 1 else "right", ctx.length)


class NotRequestLocal(AssertionError):
    """A policy gave two different trees for one context under two batches."""

    def __init__(self, policy, ctx, step_a, step_b, sched_a, sched_b, witness):
        self.ctx, self.steps, self.schedules, self.witness = ctx, (step_a, step_b), (sched_a, sched_b), witness
        msg = (f"policy {getattr(policy, 'name', policy)!r} is not request-local: {ctx} gives "
               f"{sched_a} under {step_a} but {sched_b} under {step_b}")
        if witness is not None:
            msg += "; float32 witness: " + ", ".join(fp.hex32(x) for x in witness[:3]) + \
                   f" -> {fp.hex32(witness[3])} vs {fp.hex32(witness[4])}"
        super().__init__(msg)


def _same_tree(a: Tree, b: Tree) -> bool:
    sa, sb = [a], [b]
    while sa:
        x, y = sa.pop(), sb.pop()
        if type(x) is not type(y):
            return False
        if type(x) is Leaf:
            if x.index != y.index:
                return False
        else:
            sa += [x.left, x.right]
            sb += [y.left, y.right]
    return True


def check_request_local(policy, ctxs, steps) -> None:
    """Property check of ``RequestLocalScheduleInvariant``: for every context, every batch
    (``StepInfo``) must give the same tree. Raises ``NotRequestLocal``; for a three-leaf
    context it carries the seed's float32 witness evaluated along both trees."""
    for ctx in ctxs:
        first = None
        for step in steps:
            s = policy.select(ctx, step)
            if first is None:
                first = (step, s)
                continue
            if not _same_tree(first[1].tree(), s.tree()):
                wit = None
                if ctx.length == 3:
                    a, b, c, _, _ = fp.witness()
                    vals = np.array([a, b, c], dtype=np.float32)
                    wit = (a, b, c, evaluate(first[1].tree(), vals), evaluate(s.tree(), vals))
                raise NotRequestLocal(policy, ctx, first[0], step, first[1], s, wit)
