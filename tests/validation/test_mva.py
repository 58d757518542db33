"""Mean-value analysis (MVA) of a closed product-form network: the exact mean response time
and mean queue lengths for N users (Reiser & Lavenberg 1980; Lazowska et al., *Quantitative
System Performance*, ch. 6). For n = 1..N, with D_k the mean demand at queueing station k
and Z the think time: R_k(n) = D_k (1 + Q_k(n-1)), X(n) = n / (Z + Σ R_k(n)),
Q_k(n) = X(n) R_k(n). It holds for FIFO stations with exponential service and PS stations
with any service law (BCMP).

tests/validation/programs/closed_mva.sq: 4 users, think 3 (delay), cpu FIFO exp(1), disk
PS h2(0.6, cv^2 = 4), seed 5, warm-up 1000, horizon 4e4. MVA: R = 2.7154, Q_cpu = 1.2971,
Q_disk = 0.6033, X = 0.6999. The tolerance (closed_forms.py: 2 × the report's 95 % CI) must
exclude the answers for 3 and 5 users, so the test sees the population, not just the loads.
"""
from closed_forms import PROGRAMS, check

import serq

USERS, Z, DEMANDS = 4, 3.0, (1.0, 0.6)


def mva(n, z, demands):
    """(throughput, response time, queue lengths) of the closed network with n users."""
    q = [0.0] * len(demands)
    x = r = 0.0
    for k in range(1, n + 1):
        rs = [d * (1 + qk) for d, qk in zip(demands, q)]
        r = sum(rs)
        x = k / (z + r)
        q = [x * rk for rk in rs]
    return x, r, q


def test_mva_by_hand():
    # one user: no queueing, R = Σ D; two users by hand: R_cpu = 1 (1 + 1/4.6), ...
    x, r, q = mva(1, 3.0, (1.0, 0.6))
    assert r == 1.6 and x == 1 / 4.6
    x2, r2, _ = mva(2, 3.0, (1.0, 0.6))
    assert abs(r2 - (1 + 1 / 4.6 + 0.6 * (1 + 0.6 / 4.6))) < 1e-12


def test_closed_network_matches_mva():
    report = serq.run(serq.compile(str(PROGRAMS / "closed_mva.sq")))
    x, r, (q_cpu, q_disk) = mva(USERS, Z, DEMANDS)
    tol = check(report.observe("response"), r, "mean response time")
    check(report.gauge("at_cpu"), q_cpu, "mean jobs at the cpu")
    check(report.gauge("at_disk"), q_disk, "mean jobs at the disk")
    for n in (USERS - 1, USERS + 1):
        assert abs(mva(n, Z, DEMANDS)[1] - r) > tol, "the tolerance cannot tell N from N±1"
    # the throughput has no CI in the report: within 3 % (the response time's relative CI)
    for stage in report.stages:
        assert abs(stage.throughput - x) <= 0.03 * x
