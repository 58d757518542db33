"""§4.8 C, D, E: the model and serving. Lean: compose_batchInvariant /
batched_greedy_trace_invariant (C11, C12, C15), winner_stable_of_margin (C14), DVRInvariant /
ServeDVR_refines_RefDecode / user_observable_determinism (D16–D18)."""
import numpy as np
import pytest

from serq.numerics import fp
from serq.numerics.checker import check_plan
from serq.numerics.decode import MarginCert, SeededSampler, SharedGeneratorSampler, drift, greedy
from serq.numerics.dvr import DVRServer
from serq.numerics.kernels import StepInfo, get_kernels
from serq.numerics.kernels.exact import ExactKernels
from serq.numerics.model import TinyCausalLM, TinyConfig, prompt_tokens
from serq.numerics.reference import ReferenceDecoder
from serq.numerics.trace import synthetic_plan

MODEL = TinyCausalLM(TinyConfig(block=8))
FP32 = TinyCausalLM(TinyConfig(block=8, bf16=False))


@pytest.mark.parametrize("model", [MODEL, FP32], ids=["bf16", "fp32"])
@pytest.mark.parametrize("kset", ["exact", "tiled"])
def test_c11_prefill_equals_token_by_token(model, kset):
    k = get_kernels(kset)
    toks = prompt_tokens("c11", 45, model.cfg.vocab)
    pool = model.new_pool()
    full = model.forward([(model.new_cache(pool, toks), toks, 0)], k, all_logits=True)[0]
    cache = model.new_cache(pool, toks)
    for p in range(45):
        one = model.forward([(cache, toks[p:p + 1], p)], k)[0]
        assert fp.bits_equal(one, full[p]), p


def plan_kinds(plan):
    return {e.kind for s in plan.steps for e in s.events}


CONFIGS = [dict(budget=16, max_running=4, kv_blocks=14),
           dict(budget=48, max_running=16, kv_blocks=12, chunk=8),
           dict(budget=512, max_running=1, kv_blocks=64),
           dict(budget=48, max_running=4, kv_blocks=10, arrive_every=0, order="admission")]


@pytest.mark.parametrize("cfg", CONFIGS, ids=["b16", "b48-chunk8", "b512-seq1", "burst"])
def test_c12_exact_replays_are_invariant(cfg):
    plan = synthetic_plan(n_requests=6, prompt=(5, 30), answer=20, block=8, seed=3, **cfg)
    report = check_plan(plan, "exact", model=MODEL)
    assert report.ok, report.first_divergence
    assert all(r.generated == 21 and r.compared >= 21 for r in report.requests.values())


def test_c12_c13_c14_the_standard_plan():
    """16 requests × 48 tokens with preemption and prefix hits: exact and tiled invariant,
    default not (logit bits), margin audit clean."""
    plan = synthetic_plan(block=8)
    assert {"preempt", "prefix_hit", "evict"} <= plan_kinds(plan)
    for kset in ("exact", "tiled"):
        report = check_plan(plan, kset, model=MODEL)
        assert report.ok and report.kv_conflicts == 0
        assert len(report.requests) == 16
    bad = check_plan(plan, "default", model=MODEL)
    assert not bad.ok
    assert sum(not r.logits_bit_equal for r in bad.requests.values()) > 0
    assert bad.kv_conflicts > 0
    assert bad.margin_violations == []
    assert all(margin <= 2 * eps for _, _, margin, eps in bad.margin_flips)
    div = bad.first_divergence
    assert div.reference_hex != div.replay_hex and div.drift > 0


def test_c14_winner_stable_of_margin():
    rng = np.random.default_rng(2)
    for _ in range(200):
        z = rng.standard_normal(64).astype(np.float32)
        tok, cert = greedy(z)
        eps = float(rng.uniform(0, 0.5))
        z2 = (z + rng.uniform(-eps, eps, 64)).astype(np.float32)
        e = drift(z, z2)
        if cert.robust_against(e):
            assert greedy(z2)[0] == tok
    assert not MarginCert(1, 2, 0.5).robust_against(0.25) and MarginCert(1, 2, 0.5).robust_against(0.2)
    assert greedy(np.array([1, 3, 3], dtype=np.float32))[0] == 1     # lowest index on ties


def needle_stream(kset, fillers, seed, n_tokens=8, sampler=None):
    """The needle's stream and logits when decoded among ``fillers`` random co-requests."""
    k = get_kernels(kset)
    rng = np.random.default_rng(seed)
    pool = MODEL.new_pool()
    reqs = [("needle", prompt_tokens("needle", 20, 512))]
    reqs += [(f"f{seed}-{i}", prompt_tokens(f"f{seed}-{i}", int(rng.integers(3, 40)), 512)) for i in range(fillers)]
    state = {rid: [list(t), MODEL.new_cache(pool, None), 0] for rid, t in reqs}
    for rid, st in state.items():
        st[1].tokens = st[0]
    out, logits = [], []
    while len(out) < n_tokens:
        order = rng.permutation(len(reqs))
        slices, owners = [], []
        for i in order:
            rid = reqs[i][0]
            toks, cache, done = state[rid]
            n = min(len(toks) - done, int(rng.integers(1, 12)))
            slices.append((cache, toks[done:done + n], done))
            owners.append(rid)
        res = MODEL.forward(slices, k)
        for rid, lg, (_, t, s) in zip(owners, res, slices):
            st = state[rid]
            st[2] = s + len(t)
            if st[2] == len(st[0]):
                tok = greedy(lg)[0] if sampler is None else sampler.sample(lg, rid, st[2])
                st[0].append(tok)
                if rid == "needle":
                    out.append(tok)
                    logits.append(lg)
    return tuple(out), logits


def test_c15_needle_unique_samples():
    """The needle alone, then among 1–6 random fillers with random chunking and order, 50
    co-batches in all: one unique sample, every logit vector bit-equal."""
    alone, alone_logits = needle_stream("exact", 0, 0, n_tokens=4)
    seen = {alone}
    for trial in range(1, 50):
        stream, logits = needle_stream("exact", trial % 6 + 1, trial, n_tokens=4)
        seen.add(stream)
        assert all(fp.bits_equal(a, b) for a, b in zip(logits, alone_logits))
    assert len(seen) == 1


def test_c15_inverse_default_needle_logits_move():
    _, alone = needle_stream("default", 0, 0, n_tokens=4)
    moved = sum(not all(fp.bits_equal(a, b) for a, b in zip(needle_stream("default", 5, t, 4)[1], alone))
                for t in range(1, 6))
    assert moved > 0


def test_e20_seeded_sampling_is_invariant_shared_generator_is_not():
    alone, _ = needle_stream("exact", 0, 0, 6, SeededSampler(0.7, seed=4))
    assert all(needle_stream("exact", 4, t, 6, SeededSampler(0.7, seed=4))[0] == alone for t in (1, 2, 3))
    shared = {needle_stream("exact", 4, t, 6, SharedGeneratorSampler(0.7, seed=4))[0] for t in (1, 2, 3)}
    shared.add(needle_stream("exact", 0, 0, 6, SharedGeneratorSampler(0.7, seed=4))[0])
    assert len(shared) > 1


# -- DVR -----------------------------------------------------------------------------------------
class Malicious(ExactKernels):
    """A fast path that injects noise into every matmul (random tokens)."""
    name = "malicious"

    def __init__(self):
        super().__init__()
        self.rng = np.random.default_rng(13)

    def matmul(self, x, w, step):
        out = super().matmul(x, w, step)
        return (out + self.rng.standard_normal(out.shape).astype(np.float32) * 3).astype(np.float32)


def run_dvr(fast, window, n=4, target=24):
    ref = ReferenceDecoder(MODEL, get_kernels("exact"))
    server = DVRServer(MODEL, fast, get_kernels("exact"), window, group=3, reference=ref)
    prompts = {f"d{i}": prompt_tokens(f"d{i}", 10 + 7 * i, 512) for i in range(n)}
    for rid, p in prompts.items():
        server.admit(rid, p, target)
    server.finish()
    return server, {rid: server.req[rid].committed for rid in prompts}, ref, prompts


def test_d16_d17_d18_dvr_commits_reference_prefixes():
    runs = {}
    for name, fast, window in (("exact", get_kernels("exact"), 8), ("default", get_kernels("default"), 4),
                               ("malicious", Malicious(), 4), ("malicious8", Malicious(), 8)):
        server, committed, ref, prompts = run_dvr(fast, window)
        for rid, toks in committed.items():
            assert toks == ref.stream(rid, prompts[rid], 24)          # whole stream = reference
        runs[name] = (server, committed)
    assert runs["exact"][0].rollbacks == 0
    assert runs["malicious"][0].rollbacks > 0 and runs["malicious8"][0].rollbacks > 0
    assert runs["malicious"][0].tokens_rejected > 0
    for server, _ in runs.values():
        assert server.tokens_committed == 4 * 24 and server.verifies <= server.tokens_committed


def test_d16_partial_runs_agree_on_common_length():
    """Observable determinism: two servers with different fast paths, stopped at different
    points, show identical output up to their common committed length."""
    a = run_dvr(Malicious(), 4, n=2, target=9)[1]
    b = run_dvr(get_kernels("default"), 8, n=2, target=17)[1]
    for rid in a:
        m = min(len(a[rid]), len(b[rid]))
        assert m > 0 and a[rid][:m] == b[rid][:m]


def test_dvr_on_a_plan_repairs_default():
    plan = synthetic_plan(n_requests=8, answer=24, block=8, seed=5)
    report = check_plan(plan, "default", model=MODEL, dvr=4)
    assert report.ok and all(r.committed_equal for r in report.requests.values())
    assert report.dvr["tokens_committed"] == 8 * 25
