"""The z3 lemmas (serq/claims/lemmas.py; formal.md §6.6): proved, and their formulas true on
the simulator's own states (each formula is the same Python function in both places)."""
import math
import pathlib

import pytest

import serq
from serq.claims import lemmas as L
from serq.sim.hooks import Hooks

z3 = pytest.importorskip("z3")  # the `verify` extra (in the `test` extra, so CI has it)

PAPERS = pathlib.Path(__file__).resolve().parents[2] / "examples" / "papers"


@pytest.mark.parametrize("lemma", L.LEMMAS, ids=[x.name for x in L.LEMMAS])
def test_lemma_is_proved(lemma):
    verdict, detail = lemma.prove()
    assert verdict == "proved", detail


def test_staircase_sanity_counterexample_is_real():
    """Without b <= bmax the staircase is false: b = 129, b0 = bmax = 128, c = 1, a = 0."""
    assert not L.staircase(129, 128, 1, 1, 0, 2, L.PyOps)


class Iterations(Hooks):
    def __init__(self):
        self.its = []

    def on_iteration(self, it, sim):
        self.its.append(it)


def iterations(name, **kw):
    h = Iterations()
    serq.run(serq.compile(str(PAPERS / f"{name}.sq"), **kw), hooks=h)
    return h.its


def test_staircase_and_greedy_fill_on_the_sarathi_run():
    its = iterations("dai_sarathi", horizon=1000000)
    assert len(its) > 100
    for it in its:
        b = it.tokens
        assert L.staircase(b, 128, 1, 1128, 3547, math.ceil(b / 128), L.PyOps)
        wants = [r[4] for r in it.residents]
        got = {s.job: s.tokens for s in it.slices}
        assert L.greedy(wants, it.budget, L.PyOps) == [got.get(r[0], 0) for r in it.residents]
        assert L.greedy_properties(wants, it.budget, [got.get(r[0], 0) for r in it.residents],
                                   L.PyOps)


def test_tiled_rate_on_the_rad_run():
    its = iterations("bari_rad", horizon=5000000)
    assert len(its) > 100
    for it in its:
        t = it.tokens
        assert 1 <= t <= 128 and L.tiled_rate(t, math.ceil(t / 128))


def test_vol_bound_and_competitive_on_the_svf_run():
    rep = serq.run(serq.compile(str(PAPERS / "kong_svf.sq")))
    out = rep.observe("out").samples
    vols = rep.observe("vol").samples
    # s is not observed: vol = s·o + (o² + o)/2 gives it back
    for o, v in zip(out, vols):
        s = (v - (o * o + o) / 2) / o
        assert s == int(s) and L.vol_bound(s, o, 2 * L.vol(s, o)) and 2 * L.vol(s, o) == 2 * v
    M, P = 20000, 2500
    tel = sum(rep.observe("latency").samples)
    ordered = sorted(vols)
    prefix = sum((len(ordered) - k) * v for k, v in enumerate(ordered))
    lower = max(prefix / M, sum(out))  # any OPT is at least this (Prop 3.1, Σ o)
    assert L.competitive(M, P, tel, lower, sum(out), prefix, sum(vols), L.PyOps)
    assert (M - P) * tel <= (3 * M - P) * lower  # the conclusion, at this instance
