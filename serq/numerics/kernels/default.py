"""The deliberately batch-dependent kernel set ``default`` (batch-invariance.md §4.3): the
heuristics real engines use, evaluated with explicit schedules so the failure is
deterministic and machine-independent.

* matmul: split-K when the step has few tokens (3 parts below 8 tokens, 6 below 32, else the
  canonical blocked tree; odd part counts so that no split coincides with a 32-wide block);
* RMSNorm: a split row reduction (4 partial sums) when the step has fewer than 8 rows;
* decode attention: FlashDecoding — the split *count* is chosen from the batch (more splits
  when few requests decode), so the split size ⌈L / count⌉ moves;
* prefill attention: a two-block merge, "cached prefix" then "new chunk", split at the chunk
  start.

``chunk-rel`` is the canonical layout with one change: inside the new chunk the splits are
counted from the chunk start (SGLang's problem; invariant only if chunk starts are multiples
of S, §3.2 E7).
"""
from __future__ import annotations

import numpy as np

from serq.numerics import fp
from serq.numerics.kernels.attention import absolute_bounds, split_attention
from serq.numerics.kernels.base import KernelSet, register
from serq.numerics.kernels.exact import KV_SPLIT, ExactKernels, scheduled_matmul, scheduled_rmsnorm
from serq.numerics.schedule import Schedule


def split_k_schedule(k, n_tokens, block=32):
    if n_tokens < 8:
        return Schedule("split", k, 3)
    if n_tokens < 32:
        return Schedule("split", k, 6)
    return Schedule("blocked", k, block)


def decode_splits(n_decode):
    """FlashDecoding-style: fill the machine — 16 splits for one decode, fewer as the batch
    grows, at least 1."""
    return max(1, 16 // max(1, n_decode))


class DefaultKernels(KernelSet):
    name = "default"
    invariant = False
    note = "batch-dependent: split-K by tokens, split-row norm, FlashDecoding splits, chunk-boundary attention"

    def matmul(self, x, w, step):
        fp.require_f32("default.matmul", x, w)
        return scheduled_matmul(x, w, split_k_schedule(x.shape[1], step.n_tokens))

    def rmsnorm(self, x, g, eps, step):
        fp.require_f32("default.rmsnorm", x, g)
        d = x.shape[1]
        sched = Schedule("split", d, 4) if step.n_tokens < 8 else Schedule("pairwise", d)
        return scheduled_rmsnorm(x, g, eps, sched)

    def attention(self, q, k, v, start, step):
        fp.require_f32("default.attention", q, k, v)
        n = q.shape[0]
        length = start + n
        positions = np.arange(start, length, dtype=np.int64)
        if n == 1:
            size = -(-length // decode_splits(step.n_decode))
            bounds = [(a, min(a + size, length)) for a in range(0, length, size)]
        else:
            bounds = [(0, start), (start, length)] if start > 0 else [(0, length)]
        width = max(b - a for a, b in bounds)
        return split_attention(q, k, v, positions, bounds, width)


class ChunkRelativeKernels(ExactKernels):
    name = "chunk-rel"
    attention_many = KernelSet.attention_many
    invariant = False
    note = "absolute splits for the cached prefix, chunk-relative splits for the new tokens"

    def attention(self, q, k, v, start, step):
        fp.require_f32("chunk-rel.attention", q, k, v)
        n, S = q.shape[0], self.kv_split
        positions = np.arange(start, start + n, dtype=np.int64)
        prefix = [(a, min(a + S, start)) for a in range(0, start, S)]
        chunk = [(a, min(a + S, start + n)) for a in range(start, start + n, S)]
        return split_attention(q, k, v, positions, prefix + chunk, S)


register("default", DefaultKernels)
register("chunk-rel", ChunkRelativeKernels)
