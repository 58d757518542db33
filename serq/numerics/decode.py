"""Greedy decoding with margin certificates and drift bounds (batch-invariance.md §1.5, §4.5),
and seeded sampling (§4.3 rule 7).

``MarginCert`` is the Lean ``GreedyMarginCert`` evaluated on data: if the logits move by at
most ε everywhere (``LinfClose``) and the winner leads by more than 2ε (``HasMargin``), the
winner cannot change (``winner_stable_of_margin``). The checker's margin audit looks for a
step where ``robust_against(ε)`` holds and the token changed anyway — a bug, never numerics.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from serq.numerics import fp


@dataclass(frozen=True)
class MarginCert:
    token: int
    runner_up: int
    margin: float          # top1 - top2, exact (float64 difference of two float32)

    def robust_against(self, eps: float) -> bool:
        """Lean: ``2 * eps < margin``."""
        return 2.0 * eps < self.margin


def greedy(logits):
    """(token, MarginCert): argmax with the lowest index on ties (``StrictArgmaxSound``)."""
    fp.require_f32("greedy", logits)
    best = int(np.argmax(logits))
    rest = np.where(np.arange(logits.shape[0]) == best, np.float32(-np.inf), logits)
    second = int(np.argmax(rest))
    return best, MarginCert(best, second, float(logits[best]) - float(logits[second]))


def drift(a, b) -> float:
    """max |a - b| (the ε of ``LinfClose``), in float64."""
    return float(np.max(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64))))


def _uniform(seed, request, position, vocab):
    """Counter-based uniforms keyed by (seed, request, position): a function of the request's
    own state, whatever the batch (SGLang ``multinomial_with_seed``)."""
    h = hashlib.sha256(f"{seed}/{request}/{position}".encode()).digest()
    rng = np.random.default_rng(np.frombuffer(h[:16], dtype=np.uint32))
    return rng.random(vocab)


class SeededSampler:
    """Gumbel-max sampling at temperature T with counter-based noise."""

    def __init__(self, temperature, seed=0):
        self.t, self.seed = float(temperature), seed

    def sample(self, logits, request, position):
        u = _uniform(self.seed, request, position, logits.shape[0])
        g = -np.log(-np.log(np.clip(u, 1e-12, 1.0 - 1e-12)))
        return int(np.argmax(logits.astype(np.float64) / self.t + g))


class SharedGeneratorSampler:
    """The forbidden design (§4.3 rule 7): one generator consumed in batch order, so a
    request's sample depends on who was served before it in the step."""

    def __init__(self, temperature, seed=0):
        self.t = float(temperature)
        self.rng = np.random.default_rng(seed)

    def sample(self, logits, request, position):
        u = self.rng.random(logits.shape[0])
        g = -np.log(-np.log(np.clip(u, 1e-12, 1.0 - 1e-12)))
        return int(np.argmax(logits.astype(np.float64) / self.t + g))


class NearTies:
    """A request-local logits processor that plants near-ties (§4.8 C13, §4.11 "token-level
    failure is rare"): at every ``every``-th generated position (from ``offset``) it sets the
    runner-up's logit to one ulp below the winner's, as measured once on the reference run.
    It is a fixed function of (request, position) — so invariant kernels still match the
    reference bit for bit — while any drift that lowers the winner by an ulp flips the token:
    a deterministic token-level failure demonstration for batch-dependent kernels."""

    def __init__(self, every=32, offset=8):
        self.every, self.offset = max(1, every), max(0, offset)
        self.prompt_len = {}
        self.planted = {}      # (rid, pos) -> (token, value)

    def register(self, rid, prompt_len):
        self.prompt_len[rid] = prompt_len

    def active(self, rid, pos):
        g = pos + 1 - self.prompt_len.get(rid, 1 << 62)
        return g >= self.offset and (g - self.offset) % self.every == 0

    def apply(self, rid, pos, logits):
        if not self.active(rid, pos):
            return logits
        plant = self.planted.get((rid, pos))
        if plant is None:                      # the first sight is the reference's (calibration)
            top, cert = greedy(logits)
            value = np.nextafter(logits[top], np.float32(-np.inf), dtype=np.float32)
            plant = self.planted[(rid, pos)] = (cert.runner_up, value)
        out = logits.copy()
        out[plant[0]] = plant[1]
        return out
