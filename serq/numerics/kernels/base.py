"""The kernel-set protocol (batch-invariance.md §4.3 ``kernels/base.py``): what a kernel may
look at (``StepInfo``, the batch facts only batch-dependent kernels read), the three
operations every set provides, the registry of named sets, and the elementwise layout
self-test that the exact kernels rely on (§4.3 rule 1, §4.8 A5).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class StepInfo:
    """The batch a kernel call belongs to: tokens in the engine step (the M of every matmul),
    requests, decodes. An invariant kernel must not let these reach a reduction tree."""
    n_tokens: int = 1
    n_requests: int = 1
    n_decode: int = 0


class KernelSet:
    """Base of every kernel set: ``matmul(x, w, step)`` (x (T, K) @ w (K, N)),
    ``rmsnorm(x, g, eps, step)`` (per row) and ``attention(q, k, v, start, step)`` (queries
    at absolute positions ``start..start+n-1`` of one request; ``k``/``v`` hold that request's
    positions ``0..start+n-1``, already written: §4.3 rule 4)."""
    name = "?"
    invariant = False      # the claim the test suite checks
    note = ""

    def matmul(self, x, w, step):
        raise NotImplementedError

    def rmsnorm(self, x, g, eps, step):
        raise NotImplementedError

    def attention(self, q, k, v, start, step):
        raise NotImplementedError

    def attention_many(self, items, step):
        """``attention`` for each ``(q, k, v, start)`` of a step (a set may batch them)."""
        return [self.attention(q, k, v, start, step) for q, k, v, start in items]


_REGISTRY: dict = {}


def register(name, factory):
    _REGISTRY[name] = factory


def get_kernels(name) -> KernelSet:
    """The kernel set called ``name`` (``exact``, ``tiled``, ``default``, ``chunk-rel``,
    ``blas``)."""
    from serq.numerics.kernels import blas, default, exact, tiled  # noqa: F401 (registration)
    try:
        return _REGISTRY[name]()
    except KeyError:
        raise ValueError(f"unknown kernel set {name!r} (known: {', '.join(sorted(_REGISTRY))})") from None


def kernel_names():
    get_kernels("exact")
    return sorted(_REGISTRY)


class LayoutSelfTestError(RuntimeError):
    """The elementwise transcendentals are not layout-invariant on this machine."""


@dataclass
class _SelfTest:
    passed: bool = False
    detail: list = field(default_factory=list)


def elementwise_selftest(seed=1234) -> None:
    """§3.2 E4 / §4.8 A5: float32 ``exp``/``sin``/``cos`` must give the same bits for a value
    whatever the array's length, offset or stride. The exact kernels depend on it; if it fails
    they refuse to load (a clear error instead of flaky answers)."""
    rng = np.random.default_rng(seed)
    base = (rng.standard_normal(4099) * 8).astype(np.float32)
    for fn in (np.exp, np.sin, np.cos):
        ref = fn(base)
        views = [(fn(base[3:]), ref[3:]), (fn(base[::3]), ref[::3]), (fn(base[5:6]), ref[5:6]),
                 (fn(base.reshape(-1, 1)[:, 0].copy()), ref),
                 (fn(np.ascontiguousarray(base[::-1]))[::-1], ref)]
        for got, want in views:
            if not np.array_equal(got.view(np.uint32), want.view(np.uint32)):
                raise LayoutSelfTestError(
                    f"np.{fn.__name__} on float32 gives different bits for one value at different "
                    "array layouts on this machine; the exact kernels cannot be trusted here")
