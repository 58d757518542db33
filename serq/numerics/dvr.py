"""Decode/verify/rollback (batch-invariance.md §1.6, §4.6; LLM-42's idea, the Lean
``DVRStep``): a fast path speculates tokens with any kernels; a verifier re-runs a window of
candidates as one multi-token pass with the *reference* kernels, commits the matching prefix
plus its own token at the first mismatch, and rolls the fast path back to the verified state.

Runtime invariant (``DVRInvariant``, ``ServeDVR_refines_RefDecode``): after every verify the
committed tokens are a prefix of the reference decoder's stream — checked against a lazily
extended ``ReferenceDecoder`` when one is given (``InvariantViolation`` otherwise). Progress:
every verify commits at least one token. The verifier equals the reference only because a
W-token pass and W single-token steps give the same bits under the canonical kernels — the
attention canonicity property applied across prefill and decode (§1.6 reading notes).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from serq.numerics.decode import greedy
from serq.numerics.kernels.base import StepInfo
from serq.numerics.kvcache import PrefixCache


class InvariantViolation(AssertionError):
    pass


@dataclass
class RequestDVR:
    rid: str
    prompt: list
    target: int                         # generated tokens wanted
    committed: list = field(default_factory=list)
    candidates: list = field(default_factory=list)
    fast_tokens: list = None            # prompt + committed + candidates (the fast cache's view)
    fast_cache: object = None
    fast_len: int = 0                   # positions in the fast cache
    ref_tokens: list = None             # prompt + committed (+ the window during a verify)
    ref_cache: object = None
    ref_len: int = 0

    @property
    def done(self):
        return len(self.committed) >= self.target

    @property
    def speculated(self):
        return len(self.committed) + len(self.candidates)


class DVRServer:
    def __init__(self, model, fast, verify, window, group=8, reference=None, processor=None):
        if window < 1:
            raise ValueError("the DVR window must be at least 1 token")
        self.model, self.fast, self.verifier = model, fast, verify
        self.window, self.group, self.reference = window, max(1, group), reference
        self.processor = processor
        self.pool = model.new_pool()
        self.fast_prefix = PrefixCache(self.pool)
        self.req = {}
        self.rollbacks = self.verify_passes = self.tokens_verified = 0
        self.tokens_rejected = self.tokens_committed = self.verifies = 0

    # -- requests -----------------------------------------------------------------------------
    def admit(self, rid, prompt, target):
        r = RequestDVR(rid, list(prompt), max(1, target))
        r.fast_tokens = list(prompt)
        r.fast_cache = self.model.new_cache(self.pool, r.fast_tokens, f"{rid}/fast", None, self.fast_prefix)
        r.ref_tokens = list(prompt)
        r.ref_cache = self.model.new_cache(self.pool, r.ref_tokens, f"{rid}/verify")
        self.req[rid] = r

    def preempt(self, rid, hit=0):
        """Drop the fast KV (recompute preemption); reuse ``hit`` cached tokens if found."""
        r = self.req[rid]
        r.fast_cache.free()
        r.fast_cache = self.model.new_cache(self.pool, r.fast_tokens, f"{rid}/fast", None, self.fast_prefix)
        r.fast_len = r.fast_cache.attach_prefix(min(hit, len(r.fast_tokens) - 1))

    # -- speculate ----------------------------------------------------------------------------
    def speculate(self, items, step: StepInfo | None = None):
        """One fast step: ``items`` = [(rid, n)] — each request processes its next ≤ n
        positions; a slice reaching the end of its known tokens proposes a candidate."""
        slices, owners = [], []
        for rid, n in items:
            r = self.req[rid]
            if r.done or r.speculated >= r.target:
                continue
            end = min(r.fast_len + n, len(r.fast_tokens))
            if end <= r.fast_len:
                continue
            slices.append((r.fast_cache, r.fast_tokens[r.fast_len:end], r.fast_len))
            owners.append((r, end))
        if not slices:
            return
        outs = self.model.forward(slices, self.fast, step)
        for (r, end), out in zip(owners, outs):
            r.fast_len = end
            if end == len(r.fast_tokens):
                tok = greedy(self.process(r.rid, end - 1, out))[0]
                r.candidates.append(tok)
                r.fast_tokens.append(tok)

    def due(self, rid):
        r = self.req[rid]
        return bool(r.candidates) and (len(r.candidates) >= self.window or r.speculated >= r.target)

    # -- verify / rollback ---------------------------------------------------------------------
    def verify(self, rids):
        """Verify every listed request's window, ``group`` requests per verifier pass."""
        rids = [rid for rid in rids if self.req[rid].candidates]
        for g in range(0, len(rids), self.group):
            self._verify_group(rids[g:g + self.group])

    def _verify_group(self, rids):
        slices, spans = [], []
        for rid in rids:
            r = self.req[rid]
            base = len(r.prompt) + len(r.committed)          # position of candidate 0
            r.ref_tokens.extend(r.candidates)
            end = base + len(r.candidates) - 1               # process [ref_len, end)
            slices.append((r.ref_cache, r.ref_tokens[r.ref_len:end], r.ref_len))
            spans.append((rid, r, base))
        outs = self.model.forward(slices, self.verifier, None, all_logits=True)
        self.verify_passes += 1
        for (rid, r, base), logits in zip(spans, outs):
            self._accept(rid, r, base, logits)

    def _accept(self, rid, r, base, logits):
        k = len(r.candidates)
        first = r.ref_len
        accepted, own = 0, None
        for i in range(k):
            tok = greedy(self.process(rid, base - 1 + i, logits[base - 1 + i - first]))[0]
            if tok != r.candidates[i]:
                own = tok
                break
            accepted += 1
        new = r.candidates[:accepted] + ([own] if own is not None else [])
        new = new[:r.target - len(r.committed)]
        self.verifies += 1
        self.tokens_verified += k
        if not new:
            raise InvariantViolation(f"{rid}: a verify committed no token (progress)")
        r.committed.extend(new)
        self.tokens_committed += len(new)
        r.ref_len = min(base + k - 1, base + accepted)
        r.ref_cache.truncate(r.ref_len)
        del r.ref_tokens[len(r.prompt) + len(r.committed):]
        r.ref_tokens[len(r.prompt):] = r.committed
        self._check_invariant(rid, r)
        rejected = k - accepted
        r.candidates = []
        if own is not None:
            self.rollbacks += 1
            self.tokens_rejected += rejected
            self._rollback(rid, r)

    def _rollback(self, rid, r):
        """Fast state := verified state (the fast cache becomes a copy of the verifier's)."""
        r.fast_cache.free()
        r.fast_tokens[:] = r.prompt + r.committed
        r.fast_cache = r.ref_cache.clone(f"{rid}/fast")
        r.fast_cache.tokens = r.fast_tokens
        r.fast_cache.prefix = self.fast_prefix
        r.fast_len = r.ref_len
        if r.fast_cache.fingerprints(r.ref_len) != r.ref_cache.fingerprints(r.ref_len):
            raise InvariantViolation(f"{rid}: fast cache differs from the verified cache after rollback")

    def process(self, rid, pos, logits):
        return logits if self.processor is None else self.processor.apply(rid, pos, logits)

    def _check_invariant(self, rid, r):
        if self.reference is None:
            return
        ref = self.reference.stream(rid, r.prompt, len(r.committed))
        if r.committed != ref:
            raise InvariantViolation(f"{rid}: committed stream is not a prefix of the reference")

    # -- drive ---------------------------------------------------------------------------------
    def finish(self, max_steps=100_000):
        """Speculate and verify until every request has committed its target (the tail after
        a plan ends, or a whole run when no plan drives the fast path)."""
        for _ in range(max_steps):
            live = [rid for rid, r in self.req.items() if not r.done]
            if not live:
                return
            self.speculate([(rid, 1 << 30) for rid in live])
            self.verify([rid for rid in live if self.due(rid)])
        raise RuntimeError("DVR did not finish (no progress)")

    def summary(self):
        return dict(rollbacks=self.rollbacks, verifies=self.verifies, verify_passes=self.verify_passes,
                    tokens_verified=self.tokens_verified, tokens_rejected=self.tokens_rejected,
                    tokens_committed=self.tokens_committed,
                    rollback_rate=self.rollbacks / self.verifies if self.verifies else 0.0)
