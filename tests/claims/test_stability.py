"""The stability numbers (serq/claims/stability.py, formal.md §6.7): thresholds, the exact
drift check on finite pieces of the job-list chain, Kong's ratio."""
import math
from fractions import Fraction as F

import pytest

import serq
from serq.claims import stability as S


def test_thresholds():
    # Dai: 1280 λ 4675 < 128 (per 10 µs unit): λ < 128 / (1280 · 4675) · 1e5 req/s
    assert S.DAI_LAMBDA_STAR == pytest.approx(2.1390374, abs=1e-6)
    # Bari: E[v_d] = (1 − q^512)/(1 − q), q = e^{-1/200}, about 185.0; 576 + that ≈ 761
    assert S.bari_mean_tokens() - 576 == pytest.approx(185.0, abs=0.01)
    assert S.BARI_LAMBDA_STAR == pytest.approx(36.25, abs=0.01)


def test_serve_rules_by_hand():
    jobs = ((0, 5), (3, 4), (0, 2), (6, 4))  # decode, prefill 3, decode, prefill 6
    # Sarathi, budget 4: 1 + 3 (the budget is then used up)
    assert S.serve(jobs, 4, "sarathi") == {0: 1, 1: 3}
    # RAD, b_max 4: not all decoding and fewer than 4 decode: one chunk of the oldest prefill
    assert S.serve(jobs, 4, "rad") == {1: 3}
    assert S.serve(((0, 5), (0, 1)), 4, "rad") == {0: 1, 1: 1}  # all decoding
    assert S.step(((0, 1), (2, 3)), 4, "sarathi") == (((0, 3),), 3)


@pytest.mark.parametrize("case", [
    (2, 6, 4, {0: F(3, 4), 1: F(1, 4)}, 40, "sarathi"),
    (3, 9, 6, {0: F(7, 10), 1: F(1, 5), 2: F(1, 10)}, 48, "sarathi"),
    (4, 4, 4, {0: F(3, 5), 1: F(2, 5)}, 40, "rad"),
])
def test_drift_check(case):
    prompt, output, bmax, law, B, rule = case
    r = S.drift_check(prompt, output, bmax, law, B, rule)
    eps = bmax - (prompt + output) * sum(k * p for k, p in law.items())
    assert r["epsilon"] == eps > 0
    # off F the batch is full: b_max tokens leave, L·E[k] arrive, so the drift is exactly −ε
    assert r["holds"] and r["worst_drift"] == -eps and r["off_F"] > 0
    assert r["F_bound_holds"] and r["max_V_on_F"] < bmax * (prompt + output)


def test_drift_check_refuses_an_overloaded_law():
    r = S.drift_check(3, 9, 4, {0: F(1, 2), 1: F(1, 2)}, 30)  # 12 · 1/2 = 6 > 4
    assert r["epsilon"] < 0 and not r["holds"]


def test_kong_ratio_seed_1():
    rep = serq.run(serq.compile(str(S.PAPERS / "kong_svf.sq")))
    tel, lower, ratio, bound = S.kong_ratio(rep)
    # formal.md §4.3: TEL(SVF) = 223 319 against the lower bound 171 654, CR <= 3.2857
    assert (round(tel), round(lower)) == (223319, 171654)
    assert ratio == pytest.approx(1.301, abs=1e-3) and bound == pytest.approx(23 / 7)


@pytest.mark.slow
def test_dai_grows_above_the_threshold_only():
    rows = S.threshold_sweep("dai", [1.6, 2.6], [1e7, 2e7], [1])
    (_, _, lo1, _), (_, _, lo2, _), (_, _, hi1, _), (_, _, hi2, _) = rows
    assert hi2 - hi1 > 2 * abs(lo2 - lo1)
