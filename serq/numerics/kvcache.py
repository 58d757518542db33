"""A paged KV cache with block hashing (batch-invariance.md §4.4).

KV lives in fixed blocks of ``block`` positions in one pool (all layers of a block together);
a request's cache is a block table. New blocks are poisoned with NaN, so a kernel that reads
an unwritten slot without masking it shows up at once (§4.8 B10). When a block is full it is
*sealed*: it gets a prefix key (a hash chain over the token ids up to its end) and a content
fingerprint (sha256 of its bytes). Under invariant kernels the fingerprint is a function of
the prefix key whoever produced the block — chunked prefill, decode, recompute, prefix reuse —
which is what makes content-addressed prefix caching bitwise sound; ``FingerprintLog`` checks
it. ``PrefixCache`` maps prefix keys to sealed blocks (shared, reference counted).
"""
from __future__ import annotations

import hashlib

import numpy as np

from serq.numerics import fp


class KVPool:
    def __init__(self, layers, block, heads, head_dim, capacity=64):
        self.shape = (layers, block, heads, head_dim)
        self.block = block
        self.k = np.full((capacity,) + self.shape, np.nan, dtype=np.float32)
        self.v = np.full((capacity,) + self.shape, np.nan, dtype=np.float32)
        self.refs = np.zeros(capacity, dtype=np.int64)
        self.free = list(range(capacity - 1, -1, -1))

    def alloc(self) -> int:
        if not self.free:
            old = len(self.refs)
            grow = np.full((old,) + self.shape, np.nan, dtype=np.float32)
            self.k = np.concatenate([self.k, grow])
            self.v = np.concatenate([self.v, grow.copy()])
            self.refs = np.concatenate([self.refs, np.zeros(old, dtype=np.int64)])
            self.free = list(range(2 * old - 1, old - 1, -1))
        b = self.free.pop()
        self.k[b] = np.nan
        self.v[b] = np.nan
        self.refs[b] = 1
        return b

    def retain(self, b):
        self.refs[b] += 1

    def release(self, b):
        self.refs[b] -= 1
        if self.refs[b] == 0:
            self.free.append(b)

    def fingerprint(self, b) -> str:
        return fp.fingerprint(self.k[b], self.v[b])


def chain_key(prev: str, tokens) -> str:
    h = hashlib.sha256(prev.encode())
    h.update(np.asarray(tokens, dtype=np.int32).tobytes())
    return h.hexdigest()[:16]


class FingerprintLog:
    """prefix key -> {fingerprint: first producer}: one fingerprint per key when consistent."""

    def __init__(self):
        self.by_key = {}

    def record(self, key, fingerprint, producer):
        self.by_key.setdefault(key, {}).setdefault(fingerprint, producer)

    def conflicts(self):
        return {k: v for k, v in self.by_key.items() if len(v) > 1}


class PrefixCache:
    """Sealed blocks by prefix key (automatic prefix caching, content addressed)."""

    def __init__(self, pool):
        self.pool = pool
        self.blocks = {}

    def offer(self, key, b):
        if key not in self.blocks:
            self.pool.retain(b)
            self.blocks[key] = b

    def get(self, key):
        return self.blocks.get(key)


class SeqKV:
    """One request's block table over ``tokens`` (the request's known token ids, shared list)."""

    def __init__(self, pool, tokens, producer="", log=None, prefix=None):
        self.pool, self.tokens, self.producer = pool, tokens, producer
        self.log, self.prefix = log, prefix
        self.table = []
        self.keys = [""]          # keys[j + 1]: prefix key of block j
        self.sealed = 0           # blocks sealed (fingerprinted) so far

    @property
    def capacity(self):
        return len(self.table) * self.pool.block

    def key(self, j):
        while len(self.keys) <= j + 1:
            i = len(self.keys) - 1
            bs = self.pool.block
            self.keys.append(chain_key(self.keys[-1], self.tokens[i * bs:(i + 1) * bs]))
        return self.keys[j + 1]

    def attach_prefix(self, n_tokens) -> int:
        """Reuse cached full blocks for the first ``n_tokens`` positions (a prefix hit);
        returns the positions actually found (whole blocks, stopping at the first miss)."""
        got = 0
        for j in range(n_tokens // self.pool.block):
            b = self.prefix.get(self.key(j)) if self.prefix is not None else None
            if b is None:
                break
            self.pool.retain(b)
            self.table.append(b)
            self.sealed = j + 1
            got += self.pool.block
        return got

    def reserve(self, length):
        while self.capacity < length:
            self.table.append(self.pool.alloc())

    def write(self, layer, start, k, v):
        n = k.shape[0]
        self.reserve(start + n)
        pos = np.arange(start, start + n)
        blocks = np.asarray(self.table, dtype=np.intp)[pos // self.pool.block]
        self.pool.k[blocks, layer, pos % self.pool.block] = k
        self.pool.v[blocks, layer, pos % self.pool.block] = v

    def read(self, layer, length):
        nb = -(-length // self.pool.block)
        ids = np.asarray(self.table[:nb], dtype=np.intp)
        shape = (-1,) + self.pool.shape[2:]
        return self.pool.k[ids, layer].reshape(shape), self.pool.v[ids, layer].reshape(shape)

    def seal(self, length):
        """Fingerprint every block that ``length`` written positions fill."""
        full = length // self.pool.block
        for j in range(self.sealed, full):
            b, key = self.table[j], self.key(j)
            if self.log is not None:
                self.log.record(key, self.pool.fingerprint(b), self.producer)
            if self.prefix is not None:
                self.prefix.offer(key, b)
        self.sealed = max(self.sealed, full)

    def truncate(self, length):
        """Forget positions ``>= length`` (their slots become garbage to be overwritten)."""
        self.sealed = min(self.sealed, length // self.pool.block)
        del self.keys[self.sealed + 1:]

    def fingerprints(self, length):
        return [self.pool.fingerprint(self.table[j]) for j in range(length // self.pool.block)]

    def clone(self, producer):
        """A copy sharing sealed blocks and copying the partial tail (DVR rollback)."""
        other = SeqKV(self.pool, self.tokens, producer, self.log, self.prefix)
        for j, b in enumerate(self.table):
            if j < self.sealed:
                self.pool.retain(b)
                other.table.append(b)
            else:
                nb = self.pool.alloc()
                self.pool.k[nb] = self.pool.k[b]
                self.pool.v[nb] = self.pool.v[b]
                other.table.append(nb)
        other.keys = list(self.keys)
        other.sealed = self.sealed
        return other

    def free(self):
        for b in self.table:
            self.pool.release(b)
        self.table = []
        self.sealed = 0
        del self.keys[1:]
