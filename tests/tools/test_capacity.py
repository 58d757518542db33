"""`serq capacity`: the answer agrees with a bisection done by hand on M/M/1, where the mean
response time is s / (1 - lam * s) (5 at lam = 0.8 for s = 1), so `response.mean<5` has the
analytic capacity lam = 0.8 and the confident answer lies a little below it.

The hand bisection below uses only `serq.run` and the textbook Student-t interval (the 0.975
quantile for 3 degrees of freedom from the standard tables), not serq.sweep.
"""
import pathlib
import statistics

import pytest

import serq
from serq import cli as serq_cli
from serq.sweep.capacity import parse_slo

pytest.importorskip("scipy")

ROOT = pathlib.Path(__file__).resolve().parents[2]
MM1 = str(ROOT / "examples" / "mm1.sq")
T975_DF3 = 3.182446  # NIST/SEMATECH e-Handbook 1.3.6.7.2 (3.182), to 7 digits
SEEDS = [7, 8, 9, 10]


def hand_upper_bound(lam):
    means = [serq.run(serq.compile(MM1, sets={"lam": lam}, seed=s, horizon=3000,
                                   warmup=200)).observe("response").mean for s in SEEDS]
    return statistics.fmean(means) + T975_DF3 * statistics.stdev(means) / 2.0


def hand_bisection(lo, hi, tol):
    assert hand_upper_bound(lo) < 5 and not hand_upper_bound(hi) < 5
    probes = [lo, hi]
    while hi - lo > tol:
        mid = (lo + hi) / 2
        probes.append(mid)
        if hand_upper_bound(mid) < 5:
            lo = mid
        else:
            hi = mid
    return lo, probes


def test_capacity_agrees_with_a_hand_bisection(capsys):
    code = serq_cli.main(["capacity", MM1, "--knob", "lam", "--slo", "response.mean<5",
                          "--lo", "0.5", "--hi", "0.95", "--tol", "0.01", "--seeds", "4",
                          "--horizon", "3000", "--warmup", "200", "-j", "2"])
    out = capsys.readouterr().out
    assert code == 0
    lines = out.splitlines()
    answer = float(lines[-1].split("=")[1])
    by_hand, probes = hand_bisection(0.5, 0.95, 0.01)
    assert answer == pytest.approx(by_hand, abs=1e-12)
    # the evidence table: one row per probe, in the order they ran
    rows = [ln.split()[0] for ln in lines[3:-2]]
    assert [float(x) for x in rows] == pytest.approx(probes, abs=1e-8)
    # a confident answer: below the analytic capacity, and not far below it
    assert 0.7 < answer < 0.8


def test_slo_on_a_percentile_and_a_lower_bound(capsys):
    code = serq_cli.main(["capacity", MM1, "--knob", "lam", "--slo", "response.p99<30",
                          "--slo", "stage.server.throughput>0.3", "--lo", "0.5", "--hi",
                          "0.95", "--tol", "0.05", "--seeds", "3", "--horizon", "2000",
                          "--warmup", "100", "-j", "1"])
    out = capsys.readouterr().out
    assert code == 0
    assert "response.p99<30" in out and "stage.server.throughput>0.3" in out
    assert out.splitlines()[-1].startswith("lam = ")


def test_no_value_and_beyond_the_range(capsys):
    code = serq_cli.main(["capacity", MM1, "--knob", "lam", "--slo", "response.mean<0.5",
                          "--lo", "0.5", "--hi", "0.9", "--seeds", "2", "--horizon", "800",
                          "--warmup", "10", "-j", "1"])
    out = capsys.readouterr().out
    assert code == 1 and out.splitlines()[-1].startswith("no value: the SLOs fail already at lam = 0.5")
    code = serq_cli.main(["capacity", MM1, "--knob", "lam", "--slo", "response.mean<100",
                          "--lo", "0.1", "--hi", "0.3", "--seeds", "2", "--horizon", "800",
                          "--warmup", "10", "-j", "1"])
    out = capsys.readouterr().out
    assert code == 0 and out.splitlines()[-1] == "lam = 0.3"
    assert "hold even at lam = 0.3, the end of the range" in out


def test_minimize_finds_the_smallest_passing_value(tmp_path, capsys):
    # M/M/1 with a service rate knob mu (s = 1 / mu): 1 / (mu - 0.8) < 5 <=> mu > 1, so
    # the SLO holds above mu = 1 and --minimize looks for the smallest passing mu
    text = (ROOT / "examples" / "mm1.sq").read_text()
    path = tmp_path / "mm1_mu.sq"
    path.write_text(text.replace("let s = 1;", "let mu = 1;\nlet s = 1 / mu;"))
    code = serq_cli.main(["capacity", str(path), "--knob", "mu", "--minimize", "--slo",
                          "response.mean<5", "--lo", "1.0", "--hi", "3.0", "--tol", "0.05",
                          "--seeds", "3", "--horizon", "2000", "--warmup", "100", "-j", "1"])
    out = capsys.readouterr().out
    assert code == 0
    answer = float(out.splitlines()[-1].split("=")[1])
    # the confident answer is a little above the analytic 1
    assert 1.0 < answer < 1.5
    assert out.splitlines()[-2].startswith("smallest mu")


@pytest.mark.parametrize("args, message", [
    (["--slo", "response.p42<1"], "no metric 'response.p42'"),
    (["--slo", "response<1"], "no metric 'response'"),
    (["--slo", "response.mean~1"], "expected METRIC<BOUND"),
    (["--slo", "response.mean<x"], "is not a number"),
    (["--slo", "response.mean<5", "--knob", "nope"], "nope"),
])
def test_bad_slos_and_knobs(args, message, capsys):
    base = ["capacity", MM1, "--knob", "lam", "--lo", "0.5", "--hi", "0.9", "--seeds", "2",
            "--horizon", "500", "--warmup", "10", "-j", "1"]
    if "--knob" in args:
        base[3] = args[args.index("--knob") + 1]
        args = args[:args.index("--knob")]
    code = serq_cli.main(base + args)
    err = capsys.readouterr().err
    assert code == 1 and message in err and "Traceback" not in err


def test_parse_slo():
    s = parse_slo("ttft.p99 <= 1.5")
    assert (s.metric, s.op, s.bound, s.upper) == ("ttft.p99", "<=", 1.5, True)
    assert not parse_slo("x.mean>2").upper


def test_without_lo_and_hi_the_bracket_is_found_by_doubling(capsys):
    common = ["--slo", "response.mean<5", "--seeds", "3", "--horizon", "1500", "--warmup",
              "100", "-j", "1"]
    assert serq_cli.main(["capacity", MM1, "--knob", "lam", "--start", "0.1", *common]) == 0
    out = capsys.readouterr().out.splitlines()
    probes = [float(line.split()[0]) for line in out[3:-2]]
    assert probes[:4] == [0.1, 0.2, 0.4, 0.8]  # 0.8 fails: the bracket is [0.4, 0.8]
    # the rest is the bisection of that bracket with the default tolerance (width / 64)
    assert serq_cli.main(["capacity", MM1, "--knob", "lam", "--lo", "0.4", "--hi", "0.8",
                          "--tol", str(0.4 / 64), *common]) == 0
    out2 = capsys.readouterr().out.splitlines()
    assert out2[-1] == out[-1]
    assert [float(line.split()[0]) for line in out2[3:-2]] == [0.4, 0.8] + probes[4:]
