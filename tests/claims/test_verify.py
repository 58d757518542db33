"""`serq verify`: the bounded family, its programs, the verdicts and their wording."""
import pathlib
import subprocess
import sys

import pytest

import serq
from serq.claims.family import family_of
from serq.claims.verify import exhaustive, run_workload

PAPERS = pathlib.Path(__file__).resolve().parents[2] / "examples" / "papers"

# one engine, two sizes drawn per session; `big` fails exactly when some session has x = 2
SMALL = """
stage E : step { budget 4; cost 1; }
workload { arrive batch(3); init { set x = floor(~uniform(0, 5)); set y = 2 * x + 1; }
           session { request; } }
server { run E prefill (y); observe done = now; }
run { horizon 100; }
claim small : every iteration of E (tokens <= 4);
claim big given (x != 1) : every iteration of E (demand != 5);
claim late : some iteration of E (now >= 2);
claim tidy : at end (count(done) >= 1);
"""


def program(src=SMALL, **kw):
    return serq.compile(source=src, **kw)


def test_family_size_and_order():
    fam = family_of(program(), max_sessions=2, values={"x": (0.0, 1.0, 2.0)})
    ws = list(fam.workloads())
    assert fam.size() == len(ws) == 3 + 9  # batch: all at 0
    assert [w.values for w in ws[:3]] == [((0.0,),), ((1.0,),), ((2.0,),)]
    assert fam.describe() == "F(n ≤ 2, x ∈ {0..2}, arrivals all at 0 (batch))"


def test_a_workload_runs_with_its_values():
    fam = family_of(program(), max_sessions=2, values={"x": (2.0,)})
    one, two = list(fam.workloads())  # x = 2: y = 5 tokens each; budget 4
    # one session: 4 tokens at t = 0 (demand 5), 1 at t = 1
    assert serq.run(one.program()).observe("done").samples == [2.0]
    assert [r.result for r in run_workload(one.program())] == [
        "holds", "fails", "not_witnessed", "holds"]
    # two: 4 + 0 at 0 (demand 10), 1 + 3 at 1 (demand 6), 0 + 2 at 2 (demand 2)
    assert serq.run(two.program()).observe("done").samples == [2.0, 3.0]
    assert [r.result for r in run_workload(two.program())] == [
        "holds", "holds", "witnessed", "holds"]


def test_exhaustive_verdicts_and_smallest_counterexample():
    fam = family_of(program(), max_sessions=2, values={"x": (0.0, 1.0, 2.0)})
    small, big, late, tidy = exhaustive(fam)
    assert small.holds and small.in_family == 12
    assert not big.holds
    w, r = big.failing
    assert w.values == ((2.0,),) and r.first == 0.0  # n = 1 first: the smallest
    assert big.outside == 6  # the workloads with a session x = 1: 1 + 5
    # the first workload with more than 8 tokens (3 iterations): two sessions of x = 2
    assert late.witness is not None and late.witness[0].values == ((2.0,), (2.0,))
    assert tidy.holds and "holds for all 12 workloads of F(n ≤ 2" in tidy.line(fam, 12)


def test_free_arrival_times_on_a_grid():
    src = SMALL.replace("arrive batch(3);", "arrive poisson(0.5);")
    fam = family_of(program(src), max_sessions=2, values={"x": (0.0,)}, times=[0, 3])
    # n = 1: 2 times; n = 2: (0,0), (0,3), (3,3)
    assert fam.size() == 5 and len(list(fam.workloads())) == 5
    assert fam.describe() == "F(n ≤ 2, x ∈ {0}, arrival times ∈ {0, 3})"


def cli(*args):
    return subprocess.run([sys.executable, "-m", "serq", "verify", *args], capture_output=True,
                          text=True, timeout=600)


def test_cli_kong_scaled():
    p = cli(str(PAPERS / "kong_svf.sq"), "--set", "M=20", "--set", "P=5", "--values", "s=0..3",
            "--values", "o=1..3", "--sessions", "2", "--samples", "10")
    assert p.returncode == 0, p.stderr
    assert ("queueing_bound (at end): holds for all 132 workloads of F(n ≤ 2, s ∈ {0..3}, "
            "o ∈ {1..3}, arrivals all at 0 (batch)) [24 outside it: a session fails `given`]"
            in p.stdout)
    assert "queueing_bound: no counterexample in" in p.stdout
    assert "proved for all workloads" not in p.stdout
    assert "neither is a proof for all workloads" in p.stdout


def test_cli_fastertransformer_counterexample_exit_1():
    p = cli(str(PAPERS / "dai_fastertransformer.sq"), "--sessions", "2", "--times",
            "0,46750", "--samples", "5", "--horizon", "1000000")
    assert p.returncode == 1
    assert ("work_conserving (every iteration): FAILS at t = 14025; smallest counterexample "
            "in F(n ≤ 2, arrival times ∈ {0, 46750}): session 0: arrives at 0; session 1: "
            "arrives at 0") in p.stdout
    assert "not_work_conserving (some iteration): witnessed (established by one run)" in p.stdout


def test_cli_lemmas():
    pytest.importorskip("z3")
    p = cli(str(PAPERS / "dai_sarathi.sq"), "--lemmas", "--sessions", "1", "--samples", "0",
            "--horizon", "200000")
    assert p.returncode == 0, p.stderr
    for name in ("dai_staircase", "bari_tiled_rate", "kong_vol_bound", "kong_competitive",
                 "greedy_fill"):
        assert f"  {name}: proved" in p.stdout


def test_cli_lemmas_without_z3(tmp_path):
    # a z3 that cannot be imported: a clear message naming the extra, exit 1
    (tmp_path / "z3.py").write_text("raise ImportError('no z3 here')\n")
    p = subprocess.run([sys.executable, "-c",
                        "import sys; sys.path.insert(0, sys.argv[1]); from serq.cli import main;"
                        " sys.exit(main(['verify', sys.argv[2], '--lemmas']))",
                        str(tmp_path), str(PAPERS / "dai_sarathi.sq")],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 1
    assert p.stderr == "serq verify --lemmas needs z3 (pip install 'serq[verify]')\n"


def test_verify_refuses_a_trace_or_closed_workload():
    src = SMALL.replace("arrive batch(3);", "arrive closed(3);")
    with pytest.raises(ValueError, match="closed workload"):
        family_of(program(src))
