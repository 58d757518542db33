"""The command line, run as `python -m serq` in a child process: output, exit codes, messages."""
import io
import json
import os
import pathlib
import subprocess
import sys

import pytest

import serq

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
GOLDEN = ROOT / "tests" / "golden"
SHARED = pathlib.Path(os.environ.get("SERQ_SHARED", ROOT.parent / "shared"))

MM1 = str(EXAMPLES / "mm1.sq")


def cli(*args, env=None, cwd=None, process=False):
    """Run the command line with ARGS; returns a CompletedProcess (text, UTF-8).

    By default `serq.cli.main` runs in this process, with stdout and stderr captured as
    bytes, which is much faster than a child process; with ``process=True``, or an ``env`` to
    set, it is `python -m serq ARGS` in a child process."""
    if process or env:
        e = dict(os.environ)
        e.pop("SERQ_DEBUG", None)
        e["PYTHONPATH"] = str(ROOT) + os.pathsep + e.get("PYTHONPATH", "")
        if env:
            e.update(env)
        return subprocess.run([sys.executable, "-m", "serq", *args], capture_output=True,
                              encoding="utf-8", errors="replace", env=e, cwd=cwd or ROOT,
                              timeout=120)
    return _in_process(list(args), cwd or ROOT)


def _in_process(args, cwd):
    from serq.cli import main
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="replace")
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="replace")
    saved = sys.stdout, sys.stderr, os.getcwd(), os.environ.pop("SERQ_DEBUG", None)
    sys.stdout, sys.stderr = out, err
    try:
        os.chdir(cwd)
        try:
            code = main(args)
        except SystemExit as e:  # argparse: --help, --version, usage errors
            code = e.code
    finally:
        sys.stdout, sys.stderr = saved[0], saved[1]
        os.chdir(saved[2])
        if saved[3] is not None:
            os.environ["SERQ_DEBUG"] = saved[3]
    texts = []
    for stream in (out, err):
        stream.flush()
        texts.append(stream.buffer.getvalue().decode("utf-8", errors="replace"))
    return subprocess.CompletedProcess(["serq", *args], code, texts[0], texts[1])


def golden(name):
    return (GOLDEN / f"{name}.ir.json").read_text(encoding="utf-8")


def no_traceback(proc):
    assert "Traceback" not in proc.stderr
    assert "Traceback" not in proc.stdout


# ---------------------------------------------------------------------------------------
# help, version, usage errors (exit 2)


def test_version():
    p = cli("--version", process=True)
    assert p.returncode == 0
    first, engine = p.stdout.splitlines()
    assert first == f"serq {serq.__version__} (IR version {serq.IR_VERSION})"
    assert engine.startswith(("engine: compiled", "engine: interpreted", "engine: partly"))


@pytest.mark.parametrize("args", [["--help"], ["-h"], ["check", "--help"], ["ir", "--help"]])
def test_help(args):
    p = cli(*args)
    assert p.returncode == 0
    assert p.stdout.startswith("usage: serq")
    assert p.stderr == ""


def test_help_lists_the_commands_and_options():
    assert "check" in cli("--help").stdout and "ir" in cli("--help").stdout
    text = cli("ir", "--help").stdout
    for opt in ("--set", "--def", "--seed", "--horizon", "--warmup", "--arrivals", "--trace"):
        assert opt in text
    text = cli("check", "--help").stdout
    assert "--set" in text and "--def" in text


USAGE_ERRORS = [
    [],                                   # no command
    ["frobnicate"],                       # unknown command
    ["check"],                            # no file
    ["check", MM1, "--bogus"],            # unknown option
    ["check", MM1, "--seed", "3"],        # run settings belong to `ir`
    ["check", MM1, "--set", "lam"],       # --set without `=`
    ["ir", MM1, "--def", "f"],            # --def without `=`
    ["ir", MM1, "--seed", "-1"],          # seed is an unsigned 64-bit integer
    ["ir", MM1, "--seed", "18446744073709551616"],
    ["ir", MM1, "--seed", "1.5"],
    ["ir", MM1, "--horizon", "soon"],
    ["ir", MM1, "--arrivals", "many"],
    ["check", MM1, MM1],                  # one file
]


def test_usage_error_in_a_process():
    p = cli("check", MM1, "--set", "lam", process=True)
    assert (p.returncode, p.stdout) == (2, "")
    assert p.stderr.startswith("usage: serq check ")
    assert p.stderr.endswith("serq check: error: argument --set: expected NAME=EXPR, got 'lam'\n")


@pytest.mark.parametrize("args", USAGE_ERRORS)
def test_usage_errors_exit_2(args):
    p = cli(*args)
    assert p.returncode == 2, p.stderr
    assert p.stdout == ""
    assert "usage: serq" in p.stderr
    if args and args[0] in ("check", "ir"):  # the command's own usage, unknown options too
        assert p.stderr.startswith(f"usage: serq {args[0]} ")
    no_traceback(p)


# ---------------------------------------------------------------------------------------
# success (exit 0)


def summary_of(ir_text):
    ir = json.loads(ir_text)
    def n(k, word):
        return f"{len(ir[k])} {word}" + ("" if len(ir[k]) == 1 else "s")
    return (n("pools", "pool") + ", " + n("stages", "stage") + ", " + n("attrs", "attribute")
            + ", " + n("blocks", "block"))


@pytest.mark.parametrize("name", ["flagship", "mm1", "ps_closed"])
def test_check_prints_a_summary(name):
    path = f"examples/{name}.sq"
    p = cli("check", path)
    assert p.returncode == 0, p.stderr
    assert p.stdout == f"{path}: ok \u2014 {summary_of(golden(name))}\n"
    assert p.stderr == ""


def test_check_summary_of_mm1_by_hand():
    p = cli("check", "examples/mm1.sq")
    assert p.stdout == "examples/mm1.sq: ok \u2014 0 pools, 1 stage, 10 attributes, 3 blocks\n"


@pytest.mark.parametrize("name", ["flagship", "mm1", "ps_closed"])
def test_ir_prints_the_ir_and_a_newline(name):
    p = cli("ir", f"examples/{name}.sq", process=name == "flagship")
    assert p.returncode == 0, p.stderr
    assert p.stdout == golden(name)
    assert p.stderr == ""


def test_set_overrides_a_let():
    base = json.loads(cli("ir", MM1).stdout)
    p = cli("ir", MM1, "--set", "lam=0.5")
    assert p.returncode == 0, p.stderr
    assert base["arrival"] == {"Poisson": 0.8}
    assert json.loads(p.stdout)["arrival"] == {"Poisson": 0.5}
    # the value is an expression, parsed by the compiler; it may read earlier lets
    p = cli("ir", MM1, "--set", "lam=1 / 4")
    assert json.loads(p.stdout)["arrival"] == {"Poisson": 0.25}
    # the last --set of a name wins
    p = cli("ir", MM1, "--set", "lam=0.1", "--set", "lam=0.3")
    assert json.loads(p.stdout)["arrival"] == {"Poisson": 0.3}


def test_set_matches_the_library():
    p = cli("ir", MM1, "--set", "lam=0.7", "--set", "s=2")
    assert p.stdout == serq.compile(MM1, sets={"lam": "0.7", "s": "2"}).to_json() + "\n"


def test_def_replaces_an_expression_definition(tmp_path):
    src = tmp_path / "d.sq"
    src.write_text("def svc(x) = x * 2;\nstage s : fifo;\nworkload { arrive poisson(1); }\n"
                   "session { run s (svc(1)); end; }\nrun { horizon 10; }\n", encoding="utf-8")
    base = cli("ir", str(src))
    p = cli("ir", str(src), "--def", "svc=x + 3")
    assert base.returncode == 0 and p.returncode == 0, p.stderr
    assert p.stdout != base.stdout
    assert p.stdout == serq.compile(str(src), defs={"svc": "x + 3"}).to_json() + "\n"


def test_run_settings():
    p = cli("ir", MM1, "--seed", "9", "--horizon", "50", "--warmup", "5", "--arrivals", "10",
            "--trace", "t.csv")
    assert p.returncode == 0, p.stderr
    ir = json.loads(p.stdout)
    assert (ir["seed"], ir["horizon"], ir["warmup"], ir["arrivals"], ir["trace"]) == (9, 50.0, 5.0, 10, "t.csv")
    assert p.stdout == serq.compile(MM1, seed=9, horizon=50.0, warmup=5.0, arrivals=10,
                                    trace="t.csv").to_json() + "\n"


def test_json_file_is_read_as_ir(tmp_path):
    ir = tmp_path / "mm1.json"
    ir.write_text(golden("mm1"), encoding="utf-8")
    p = cli("check", str(ir))
    assert p.returncode == 0, p.stderr
    assert p.stdout == f"{ir}: ok \u2014 {summary_of(golden('mm1'))}\n"
    p = cli("ir", str(ir))
    assert p.returncode == 0, p.stderr
    assert p.stdout == golden("mm1")


def test_set_and_def_do_not_apply_to_ir(tmp_path):
    ir = tmp_path / "mm1.json"
    ir.write_text(golden("mm1"), encoding="utf-8")
    p = cli("ir", str(ir), "--set", "lam=0.5", "--def", "f=1")
    assert p.returncode == 0
    assert p.stdout == golden("mm1")  # unchanged
    assert p.stderr == (f"serq: note: {ir} is read as IR; --set and --def apply to program "
                        f"text only and were ignored\n")


def test_run_options_apply_to_ir(tmp_path):
    ir = tmp_path / "mm1.json"
    ir.write_text(golden("mm1"), encoding="utf-8")
    p = cli("ir", str(ir), "--seed", "4", "--horizon", "50", "--warmup", "5", "--arrivals", "9")
    assert (p.returncode, p.stderr) == (0, "")
    # the same IR as compiling with those settings
    assert p.stdout == serq.compile(MM1, seed=4, horizon=50, warmup=5, arrivals=9).to_json() + "\n"
    # and validated again: the window must hold, with Program.from_json's message
    p = cli("ir", str(ir), "--warmup", "50000")
    assert (p.returncode, p.stdout, p.stderr) == (1, "", "run: need 0 <= warmup < horizon\n")


def test_non_ascii_output_whatever_the_locale(tmp_path):
    src = tmp_path / "u.sq"
    src.write_text("stage s : fifo;\nworkload { arrive poisson(1); }\n"
                   "session { set \u03bb = 2; run s (\u03bb); end; }\nrun { horizon 10; }\n",
                   encoding="utf-8")
    p = cli("ir", str(src), env={"PYTHONIOENCODING": "ascii", "LC_ALL": "C"})
    assert p.returncode == 0, p.stderr
    assert '"\u03bb"' in p.stdout
    assert p.stdout == serq.compile(str(src)).to_json() + "\n"


def test_console_script_is_declared():
    # serq.entry: Ctrl-C handled before the command line's imports (tests/test_cli_io.py)
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'serq = "serq.entry:main"' in text


# ---------------------------------------------------------------------------------------
# the input does not load (exit 1)


def test_missing_file():
    p = cli("check", "no/such/file.sq", process=True)
    assert p.returncode == 1
    assert p.stdout == ""
    assert "no/such/file.sq" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
    no_traceback(p)


def test_missing_json_file():
    p = cli("ir", "no/such/file.json")
    assert p.returncode == 1
    assert p.stderr == f"cannot read no/such/file.json: {os.strerror(2)} (os error 2)\n"


def test_compile_error_prints_the_message(tmp_path):
    src = tmp_path / "bad.sq"
    src.write_text("stage s : lifo;\n", encoding="utf-8")
    p = cli("check", str(src), process=True)
    assert p.returncode == 1
    assert p.stdout == ""
    assert "unknown stage kind `lifo`" in p.stderr
    with pytest.raises(ValueError) as info:
        serq.compile(str(src))
    assert p.stderr == str(info.value) + "\n"
    no_traceback(p)


def test_bad_set_is_an_input_error():
    p = cli("check", MM1, "--set", "nope=1")
    assert p.returncode == 1
    assert "nope" in p.stderr
    no_traceback(p)


def test_zero_arrivals_is_the_compilers_error():
    p = cli("ir", MM1, "--arrivals", "0")
    assert p.returncode == 1
    assert p.stderr == "run: arrivals must be positive\n"


def test_invalid_ir(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"version": 10', encoding="utf-8")
    p = cli("check", str(bad))
    assert p.returncode == 1
    with pytest.raises(ValueError) as info:
        serq.Program.from_json('{"version": 10')
    assert p.stderr == str(info.value) + "\n"
    no_traceback(p)


def test_refused_ir_cases_from_the_corpus(tmp_path):
    cases = SHARED / "conformance" / "load" / "cases.jsonl"
    if not cases.exists():
        pytest.fail(f"the conformance corpus is missing: {cases} (clone `shared` beside the repository)")
    refused = [c for c in map(json.loads, cases.read_text(encoding="utf-8").splitlines()) if c["error"]]
    for case in refused[:3]:
        f = tmp_path / "case.json"
        f.write_text(case["ir"], encoding="utf-8")
        p = cli("check", str(f))
        assert (p.returncode, p.stderr) == (1, case["error"] + "\n"), case["name"]


def test_serq_debug_shows_the_traceback(tmp_path):
    src = tmp_path / "bad.sq"
    src.write_text("stage s : lifo;\n", encoding="utf-8")
    p = cli("check", str(src), env={"SERQ_DEBUG": "1"})
    assert p.returncode != 0
    assert "Traceback" in p.stderr


def test_main_in_process(capsys):
    from serq.cli import main
    assert main(["check", MM1]) == 0
    assert capsys.readouterr().out.endswith(" attributes, 3 blocks\n")
    assert main(["check", "no/such/file.sq"]) == 1
    with pytest.raises(SystemExit) as info:
        main(["check"])
    assert info.value.code == 2
