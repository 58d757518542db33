"""M/G/1-PS: the mean sojourn E[S] / (1 - rho) whatever the service law (insensitivity), and the
mean slowdown E[T / S] = 1 / (1 - rho) (see closed_forms.py for the formulas and the tolerance).

tests/validation/programs/mg1_ps.sq (`stage server : ps(1)`) at lam = 0.6 (rho = 0.6), seed 1,
warm-up 1000, horizon 4e4 (about 60k events), with exponential, deterministic and
hyperexponential (mean 1, cv^2 = 4) service: the mean sojourn is 2.5 for all three. Where
FIFO would give a different mean (Pollaczek-Khinchine: 1.75 deterministic, 4.75 for cv^2 = 4),
the tolerance must exclude it, so the test sees the discipline, not just the load.
"""
import pytest

from closed_forms import check, check_second_moment, pk_wait, ps_sojourn, run, second_moment

LAM, ES = 0.6, 1.0


@pytest.mark.parametrize("law, cv2", [("~exp(m)", 1.0), ("~det(m)", 0.0), ("~h2(m, 4)", 4.0)])
def test_ps_sojourn_is_insensitive_to_the_service_law(law, cv2):
    report = run("mg1_ps.sq", lam=LAM, law=law, horizon=4e4, warmup=1000)
    assert report.seed == 1
    t = ps_sojourn(LAM, ES)  # 2.5
    tol = check(report.observe("response"), t, f"mean sojourn, service {law}")
    check(report.observe("slowdown"), 1 / (1 - LAM * ES), f"mean slowdown, service {law}")
    check_second_moment(report.observe("service"), second_moment(ES, cv2), law)
    fifo = pk_wait(LAM, ES, cv2) + ES
    if cv2 != 1.0:
        assert abs(fifo - t) > tol, "the tolerance cannot tell PS from FIFO"
    check(report.gauge("utilization"), LAM * ES, f"utilisation, service {law}")
