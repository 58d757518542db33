"""`serq run`: the report on stdout (text or --json), --dump, run-time errors, exit codes.

A few tests run `python -m serq` in a child process (determinism across processes, exit
status and stderr of a real process, SERQ_DEBUG); the others call `serq.cli.main` in this
process, which is much faster. Horizons are short (a few thousand events). Golden report
texts come from the conformance corpus (`../shared/conformance/run`, written by the reference
build pyserq 0.1.2 with `regen.py`); everything else is checked against the library's own
answer or by hand.
"""
import csv
import json
import os
import pathlib
import subprocess
import sys
import types

import pytest

import serq
from serq import cli as serq_cli

ROOT = pathlib.Path(__file__).resolve().parents[1]
SHARED = pathlib.Path(os.environ.get("SERQ_SHARED", ROOT.parent / "shared"))
RUN_CORPUS = SHARED / "conformance" / "run"
MM1 = str(ROOT / "examples" / "mm1.sq")
# mm1.sq runs for horizon 20000; 2000 (about 3200 events) keeps these tests fast
SHORT = ("--horizon", "2000", "--warmup", "100")


def cli(*args, env=None, cwd=None):
    """Run `python -m serq ARGS`; returns the CompletedProcess (text, UTF-8)."""
    e = dict(os.environ)
    e.pop("SERQ_DEBUG", None)
    e["PYTHONPATH"] = str(ROOT) + os.pathsep + e.get("PYTHONPATH", "")
    if env:
        e.update(env)
    return subprocess.run([sys.executable, "-m", "serq", *args], capture_output=True,
                          encoding="utf-8", errors="replace", env=e, cwd=cwd or ROOT, timeout=120)


class Result:
    """What `serq.cli.main` did in this process: exit status, stdout, stderr."""
    def __init__(self, returncode, stdout, stderr):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


@pytest.fixture
def serq_main(capsys, monkeypatch):
    """Run the command line in this process (much faster than a child process): returns a
    function ``(*args, cwd=None) -> Result``; usage errors give status 2 as in a process."""
    monkeypatch.delenv("SERQ_DEBUG", raising=False)
    monkeypatch.delenv("SERQ_PROGRESS", raising=False)

    def call(*args, cwd=None):
        capsys.readouterr()
        if cwd is not None:
            monkeypatch.chdir(cwd)
        try:
            code = serq_cli.main(list(args))
        except SystemExit as e:  # argparse: --help, usage errors
            code = e.code
        finally:
            if cwd is not None:
                monkeypatch.chdir(ROOT)
        out, err = capsys.readouterr()
        return Result(code, out, err)
    return call


def no_traceback(proc):
    assert "Traceback" not in proc.stderr
    assert "Traceback" not in proc.stdout


def corpus(name, ext):
    path = RUN_CORPUS / f"{name}{ext}"
    if not path.exists():
        pytest.fail(f"the conformance corpus is missing: {path} (clone `shared` beside the "
                    f"repository)")
    return path


def corpus_options(name):
    """A corpus case's `args.json` (run settings only) as command-line options."""
    args = json.loads(corpus(name, ".args.json").read_text(encoding="utf-8"))
    assert set(args) <= {"horizon", "warmup", "seed", "arrivals"}, args
    out = []
    for key, value in args.items():
        out += [f"--{key}", repr(value)]
    return out


def expected_text(path):
    """An expected file of the corpus: the text followed by one newline (corpus README)."""
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n")
    return text[:-1]


# ---------------------------------------------------------------------------------------
# --json


def test_json_report_parses_and_is_deterministic():
    a = cli("run", MM1, *SHORT, "--json")
    b = cli("run", MM1, *SHORT, "--json")
    assert a.returncode == 0, a.stderr
    assert a.stderr == ""  # no progress line or note when stderr is not a terminal
    assert a.stdout == b.stdout  # byte for byte: same program, same seed
    assert a.stdout.endswith("}\n") and a.stdout.count("\n") == 1
    report = json.loads(a.stdout)
    assert report["serq_version"] == "0.1.2"
    assert (report["horizon"], report["warmup"], report["seed"]) == (2000, 100, 7)
    assert list(report["observes"]) == ["response"]
    assert list(report["gauges"]) == ["in_system", "utilization"]
    assert [s["name"] for s in report["stages"]] == ["server"]
    assert report["pools"] == []


def test_json_is_the_library_report(serq_main):
    p = serq_main("run", MM1, *SHORT, "--seed", "3", "--json")
    assert p.returncode == 0, p.stderr
    program = serq.compile(MM1, horizon=2000, warmup=100, seed=3)
    assert p.stdout == serq.run(program).json() + "\n"


def test_seed_changes_the_run(serq_main):
    a = json.loads(serq_main("run", MM1, *SHORT, "--json").stdout)
    b = json.loads(serq_main("run", MM1, *SHORT, "--seed", "8", "--json").stdout)
    assert (a["seed"], b["seed"]) == (7, 8)
    assert a["observes"]["response"] != b["observes"]["response"]
    assert a["arrivals"] != b["arrivals"]


@pytest.mark.parametrize("name", ["c01_fifo_tandem", "c02_ps_capacity"])
def test_json_equals_the_reference_report(serq_main, name):
    # golden: NAME.report.json of the corpus, pyserq 0.1.2's Report.json() for this case
    p = serq_main("run", str(corpus(name, ".sq")), *corpus_options(name), "--json",
            cwd=RUN_CORPUS)
    assert p.returncode == 0, p.stderr
    assert p.stdout == expected_text(corpus(name, ".report.json")) + "\n"


def test_set_and_run_options_reach_the_run(serq_main):
    p = serq_main("run", MM1, *SHORT, "--set", "lam=0.5", "--json")
    report = json.loads(p.stdout)
    # half the arrival rate: about 0.5 * 2000 = 1000 arrivals instead of about 1600
    assert 850 < report["arrivals"] < 1150
    assert p.stdout == serq.run(serq.compile(MM1, horizon=2000, warmup=100,
                                             sets={"lam": "0.5"})).json() + "\n"


def test_arrivals_drained_before_the_warmup_is_a_run_time_error(serq_main):
    # mm1's warm-up is 1000; 50 arrivals at rate 0.8 are served long before it
    p = serq_main("run", MM1, "--horizon", "100000", "--arrivals", "50", "--json")
    assert (p.returncode, p.stdout) == (1, "")
    lines = p.stderr.splitlines()
    assert lines[0].startswith("run: arrivals drained at ")
    assert lines[0].endswith(" before or at warmup 1000; no measurement interval")
    assert lines[1].startswith("note: at time ") and len(lines) == 2
    no_traceback(p)


def test_arrivals_option_stops_arrivals(serq_main):
    p = serq_main("run", MM1, "--horizon", "100000", "--warmup", "0", "--arrivals", "50", "--json")
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    assert report["arrivals"] == 50
    assert report["end"] < 100000  # drained long before the horizon


# ---------------------------------------------------------------------------------------
# IR input


def test_ir_input_runs_like_the_source(serq_main, tmp_path):
    ir = tmp_path / "mm1.json"
    ir.write_text(serq.compile(MM1).to_json(), encoding="utf-8")
    a = serq_main("run", MM1, *SHORT, "--json")
    b = serq_main("run", str(ir), *SHORT, "--json")  # the run options apply to IR too
    assert b.returncode == 0, b.stderr
    assert b.stderr == ""
    assert a.stdout == b.stdout


def test_ir_input_ignores_set_with_a_note(serq_main, tmp_path):
    ir = tmp_path / "mm1.json"
    ir.write_text(serq.compile(MM1).to_json(), encoding="utf-8")
    a = serq_main("run", str(ir), *SHORT, "--json")
    b = serq_main("run", str(ir), *SHORT, "--set", "lam=0.5", "--json")
    assert b.returncode == 0
    assert a.stdout == b.stdout
    assert "--set" in b.stderr and "ignored" in b.stderr


def test_ir_input_with_bad_run_options_is_refused(serq_main, tmp_path):
    ir = tmp_path / "mm1.json"
    ir.write_text(serq.compile(MM1).to_json(), encoding="utf-8")
    p = serq_main("run", str(ir), "--warmup", "30000")  # mm1's horizon is 20000
    assert (p.returncode, p.stdout) == (1, "")
    assert p.stderr == "run: need 0 <= warmup < horizon\n"  # Program.from_json's message


# ---------------------------------------------------------------------------------------
# the text report


def test_text_report(serq_main):
    p = serq_main("run", MM1, *SHORT)
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    assert p.stdout.endswith("\n") and not p.stdout.endswith("\n\n")
    report = serq.run(serq.compile(MM1, horizon=2000, warmup=100))
    assert p.stdout == serq.report.format_text(report, program_name=MM1).rstrip("\n") + "\n"
    # it names the program, the observation with its count, the gauges and the stage
    assert MM1 in p.stdout
    count = report.observe("response").count
    assert any("response" in line and str(count) in line for line in p.stdout.splitlines())
    for name in ("in_system", "utilization", "server"):
        assert name in p.stdout


# ---------------------------------------------------------------------------------------
# --dump


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def test_dump_writes_one_csv_per_observation(serq_main, tmp_path):
    out = tmp_path / "dump"
    p = serq_main("run", MM1, *SHORT, "--json", "--dump", str(out))
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    assert sorted(os.listdir(out)) == ["response.csv"]
    rows = read_csv(out / "response.csv")
    assert rows[0] == ["time", "session", "turn", "value"]
    obs = report["observes"]["response"]
    assert len(rows) - 1 == obs["count"]
    values = [float(r[3]) for r in rows[1:]]
    assert sum(values) / len(values) == pytest.approx(obs["mean"], rel=1e-12)
    times = [float(r[0]) for r in rows[1:]]
    assert times == sorted(times) and 100 <= times[0] and times[-1] <= 2000  # warm records
    assert all(r[2] == "0" for r in rows[1:])  # mm1 has no `turn;`
    # stderr says where the files went
    assert str(out) in p.stderr and "response.csv" in p.stderr


def test_dump_of_several_observations(serq_main, tmp_path):
    # probe p34 of the corpus observes four values per turn (9 turns); its trace path is
    # relative to the corpus folder, the working directory here
    out = tmp_path / "d"
    p = serq_main("run", "p34_trace_ordered.sq", *corpus_options("p34_trace_ordered"),
            "--dump", str(out), cwd=RUN_CORPUS)
    assert p.returncode == 0, p.stderr
    assert sorted(os.listdir(out)) == ["f.csv", "m.csv", "n.csv", "o.csv"]
    for name in "nomf":
        rows = read_csv(out / f"{name}.csv")
        assert rows[0] == ["time", "session", "turn", "value"]
        assert len(rows) == 1 + 9


def test_dump_into_a_file_is_an_error_before_the_run(serq_main, tmp_path):
    f = tmp_path / "taken"
    f.write_text("x", encoding="utf-8")
    p = serq_main("run", MM1, *SHORT, "--dump", str(f))
    assert (p.returncode, p.stdout) == (1, "")
    assert p.stderr == f"cannot write to {f}: it exists and is not a directory\n"


# ---------------------------------------------------------------------------------------
# errors


def test_run_time_error_is_the_reference_message():
    # golden: c31_err_branch_guard.err, the reference's run-time error for this program
    p = cli("run", str(corpus("c31_err_branch_guard", ".sq")),
            *corpus_options("c31_err_branch_guard"))
    assert p.returncode == 1
    assert p.stdout == ""
    no_traceback(p)
    message = expected_text(corpus("c31_err_branch_guard", ".err"))
    lines = p.stderr.splitlines()
    assert lines[0] == message
    # the place: session 1 (the second of the batch, serials from 0) reaches the branch at
    # time 2, after session 0's unit of service and its own (fifo(1), service 1)
    assert lines[1:] == ["note: at time 2, session 1, in `branch (serial / 2)`"]


@pytest.mark.parametrize("name", ["c31_err_branch_guard", "c32_err_load_exceeds",
                                  "c33_err_arrivals_short", "p16_bad_index"])
def test_every_run_time_error_of_the_corpus(serq_main, name):
    # golden: NAME.err, the reference's message for the run of this case
    p = serq_main("run", str(corpus(name, ".sq")), *corpus_options(name), "--json")
    assert (p.returncode, p.stdout) == (1, "")
    lines = p.stderr.splitlines()
    assert lines[0] == expected_text(corpus(name, ".err"))
    assert len(lines) <= 2 and all(line.startswith("note: at time ") for line in lines[1:])


def test_run_time_error_with_serq_debug_shows_the_traceback():
    p = cli("run", str(corpus("c31_err_branch_guard", ".sq")), env={"SERQ_DEBUG": "1"})
    assert p.returncode == 1
    assert "Traceback" in p.stderr and "SimulationError" in p.stderr


def test_compile_error_exits_1(serq_main, tmp_path):
    src = tmp_path / "bad.sq"
    src.write_text("stage s : lifo;\n", encoding="utf-8")
    p = serq_main("run", str(src))
    assert (p.returncode, p.stdout) == (1, "")
    assert "unknown stage kind `lifo`" in p.stderr
    no_traceback(p)


def test_missing_file_exits_1():
    p = cli("run", "no/such/file.sq", "--json")
    assert (p.returncode, p.stdout) == (1, "")
    assert "no/such/file.sq" in p.stderr and len(p.stderr.splitlines()) == 1


def test_trace_paths_resolve_beside_the_program(serq_main, tmp_path):
    """A program's `trace "F"` is read beside the program file (pyserq 0.1.2:
    `pyserq.run(pyserq.compile('/tmp/trt2/tr.sq'))` run from another directory reads
    /tmp/trt2/t.csv and observes n twice, mean 4); `--trace F` from the working directory."""
    (tmp_path / "t.csv").write_text("session,turn,new,out,think\n0,0,5,2,1\n0,1,3,4,0\n",
                                    encoding="utf-8")
    src = tmp_path / "tr.sq"
    src.write_text("stage gate : delay;\n"
                   "workload { arrive batch(1); trace \"t.csv\" ordered;\n"
                   "  session { loop { turn; request; run gate (think);"
                   " branch (more == 0) { end; } } } }\n"
                   "server { observe n = new; }\n"
                   "run { horizon 100; }\n", encoding="utf-8")
    here = serq_main("run", "tr.sq", "--json", cwd=tmp_path)
    assert here.returncode == 0, here.stderr
    n = json.loads(here.stdout)["observes"]["n"]
    assert (n["count"], n["mean"]) == (2, 4)  # new = 5, then 3
    # from another directory too: `t.csv` lies beside the program
    away = serq_main("run", str(src), "--json", cwd=ROOT)
    assert away.returncode == 0, away.stderr
    assert json.loads(away.stdout)["observes"]["n"] == n
    # `--trace t.csv` is read from the working directory, where there is none
    lost = serq_main("run", str(src), "--json", "--trace", "t.csv", cwd=ROOT)
    assert (lost.returncode, lost.stdout) == (1, "")
    assert "t.csv" in lost.stderr and len(lost.stderr.splitlines()) == 1
    no_traceback(lost)
    # --trace replaces the path, again relative to the working directory
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "u.csv").write_text("session,turn,new,out,think\n0,0,9,1,0\n",
                                            encoding="utf-8")
    other = serq_main("run", "tr.sq", "--trace", "sub/u.csv", "--json", cwd=tmp_path)
    assert other.returncode == 0, other.stderr
    assert json.loads(other.stdout)["observes"]["n"]["mean"] == 9


@pytest.mark.parametrize("args", [
    ["run"],                                  # no file
    ["run", MM1, MM1],                        # one file
    ["run", MM1, "--bogus"],
    ["run", MM1, "--seed", "-1"],
    ["run", MM1, "--horizon", "soon"],
    ["run", MM1, "--arrivals", "1.5"],
    ["run", MM1, "--set", "lam"],
    ["run", MM1, "--dump"],                   # DIR missing
    ["run", MM1, "--json=yes"],               # a flag takes no value
])
def test_usage_errors_exit_2(serq_main, args):
    p = serq_main(*args)
    assert p.returncode == 2, p.stderr
    assert p.stdout == ""
    assert "usage: serq run" in p.stderr
    no_traceback(p)


def test_usage_error_in_a_process():
    p = cli("run", MM1, "--seed", "-1")
    assert (p.returncode, p.stdout) == (2, "")
    assert p.stderr.startswith("usage: serq run ")
    assert p.stderr.endswith("serq run: error: argument --seed: expected an integer from 0 to "
                             "2^64-1, got -1\n")


def test_help(serq_main):
    p = serq_main("run", "--help")
    assert p.returncode == 0
    for opt in ("--json", "--dump", "--seed", "--horizon", "--warmup", "--arrivals",
                "--trace", "--set", "--def"):
        assert opt in p.stdout
    assert "run" in serq_main("--help").stdout


# ---------------------------------------------------------------------------------------
# stuck sessions, interruption, progress (in process)


def fake_report(pools):
    return types.SimpleNamespace(json=lambda: '{"fake":true}', pools=pools, observes={})


def pool_row(name, index, stuck):
    return types.SimpleNamespace(name=name, index=index, stuck=stuck)


def test_a_stuck_session_exits_1_after_the_report(monkeypatch, capsys):
    monkeypatch.setattr(serq, "run", lambda program: fake_report(
        [pool_row("reqs", None, 0), pool_row("kv", 0, 0), pool_row("kv", 1, 2)]))
    assert serq_cli.main(["run", MM1, "--json"]) == 1
    out, err = capsys.readouterr()
    assert out == '{"fake":true}\n'  # the report is printed all the same
    assert err == ("serq: 2 sessions stuck in pool kv[1] (preempted again before making any "
                   "progress: a possible livelock)\n")
    assert len(err.splitlines()) == 1


def test_stuck_sessions_in_several_pools(monkeypatch, capsys):
    monkeypatch.setattr(serq, "run", lambda program: fake_report(
        [pool_row("a", None, 1), pool_row("kv", 0, 0), pool_row("kv", 3, 2)]))
    assert serq_cli.main(["run", MM1, "--json"]) == 1
    assert capsys.readouterr().err == ("serq: 3 sessions stuck in pools a (1), kv[3] (2) "
                                       "(preempted again before making any progress: a "
                                       "possible livelock)\n")


def test_no_stuck_session_exits_0(monkeypatch, capsys):
    monkeypatch.setattr(serq, "run", lambda program: fake_report([pool_row("kv", None, 0)]))
    assert serq_cli.main(["run", MM1, "--json"]) == 0
    assert capsys.readouterr().err == ""


def test_stuck_probe_from_the_corpus(serq_main):
    # probe p04: a self-preempting hold; the reference reports kv.stuck = 1 (p04 report.json)
    p = serq_main("run", str(corpus("p04_stuck_selfpreempt", ".sq")),
            *corpus_options("p04_stuck_selfpreempt"), "--json")
    assert p.returncode == 1
    assert p.stdout == expected_text(corpus("p04_stuck_selfpreempt", ".report.json")) + "\n"
    assert p.stderr == ("serq: 1 session stuck in pool kv (preempted again before making any "
                        "progress: a possible livelock)\n")


def test_interrupt_exits_130_with_one_line(monkeypatch, capsys):
    def interrupted(program):
        raise KeyboardInterrupt
    monkeypatch.setattr(serq, "run", interrupted)
    assert serq_cli.main(["run", MM1]) == 130
    out, err = capsys.readouterr()
    assert (out, err) == ("", "serq: interrupted\n")


class FakeTerminal:
    def __init__(self, tty=True):
        self.tty = tty
        self.chunks = []

    def isatty(self):
        return self.tty

    def write(self, text):
        self.chunks.append(text)

    def flush(self):
        pass


def test_progress_line_on_a_terminal_is_erased_at_the_end(monkeypatch):
    monkeypatch.delenv("SERQ_PROGRESS", raising=False)
    term = FakeTerminal()
    progress = serq_cli._Progress(term, delay=0.0, interval=0.001)
    with progress:
        while not term.chunks:  # wait for the first line (no sleep-based timing)
            progress.stop.wait(0.001)
    text = "".join(term.chunks)
    assert text.startswith("\rserq: running ")
    last = term.chunks[-1]
    assert last.strip() == "" and last.startswith("\r") and last.endswith("\r")
    assert len(last) == progress.width + 2  # blanks over the whole line


@pytest.mark.parametrize("tty, env", [(False, None), (True, "0")])
def test_no_progress_off_a_terminal_or_when_disabled(monkeypatch, tty, env):
    if env is None:
        monkeypatch.delenv("SERQ_PROGRESS", raising=False)
    else:
        monkeypatch.setenv("SERQ_PROGRESS", env)
    term = FakeTerminal(tty)
    progress = serq_cli._Progress(term, delay=0.0, interval=0.001)
    with progress:
        pass
    assert progress.thread is None and term.chunks == []


def test_progress_waits_for_its_delay(monkeypatch):
    monkeypatch.delenv("SERQ_PROGRESS", raising=False)
    term = FakeTerminal()
    with serq_cli._Progress(term, delay=3600.0):  # a run much shorter than the delay
        pass
    assert term.chunks == []
