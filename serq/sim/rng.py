# distutils: extra_compile_args = -ffp-contract=off
"""Random streams of the simulator: rand 0.9's `StdRng` and serQ's sampling laws.

The generator (interpreter.md section 2, ir.md section 12, and the model in the spec's
`reference_rng.py`) is Rust rand 0.9's `StdRng`: ChaCha12 with a 64-bit block counter in
words 12-13 and a zero nonce, keyed by rand_core's `seed_from_u64` (a PCG32 fill of the
32-byte key). rand reads it through a buffer of 4 blocks (64 words); `next_u64` takes the
low word then the high word, and when a single word is left in the buffer it is the low
half and the high half is the first word of the next buffer. Every read therefore takes
the next words of one flat keystream (block 0's 16 words, then block 1's, ...) whatever
the buffer boundaries, and this module works on that flat stream: it generates many
blocks at once (vectorised over the block counter with numpy, or in pure Python when
numpy is not importable) and the outputs are exactly those of the 4-block model, for any
mix of `next_u32`, `next_u64`, `random_f64` and the range methods.

Speed: the fastest draw is `Rng.random_f64` (a list index and an increment on the hot
path); bind it once in a loop, `u = rng.random_f64`, then call `u()`. The samplers below
call it once per uniform they need. Integer reads (`next_u32`, `next_u64`, the ranges)
build the integer list of a chunk on first use and are a little slower. `Rng.position`
counts the 32-bit words drawn; `Rng.copy()` forks a generator in its current state.

Samplers (interpreter.md section 2, ir.md section 8.4), bit for bit with pyserq 0.1.2:
`sample_exp`, `sample_det`, `sample_uniform`, `sample_erlang` (with `erlang_k`),
`sample_h2`, `sample_bernoulli`, `poisson_gap`, `trace_pick`, and `sample` to dispatch on
an IR `DistKind` name. The stream seeds are `stream_seed(seed, name)`.

Typed for Cython (issue 10): this file runs interpreted as it is, and Cython compiles the
same file (its pure-Python mode) to C arithmetic: the generator is a C class whose state is
C integers, the ChaCha block and the PCG key schedule are unsigned 32/64-bit C arithmetic
(the `& M32`/`& M64` masks, no-ops in C, are what make Python's unbounded ints wrap the
same way), and a chunk's words live in a C buffer (a typed memoryview over `array.array`),
so a draw makes no Python object; a compiled draw converts its own word pair (no uniform is
made ahead). The samplers call the C `log`/`sqrt`, which CPython's `math.log`/`math.sqrt`
call too. Compiled, the scalar keystream (backend "python", then C code, 4 blocks at a time
as SIMD vectors: `_py_words`) is the default: it beats numpy's. The results are the
same bit for bit in both modes (tests/sim/test_rng.py compiles this file and compares);
compile it with `-ffp-contract=off` (the first line sets it), or a C compiler may fuse `a * b + c`
into one rounding (an fma) where Python rounds twice.
"""
from __future__ import annotations

import array
import math
import operator
import sys

try:
    import cython
except ImportError:  # Cython not installed: the no-op stand-in, the module runs interpreted
    from serq import _cython_shim as cython

from serq.ir.arith import add as _add

if cython.compiled:
    from cython.cimports.cpython import array as _carray
    from cython.cimports.libc.math import log as _log, sqrt as _sqrt
else:
    _log = math.log
    _sqrt = math.sqrt

__all__ = [
    "Rng", "STREAM_XOR", "stream_seed", "HAVE_NUMPY", "USE_NUMPY", "COMPILED",
    "sample", "sample_exp", "sample_det", "sample_uniform", "sample_erlang", "erlang_k",
    "sample_h2", "sample_bernoulli", "poisson_gap", "trace_pick",
]

# Typed constants (C globals when compiled: an untyped constant would make the arithmetic
# that uses it Python arithmetic); decimal literals below are exact.
M32 = cython.declare(cython.ulonglong, 0xFFFFFFFF)
M64 = cython.declare(cython.ulonglong, 0xFFFFFFFFFFFFFFFF)
_F53 = cython.declare(cython.double, 1.1102230246251565e-16)    # 2^-53
_F52 = cython.declare(cython.double, 2.220446049250313e-16)     # 2^-52
_PCG_MUL = cython.declare(cython.ulonglong, 6364136223846793005)
_PCG_INC = cython.declare(cython.ulonglong, 11634580027462260723)
#: True when this module runs compiled by Cython, False when it runs interpreted.
COMPILED = bool(cython.compiled)
# Interpreted, a chunk's words and uniforms are Python lists (a list index is the cheapest
# read Python has); compiled, they are C buffers.
_LISTS = cython.declare(cython.bint, not COMPILED)
_U32 = array.array("I")   # the type of a compiled chunk's word buffer (_u32_buffer)


def _import_numpy():
    """numpy, or None when it is not importable (a dependency, but the module stays exact,
    and slower interpreted, without it)."""
    global _np
    if _np is None:
        try:
            import numpy
        except ImportError:  # pragma: no cover - exercised by forcing the fallback in tests
            return None
        _np = numpy
    return _np


# numpy is imported where it is used: interpreted, at once (its keystream is the default
# there); compiled, only by a generator asked for backend="numpy" (nothing else draws
# through it). Importing numpy takes about 0.15 s, and OpenBLAS, which it loads, starts a
# thread per core that busy-waits a while for work (none comes): on a small machine that
# thread takes a core from the run.
_np = None
if _LISTS:
    HAVE_NUMPY = _import_numpy() is not None
else:
    import importlib.util
    HAVE_NUMPY = importlib.util.find_spec("numpy") is not None
# Backend used by `Rng(seed)` when no `backend=` is given: numpy when it is importable and
# the module runs interpreted; compiled, the scalar keystream is C code and the faster one.
# Set to False to force the scalar keystream (identical output).
USE_NUMPY = HAVE_NUMPY and _LISTS

# Seeds of the five streams of a run seeded `seed`: `seed ^ STREAM_XOR[name]`.
STREAM_XOR = {
    "arrival": 0,                     # Poisson gaps, renewal gap expressions
    "workload": 0x9E3779B97F4A7C15,   # init / turn block draws (shared by all sessions)
    "session": 0x5851F42D4C957F2D,    # session statements, step cost, ps capacity, keys
    "evict": 0x2545F4914F6CDD1D,      # evict-by keys and spill clauses
    "trace": 0x6A09E667F3BCC908,      # unordered trace session choice
}

_EMPTY = "an empty or unbounded range"   # pyserq's message for an empty or infinite range


def stream_seed(seed, name):
    """The seed of stream `name` (a key of STREAM_XOR) of a run seeded `seed`."""
    return _u64(seed, "seed") ^ STREAM_XOR[name]


# --------------------------------------------------------------------------- argument checks

def _u64(value, what):
    v = operator.index(value)  # TypeError for floats, strings, None (as pyserq)
    if v < 0 or v > M64:
        raise ValueError(f"{what} must be an integer in 0..2^64-1 (a u64), got {v}")
    return v


def _u32(value, what):
    v = operator.index(value)
    if v < 0 or v > M32:
        raise ValueError(f"{what} must be an integer in 0..2^32-1 (a u32), got {v}")
    return v


def _f64(value, what):
    if type(value) is float:
        return value
    t = type(value)
    if isinstance(value, (str, bytes, bytearray)) or not (
            hasattr(t, "__float__") or hasattr(t, "__index__")):
        raise TypeError(f"{what} must be a real number, not {t.__name__}")
    return float(value)


# --------------------------------------------------------------------------- key schedule

@cython.cfunc
@cython.locals(state=cython.ulonglong, xs=cython.ulonglong, rot=cython.ulonglong,
               k=cython.Py_ssize_t, words=cython.uint[::1])
def _key_words(seed: cython.ulonglong) -> cython.uint[::1]:
    """rand_core `seed_from_u64`: fill the 32-byte key with PCG32 outputs (8 words)."""
    state = seed
    words = _u32_buffer(8)
    for k in range(8):
        state = (state * _PCG_MUL + _PCG_INC) & M64
        xs = (((state >> 18) ^ state) >> 27) & M32
        rot = state >> 59
        words[k] = ((xs >> rot) | (xs << ((32 - rot) & 31))) & M32
    return words


_C0 = cython.declare(cython.uint, 0x61707865)   # "expand 32-byte k"
_C1 = cython.declare(cython.uint, 0x3320646E)
_C2 = cython.declare(cython.uint, 0x79622D32)
_C3 = cython.declare(cython.uint, 0x6B206574)
_CONST = (_C0, _C1, _C2, _C3)
# the 8 quarter rounds of a ChaCha double round (columns, then diagonals)
_QR = ((0, 4, 8, 12), (1, 5, 9, 13), (2, 6, 10, 14), (3, 7, 11, 15),
       (0, 5, 10, 15), (1, 6, 11, 12), (2, 7, 8, 13), (3, 4, 9, 14))


# --------------------------------------------------------------------------- pure-Python keystream

@cython.cfunc
@cython.boundscheck(False)
@cython.wraparound(False)
@cython.locals(M=cython.uint, t=cython.uint, r=cython.Py_ssize_t, g=cython.Py_ssize_t,
               j=cython.Py_ssize_t, k=cython.Py_ssize_t, o=cython.Py_ssize_t,
               c=cython.ulonglong, s=cython.uint[::1], s0=cython.uint[::1], out=cython.uint[::1],
               x0=cython.uint, x1=cython.uint, x2=cython.uint, x3=cython.uint,
               x4=cython.uint, x5=cython.uint, x6=cython.uint, x7=cython.uint,
               x8=cython.uint, x9=cython.uint, x10=cython.uint, x11=cython.uint,
               x12=cython.uint, x13=cython.uint, x14=cython.uint, x15=cython.uint)
def _py_words(key: cython.uint[::1], counter: cython.ulonglong,
              nblocks: cython.Py_ssize_t) -> cython.uint[::1]:
    """`nblocks` ChaCha12 blocks from `counter` on, in stream order (a list, or a C buffer
    when compiled); `nblocks` is a multiple of 4 (the chunk sizes of Rng._refill are).

    The blocks are computed 4 at a time, side by side ("lanes"): `s` holds the state of 4
    blocks, word q of lane j at s[4 * q + j], and each double round is one pass over the
    lanes that loads a lane's 16 words into locals, runs the 8 quarter rounds of _QR
    (unrolled) and stores them back. The lanes are independent and each runs the same
    code, so compiled, the C compiler runs the pass on the 4 lanes at once as SIMD vectors
    (4 32-bit words, SSE2 on x86-64): about 4 times fewer instructions than a block at a
    time, for the same words."""
    if nblocks % 4 != 0:
        raise ValueError(f"_py_words: {nblocks} blocks is not a multiple of 4")
    M = 0xFFFFFFFF   # M32, a C constant here: the C compiler then sees the rotations
    out = _u32_buffer(16 * nblocks)
    s = _u32_buffer(64)
    s0 = _u32_buffer(64)     # the input state of the 4 lanes: the counter rows change
    for j in range(4):
        s0[j], s0[4 + j], s0[8 + j], s0[12 + j] = _C0, _C1, _C2, _C3
        for k in range(8):
            s0[16 + 4 * k + j] = key[k]
        s0[56 + j], s0[60 + j] = 0, 0
    for g in range(0, nblocks, 4):
        for j in range(4):
            c = (counter + g + j) & M64
            s0[48 + j], s0[52 + j] = c & M, (c >> 32) & M
        for k in range(64):
            s[k] = s0[k]
        for r in range(6):  # 12 rounds = 6 double rounds
            for j in range(4):
                x0, x1, x2, x3 = s[0 + j], s[4 + j], s[8 + j], s[12 + j]
                x4, x5, x6, x7 = s[16 + j], s[20 + j], s[24 + j], s[28 + j]
                x8, x9, x10, x11 = s[32 + j], s[36 + j], s[40 + j], s[44 + j]
                x12, x13, x14, x15 = s[48 + j], s[52 + j], s[56 + j], s[60 + j]
                x0 = (x0 + x4) & M; t = x12 ^ x0; x12 = ((t << 16) & M) | (t >> 16)
                x8 = (x8 + x12) & M; t = x4 ^ x8; x4 = ((t << 12) & M) | (t >> 20)
                x0 = (x0 + x4) & M; t = x12 ^ x0; x12 = ((t << 8) & M) | (t >> 24)
                x8 = (x8 + x12) & M; t = x4 ^ x8; x4 = ((t << 7) & M) | (t >> 25)
                x1 = (x1 + x5) & M; t = x13 ^ x1; x13 = ((t << 16) & M) | (t >> 16)
                x9 = (x9 + x13) & M; t = x5 ^ x9; x5 = ((t << 12) & M) | (t >> 20)
                x1 = (x1 + x5) & M; t = x13 ^ x1; x13 = ((t << 8) & M) | (t >> 24)
                x9 = (x9 + x13) & M; t = x5 ^ x9; x5 = ((t << 7) & M) | (t >> 25)
                x2 = (x2 + x6) & M; t = x14 ^ x2; x14 = ((t << 16) & M) | (t >> 16)
                x10 = (x10 + x14) & M; t = x6 ^ x10; x6 = ((t << 12) & M) | (t >> 20)
                x2 = (x2 + x6) & M; t = x14 ^ x2; x14 = ((t << 8) & M) | (t >> 24)
                x10 = (x10 + x14) & M; t = x6 ^ x10; x6 = ((t << 7) & M) | (t >> 25)
                x3 = (x3 + x7) & M; t = x15 ^ x3; x15 = ((t << 16) & M) | (t >> 16)
                x11 = (x11 + x15) & M; t = x7 ^ x11; x7 = ((t << 12) & M) | (t >> 20)
                x3 = (x3 + x7) & M; t = x15 ^ x3; x15 = ((t << 8) & M) | (t >> 24)
                x11 = (x11 + x15) & M; t = x7 ^ x11; x7 = ((t << 7) & M) | (t >> 25)
                x0 = (x0 + x5) & M; t = x15 ^ x0; x15 = ((t << 16) & M) | (t >> 16)
                x10 = (x10 + x15) & M; t = x5 ^ x10; x5 = ((t << 12) & M) | (t >> 20)
                x0 = (x0 + x5) & M; t = x15 ^ x0; x15 = ((t << 8) & M) | (t >> 24)
                x10 = (x10 + x15) & M; t = x5 ^ x10; x5 = ((t << 7) & M) | (t >> 25)
                x1 = (x1 + x6) & M; t = x12 ^ x1; x12 = ((t << 16) & M) | (t >> 16)
                x11 = (x11 + x12) & M; t = x6 ^ x11; x6 = ((t << 12) & M) | (t >> 20)
                x1 = (x1 + x6) & M; t = x12 ^ x1; x12 = ((t << 8) & M) | (t >> 24)
                x11 = (x11 + x12) & M; t = x6 ^ x11; x6 = ((t << 7) & M) | (t >> 25)
                x2 = (x2 + x7) & M; t = x13 ^ x2; x13 = ((t << 16) & M) | (t >> 16)
                x8 = (x8 + x13) & M; t = x7 ^ x8; x7 = ((t << 12) & M) | (t >> 20)
                x2 = (x2 + x7) & M; t = x13 ^ x2; x13 = ((t << 8) & M) | (t >> 24)
                x8 = (x8 + x13) & M; t = x7 ^ x8; x7 = ((t << 7) & M) | (t >> 25)
                x3 = (x3 + x4) & M; t = x14 ^ x3; x14 = ((t << 16) & M) | (t >> 16)
                x9 = (x9 + x14) & M; t = x4 ^ x9; x4 = ((t << 12) & M) | (t >> 20)
                x3 = (x3 + x4) & M; t = x14 ^ x3; x14 = ((t << 8) & M) | (t >> 24)
                x9 = (x9 + x14) & M; t = x4 ^ x9; x4 = ((t << 7) & M) | (t >> 25)
                s[0 + j], s[4 + j], s[8 + j], s[12 + j] = x0, x1, x2, x3
                s[16 + j], s[20 + j], s[24 + j], s[28 + j] = x4, x5, x6, x7
                s[32 + j], s[36 + j], s[40 + j], s[44 + j] = x8, x9, x10, x11
                s[48 + j], s[52 + j], s[56 + j], s[60 + j] = x12, x13, x14, x15
        for k in range(64):
            s[k] = (s[k] + s0[k]) & M
        for j in range(4):   # lane j is block g + j
            o = 16 * (g + j)
            for k in range(16):
                out[o + k] = s[4 * k + j]
    return out


@cython.cfunc
@cython.exceptval(check=False)
def _unit(lo: cython.ulonglong, hi: cython.ulonglong) -> cython.double:
    """The uniform of the word pair (lo, hi): rand's `random::<f64>()`, (next_u64 >> 11) *
    2^-53 (the numpy keystream's _np_pairs is the same rule on arrays)."""
    return ((hi << 32 | lo) >> 11) * _F53


@cython.cfunc
@cython.locals(k=cython.Py_ssize_t)
def _fill_pairs(w: cython.uint[::1], f: cython.double[::1], start: cython.Py_ssize_t,
                n: cython.Py_ssize_t):
    """f[k] = the uniform of the word pair (k, k+1) of `w`, for k = start, start + 2, ...
    below n - 1."""
    for k in range(start, n - 1, 2):
        f[k] = _unit(w[k], w[k + 1])


def _u32_buffer(n):
    """A chunk's word store: a list when interpreted, a C uint32 buffer when compiled (its
    words are not set: every caller writes them all)."""
    if _LISTS:
        return [0] * n
    return _carray.clone(_U32, n, False)


def _f64_buffer(n):
    """A chunk's uniforms: a list when interpreted, a C double buffer when compiled."""
    if _LISTS:
        return [0.0] * n
    return array.array("d", [0.0]) * n


# --------------------------------------------------------------------------- numpy keystream

def _np_words(key, counter, nblocks):
    """`nblocks` ChaCha12 blocks from `counter` on, as one uint32 array in stream order."""
    np = _np
    u32 = np.uint32
    ctr = (np.arange(nblocks, dtype=np.uint64) + np.uint64(counter))  # wraps mod 2^64
    init = np.empty((16, nblocks), dtype=u32)
    for i in range(4):
        init[i] = _CONST[i]
    for i in range(8):
        init[4 + i] = key[i]
    init[12] = (ctr & np.uint64(M32)).astype(u32)
    init[13] = (ctr >> np.uint64(32)).astype(u32)
    init[14] = 0
    init[15] = 0
    x = init.copy()
    s = [x[i] for i in range(16)]        # row views, updated in place
    t = np.empty(nblocks, dtype=u32)
    add, xor, orr = np.add, np.bitwise_xor, np.bitwise_or
    shl, shr = np.left_shift, np.right_shift
    r16, r12, r8, r7 = u32(16), u32(12), u32(8), u32(7)
    l16, l20, l24, l25 = u32(16), u32(20), u32(24), u32(25)
    quarters = [tuple(s[i] for i in q) for q in _QR]
    for _r in range(6):
        for a, b, c, d in quarters:
            add(a, b, out=a); xor(d, a, out=d)
            shr(d, l16, out=t); shl(d, r16, out=d); orr(d, t, out=d)
            add(c, d, out=c); xor(b, c, out=b)
            shr(b, l20, out=t); shl(b, r12, out=b); orr(b, t, out=b)
            add(a, b, out=a); xor(d, a, out=d)
            shr(d, l24, out=t); shl(d, r8, out=d); orr(d, t, out=d)
            add(c, d, out=c); xor(b, c, out=b)
            shr(b, l25, out=t); shl(b, r7, out=b); orr(b, t, out=b)
    add(x, init, out=x)
    return np.ascontiguousarray(x.T).reshape(-1)


_LITTLE = sys.byteorder == "little"


def _np_pairs(arr, start):
    """Uniform f64s (as a list) of the word pairs (start, start+1), ... of uint32 `arr`."""
    np = _np
    if start == 0 and _LITTLE:
        v = arr.view(np.uint64)          # (lo, hi) pairs in memory order
    else:
        n = (len(arr) - start) // 2
        w = arr[start:start + 2 * n].astype(np.uint64)
        v = w[0::2] | (w[1::2] << np.uint64(32))
    return ((v >> np.uint64(11)).astype(np.float64) * _F53).tolist()


# Chunk sizes (in blocks; see Rng._refill). numpy costs about half a millisecond per chunk
# whatever its size, so the first chunk of a stream (a stream may draw a handful of numbers
# only) is 4 blocks of the scalar keystream (about 0.15 ms in pure Python); the numpy chunks
# that follow start at 64 blocks and double up to 4096 (65536 words, about 30 ns a word).
# The compiled scalar keystream doubles up to _C_MAX only: its cost per chunk is a few
# buffers, and the words of a chunk a run does not draw are made for nothing (half a chunk
# per stream on average: at 4096 blocks, as many words as a run of 16000 draws uses, issue
# 10). Its chunk edges, 64, 1088, 3136, 7232 and then every 4096 words, include the numpy
# keystream's (tests/golden/rng/mixed.json reads across each below 262144).
_PY_BLOCKS = cython.declare(cython.Py_ssize_t, 4)
_NP_FIRST = cython.declare(cython.Py_ssize_t, 64)
_NP_MAX = cython.declare(cython.Py_ssize_t, 4096)
_C_MAX = cython.declare(cython.Py_ssize_t, 256)


@cython.final
@cython.cclass
class Rng:
    """rand 0.9 `StdRng::seed_from_u64(seed)` (ChaCha12), bit for bit as pyserq 0.1.2's `Rng`.

    `seed` is an integer in 0..2^64-1 (ValueError otherwise; TypeError for a non-integer).
    `backend` is "numpy" or "python" (default: numpy when importable, USE_NUMPY is set and
    the module runs interpreted; "python" is the scalar keystream, C code when compiled);
    both give identical outputs.

    Draw with `random_f64()` (fastest; bind it: `u = rng.random_f64`), `next_u32()`,
    `next_u64()`, `range_f64(low, high)`, `range_u32(low, high)`, `range_u64(low, high)`.
    `position` is the number of 32-bit words drawn so far.
    """

    # The state (C fields when compiled). The current chunk holds the stream's words _base
    # .. _base + _n - 1; _i is the position in it. Interpreted, _f[i] is the uniform of the
    # word pair (i, i+1), valid for i < _fl = _n - 1 (a list index is the cheapest draw
    # Python has); compiled, _fl is 0 and a draw converts its pair of _w (cheaper in C than
    # converting a whole chunk ahead, half of which is never drawn as a float). With the
    # interpreted numpy backend the entries
    # at odd i are filled only once the position has been odd in this chunk (only next_u32
    # makes it odd). _w is the chunk's words and _wn its length, 0 while the words are not
    # read out of the numpy array (_arr) yet (or the odd entries of _f are not filled),
    # which sends the integer reads to their slow path. An empty chunk starts the stream.
    # A chunk's _w and _f are never changed in place once a draw has read them (but for
    # filling identical values), so copies share them.
    _seed: cython.ulonglong
    _backend: str
    _key: cython.uint[::1]
    _ctr: cython.ulonglong           # counter of the next block to generate
    _nblocks: cython.Py_ssize_t      # size of the next numpy chunk
    _arr: object
    _base: cython.Py_ssize_t
    _n: cython.Py_ssize_t
    _i: cython.Py_ssize_t
    _f: cython.double[::1]
    _fl: cython.Py_ssize_t
    _w: cython.uint[::1]
    _wn: cython.Py_ssize_t

    __slots__ = ("_seed", "_backend", "_key", "_ctr", "_nblocks", "_arr", "_base", "_n",
                 "_i", "_f", "_fl", "_w", "_wn")

    def __init__(self, seed, backend=None):
        self._seed = _u64(seed, "seed")
        if backend is None:
            backend = "numpy" if (USE_NUMPY and HAVE_NUMPY) else "python"
        if backend not in ("numpy", "python"):
            raise ValueError(f"backend must be 'numpy' or 'python', got {backend!r}")
        if backend == "numpy" and (not HAVE_NUMPY or _import_numpy() is None):
            raise ValueError("backend 'numpy' asked for but numpy is not importable")
        self._backend = backend
        self._key = _key_words(self._seed)
        self._ctr = 0
        self._nblocks = _NP_FIRST
        self._arr = None
        self._base = 0
        self._n = 0
        self._i = 0
        self._f = _f64_buffer(0)
        self._fl = 0
        self._w = None
        self._wn = 0

    def __repr__(self):
        return f"Rng({self._seed}, position={self.position})"

    @property
    def seed(self):
        """The seed this generator was made from."""
        return self._seed

    @property
    def backend(self):
        """The keystream backend, "numpy" or "python"."""
        return self._backend

    @property
    def position(self):
        """Number of 32-bit words drawn so far."""
        return self._base + self._i

    @property
    def chunk_base(self):
        """The position where the current chunk of the keystream starts (for tests)."""
        return self._base

    def copy(self):
        """An independent generator in the same state (it draws what this one would)."""
        twin: Rng = Rng.__new__(Rng)
        twin._seed = self._seed
        twin._backend = self._backend
        twin._key = self._key
        twin._ctr = self._ctr
        twin._nblocks = self._nblocks
        twin._arr = self._arr
        twin._base = self._base
        twin._n = self._n
        twin._i = self._i
        twin._f = self._f
        twin._fl = self._fl
        twin._w = self._w
        twin._wn = self._wn
        return twin

    def __copy__(self):
        return self.copy()

    # -- chunk management (slow paths) ----------------------------------------------

    @cython.cfunc
    @cython.locals(nb=cython.Py_ssize_t, n=cython.Py_ssize_t, first=cython.bint,
                   lazy=cython.bint)
    def _refill(self):
        """Start the next chunk; the position becomes its word 0.

        A stream's first chunk is 4 blocks of the scalar keystream. The numpy keystream then
        takes chunks of _NP_FIRST blocks, doubling up to _NP_MAX (numpy's cost per chunk is
        about half a millisecond whatever its size); so does the scalar keystream when
        compiled, up to _C_MAX (its cost per chunk is the buffers'), while interpreted it
        stays at 4 blocks (a pure-Python block costs the same in any chunk, and a stream may
        draw a handful of numbers only)."""
        first = self._n == 0
        self._base += self._n
        nb = _PY_BLOCKS
        if not first and (self._backend == "numpy" or not _LISTS):
            nb = self._nblocks
            if nb < (_NP_MAX if self._backend == "numpy" else _C_MAX):
                self._nblocks = nb * 2
        n = 16 * nb
        lazy = False
        if self._backend == "numpy" and not first:
            arr = self._arr = _np_words(self._key, self._ctr, nb)
            lazy = _LISTS
            if lazy:    # numpy converts the even pairs; the odd ones wait for _ints()
                self._f = f = _f64_buffer(n)
                f[0::2] = _np_pairs(arr, 0)
                self._w = None
            else:       # compiled: the words are read in place
                self._w = arr
        else:
            self._arr = None
            self._w = _py_words(self._key, self._ctr, nb)
        if _LISTS:
            if not lazy:
                self._f = f = _f64_buffer(n)
                _fill_pairs(self._w, f, 0, n)
                _fill_pairs(self._w, f, 1, n)
            self._fl = n - 1
        # compiled, no uniform is made ahead: random_f64 converts the pair it draws
        self._wn = 0 if lazy else n
        self._ctr = (self._ctr + nb) & M64
        self._n = n
        self._i = 0

    @cython.cfunc
    def _ints(self) -> cython.uint[::1]:
        """The chunk's words, read out of the numpy array (with the odd entries of _f
        filled) on first use."""
        w = self._w
        if w is None:
            w = self._w = self._arr.tolist()
            self._f[1:self._n - 1:2] = _np_pairs(self._arr, 1)
            self._wn = self._n
        return w

    @cython.cfunc
    @cython.exceptval(-1.0, check=True)
    @cython.locals(i=cython.Py_ssize_t, lo=cython.ulonglong)
    def _f64_slow(self) -> cython.double:
        i = self._i
        if i >= self._n:                 # chunk used up: the pair starts the next one
            self._refill()
            return self.random_f64()
        # one word left (i == n - 1): it is the low half; the high half starts the next chunk
        lo = self._ints()[i]
        self._refill()
        self._i = 1
        return _unit(lo, self._ints()[0])

    @cython.cfunc
    @cython.locals(i=cython.Py_ssize_t)
    def _u32_slow(self) -> cython.uint:
        if self._i >= self._n:
            self._refill()
        i = self._i
        self._i = i + 1
        return self._ints()[i]

    @cython.cfunc
    @cython.locals(i=cython.Py_ssize_t, lo=cython.ulonglong, hi=cython.ulonglong)
    def _u64_slow(self) -> cython.ulonglong:
        i = self._i
        if i >= self._n:
            self._refill()
            w = self._ints()
            self._i = 2
            hi = w[1]
            return hi << 32 | w[0]
        w = self._ints()
        if i + 1 < self._n:
            self._i = i + 2
            hi = w[i + 1]
            return hi << 32 | w[i]
        lo = w[i]                        # one word left: the low half
        self._refill()
        self._i = 1
        hi = self._ints()[0]
        return hi << 32 | lo

    # -- draws ------------------------------------------------------------------------

    @cython.ccall
    @cython.exceptval(-1.0, check=True)
    @cython.boundscheck(False)       # (i < _fl = len(_f) - 1, i < _wn - 1 = len(_w) - 1)
    @cython.wraparound(False)
    @cython.initializedcheck(False)  # (_f and _w are set when _fl, _wn are not 0)
    @cython.locals(i=cython.Py_ssize_t)
    def random_f64(self) -> cython.double:
        """rand's `random::<f64>()`: (next_u64 >> 11) * 2^-53, in [0, 1)."""
        i = self._i
        if i < self._fl:                 # interpreted: the chunk's uniforms
            self._i = i + 2
            return self._f[i]
        if i < self._wn - 1:             # compiled: the pair's uniform, made now
            self._i = i + 2
            return _unit(self._w[i], self._w[i + 1])
        return self._f64_slow()

    @cython.ccall
    @cython.locals(i=cython.Py_ssize_t)
    def next_u32(self) -> cython.uint:
        i = self._i
        if i < self._wn:
            self._i = i + 1
            return self._w[i]
        return self._u32_slow()

    @cython.ccall
    @cython.locals(i=cython.Py_ssize_t, hi=cython.ulonglong)
    def next_u64(self) -> cython.ulonglong:
        i = self._i
        if i < self._wn - 1:
            self._i = i + 2
            w = self._w
            hi = w[i + 1]
            return hi << 32 | w[i]
        return self._u64_slow()

    def range_u32(self, low, high):
        """rand 0.9 `random_range(low..=high)` over u32 (also usize ranges below 2^32)."""
        low = _u32(low, "low")
        high = _u32(high, "high")
        if low > high:
            raise ValueError(_EMPTY)
        return _canon(self.next_u32, low, (high - low + 1) & M32, 32)

    def range_u64(self, low, high):
        """rand 0.9 `random_range(low..=high)` over u64."""
        low = _u64(low, "low")
        high = _u64(high, "high")
        if low > high:
            raise ValueError(_EMPTY)
        return _canon(self.next_u64, low, (high - low + 1) & M64, 64)

    def range_f64(self, low, high):
        """rand 0.9 `random_range(low..=high)` over f64.

        ValueError (no draw) unless low <= high and high - low is finite; otherwise one
        next_u64: `((x >> 12) * 2^-52) * (high - low) + low` (two roundings, no fma).
        """
        low = _f64(low, "low")
        high = _f64(high, "high")
        if not low <= high:
            raise ValueError(_EMPTY)
        scale = high - low
        if not math.isfinite(scale):
            raise ValueError(_EMPTY)
        return ((self.next_u64() >> 12) * _F52) * scale + low


def _canon(draw, low, span, bits):
    """rand 0.9's single-sample integer range: widening multiply, one extra draw when the
    low half could carry ("canon" method, biased by at most 2^-bits). `span` = high-low+1
    mod 2^bits; 0 means the full range, which is a plain draw."""
    if span == 0:
        return draw()
    mask = (1 << bits) - 1
    m = draw() * span
    hi = m >> bits
    lo = m & mask
    if lo > (-span) & mask:
        if lo + ((draw() * span) >> bits) > mask:
            hi += 1
    return (low + hi) & mask


# --------------------------------------------------------------------------- samplers

# The samplers take their arguments as f64s (C doubles when compiled: an int argument is
# converted first) and the generator as an Rng.
_INF = math.inf
_NAN = math.nan


@cython.ccall
def _ieee_div(a: cython.double, b: cython.double) -> cython.double:
    """a / b with IEEE semantics for b == 0 (Python raises ZeroDivisionError)."""
    try:
        return a / b
    except ZeroDivisionError:
        if a != a or a == 0.0:
            return _NAN
        return math.copysign(_INF, a) * math.copysign(1.0, b)


@cython.ccall
@cython.exceptval(-1.0, check=True)
def sample_exp(rng: Rng, mean: cython.double) -> cython.double:
    """`~exp(mean)`: (-mean) * ln(1 - u); one draw (a NaN mean comes out with its sign
    bit flipped, as in pyserq)."""
    return -mean * _log(1.0 - rng.random_f64())


def sample_det(x):
    """`~det(x)`: x; no draw."""
    return x


@cython.ccall
@cython.exceptval(-1.0, check=True)
def sample_uniform(rng: Rng, a: cython.double, b: cython.double) -> cython.double:
    """`~uniform(a, b)`: a + (b - a) * u; one draw. The sum is `arith.add`: of two NaN
    operands (`~uniform(0/0, -(0/0))`) the reference keeps the first, which neither
    CPython's `+` nor C's (a C compiler may swap the operands of a sum) promises."""
    return _add(a, (b - a) * rng.random_f64())


@cython.ccall
@cython.exceptval(check=False)
def erlang_k(k: cython.double) -> cython.ulonglong:
    """The number of phases of `~erlang(k, m)`: Rust `k.max(1.0) as u32` (NaN and k < 1
    give 1, a fraction is truncated, k >= 2^32 - 1 saturates to 4294967295). The
    interpreter should refuse absurd values before drawing that many numbers."""
    k = float(k)
    if not k > 1.0:                      # also NaN: f64::max ignores a NaN
        return 1
    if k >= 4294967295.0:
        return 4294967295
    return int(k)


@cython.ccall
@cython.exceptval(-1.0, check=True)
@cython.locals(kk=cython.ulonglong, j=cython.ulonglong, mm=cython.double, s=cython.double)
def sample_erlang(rng: Rng, k: cython.double, m: cython.double) -> cython.double:
    """`~erlang(k, m)`: with k' = erlang_k(k) and mm = m / k', the sum of k' terms
    mm * -ln(1 - u), left to right, starting from -0.0; k' draws.

    Checked on pyserq: `~erlang(1, -0)` gives -0.0 (so the sum starts at -0.0, as Rust's
    f64 Sum does, not at 0.0), and a NaN mean keeps its sign bit (`~erlang(2, 0/0)` is the
    negative NaN), so the term negates the logarithm, not the mean as `~exp` does (the
    two agree on every other value)."""
    kk = erlang_k(k)
    mm = m / kk
    s = -0.0
    for j in range(kk):
        s += mm * -_log(1.0 - rng.random_f64())
    return s


@cython.ccall
@cython.exceptval(-1.0, check=True)
@cython.locals(c=cython.double, p=cython.double, phase=cython.double)
def sample_h2(rng: Rng, m: cython.double, c2: cython.double) -> cython.double:
    """`~h2(m, c2)`: c = max(c2, 1) (a NaN gives 1); p = 0.5 * (1 + sqrt((c-1)/(c+1)));
    the first draw u < p picks the phase mean m/(2p), else m/(2(1-p)); the second draw
    is the exponential -phase * ln(1 - u2). Two draws."""
    c = c2 if c2 > 1.0 else 1.0
    p = 0.5 * (1.0 + _sqrt((c - 1.0) / (c + 1.0)))
    if rng.random_f64() < p:
        phase = m / (2.0 * p)            # p >= 0.5 (or NaN): never a zero divisor
    else:
        phase = _ieee_div(m, 2.0 * (1.0 - p))
    return -phase * _log(1.0 - rng.random_f64())


@cython.ccall
@cython.exceptval(-1.0, check=True)
def sample_bernoulli(rng: Rng, p: cython.double) -> cython.double:
    """`~bernoulli(p)`: 1.0 if u < p else 0.0; one draw."""
    return 1.0 if rng.random_f64() < p else 0.0


@cython.ccall
@cython.exceptval(-1.0, check=True)
@cython.locals(x=cython.double)
def poisson_gap(rng: Rng, rate: cython.double) -> cython.double:
    """Gap of a Poisson arrival stream: -ln(1 - u) / rate (divides by the rate); one draw."""
    x = -_log(1.0 - rng.random_f64())
    if rate == 0.0:          # (a test, not a try: Cython's try saves the exception state)
        return _ieee_div(x, rate)
    return x / rate


def trace_pick(rng: Rng, n):
    """rand 0.9 `random_range(0..n)` over usize: the index of a trace session among n.
    rand samples a range below 2^32 as u32 (range_u32(0, n - 1)); larger n take the u64
    method (not reachable from a real trace, and not checked against pyserq)."""
    n = operator.index(n)
    if n <= 0:
        raise ValueError(_EMPTY)
    if n - 1 <= M32:
        return _canon(rng.next_u32, 0, n & M32, 32)
    return rng.range_u64(0, n - 1)


_BY_KIND = {
    "Exp": lambda rng, a: sample_exp(rng, a[0]),
    "Det": lambda rng, a: a[0],
    "Uniform": lambda rng, a: sample_uniform(rng, a[0], a[1]),
    "Erlang": lambda rng, a: sample_erlang(rng, a[0], a[1]),
    "H2": lambda rng, a: sample_h2(rng, a[0], a[1]),
    "Bernoulli": lambda rng, a: sample_bernoulli(rng, a[0]),
}


def sample(rng, kind, args):
    """Draw from the IR distribution `kind` ("Exp", "Det", "Uniform", "Erlang", "H2",
    "Bernoulli") with its evaluated arguments `args` (a sequence of floats)."""
    try:
        f = _BY_KIND[kind]
    except KeyError:
        raise ValueError(f"unknown distribution kind {kind!r}") from None
    return f(rng, args)
