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
"""
import math
import operator
import sys

from serq.ir import arith

try:  # numpy is a dependency, but the module stays exact (and slower) without it
    import numpy as _np
except ImportError:  # pragma: no cover - exercised by forcing the fallback in tests
    _np = None

__all__ = [
    "Rng", "STREAM_XOR", "stream_seed", "HAVE_NUMPY", "USE_NUMPY",
    "sample", "sample_exp", "sample_det", "sample_uniform", "sample_erlang", "erlang_k",
    "sample_h2", "sample_bernoulli", "poisson_gap", "trace_pick",
]

M32 = 0xFFFFFFFF
M64 = (1 << 64) - 1
_F53 = 1.0 / (1 << 53)

HAVE_NUMPY = _np is not None
# Backend used by `Rng(seed)` when no `backend=` is given: numpy when it is importable.
# Set to False to force the pure-Python keystream (identical output, slower).
USE_NUMPY = HAVE_NUMPY

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

def _key_words(seed):
    """rand_core `seed_from_u64`: fill the 32-byte key with PCG32 outputs (8 words)."""
    state = seed
    words = []
    for _ in range(8):
        state = (state * 6364136223846793005 + 11634580027462260723) & M64
        xs = (((state >> 18) ^ state) >> 27) & M32
        rot = state >> 59
        words.append(((xs >> rot) | (xs << ((32 - rot) & 31))) & M32)
    return words


_CONST = (0x61707865, 0x3320646E, 0x79622D32, 0x6B206574)   # "expand 32-byte k"
# the 8 quarter rounds of a ChaCha double round (columns, then diagonals)
_QR = ((0, 4, 8, 12), (1, 5, 9, 13), (2, 6, 10, 14), (3, 7, 11, 15),
       (0, 5, 10, 15), (1, 6, 11, 12), (2, 7, 8, 13), (3, 4, 9, 14))


# --------------------------------------------------------------------------- pure-Python keystream

def _py_block(key, counter):
    """One ChaCha12 block (16 words) for the 64-bit block `counter` (the quarter rounds
    of _QR, unrolled on local variables)."""
    M = M32
    i0, i1, i2, i3 = _CONST
    i4, i5, i6, i7, i8, i9, i10, i11 = key
    i12, i13 = counter & M, (counter >> 32) & M
    x0, x1, x2, x3, x4, x5, x6, x7 = i0, i1, i2, i3, i4, i5, i6, i7
    x8, x9, x10, x11, x12, x13, x14, x15 = i8, i9, i10, i11, i12, i13, 0, 0
    for _ in range(6):  # 12 rounds = 6 double rounds
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

    return [(x0 + i0) & M, (x1 + i1) & M, (x2 + i2) & M, (x3 + i3) & M,
            (x4 + i4) & M, (x5 + i5) & M, (x6 + i6) & M, (x7 + i7) & M,
            (x8 + i8) & M, (x9 + i9) & M, (x10 + i10) & M, (x11 + i11) & M,
            (x12 + i12) & M, (x13 + i13) & M, x14, x15]


def _py_words(key, counter, nblocks):
    out = []
    for k in range(nblocks):
        out += _py_block(key, (counter + k) & M64)
    return out


def _py_pairs(words, start):
    """Uniform f64s of the word pairs (start, start+1), (start+2, start+3), ... of `words`."""
    w = words
    return [((w[k + 1] << 32 | w[k]) >> 11) * _F53 for k in range(start, len(w) - 1, 2)]


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
    for _ in range(6):
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


# Chunk sizes (in blocks). numpy costs about half a millisecond per chunk whatever its
# size, so the first chunk of a stream (a stream may draw a handful of numbers only) is 4
# blocks in pure Python (about 0.15 ms); the numpy chunks that follow start at 64 blocks
# and double up to 4096 (65536 words, about 30 ns a word). The pure-Python backend uses
# 4-block chunks throughout.
_PY_BLOCKS = 4
_NP_FIRST, _NP_MAX = 64, 4096


class Rng:
    """rand 0.9 `StdRng::seed_from_u64(seed)` (ChaCha12), bit for bit as pyserq 0.1.2's `Rng`.

    `seed` is an integer in 0..2^64-1 (ValueError otherwise; TypeError for a non-integer).
    `backend` is "numpy" or "python" (default: numpy when importable and USE_NUMPY is set);
    both give identical outputs.

    Draw with `random_f64()` (fastest; bind it: `u = rng.random_f64`), `next_u32()`,
    `next_u64()`, `range_f64(low, high)`, `range_u32(low, high)`, `range_u64(low, high)`.
    `position` is the number of 32-bit words drawn so far.
    """

    __slots__ = ("seed", "backend", "_key", "_ctr", "_nblocks", "_arr", "_base", "_n",
                 "_i", "_f", "_fl", "_w", "_wn")

    def __init__(self, seed, backend=None):
        self.seed = _u64(seed, "seed")
        if backend is None:
            backend = "numpy" if (USE_NUMPY and HAVE_NUMPY) else "python"
        if backend not in ("numpy", "python"):
            raise ValueError(f"backend must be 'numpy' or 'python', got {backend!r}")
        if backend == "numpy" and not HAVE_NUMPY:
            raise ValueError("backend 'numpy' asked for but numpy is not importable")
        self.backend = backend
        self._key = _key_words(self.seed)
        self._ctr = 0          # counter of the next block to generate
        self._nblocks = _NP_FIRST      # size of the next numpy chunk
        # The current chunk holds the stream's words _base .. _base + _n - 1; _i is the
        # position in it. _f[i] is the uniform of the word pair (i, i+1), valid for i < _fl
        # = _n - 1; the entries at odd i are filled only once the position has been odd
        # in this chunk (only next_u32 makes it odd). _w is the chunk's words as ints and
        # _wn its length, 0 while the list is not built (or the odd entries of _f are not
        # filled), which sends the integer reads to their slow path. An empty chunk
        # starts the stream.
        self._arr = None
        self._base = 0
        self._n = 0
        self._i = 0
        self._f = ()
        self._fl = 0
        self._w = None
        self._wn = 0

    def __repr__(self):
        return f"Rng({self.seed}, position={self.position})"

    def copy(self):
        """An independent generator in the same state (it draws what this one would)."""
        twin = Rng.__new__(Rng)
        for name in Rng.__slots__:       # the lists are shared: never changed in place,
            setattr(twin, name, getattr(self, name))   # but for filling identical values
        return twin

    __copy__ = copy

    @property
    def position(self):
        """Number of 32-bit words drawn so far."""
        return self._base + self._i

    # -- chunk management (slow paths) ----------------------------------------------

    def _refill(self):
        """Start the next chunk; the position becomes its word 0."""
        self._base += self._n
        if self.backend == "numpy" and self._n:
            nb = self._nblocks
            arr = self._arr = _np_words(self._key, self._ctr, nb)
            n = 16 * nb
            f = [0.0] * n
            f[0::2] = _np_pairs(arr, 0)      # odd entries: filled by _ints() when needed
            self._w = None
            self._wn = 0
            if nb < _NP_MAX:
                self._nblocks = nb * 2
        else:
            nb = _PY_BLOCKS
            w = self._arr = self._w = _py_words(self._key, self._ctr, nb)
            n = 16 * nb
            f = [0.0] * n
            f[0::2] = _py_pairs(w, 0)
            f[1:n - 1:2] = _py_pairs(w, 1)
            self._wn = n
        self._ctr = (self._ctr + nb) & M64
        self._n = n
        self._f = f
        self._fl = n - 1
        self._i = 0

    def _ints(self):
        """Build the chunk's word list and the odd entries of _f; returns the list."""
        w = self._w
        if w is None:
            w = self._w = self._arr.tolist()
            self._f[1:self._n - 1:2] = _np_pairs(self._arr, 1)
            self._wn = self._n
        return w

    def _f64_slow(self):
        i = self._i
        if i >= self._n:                 # chunk used up: the pair starts the next one
            self._refill()
            self._i = 2
            return self._f[0]
        # one word left (i == n - 1): it is the low half; the high half starts the next chunk
        lo = self._ints()[i]
        self._refill()
        self._i = 1
        return ((self._ints()[0] << 32 | lo) >> 11) * _F53

    def _u32_slow(self):
        if self._i >= self._n:
            self._refill()
        i = self._i
        self._i = i + 1
        return self._ints()[i]

    def _u64_slow(self):
        i = self._i
        if i >= self._n:
            self._refill()
            w = self._ints()
            self._i = 2
            return w[1] << 32 | w[0]
        w = self._ints()
        if i + 1 < self._n:
            self._i = i + 2
            return w[i + 1] << 32 | w[i]
        lo = w[i]                        # one word left: the low half
        self._refill()
        self._i = 1
        return self._ints()[0] << 32 | lo

    # -- draws ------------------------------------------------------------------------

    def random_f64(self):
        """rand's `random::<f64>()`: (next_u64 >> 11) * 2^-53, in [0, 1)."""
        i = self._i
        if i < self._fl:
            self._i = i + 2
            return self._f[i]
        return self._f64_slow()

    def next_u32(self):
        i = self._i
        if i < self._wn:
            self._i = i + 1
            return self._w[i]
        return self._u32_slow()

    def next_u64(self):
        i = self._i
        if i < self._wn - 1:
            self._i = i + 2
            w = self._w
            return w[i + 1] << 32 | w[i]
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
        return ((self.next_u64() >> 12) * (1.0 / (1 << 52))) * scale + low


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

_log = math.log
_sqrt = math.sqrt
_INF = math.inf
_NAN = math.nan


def _ieee_div(a, b):
    """a / b with IEEE semantics for b == 0 (Python raises ZeroDivisionError)."""
    try:
        return a / b
    except ZeroDivisionError:
        if a != a or a == 0.0:
            return _NAN
        return math.copysign(_INF, a) * math.copysign(1.0, b)


def sample_exp(rng, mean):
    """`~exp(mean)`: (-mean) * ln(1 - u); one draw (a NaN mean comes out with its sign
    bit flipped, as in pyserq)."""
    return -mean * _log(1.0 - rng.random_f64())


def sample_det(x):
    """`~det(x)`: x; no draw."""
    return x


def sample_uniform(rng, a, b):
    """`~uniform(a, b)`: a + (b - a) * u; one draw. The sum is ``arith.add``: of two NaNs
    (``a`` and ``b - a``) the reference keeps ``a``, and C's ``+`` may keep either (CPython's
    and Cython's compiled additions differ there)."""
    return arith.add(a, (b - a) * rng.random_f64())


def erlang_k(k):
    """The number of phases of `~erlang(k, m)`: Rust `k.max(1.0) as u32` (NaN and k < 1
    give 1, a fraction is truncated, k >= 2^32 - 1 saturates to 4294967295). The
    interpreter should refuse absurd values before drawing that many numbers."""
    k = float(k)
    if not k > 1.0:                      # also NaN: f64::max ignores a NaN
        return 1
    if k >= 4294967295.0:
        return 4294967295
    return int(k)


def sample_erlang(rng, k, m):
    """`~erlang(k, m)`: with k' = erlang_k(k) and mm = m / k', the sum of k' terms
    mm * -ln(1 - u), left to right, starting from -0.0; k' draws.

    Checked on pyserq: `~erlang(1, -0)` gives -0.0 (so the sum starts at -0.0, as Rust's
    f64 Sum does, not at 0.0), and a NaN mean keeps its sign bit (`~erlang(2, 0/0)` is the
    negative NaN), so the term negates the logarithm, not the mean as `~exp` does (the
    two agree on every other value)."""
    kk = erlang_k(k)
    mm = m / kk
    u = rng.random_f64
    s = -0.0
    for _ in range(kk):
        s += mm * -_log(1.0 - u())
    return s


def sample_h2(rng, m, c2):
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


def sample_bernoulli(rng, p):
    """`~bernoulli(p)`: 1.0 if u < p else 0.0; one draw."""
    return 1.0 if rng.random_f64() < p else 0.0


def poisson_gap(rng, rate):
    """Gap of a Poisson arrival stream: -ln(1 - u) / rate (divides by the rate); one draw."""
    x = -_log(1.0 - rng.random_f64())
    try:
        return x / rate
    except ZeroDivisionError:
        return _ieee_div(x, rate)


def trace_pick(rng, n):
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
