"""Float32 utilities (batch-invariance.md §4.2 ``fp.py``): bit patterns, bit equality, ULP
distance, bf16 round-to-nearest-even, content fingerprints, dtype guards, and the seed's
non-associativity witness (§1.2, ``IEEE32_batchDependentSchedule_counterexample``).

Why bits and not closeness: the property under test is *invariance*, so every comparison
in serq.numerics is on the uint32 view of float32 values (§4.8: "all comparisons are within
one run"). Why dtype guards: one float64 array slipping into a kernel silently changes the
arithmetic (§4.11, "silent dtype promotion").
"""
from __future__ import annotations

import hashlib

import numpy as np

F32 = np.float32


class DtypeError(TypeError):
    """A kernel boundary received an array that is not float32 (§4.11)."""


def require_f32(where, *arrays):
    """Raise ``DtypeError`` naming ``where`` unless every array is a float32 ndarray."""
    for a in arrays:
        if not isinstance(a, np.ndarray) or a.dtype != np.float32:
            kind = a.dtype if isinstance(a, np.ndarray) else type(a).__name__
            raise DtypeError(f"{where}: expected a float32 array, got {kind}")


def f32(x):
    """``x`` as float32 (a scalar stays a numpy scalar)."""
    return np.asarray(x, dtype=np.float32)[()]


def bits(x):
    """The IEEE binary32 bit pattern(s) of ``x``: an int for a scalar, a uint32 array otherwise."""
    a = np.asarray(x, dtype=np.float32)
    v = a.view(np.uint32)
    return int(v) if v.ndim == 0 else v


def hex32(x) -> str:
    """``0x3f800000``-style text of one float32 (what divergence reports print, §2.8 item 9)."""
    return f"0x{bits(x):08x}"


def bits_equal(a, b) -> bool:
    """True when ``a`` and ``b`` have the same shape and identical float32 bits (NaN payloads
    and the sign of zero included)."""
    a = np.asarray(a, dtype=np.float32)
    b = np.asarray(b, dtype=np.float32)
    return a.shape == b.shape and bool(np.array_equal(a.view(np.uint32), b.view(np.uint32)))


def ulp_diff(a, b):
    """Distance in units in the last place between float32 values (0 for identical bits;
    +0.0 and -0.0 are 0 apart). Computed on the ordered integer line of the bit patterns."""
    def ordered(x):
        i = np.asarray(x, dtype=np.float32).view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)
    d = np.abs(ordered(a) - ordered(b))
    return int(d) if d.ndim == 0 else d


def bf16_round(x):
    """Round float32 to the nearest bfloat16 (ties to even), kept in float32 storage.

    Three integer operations on the uint32 view (§3.1): add 0x7FFF plus the lowest kept bit,
    clear the low 16 bits. NaN stays NaN (its quiet bit is forced so rounding cannot carry it
    into infinity)."""
    require_f32("bf16_round", x)
    u = x.view(np.uint32)
    r = u >> np.uint32(16)
    r &= np.uint32(1)
    r += np.uint32(0x7FFF)
    r += u
    r &= np.uint32(0xFFFF0000)
    nan = np.isnan(x)
    if nan.any():
        r = np.where(nan, u | np.uint32(0x00400000), r).astype(np.uint32)
    return r.view(np.float32)


def fingerprint(*arrays) -> str:
    """sha256 (hex, 16 digits) of the arrays' float32 bytes in C order: a KV block's content
    identity (§4.4)."""
    h = hashlib.sha256()
    for a in arrays:
        require_f32("fingerprint", a)
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]


# The seed's witness (§1.2): 1e20, -1e20 and 1 as binary32, and the two three-leaf trees.
WITNESS_BITS = (0x60AD78EC, 0xE0AD78EC, 0x3F800000)


def witness():
    """``(a, b, c, left, right)``: ``left = (a + b) + c`` and ``right = a + (b + c)`` in
    float32 for the seed's values; ``left == 1`` and ``right == 0``."""
    a, b, c = (np.array(w, dtype=np.uint32).view(np.float32)[()] for w in WITNESS_BITS)
    return a, b, c, (a + b) + c, a + (b + c)
