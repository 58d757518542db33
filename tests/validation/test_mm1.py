"""M/M/1 against its closed forms (see closed_forms.py for the formulas and the tolerance).

examples/mm1.sq as shipped (lam = 0.8, exponential service of mean 1, rho = 0.8, warm-up 1000,
seed 7), with the horizon raised from 20000 to 1e5 (about 160k events, a couple of seconds):
mean sojourn 5, mean number in system 4, utilisation 0.8.
"""
import pathlib

import serq
from closed_forms import check, mm1_number, mm1_sojourn

MM1 = pathlib.Path(__file__).resolve().parents[2] / "examples" / "mm1.sq"
LAM, ES = 0.8, 1.0


def test_mm1_example_matches_the_closed_form():
    report = serq.run(serq.compile(str(MM1), horizon=1e5))
    assert (report.seed, report.warmup, report.horizon) == (7, 1000, 1e5)

    tol = check(report.observe("response"), mm1_sojourn(LAM, ES), "mean sojourn")  # 5
    # not vacuous: the tolerance tells rho = 0.8 from rho = 0.75 or 0.85 (sojourn 4 or 6.67)
    # and exponential from deterministic service (M/D/1 sojourn 3)
    assert tol < 1.0

    check(report.gauge("in_system"), mm1_number(LAM, ES), "mean number in system")  # 4
    tol = check(report.gauge("utilization"), LAM * ES, "utilisation")  # 0.8
    assert tol < 0.02
    # Little's law ties the two: L = lam T, for the estimates themselves (the throughput
    # measured over the same span), up to the jobs in the system at the window's ends
    stage = report.stage("server")
    littles = stage.throughput * report.observe("response").mean
    assert abs(littles - report.gauge("in_system").mean) < 0.05 * report.gauge("in_system").mean
