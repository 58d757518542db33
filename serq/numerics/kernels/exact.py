"""The oracle kernel set ``exact`` (batch-invariance.md §4.3, the numeric contract).

Every reduction goes through a ``Schedule`` chosen by ``CanonicalPolicy.select(LocalCtx)``
from request-local facts only (Lean ``RequestLocalScheduleInvariant``): matmul K is
``blocked(K, 32)`` (pairwise inside a block, blocks folded left to right), the RMSNorm and the
head-dimension dot use the halving tree, and attention splits the KV range at absolute
positions ``0, S, 2S, …`` (``fixedSplitKVTree``). M/N tiling is free, so every operation here
is an elementwise numpy op over the whole batch — only the per-element trees are fixed.
Forbidden here (a lint test scans this file): ``np.sum``, ``np.dot``, ``@``, ``einsum``,
``mean``, ``matmul``, ``np.add.reduce``.
"""
from __future__ import annotations

import numpy as np

from serq.numerics import fp
from serq.numerics.kernels.attention import absolute_bounds, absolute_split_rows, split_attention
from serq.numerics.kernels.base import KernelSet, elementwise_selftest, register
from serq.numerics.schedule import CanonicalPolicy, LocalCtx

K_BLOCK = 32
KV_SPLIT = 32

elementwise_selftest()


def scheduled_matmul(x, w, sched):
    """x (T, K) times w (K, N) with each output's K reduction evaluated along ``sched``
    (``scheduledDot`` for every element). Products are formed block by block, so memory
    stays at T·block·N."""
    size = sched.block_size() or sched.n
    acc = None
    for s in range(0, sched.n, size):
        prod = x[:, s:s + size, None] * w[None, s:s + size, :]               # (T, b, N)
        part = type(sched)("pairwise", prod.shape[1]).reduce(prod, axis=1)
        acc = part if acc is None else acc + part
    return acc


def scheduled_rmsnorm(x, g, eps, sched):
    ss = sched.reduce(x * x, axis=-1)
    ms = ss / np.float32(x.shape[-1])
    r = np.float32(1.0) / np.sqrt(ms + np.float32(eps))
    return x * r[:, None] * g[None, :]


class ExactKernels(KernelSet):
    name = "exact"
    invariant = True
    note = "schedule-explicit numpy: blocked K, halving norm, absolute KV splits"

    def __init__(self, k_block=K_BLOCK, kv_split=KV_SPLIT):
        self.policy = CanonicalPolicy()
        self.k_block = k_block
        self.kv_split = kv_split

    def matmul(self, x, w, step):
        fp.require_f32("exact.matmul", x, w)
        sched = self.policy.select(LocalCtx("matmul.k", x.shape[1], "f32", self.k_block))
        if sched.kind != "blocked":
            raise AssertionError(f"exact.matmul expects a blocked K schedule, got {sched}")
        return scheduled_matmul(x, w, sched)

    def rmsnorm(self, x, g, eps, step):
        fp.require_f32("exact.rmsnorm", x, g)
        sched = self.policy.select(LocalCtx("rmsnorm.d", x.shape[1]))
        return scheduled_rmsnorm(x, g, eps, sched)

    def attention(self, q, k, v, start, step):
        fp.require_f32("exact.attention", q, k, v)
        n = q.shape[0]
        positions = np.arange(start, start + n, dtype=np.int64)
        return split_attention(q, k, v, positions, absolute_bounds(start + n, self.kv_split),
                               self.kv_split)

    def attention_many(self, items, step):
        """Single-query items (decodes) in one vectorised call, the rest one by one; the same
        trees either way (absolute splits, fixed width)."""
        out = [None] * len(items)
        single = [i for i, it in enumerate(items) if it[0].shape[0] == 1]
        if len(single) > 1:
            for it in items:
                fp.require_f32("exact.attention", *it[:3])
            q = np.concatenate([items[i][0] for i in single])
            rows = absolute_split_rows(q, [items[i][1:3] for i in single],
                                       [items[i][3] for i in single], self.kv_split)
            for r, i in enumerate(single):
                out[i] = rows[r:r + 1]
        for i, (q, k, v, start) in enumerate(items):
            if out[i] is None:
                out[i] = self.attention(q, k, v, start, step)
        return out


register("exact", ExactKernels)
