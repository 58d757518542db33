"""The stochastic results of the papers as numbers, not theorems (formal.md §6.7;
docs/stability.md, tools/stability.py).

* ``threshold_sweep``: the paper programs under Poisson arrivals at rates around their
  stability threshold (Dai: λ* = 128 / (1280 · 4675 · 10 µs) ≈ 2.139 req/s; Bari:
  λ ≈ 36.25 req/s), several seeds, two horizons: the time-average number of requests in the
  system with a 95 % Student-t CI across seeds. Below the threshold it settles (the two
  horizons agree); above, it grows with the horizon.
* ``drift_check``: the exact drift condition of the Foster argument on a finite piece of the
  job-list chain: every state reachable from the empty engine with backlog <= B under a
  finite arrival law, the next state's expected backlog computed with ``Fraction`` for each
  state off F = {idle, or the batch is not full}, checked <= V − ε with ε = b_max − L·E[k];
  and V < b_max · L on F. A proof for that finite set, no more.
* ``kong_ratio``: TEL(SVF) of a run against the lower bound max(prefix_total(vol)/M, Σ o)
  on any schedule's TEL (Prop 3.1), to compare with the competitive ratio 1 + 2/(1 − α).

"Consistent with the theorem at these parameters, with 95 % CIs" is what these show; never
"positive recurrent".
"""
from __future__ import annotations

import math
import pathlib
import statistics
from fractions import Fraction

PAPERS = pathlib.Path(__file__).resolve().parents[2] / "examples" / "papers"

# Student-t 97.5 % quantiles by degrees of freedom (for 95 % CIs across a few seeds)
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
        9: 2.262, 10: 2.228}

DAI_LAMBDA_STAR = 128 / (1280 * 4675) * 100000   # req/s: 2.1390...
BARI_CAPACITY = 128 / 4640 * 1e6                 # tokens/s


def bari_mean_tokens() -> float:
    """E[v_p + v_d]: 128·U{1..8} has mean 576; min(floor(Exp(200)) + 1, 512) has mean
    Σ_{j=0}^{511} P(floor(X) >= j) = (1 − q^512)/(1 − q), q = e^{−1/200}."""
    q = math.exp(-1 / 200)
    return 576 + (1 - q ** 512) / (1 - q)


BARI_LAMBDA_STAR = BARI_CAPACITY / bari_mean_tokens()  # req/s: 36.25...


def poisson_program(name: str, rate_expr: str, sets=None, horizon=None, seed=1, warmup=None):
    """A paper program with its arrival replaced by ``poisson(RATE_EXPR)`` (per time unit)."""
    import serq
    src = (PAPERS / f"{name}.sq").read_text()
    if name.startswith("dai_"):
        old = "arrive renewal(gap);"
        assert old in src, f"{name}.sq: expected `{old}`"
        src = src.replace(old, f"arrive poisson({rate_expr});")
    return serq.compile(source=src, sets=sets or {}, horizon=horizon, seed=seed, warmup=warmup)


def mean_ci(xs):
    m = statistics.fmean(xs)
    if len(xs) < 2:
        return m, math.nan
    return m, T975.get(len(xs) - 1, 1.96) * statistics.stdev(xs) / math.sqrt(len(xs))


def threshold_sweep(paper: str, rates, horizons, seeds, progress=None):
    """``[(rate, horizon, mean, ci)]``: the time-average number of requests in the system
    over the second half of the run (``Report.mean_live`` with the warm-up at half the
    horizon: the engine starts empty, and filling it takes a while), over ``seeds`` runs at
    each Poisson rate (req/s) and horizon. Stable: the horizons agree; unstable: it grows."""
    import serq
    out = []
    for rate in rates:
        for h in horizons:
            xs = []
            for seed in seeds:
                if paper == "dai":
                    p = poisson_program("dai_sarathi", f"{rate!r} / 100000", horizon=h,
                                        seed=seed, warmup=h / 2)
                else:
                    p = serq.compile(str(PAPERS / "bari_rad.sq"), sets={"lam": repr(rate)},
                                     horizon=h, seed=seed, warmup=h / 2)
                xs.append(serq.run(p).mean_live)
                if progress is not None:
                    progress(paper, rate, h, seed)
            m, ci = mean_ci(xs)
            out.append((rate, h, m, ci))
    return out


# ---------------------------------------------------------------------------------------
# the exact drift check on a finite piece of the job-list chain


def serve(jobs, bmax, rule):
    """One iteration of the job list ``jobs`` (tuples (prefill left, decode left), admission
    order): the tokens each job gets. ``rule`` "sarathi": admission order, a decode 1 token, a
    prefill what the budget leaves; "rad": decode mode (all decoding, or bmax decoding) serves
    the decodes, otherwise one chunk of bmax of the oldest prefill."""
    if rule == "rad":
        decoding = [i for i, (p, d) in enumerate(jobs) if p == 0]
        if len(decoding) == len(jobs) or len(decoding) >= bmax:
            return {i: 1 for i in decoding[:bmax]}
        i = next(i for i, (p, d) in enumerate(jobs) if p > 0)
        return {i: min(bmax, jobs[i][0])}
    left = bmax
    out = {}
    for i, (p, d) in enumerate(jobs):
        if left <= 0:
            break
        t = 1 if p == 0 else min(p, left)
        out[i] = t
        left -= t
    return out


def step(jobs, bmax, rule):
    """The job list after one iteration (finished jobs leave)."""
    got = serve(jobs, bmax, rule)
    nxt = []
    for i, (p, d) in enumerate(jobs):
        t = got.get(i, 0)
        if p > 0:
            p -= t
        else:
            d -= t
        if p > 0 or d > 0:
            nxt.append((p, d))
    return tuple(nxt), sum(got.values())


def backlog(jobs) -> int:
    return sum(p + d for p, d in jobs)


def drift_check(prompt, output, bmax, law, B, rule="sarathi"):
    """Enumerate the states reachable from the empty list with backlog <= B (a slot: the
    arrivals of ``law``, {k: probability as Fraction}, join, then one iteration), and check
    the drift off F exactly. Returns a dict: states, off_F, worst drift (a Fraction), epsilon,
    whether every state off F has drift <= −ε, the largest V on F, and the bound b_max·L."""
    L = prompt + output
    mean_k = sum(k * pr for k, pr in law.items())
    eps = bmax - L * mean_k
    seen = {()}
    frontier = [()]
    while frontier:
        nxt = []
        for s in frontier:
            for k in law:
                t, _ = step(s + ((prompt, output),) * k, bmax, rule)
                if backlog(t) <= B and t not in seen:
                    seen.add(t)
                    nxt.append(t)
        frontier = nxt
    worst = None
    off = 0
    ok = True
    f_max = 0
    for s in seen:
        v = backlog(s)
        batch = sum(serve(s, bmax, rule).values()) if s else 0
        if not s or batch < bmax:  # F: idle, or the batch is not full
            f_max = max(f_max, v)
            continue
        off += 1
        ev = Fraction(0)
        for k, pr in law.items():
            t, _ = step(s + ((prompt, output),) * k, bmax, rule)
            ev += pr * backlog(t)
        drift = ev - v
        worst = drift if worst is None or drift > worst else worst
        ok = ok and drift <= -eps
    return {"states": len(seen), "off_F": off, "worst_drift": worst, "epsilon": eps,
            "holds": ok and off > 0 and eps > 0, "max_V_on_F": f_max, "bound_on_F": bmax * L,
            "F_bound_holds": f_max < bmax * L}


# ---------------------------------------------------------------------------------------
# Kong: the competitive ratio against the lower bound


def kong_ratio(report, M=20000, P=2500):
    """(TEL, lower bound, ratio, the theorem's bound 1 + 2/(1 − P/M)) of one SVF run."""
    tel = sum(report.observe("latency").samples)
    vols = sorted(report.observe("vol").samples)
    prefix = sum((len(vols) - k) * v for k, v in enumerate(vols))
    lower = max(prefix / M, sum(report.observe("out").samples))
    return tel, lower, tel / lower, 1 + 2 / (1 - P / M)
