"""Closed forms of single-server queues and the checks the validation tests share.

Formulas (standard queueing theory; e.g. Kleinrock, *Queueing Systems* vol. 1, ch. 5 and
vol. 2, ch. 4; Harchol-Balter, *Performance Modeling and Design of Computer Systems*, ch. 22-23):

* M/M/1, arrival rate lam, service rate mu = 1/E[S], rho = lam E[S] < 1:
  mean sojourn T = E[S] / (1 - rho); mean wait Wq = rho E[S] / (1 - rho);
  mean number in system L = rho / (1 - rho); utilisation = rho.
* M/G/1 FIFO (Pollaczek-Khinchine mean-value formula): mean wait
  W = lam E[S^2] / (2 (1 - rho)), with E[S^2] = E[S]^2 (1 + cv^2); mean sojourn W + E[S].
* M/G/1-PS (processor sharing): mean sojourn E[S] / (1 - rho) whatever the service law
  (insensitivity); more strongly, a job of size x stays x / (1 - rho) on average, so the mean
  slowdown E[T / S] is 1 / (1 - rho) as well.

The tolerance: an estimate matches when |mean - exact| <= K * ci, with ci the report's own 95%
batch-means half-width (interpreter.md §12.2: 20 batches, t = 2.093). K = 2 because batch-means
half-widths of a strongly autocorrelated output (a queue at rho = 0.8) tend to be optimistic;
each test also checks that K * ci is small enough to tell the closed form from a plausible
wrong answer, so the tolerance is not vacuous. Every run has a fixed seed (the program's,
chosen before the results were seen), so the tests are deterministic.
"""
import math
import pathlib
import statistics

import serq

PROGRAMS = pathlib.Path(__file__).resolve().parent / "programs"
K = 2.0


def mm1_sojourn(lam, es):
    return es / (1 - lam * es)


def mm1_wait(lam, es):
    return lam * es * es / (1 - lam * es)


def mm1_number(lam, es):
    rho = lam * es
    return rho / (1 - rho)


def second_moment(es, cv2):
    return es * es * (1 + cv2)


def pk_wait(lam, es, cv2):
    """Pollaczek-Khinchine: the mean wait in queue of M/G/1 FIFO."""
    return lam * second_moment(es, cv2) / (2 * (1 - lam * es))


def ps_sojourn(lam, es):
    """M/G/1-PS mean sojourn, for every service law of mean es."""
    return es / (1 - lam * es)


def run(program, *, lam, law=None, horizon, warmup, seed=None):
    """Compile tests/validation/programs/PROGRAM with `lam` and the service law replaced, and
    run it."""
    defs = {"law": law} if law is not None else {}
    kw = {"seed": seed} if seed is not None else {}
    p = serq.compile(str(PROGRAMS / program), sets={"lam": repr(lam)}, defs=defs,
                     horizon=horizon, warmup=warmup, **kw)
    return serq.run(p)


def check(stat, exact, what, k=K):
    """``stat`` (an Observe or a Gauge of the report) matches ``exact`` within k * its CI
    (exactly when the CI is 0: a constant); returns the tolerance k * ci."""
    assert stat.ci is not None and math.isfinite(stat.ci) and stat.ci >= 0, (what, stat.ci)
    tol = k * stat.ci  # 0 for a constant (deterministic service times): exact equality
    assert abs(stat.mean - exact) <= tol, (
        f"{what}: {stat.mean:.5g} ± {stat.ci:.3g} (95% CI) is not within {k:g} CI of the "
        f"closed form {exact:.5g}")
    return tol


def check_second_moment(observe, exact, what):
    """The sample second moment of i.i.d. draws (the service times) is within 3 standard
    errors of ``exact`` (3 SE: a two-sided 99.7% interval by the central limit theorem)."""
    squares = [x * x for x in observe.samples]
    m2 = statistics.fmean(squares)
    se = statistics.stdev(squares) / math.sqrt(len(squares))
    assert abs(m2 - exact) <= 3 * se + 1e-12, (
        f"{what}: E[S^2] = {m2:.5g} ± {se:.3g} (SE) vs {exact:.5g}")
