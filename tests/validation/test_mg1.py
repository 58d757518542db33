"""M/G/1 FIFO against Pollaczek-Khinchine: mean wait W = lam E[S^2] / (2 (1 - rho))
(see closed_forms.py for the formulas and the tolerance).

tests/validation/programs/mg1_fifo.sq at lam = 0.5 (rho = 0.5), seed 1, warm-up 1000, with
deterministic service (cv^2 = 0: W = 0.5) and two-phase hyperexponential service of mean 1 and
cv^2 = 4 (`~h2(1, 4)`: W = 2.5). For each law the wait and the sojourn W + 1 must match, the
service draws must have the intended second moment, and the tolerance must exclude the wait of
exponential service (W = 1), so the test sees that the second moment, not just the mean,
decides the wait.
"""
import pytest

from closed_forms import check, check_second_moment, pk_wait, second_moment, run

LAM, ES = 0.5, 1.0


@pytest.mark.parametrize("law, cv2, horizon", [
    ("~det(m)", 0.0, 2e4),       # about 20k events
    ("~h2(m, 4)", 4.0, 6e4),     # about 60k events: the wait varies much more
])
def test_mg1_fifo_matches_pollaczek_khinchine(law, cv2, horizon):
    report = run("mg1_fifo.sq", lam=LAM, law=law, horizon=horizon, warmup=1000)
    assert report.seed == 1
    w = pk_wait(LAM, ES, cv2)
    tol = check(report.observe("wait"), w, f"mean wait, service {law}")
    check(report.observe("response"), w + ES, f"mean sojourn, service {law}")
    check(report.observe("service"), ES, f"mean service, service {law}")
    check_second_moment(report.observe("service"), second_moment(ES, cv2), law)
    # the exponential law's wait (cv^2 = 1) lies outside the tolerance
    assert abs(pk_wait(LAM, ES, 1.0) - w) > tol
    check(report.gauge("utilization"), LAM * ES, f"utilisation, service {law}")
