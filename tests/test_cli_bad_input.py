"""Every subcommand with bad input, in subprocesses (the house rule, issue 8): no traceback,
no hang, exit status 1 (bad input) or 2 (usage error), and a message on stderr that names the
file or the option at fault. Nothing already there is lost: a symbolic link given as output is
replaced, its target untouched.

The battery runs once, in parallel, in a module fixture (each case a fresh ``serq`` process
under a time limit and a memory cap); the tests then check each case's outcome.
"""
from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
EX = ROOT / "examples"
MM1 = str(EX / "mm1.sq")
VLLM = str(EX / "vllm_engine.sq")
CLAIMS = str(EX / "papers" / "bari_rad.sq")
TRACES = ROOT / "tests" / "traces"
LIMIT_S = 60
MEMORY_KB = 4_000_000

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")

FAST = ["--horizon", "50", "--warmup", "0"]
SWEEP = ["--seeds", "1", "-j", "1"]

# the commands that read one input file: argv with {IN} where the file goes
READERS = {
    "check": ["check", "{IN}"],
    "ir": ["ir", "{IN}"],
    "run": ["run", "{IN}"],
    "run --trace": ["run", MM1, *FAST, "--trace", "{IN}"],
    "draw": ["draw", "{IN}"],
    "verify": ["verify", "{IN}", "--samples", "0"],
    "numerics cost": ["numerics", "cost", "{IN}"],
    "numerics check": ["numerics", "check", "{IN}"],
    "sweep": ["sweep", "{IN}", "--set", "lam=0.5", *SWEEP],
    "capacity": ["capacity", "{IN}", *SWEEP, "--knob", "lam", "--slo", "response.mean<5"],
    "plot cdf": ["plot", "cdf", "{IN}", "-o", "{TMP}/o.png"],
    "plot sweep": ["plot", "sweep", "{IN}", "--x", "lam", "--metric", "m", "-o", "{TMP}/o.png"],
    "trace import azure": ["trace", "import", "azure", "{IN}", "{TMP}/t.csv"],
    "trace import mooncake": ["trace", "import", "mooncake", "{IN}", "{TMP}/t.csv"],
    "trace import burstgpt": ["trace", "import", "burstgpt", "{IN}", "{TMP}/t.csv"],
    "trace import sharegpt": ["trace", "import", "sharegpt", "{IN}", "{TMP}/t.csv"],
}
# bad inputs: each reader gets the two that used to hang or exhaust memory, and one more in
# rotation (missing, a directory, binary, empty) so that every kind meets several commands
ALWAYS = ("fifo", "zero")
ROTATION = ("missing", "dir", "binary", "empty")

# the commands that write a file: argv with {OUT}; the output's name in the message
WRITERS = {
    "sweep --out": ["sweep", MM1, "--set", "lam=0.5", *SWEEP, *FAST, "--out", "{OUT}.csv"],
    "sweep --summary": ["sweep", MM1, "--set", "lam=0.5", *SWEEP, *FAST, "--summary",
                        "{OUT}.csv"],
    "plot -o": ["plot", "cdf", MM1, *FAST, "-o", "{OUT}.png"],
    "draw -o": ["draw", MM1, "-o", "{OUT}.svg"],
    "run --plan": ["run", VLLM, "--horizon", "2", "--warmup", "0", "--plan", "{OUT}.jsonl"],
    "trace import OUT": ["trace", "import", "sharegpt", str(TRACES / "sharegpt_sample.json"),
                         "{OUT}.csv"],
}

# a closed standard output: the commands that print their own way
STDOUT = {
    "verify": ["verify", CLAIMS, "--samples", "0", "--sessions", "1"],
    "numerics cost": ["numerics", "cost", VLLM, "--horizon", "2", "--warmup", "0"],
    "drt": ["drt", "--cases", "1"],
    "sweep": ["sweep", MM1, "--set", "lam=0.5", *SWEEP, *FAST],
}

# option values: (argv, the text the message must contain)
OPTIONS = {
    "sweep --seeds huge": (["sweep", MM1, "--set", "lam=0.5", "--seeds", "99999999999"],
                           "--seeds"),
    "sweep --set tiny step": (["sweep", MM1, "--set", "lam=0:1:1e-300", *SWEEP], "--set"),
    "sweep --set backwards": (["sweep", MM1, "--set", "lam=5:1:0.5", *SWEEP], "--set"),
    "sweep -j 0": (["sweep", MM1, "--set", "lam=0.5", "-j", "0"], "--jobs"),
    "sweep --percentiles": (["sweep", MM1, "--set", "lam=0.5", *SWEEP, "--percentiles", "x"],
                            "--percentiles"),
    "capacity --slo": (["capacity", MM1, *SWEEP, "--knob", "lam", "--slo", "response<"],
                       "--slo"),
    "capacity --lo nan": (["capacity", MM1, *SWEEP, "--knob", "lam", "--slo",
                           "response.mean<5", "--lo", "nan", "--hi", "1"], "--lo"),
    "run --percentiles": (["run", MM1, *FAST, "--percentiles", "101"], "--percentiles"),
    "trace import --scale inf": (["trace", "import", "sharegpt",
                                  str(TRACES / "sharegpt_sample.json"), "{TMP}/t.csv",
                                  "--scale", "inf"], "--scale"),
    "trace import --start nan": (["trace", "import", "mooncake",
                                  str(TRACES / "mooncake_sample.jsonl"), "{TMP}/t.csv",
                                  "--start", "nan"], "--start"),
    "plot --dpi huge": (["plot", "cdf", MM1, "-o", "{TMP}/o.png", "--dpi", "100000"], "--dpi"),
    "plot sweep --slo nan": (["plot", "sweep", str(TRACES / "README.md"), "--x", "lam",
                              "--metric", "m", "--slo", "nan", "-o", "{TMP}/o.png"], "--slo"),
    "numerics check --model-seed": (["numerics", "check", "{TMP}/p.jsonl", "--model-seed",
                                     "-1"], "--model-seed"),
    "numerics cost --multiplier inf": (["numerics", "cost", VLLM, "--multiplier", "inf"],
                                       "--multiplier"),
    "verify --sessions huge": (["verify", CLAIMS, "--sessions", "1000000"], "--sessions"),
    "verify --values huge": (["verify", CLAIMS, "--values", "vp=1..99999999999"], "--values"),
    "verify --times nan": (["verify", CLAIMS, "--samples", "0", "--times", "nan"], "--times"),
    "draw -o empty": (["draw", MM1, "-o", ""], "-o"),
}


def _fixtures(tmp: pathlib.Path) -> dict:
    (tmp / "dir").mkdir()
    os.mkfifo(tmp / "fifo")
    (tmp / "empty").write_bytes(b"")
    (tmp / "binary").write_bytes(b"\xff\xfe\x00 not text \x81")
    (tmp / "target.txt").write_text("keep\n")
    return {"missing": str(tmp / "missing"), "dir": str(tmp / "dir"), "zero": "/dev/zero",
            "fifo": str(tmp / "fifo"), "empty": str(tmp / "empty"),
            "binary": str(tmp / "binary")}


def _cases(tmp: pathlib.Path, inputs: dict) -> dict:
    cases = {}
    for i, (name, argv) in enumerate(READERS.items()):
        kinds = ALWAYS + (ROTATION[i % len(ROTATION)],)
        for kind in kinds:
            path = inputs[kind]
            cases[f"{name} < {kind}"] = (argv, {"IN": path}, path, None)
    outputs = {"/dev/full": "/dev/full", "no directory": str(tmp / "nowhere" / "x"),
               "under a file": str(tmp / "empty" / "x")}
    for name, argv in WRITERS.items():
        for kind, out in outputs.items():
            if kind == "/dev/full":  # a link whose name has the right suffix
                suffix = argv[-1][len("{OUT}"):]
                link = tmp / f"full-{len(cases)}{suffix}"
                link.symlink_to("/dev/full")
                out = str(link)[:-len(suffix)]
            cases[f"{name} > {kind}"] = (argv, {"OUT": out}, out, None)
    for name, argv in STDOUT.items():
        cases[f"{name} >&-"] = (argv, {}, "standard output", "closed")
    for name, (argv, text) in OPTIONS.items():
        cases[f"option {name}"] = (argv, {}, text, None)
    return cases


def _run(argv, stdout):
    pre = "exec 1>&-; " if stdout == "closed" else ""
    line = " ".join("'" + a.replace("'", "'\\''") + "'" for a in argv)
    cmd = (f"ulimit -v {MEMORY_KB}; {pre}exec timeout -s KILL {LIMIT_S} "
           f"{sys.executable} -m serq {line}")
    env = dict(os.environ, SERQ_PROGRESS="0")
    env.pop("SERQ_DEBUG", None)
    return subprocess.run(["bash", "-c", cmd], stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL if stdout else subprocess.PIPE,
                          stderr=subprocess.PIPE, env=env, timeout=LIMIT_S + 30)


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bad-input")
    inputs = _fixtures(tmp)
    shutil.copy(TRACES / "README.md", tmp / "README.md")
    (tmp / "p.jsonl").write_text('{"format": "serq-plan", "version": 1}\n')
    cases = _cases(tmp, inputs)

    def one(item):
        name, (argv, subs, named, stdout) = item
        subs = dict(subs, TMP=str(tmp))
        real = [a.format(**subs) if "{" in a else a for a in argv]
        return name, (_run(real, stdout), named.format(**subs))

    with ThreadPoolExecutor(max_workers=4) as pool:
        done = dict(pool.map(one, cases.items()))
    done["__tmp__"] = tmp
    return done


def _names():
    """The case names of :func:`_cases`, without making any file (for parametrize)."""
    for i, name in enumerate(READERS):
        for kind in ALWAYS + (ROTATION[i % len(ROTATION)],):
            yield f"{name} < {kind}"
    for name in WRITERS:
        for kind in ("/dev/full", "no directory", "under a file"):
            yield f"{name} > {kind}"
    for name in STDOUT:
        yield f"{name} >&-"
    for name in OPTIONS:
        yield f"option {name}"


@pytest.mark.parametrize("case", list(_names()))
def test_bad_input_is_a_clear_error(outcomes, case):
    p, named = outcomes[case]
    err = p.stderr.decode("utf-8", "replace")
    assert p.returncode not in (-9, 124, 137), f"{case}: did not finish in {LIMIT_S} s"
    assert "Traceback" not in err, f"{case}: a traceback\n{err}"
    assert "internal error" not in err, f"{case}: an internal error\n{err}"
    assert p.returncode in (1, 2), f"{case}: exit status {p.returncode}\n{err}"
    assert named in err, f"{case}: the message does not name {named!r}\n{err}"


def test_an_output_symlink_is_replaced_not_followed(tmp_path):
    """``OUT`` an existing link to a file: the link is replaced by the new file; the file it
    pointed to keeps its content (issue 8's rule for --dump, for every output)."""
    target = tmp_path / "target.txt"
    target.write_text("keep\n")
    link = tmp_path / "out.csv"
    link.symlink_to(target)
    p = _run(["trace", "import", "sharegpt", str(TRACES / "sharegpt_sample.json"), str(link)],
             None)
    assert p.returncode == 0, p.stderr.decode()
    assert target.read_text() == "keep\n"
    assert not link.is_symlink()
    assert link.read_text().startswith("# serq trace import sharegpt")
