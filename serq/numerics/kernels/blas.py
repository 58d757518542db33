"""``blas``: plain numpy/BLAS kernels with no schedule discipline (``np.matmul``, ``np.sum``,
``einsum``, one softmax over the whole row). The speed baseline of the benchmark (§4.10
"exact / BLAS-default") and the information-only case of §4.8 B7: whether it is
batch-variant depends on the BLAS build, so no test asserts either way.
"""
from __future__ import annotations

import numpy as np

from serq.numerics import fp
from serq.numerics.kernels.base import KernelSet, register


class BlasKernels(KernelSet):
    name = "blas"
    invariant = False
    note = "plain BLAS / numpy reductions (speed baseline)"

    def matmul(self, x, w, step):
        fp.require_f32("blas.matmul", x, w)
        return np.matmul(x, w)

    def rmsnorm(self, x, g, eps, step):
        fp.require_f32("blas.rmsnorm", x, g)
        ms = np.mean(x * x, axis=-1, dtype=np.float32)
        return x * (np.float32(1.0) / np.sqrt(ms + np.float32(eps)))[:, None] * g[None, :]

    def attention(self, q, k, v, start, step):
        fp.require_f32("blas.attention", q, k, v)
        n = q.shape[0]
        length = start + n
        s = np.einsum("nhd,lhd->hnl", q, k[:length])
        pos = np.arange(start, length)[:, None]
        s = np.where(np.arange(length)[None, :] <= pos, s, np.float32(-np.inf))
        s = np.exp(s - s.max(axis=-1, keepdims=True))
        s = s / s.sum(axis=-1, keepdims=True, dtype=np.float32)
        return np.einsum("hnl,lhd->nhd", s, v[:length]).astype(np.float32)


register("blas", BlasKernels)
