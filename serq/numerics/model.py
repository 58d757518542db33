"""A tiny seeded causal LM (batch-invariance.md §4.4): no downloads, weights from
``np.random.default_rng(seed)`` scaled by 1/√fan_in and bf16-rounded.

A step takes slices ``(cache, token_ids, start)`` and flattens all their tokens into one
(T, d) matrix, as vLLM does, so every matmul sees M = T — the quantity batch-dependent kernels
key on. Per layer: RMSNorm → QKV → write K/V to the paged cache → attention per slice →
O-proj + residual → RMSNorm → SiLU MLP + residual; then a final norm and the head (fp32
logits) on each slice's last token, or on every token (verification). Every reduction is a
kernel call; the model itself only does elementwise work (a lint test checks this file too).
Positions are sinusoidal, computed from the position alone (§4.3 rule 5), so any length works.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from serq.numerics import fp
from serq.numerics.kernels.base import StepInfo
from serq.numerics.kvcache import FingerprintLog, KVPool, PrefixCache, SeqKV


@dataclass(frozen=True)
class TinyConfig:
    vocab: int = 512
    d: int = 64
    heads: int = 4
    layers: int = 2
    ffn: int = 128
    block: int = 16          # KV block size (tokens)
    bf16: bool = True        # bf16-rounded activations and weights, fp32 accumulation
    seed: int = 0
    eps: float = 1e-5

    @property
    def head_dim(self):
        return self.d // self.heads


def _init(rng, shape, fan_in, bf16):
    w = (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)
    return fp.bf16_round(w) if bf16 else w


class TinyCausalLM:
    def __init__(self, cfg: TinyConfig = TinyConfig()):
        self.cfg = cfg
        rng = np.random.default_rng(cfg.seed)
        d, f, bf = cfg.d, cfg.ffn, cfg.bf16
        self.embed = _init(rng, (cfg.vocab, d), 1.0, bf)
        self.layers = []
        for _ in range(cfg.layers):
            self.layers.append(dict(
                g1=np.ones(d, dtype=np.float32), wqkv=_init(rng, (d, 3 * d), d, bf),
                wo=_init(rng, (d, d), d, bf), g2=np.ones(d, dtype=np.float32),
                w1=_init(rng, (d, f), d, bf), w2=_init(rng, (f, d), f, bf)))
        self.gf = np.ones(d, dtype=np.float32)
        self.head = _init(rng, (d, cfg.vocab), d, bf)
        self.inv_freq = (1.0 / (10000.0 ** (np.arange(0, d, 2) / d))).astype(np.float32)
        self.q_scale = np.float32(1.0 / np.sqrt(cfg.head_dim))

    # -- caches -------------------------------------------------------------------------------
    def new_pool(self):
        c = self.cfg
        return KVPool(c.layers, c.block, c.heads, c.head_dim)

    def new_cache(self, pool, tokens, producer="", log: FingerprintLog | None = None,
                  prefix: PrefixCache | None = None) -> SeqKV:
        return SeqKV(pool, tokens, producer, log, prefix)

    # -- forward ------------------------------------------------------------------------------
    def _round(self, x):
        return fp.bf16_round(x) if self.cfg.bf16 else x

    def positions(self, pos):
        ang = pos.astype(np.float32)[:, None] * self.inv_freq[None, :]
        out = np.empty((len(pos), self.cfg.d), dtype=np.float32)
        out[:, 0::2] = np.sin(ang)
        out[:, 1::2] = np.cos(ang)
        return out * np.float32(0.1)

    def forward(self, slices, kernels, step: StepInfo | None = None, all_logits=False):
        """slices: [(SeqKV, token ids, start)]. Returns one fp32 logits array per slice:
        (V,) for its last token, or (n, V) with ``all_logits``."""
        c = self.cfg
        sizes = [len(t) for _, t, _ in slices]
        offsets = [0, *itertools.accumulate(sizes)]
        if step is None:
            step = StepInfo(offsets[-1], len(slices), sizes.count(1))
        toks = np.concatenate([np.asarray(t, dtype=np.int64) for _, t, _ in slices])
        pos = np.concatenate([np.arange(s, s + n) for (_, _, s), n in zip(slices, sizes)])
        x = self._round(self.embed[toks] + self.positions(pos))
        for li, L in enumerate(self.layers):
            h = self._round(kernels.rmsnorm(x, L["g1"], c.eps, step))
            qkv = self._round(kernels.matmul(h, L["wqkv"], step))
            shape = (-1, c.heads, c.head_dim)
            q = qkv[:, :c.d].reshape(shape) * self.q_scale
            k = qkv[:, c.d:2 * c.d].reshape(shape)
            v = qkv[:, 2 * c.d:].reshape(shape)
            items = []
            for i, (cache, _, start) in enumerate(slices):
                a, b = offsets[i], offsets[i + 1]
                cache.write(li, start, k[a:b], v[a:b])
                kc, vc = cache.read(li, start + sizes[i])
                items.append((q[a:b], kc, vc, start))
            att = np.concatenate(kernels.attention_many(items, step))
            att = self._round(att.reshape(len(toks), c.d))
            x = self._round(x + self._round(kernels.matmul(att, L["wo"], step)))
            h = self._round(kernels.rmsnorm(x, L["g2"], c.eps, step))
            u = self._round(kernels.matmul(h, L["w1"], step))
            act = self._round(u / (np.float32(1.0) + np.exp(-u)))
            x = self._round(x + self._round(kernels.matmul(act, L["w2"], step)))
        for (cache, _, start), n in zip(slices, sizes):
            cache.seal(start + n)
        rows = np.arange(len(toks)) if all_logits else np.array(offsets[1:]) - 1
        hf = self._round(kernels.rmsnorm(x[rows], self.gf, c.eps, step))
        logits = kernels.matmul(hf, self.head, step)
        fp.require_f32("model logits", logits)
        if all_logits:
            return [logits[offsets[i]:offsets[i + 1]] for i in range(len(slices))]
        return [logits[i] for i in range(len(slices))]


def prompt_tokens(rid, length, vocab, seed=0):
    """Seeded synthetic prompt ids for request ``rid`` (a function of (seed, rid) only)."""
    import zlib
    rng = np.random.default_rng([seed, zlib.crc32(str(rid).encode())])
    return [int(t) for t in rng.integers(0, vocab, size=length)]
