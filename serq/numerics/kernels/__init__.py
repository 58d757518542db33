"""Kernel sets: ``exact`` (oracle), ``tiled`` (fixed-shape BLAS, self-tested), ``default``
(batch-dependent), ``chunk-rel`` (chunk-relative attention splits), ``blas`` (plain)."""
from serq.numerics.kernels.base import KernelSet, StepInfo, get_kernels, kernel_names

__all__ = ["KernelSet", "StepInfo", "get_kernels", "kernel_names"]
