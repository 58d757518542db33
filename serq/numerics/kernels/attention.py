"""Split-KV attention with an explicit schedule (batch-invariance.md §4.3 rule 4).

One query row at absolute position ``p`` attends to KV positions ``0..p``. The KV range is
cut into splits ``[a_j, b_j)``; inside a split the scores, the max, the exp-sum and the
weighted values are reduced along a halving tree of fixed width ``width`` (masked leaves are
exact zeros or −inf set with ``where``, never ``0 * garbage``); splits are merged left to right
by online softmax (m, l, o) and the output is normalised at the end. Which splits are used is
the caller's choice: absolute ``[jS, (j+1)S)`` splits give the canonical layout (Lean
``fixedSplitKVTree``, ``KVLayoutPolicy.canonical``); batch- or chunk-derived splits give the
batch-dependent kernels. No hidden reductions: every sum is a ``Schedule.reduce``.
"""
from __future__ import annotations

import numpy as np

from serq.numerics.schedule import Schedule

NEG_INF = np.float32(-np.inf)
ZERO = np.float32(0.0)
QUERY_ROWS = 64  # queries processed together (bounds memory; rows are independent)


def split_attention(q, k, v, positions, bounds, width):
    """q (n, H, dh), k/v (L, H, dh), positions (n,) absolute; bounds: list of (a, b) with
    a_0 = 0, in increasing order. Returns (n, H, dh) float32."""
    starts = np.array([a for a, _ in bounds], dtype=np.int64)
    ends = np.array([b for _, b in bounds], dtype=np.int64)
    idx = starts[:, None] + np.arange(width, dtype=np.int64)[None, :]          # (J, W)
    inside = (idx < ends[:, None]) & (idx < k.shape[0])
    safe = np.where(inside, idx, 0)
    kg, vg = k[safe], v[safe]                                                  # (J, W, H, dh)
    out = np.empty(q.shape, dtype=np.float32)
    for r in range(0, q.shape[0], QUERY_ROWS):
        rows = slice(r, r + QUERY_ROWS)
        pos = positions[rows]
        mask = inside[None] & (idx[None] <= pos[:, None, None])               # (n, J, W)
        out[rows] = _attend(q[rows], kg[None], vg[None], mask, starts[None, :] <= pos[:, None])
    return out


def absolute_split_rows(q, caches, positions, split):
    """Many single-query rows at once, each with its own KV (one decode per request), under
    the absolute layout: row r attends to ``caches[r]`` = (k, v) at positions 0..p_r. The
    per-row trees are exactly those of ``split_attention`` with ``absolute_bounds``: padding
    splits past a row's position are invalid and skipped."""
    n = q.shape[0]
    J = max(int(p) // split + 1 for p in positions)
    heads, dh = q.shape[1:]
    kg = np.zeros((n, J * split, heads, dh), dtype=np.float32)
    vg = np.zeros((n, J * split, heads, dh), dtype=np.float32)
    for r, (k, v) in enumerate(caches):
        m = min(k.shape[0], J * split)
        kg[r, :m] = k[:m]
        vg[r, :m] = v[:m]
    kg = kg.reshape(n, J, split, heads, dh)
    vg = vg.reshape(n, J, split, heads, dh)
    idx = np.arange(J * split, dtype=np.int64).reshape(J, split)
    pos = np.asarray(positions, dtype=np.int64)
    mask = idx[None] <= pos[:, None, None]
    starts = np.arange(0, J * split, split, dtype=np.int64)
    return _attend(q, kg, vg, mask, starts[None, :] <= pos[:, None])


def _attend(q, kg, vg, mask, valid):
    """q (n, H, dh); kg/vg broadcastable to (n, J, W, H, dh); mask (n, J, W); valid (n, J):
    the splits each row merges (split 0 always)."""
    dh = q.shape[-1]
    width = mask.shape[-1]
    feat = Schedule("pairwise", dh)
    kv = Schedule("pairwise", width)
    with np.errstate(invalid="ignore", over="ignore"):
        s = feat.reduce(q[:, None, None, :, :] * kg, axis=-1)                 # (n, J, W, H)
        s = np.where(mask[..., None], s, NEG_INF)
        m = kv.reduce(s, axis=2, combine=np.maximum)                           # (n, J, H)
        p = np.where(mask[..., None], np.exp(s - m[:, :, None, :]), ZERO)
        lsum = kv.reduce(p, axis=2)                                            # (n, J, H)
        pv = np.where(mask[..., None, None], p[..., None] * vg, ZERO)
        o = kv.reduce(pv, axis=2)                                              # (n, J, H, dh)
        m_acc, l_acc, o_acc = m[:, 0], lsum[:, 0], o[:, 0]
        for j in range(1, mask.shape[1]):
            ok = valid[:, j][:, None]
            m_new = np.maximum(m_acc, m[:, j])
            alpha = np.exp(m_acc - m_new)
            beta = np.exp(m[:, j] - m_new)
            l_new = l_acc * alpha + lsum[:, j] * beta
            o_new = o_acc * alpha[..., None] + o[:, j] * beta[..., None]
            m_acc = np.where(ok, m_new, m_acc)
            l_acc = np.where(ok, l_new, l_acc)
            o_acc = np.where(ok[..., None], o_new, o_acc)
        return (o_acc / l_acc[..., None]).astype(np.float32, copy=False)


def absolute_bounds(length, split):
    """``[0, S), [S, 2S), ...`` covering ``length`` positions: the canonical layout."""
    return [(a, a + split) for a in range(0, max(length, 1), split)]


def softmax(x, axis=-1):
    """Row softmax with explicit trees (max and sum along the halving tree)."""
    x = np.moveaxis(x, axis, -1)
    sched = Schedule("pairwise", x.shape[-1])
    m = sched.reduce(x, combine=np.maximum)
    e = np.exp(x - m[..., None])
    return np.moveaxis(e / sched.reduce(e)[..., None], -1, axis)
