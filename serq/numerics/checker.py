"""Replay a step plan on the tiny model and compare each request with the reference decoder
(batch-invariance.md §4.7 "Checker"; Lean ``batched_greedy_trace_invariant``).

Open-loop replay (§4.7): the plan fixes the schedule (stop by length, no EOS), the model
supplies token values — seeded synthetic prompts of the length the plan gives, greedy
outputs after. Semantics of a plan (docs/numerics.md): a slice processes the known tokens at
its positions; when it ends at the last known token it proposes the next one; a preempted
request keeps its tokens and drops its KV; a prefix hit reuses whole cached blocks. Kernels
see the plan's whole iteration (``StepInfo``: its tokens, requests, decodes) even when only
some requests are replayed, so a batch-dependent kernel picks the schedule the deployment
would have.

Per request the report gives: tokens equal to the reference, logits bit-equal at every
aligned position, KV block fingerprints consistent (one fingerprint per prefix key across
every producer), the first divergence (step, position, both logits in hex), and the margin
audit (``MarginCert.robust_against(ε)`` never holds on a changed token).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from serq.numerics import fp
from serq.numerics.decode import NearTies, drift, greedy
from serq.numerics.kernels.base import StepInfo, get_kernels
from serq.numerics.kvcache import FingerprintLog, PrefixCache
from serq.numerics.model import TinyCausalLM, TinyConfig, prompt_tokens
from serq.numerics.reference import ReferenceDecoder
from serq.numerics.trace import Plan, PlanError


@dataclass
class Divergence:
    request: str
    step: int
    position: int
    token: int              # the vocabulary entry whose logit moved most
    reference_hex: str      # its reference logit
    replay_hex: str         # its replay logit
    drift: float            # max |Δlogit| over the vocabulary
    reference_token: int    # the reference's greedy token here
    replay_token: int

    def __str__(self):
        tokens = (f"token {self.reference_token} both" if self.reference_token == self.replay_token
                  else f"token {self.reference_token} vs {self.replay_token}")
        return (f"{self.request} step {self.step} position {self.position}: logit[{self.token}] "
                f"reference {self.reference_hex} vs replay {self.replay_hex} "
                f"(max |Δ| {self.drift:.3g}; {tokens})")


@dataclass
class RequestResult:
    request: str
    prompt: int
    generated: int = 0
    tokens_equal: bool = True
    logits_bit_equal: bool = True
    kv_consistent: bool = True
    first_divergence: Divergence | None = None
    token_divergence: int | None = None     # first position whose token differs
    compared: int = 0                       # aligned logit comparisons
    committed_equal: bool | None = None     # DVR runs: committed stream == reference
    chunks: int = 0                         # prefill slices in the plan
    preemptions: int = 0
    prefix_hits: int = 0
    max_batch: int = 0                      # most requests sharing one of its iterations

    @property
    def invariant(self):
        if self.committed_equal is not None:
            return self.committed_equal
        return self.tokens_equal and self.logits_bit_equal and self.kv_consistent


@dataclass
class CheckReport:
    kernels: str
    reference: str
    model: str
    steps: int = 0
    requests: dict = field(default_factory=dict)
    kv_conflicts: int = 0
    margin_checked: int = 0
    margin_violations: list = field(default_factory=list)
    margin_flips: list = field(default_factory=list)   # (request, pos, margin, eps) of changed tokens
    dvr: dict | None = None
    planted: int = 0                                    # near-ties planted (NearTies)
    notes: list = field(default_factory=list)

    @property
    def ok(self):
        return all(r.invariant for r in self.requests.values()) and not self.margin_violations

    @property
    def first_divergence(self):
        divs = [r.first_divergence for r in self.requests.values() if r.first_divergence]
        return min(divs, key=lambda d: (d.step, d.request), default=None)


class Replay:
    """The open-loop replay of one plan with one kernel set."""

    def __init__(self, plan: Plan, model, kernels, reference, selected, prompts, report, progress):
        self.plan, self.model, self.kernels, self.ref = plan, model, kernels, reference
        self.selected, self.prompts, self.report, self.progress = selected, prompts, report, progress
        self.log = reference.log
        self.pool = model.new_pool()
        self.prefix = PrefixCache(self.pool)
        self.tokens = {rid: list(prompts[rid]) for rid in selected}
        self.cache, self.cache_len = {}, {}

    def new_cache(self, rid):
        old = self.cache.get(rid)
        if old is not None:
            old.free()
        self.cache[rid] = self.model.new_cache(self.pool, self.tokens[rid], f"{rid}/replay", self.log, self.prefix)
        self.cache_len[rid] = 0

    def event(self, ev):
        if ev.kind == "admit":
            self.new_cache(ev.request)
        elif ev.kind == "prefix_hit":
            if self.cache_len.get(ev.request, 0) != 0 or ev.request not in self.cache:
                self.new_cache(ev.request)
            got = self.cache[ev.request].attach_prefix(min(ev.tokens, len(self.tokens[ev.request]) - 1))
            self.cache_len[ev.request] = got
            if got < ev.tokens:
                self.report.notes.append(f"{ev.request}: prefix hit of {ev.tokens} tokens found {got} "
                                         "cached (the rest is recomputed)")
        elif ev.kind in ("preempt", "finish"):
            c = self.cache.pop(ev.request, None)
            if c is not None:
                c.free()

    def run(self):
        steps = self.plan.steps
        last = time.monotonic()
        for i, st in enumerate(steps):
            for ev in st.events:
                if ev.request in self.selected:
                    self.event(ev)
            mine = [s for s in st.slices if s.request in self.selected]
            if mine:
                info = StepInfo(st.n_tokens, len(st.slices), sum(1 for s in st.slices if s.kind == "decode"))
                self.step(st.step, mine, info)
                self.report.steps += 1
            if self.progress and time.monotonic() - last > 2.0:
                last = time.monotonic()
                self.progress(f"replayed {i + 1}/{len(steps)} iterations")

    def step(self, step_no, mine, info):
        slices, meta = [], []
        for s in mine:
            rid = s.request
            if rid not in self.cache:
                self.new_cache(rid)
            start = min(s.start, self.cache_len[rid])      # a gap (missed prefix) is recomputed
            end = s.start + s.n
            toks = self.tokens[rid]
            if end > len(toks):
                raise PlanError(f"plan step {step_no}: {rid} processes position {end - 1} but only "
                                f"{len(toks)} tokens are known (a decode must follow the prefill)")
            slices.append((self.cache[rid], toks[start:end], start))
            meta.append((rid, end))
        outs = self.model.forward(slices, self.kernels, info)
        for (rid, end), logits in zip(meta, outs):
            self.cache_len[rid] = end
            self.observe(step_no, rid, end - 1, logits)

    def observe(self, step_no, rid, pos, logits):
        toks, res = self.tokens[rid], self.report.requests[rid]
        P = len(self.prompts[rid])
        if pos < P - 1:
            return
        ref_gen = self.ref.stream(rid, self.prompts[rid], pos - P + 2)
        logits = self.ref.process(rid, pos, logits)
        tok, _ = greedy(logits)
        aligned = res.token_divergence is None or res.token_divergence > pos
        if aligned:
            self.compare(step_no, rid, pos, logits, tok, res)
        if pos == len(toks) - 1:
            toks.append(tok)
            res.generated += 1
            if res.token_divergence is None and tok != ref_gen[pos + 1 - P]:
                res.token_divergence = pos + 1
                res.tokens_equal = False

    def compare(self, step_no, rid, pos, logits, tok, res):
        ref = self.ref.logits(rid, pos)
        res.compared += 1
        if fp.bits_equal(ref, logits):
            return
        res.logits_bit_equal = False
        ref_tok, cert = greedy(ref)
        eps = drift(ref, logits)
        self.report.margin_checked += 1
        changed = tok != ref_tok
        if changed:
            self.report.margin_flips.append((rid, pos, cert.margin, eps))
            if cert.robust_against(eps):
                self.report.margin_violations.append((rid, pos, cert.margin, eps))
        if res.first_divergence is None:
            worst = int(np.argmax(np.abs(ref.astype(np.float64) - logits)))
            res.first_divergence = Divergence(rid, step_no, pos, worst, fp.hex32(ref[worst]),
                                              fp.hex32(logits[worst]), eps, ref_tok, tok)


def _schedule_facts(plan, results):
    """What the plan did to each replayed request (chunks, preemptions, hits, batch sizes)."""
    for st in plan.steps:
        for e in st.events:
            r = results.get(e.request)
            if r is not None:
                r.preemptions += e.kind == "preempt"
                r.prefix_hits += e.kind == "prefix_hit"
        for s in st.slices:
            r = results.get(s.request)
            if r is not None:
                r.chunks += s.kind == "prefill"
                r.max_batch = max(r.max_batch, len(st.slices))


def plan_requests(plan: Plan):
    """{request: (prompt length, generated tokens)} in order of first appearance: the prompt
    ends where the first decode starts; a request generates one token per position past it."""
    first_decode, max_end, order = {}, {}, {}
    for st in plan.steps:
        for s in st.slices:
            order.setdefault(s.request, len(order))
            if s.kind == "decode" and s.request not in first_decode:
                first_decode[s.request] = s.start
            max_end[s.request] = max(max_end.get(s.request, 0), s.start + s.n)
    out = {}
    for rid in sorted(order, key=order.get):
        P = first_decode.get(rid, max_end[rid])
        out[rid] = (P, max_end[rid] - P + 1)
    return out


def select_requests(info, limit=None, preempted_first=False, plan=None):
    rids = list(info)
    if preempted_first and plan is not None:
        hit = []
        for st in plan.steps:
            for e in st.events:
                if e.kind == "preempt" and e.request not in hit:
                    hit.append(e.request)
        rids = hit + [r for r in rids if r not in hit]
    return rids if limit is None else rids[:limit]


def check_plan(plan: Plan, kernels="exact", model=None, requests=None, dvr=None, dvr_group=8,
               preempted_first=False, progress=None, near_ties=None) -> CheckReport:
    """Replay ``plan`` with the named kernel set and compare with the reference decoder (the
    same kernels, each request alone). ``requests``: how many to replay (first appearance
    order; preempted ones first with ``preempted_first``), ``None`` for all. ``dvr``: a window
    W — the kernels become the fast path of a DVR server verified by ``exact``. ``near_ties``:
    plant a near-tie every that many generated tokens (``NearTies``)."""
    if model is None:
        block = plan.header.get("block")
        model = TinyCausalLM(TinyConfig(block=block) if isinstance(block, int) and block > 0 else TinyConfig())
    fast = get_kernels(kernels)
    ref_kernels = get_kernels("exact") if dvr else fast
    info = plan_requests(plan)
    chosen = select_requests(info, requests, preempted_first, plan)
    selected = set(chosen)
    prompts = {rid: prompt_tokens(rid, info[rid][0], model.cfg.vocab, model.cfg.seed) for rid in chosen}
    c = model.cfg
    report = CheckReport(kernels, ref_kernels.name,
                         f"tiny LM (V {c.vocab}, d {c.d}, {c.heads} heads, {c.layers} layers, "
                         f"{'bf16' if c.bf16 else 'fp32'} activations, seed {c.seed})")
    log = FingerprintLog()
    ties = NearTies(near_ties) if near_ties else None
    reference = ReferenceDecoder(model, ref_kernels, log, ties)
    for rid in chosen:
        report.requests[rid] = RequestResult(rid, info[rid][0])
    _schedule_facts(plan, report.requests)
    for rid in chosen:
        if ties is not None:            # calibrate every planted tie on the reference first
            ties.register(rid, info[rid][0])
            reference.stream(rid, prompts[rid], info[rid][1])
    report.planted = len(ties.planted) if ties is not None else 0
    if dvr:
        from serq.numerics.replay import replay_dvr
        report.dvr = replay_dvr(plan, model, fast, ref_kernels, reference, chosen, prompts, info,
                                dvr, dvr_group, report, progress, ties)
        return report
    Replay(plan, model, fast, reference, selected, prompts, report, progress).run()
    conflicts = log.conflicts()
    report.kv_conflicts = len(conflicts)
    for key, fps in conflicts.items():
        for producer in fps.values():
            rid = producer.split("/")[0]
            if rid in report.requests:
                report.requests[rid].kv_consistent = False
    return report
