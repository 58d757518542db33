"""Deep nesting (issue 8): however deep a program nests, serq answers — it compiles, prints and
runs what its stack holds, and refuses the rest with one clear error — and never dies with a
signal. 25,000 nested `branch`es used to kill `serq check` with signal 11 (the recursion limit
raised past what the main thread's C stack holds); serq.deep now runs that work on a thread
whose stack is sized for the limit.

Every reproducer runs in a child process, under a timeout and an address-space limit, so a
regression shows as a failed assertion (a negative return code is a signal), never as a
crashed test run.
"""
import os
import pathlib
import resource
import subprocess
import sys

import pytest

import serq
from serq import deep

ROOT = pathlib.Path(__file__).resolve().parents[1]
TOO_DEEP = ("the program nests too deeply for serq to process it (expressions or blocks "
            "thousands of levels deep)\n")
HEAD = "stage s : fifo(1);\nworkload { arrive poisson(1); }\nsession {\n"
TAIL = "\n}\nrun { horizon 10; }\n"


def nested(kind, n):
    """A program nesting one construct N levels deep."""
    body = {
        "branch": lambda: "branch (1 == 1) { " * n + "observe x = 1;" + " }" * n,
        "abs": lambda: "observe x = " + "abs(" * n + "now" + ")" * n + ";",
        "paren": lambda: "observe x = " + "(" * n + "1" + ")" * n + ";",
        "neg": lambda: "observe x = " + "-" * n + "now;",
        "not": lambda: "observe x = " + "!" * n + "(now > 1);",
        "cond": lambda: "observe x = " + "now > 1 ? 1 : " * n + "2;",
        "sum": lambda: "observe x = " + " + ".join(["now"] * n) + ";",
    }[kind]()
    return HEAD + body + TAIL


def _limits(address_space):
    def apply():
        resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
    return apply


def serq_cli(tmp_path, source, *args, address_space=4 << 30, timeout=240):
    path = tmp_path / "deep.sq"
    path.write_text(source, encoding="utf-8")
    env = dict(os.environ)
    env.pop("SERQ_DEBUG", None)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [sys.executable, "-m", "serq", args[0], str(path), *args[1:]]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout,
                          preexec_fn=_limits(address_space))


def test_25000_nested_branches_check_without_a_crash(tmp_path):
    p = serq_cli(tmp_path, nested("branch", 25_000), "check")
    assert p.returncode == 0, p.stderr  # a signal would be negative
    assert p.stdout.endswith(": ok \u2014 0 pools, 1 stage, 9 attributes, 50003 blocks\n")


def test_8000_nested_calls_run_without_a_crash(tmp_path):
    # `observe x = abs(abs(…now…));` nested 8,000 deep checked fine and crashed at run
    p = serq_cli(tmp_path, nested("abs", 8_000), "run", "--horizon", "20", "--json")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith('{"serq_version":"0.1.2"')


@pytest.mark.parametrize("kind,n", [("paren", 200_000), ("branch", 100_000), ("neg", 200_000),
                                    ("sum", 100_000)])
def test_deeper_than_the_limit_is_one_clear_error(tmp_path, kind, n):
    p = serq_cli(tmp_path, nested(kind, n), "check")
    assert (p.returncode, p.stdout, p.stderr) == (1, "", TOO_DEEP)


def test_a_tight_address_space_gives_the_same_error_sooner(tmp_path):
    # under `ulimit -v` 300 MB the deep stack is smaller (a quarter of the space) and the
    # limit lower: still the error, not a crash nor "out of memory"
    p = serq_cli(tmp_path, nested("paren", 200_000), "check", address_space=300 << 20)
    assert (p.returncode, p.stderr) == (1, TOO_DEEP)
    p = serq_cli(tmp_path, nested("cond", 2_000), "check", address_space=300 << 20)
    assert p.returncode == 0, p.stderr


DEEP_VALUES = r"""
import sys
import serq
src = sys.stdin.read()
p = serq.compile(source=src)
q = serq.compile(source=src)
for name, op in [("eq", lambda: p == q), ("hash", lambda: hash(p) == hash(q)),
                 ("repr", lambda: repr(p).startswith("Program(")),
                 ("to_json", lambda: len(p.to_json()) > 0)]:
    if name not in sys.argv[1:]:
        continue
    try:
        print(name, op())
    except ValueError as e:
        print(name, type(e).__name__, e)
"""


def test_deep_program_values_compare_hash_and_print(tmp_path):
    source = nested("neg", 3_000)
    p = subprocess.run([sys.executable, "-c", DEEP_VALUES, "eq", "hash", "repr", "to_json"],
                       input=source, capture_output=True,
                       text=True, timeout=240, preexec_fn=_limits(4 << 30),
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert p.returncode == 0, p.stderr
    assert p.stdout == "eq True\nhash True\nrepr True\nto_json True\n"


def test_repr_deeper_than_the_limit_is_the_error(tmp_path):
    source = nested("neg", 40_000)  # its IR text would take gigabytes: no to_json here
    p = subprocess.run([sys.executable, "-c", DEEP_VALUES, "repr"], input=source, capture_output=True,
                       text=True, timeout=240, preexec_fn=_limits(4 << 30),
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert p.returncode == 0, p.stderr
    assert f"repr NestingError {TOO_DEEP}" in p.stdout


def test_ir_text_nesting_is_bounded_as_the_reference_bounds_it():
    # serde_json's limit of 128 nested containers: pyserq 0.1.2 says the same
    # (`IR: recursion limit exceeded at line 224 column 255` for a 1000-deep negation)
    text = serq.compile(source=nested("neg", 200)).to_json()
    with pytest.raises(serq.IRError, match=r"^IR: recursion limit exceeded at line \d+ "):
        serq.Program.from_json(text)


def test_nested_deep_calls_run_in_place():
    seen = []

    @deep.deep
    def inner():
        seen.append(sys.getrecursionlimit())
        return "inner"

    @deep.deep
    def outer():
        return inner()
    assert outer() == "inner"
    assert seen and seen[0] >= 1000


def test_errors_of_the_work_reach_the_caller():
    @deep.deep
    def fails():
        raise serq.CompileError("a message")
    with pytest.raises(serq.CompileError, match="^a message$"):
        fails()


def test_the_limit_is_restored_after_the_work():
    before = sys.getrecursionlimit()

    @deep.deep
    def work():
        return sys.getrecursionlimit()
    assert work() >= before
    assert sys.getrecursionlimit() == before


def test_the_stack_holds_the_limit():
    assert deep.STACK_BYTES >= deep.LIMIT * deep.FRAME_BUDGET
    # measured on CPython 3.11: about 0.4–0.7 KB of C stack per frame that passes through C
    assert deep.FRAME_BUDGET >= 4 * 700
