"""The reference decoder (batch-invariance.md §1.6 ``ReferenceDecoder``, §4.7): each request
alone, the prompt as one prefill, then one token per step, with a given kernel set. Streams
are extended lazily and cached, so the checker and the DVR invariant share them.

``stream(rid, prompt, n)`` gives the first ``n`` generated tokens; ``logits[rid][p]`` the
logits computed at position ``p`` (which choose the token at ``p + 1``); ``fingerprints`` the
sealed KV blocks of the canonical run (by prefix key, in the shared ``FingerprintLog``).
"""
from __future__ import annotations

from serq.numerics.decode import greedy
from serq.numerics.kernels.base import StepInfo


class ReferenceDecoder:
    def __init__(self, model, kernels, log=None, processor=None):
        self.model, self.kernels, self.log = model, kernels, log
        self.processor = processor             # a request-local logits processor (NearTies)
        self.pool = model.new_pool()
        self.state = {}  # rid -> (tokens, cache, generated, logits{pos: array})

    def _start(self, rid, prompt):
        tokens = list(prompt)
        cache = self.model.new_cache(self.pool, tokens, f"{rid}/reference", self.log)
        step = StepInfo(len(tokens), 1, 1 if len(tokens) == 1 else 0)
        out = self.process(rid, len(tokens) - 1,
                           self.model.forward([(cache, tokens, 0)], self.kernels, step)[0])
        gen, logits = [], {len(tokens) - 1: out}
        gen.append(greedy(out)[0])
        tokens.append(gen[-1])
        self.state[rid] = (tokens, cache, gen, logits)

    def stream(self, rid, prompt, n):
        """The first ``n`` generated tokens of ``rid`` (n >= 1)."""
        if rid not in self.state:
            self._start(rid, prompt)
        tokens, cache, gen, logits = self.state[rid]
        while len(gen) < n:
            p = len(tokens) - 1
            out = self.model.forward([(cache, tokens[p:], p)], self.kernels, StepInfo(1, 1, 1))[0]
            out = logits[p] = self.process(rid, p, out)
            gen.append(greedy(out)[0])
            tokens.append(gen[-1])
        return gen[:n]

    def process(self, rid, pos, logits):
        return logits if self.processor is None else self.processor.apply(rid, pos, logits)

    def logits(self, rid, position):
        return self.state[rid][3].get(position)
