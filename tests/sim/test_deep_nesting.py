"""Expressions nested thousands of levels deep in every place the interpreter evaluates one
(issue 8): the run must give the same report as the shallow program, or the error saying the
program nests too deeply, never a crash of the process (a C stack overflow is signal 11, so
each run happens in a child process, under `timeout` and a memory limit).

tests/sim/data/deep_markers.sq holds the marker constant 7 in every such place; the child
replaces each marker (in the compiled IR, so the compiler's own limits play no part) by a
nest of the given shape and depth whose value is 7, runs it, and prints the report's JSON or
the error."""
import os
import pathlib
import resource
import subprocess
import sys

import pytest

import serq

DATA = pathlib.Path(__file__).resolve().parent / "data"
MEMORY_LIMIT = 3 << 30
TIME_LIMIT_S = 300

CHILD = r"""
import dataclasses, sys
import serq
from serq.ir import types as T

shape, depth = sys.argv[2], int(sys.argv[3])
SEVEN = T.Num(7.0)

def nest(shape, n):
    e = SEVEN
    for _ in range(n):
        if shape == "abs":
            e = T.Call("Abs", (T.ArgExpr(e),))
        elif shape == "left_add":
            e = T.Binary("Add", e, T.Num(0.0))
        elif shape == "right_add":
            e = T.Binary("Add", T.Num(0.0), e)
        elif shape == "cond":
            e = T.Cond(T.Num(1.0), e, T.Num(0.0))
        elif shape == "neg":
            e = T.Unary("Neg", T.Unary("Neg", e))
        elif shape == "min":
            e = T.Call("Min", (T.ArgExpr(e), T.ArgExpr(T.Num(8.0))))
        elif shape == "pow":
            e = T.Call("Pow", (T.ArgExpr(e), T.ArgExpr(T.Num(1.0))))
    return e

DEEP = nest(shape, depth)

def swap(x):
    # the program itself is shallow: a plain recursive rebuild is fine here
    if type(x) is T.Num and x.value == 7.0:
        return DEEP
    if type(x) in (tuple, list):
        return type(x)(swap(v) for v in x)
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return dataclasses.replace(x, **{f.name: swap(getattr(x, f.name))
                                         for f in dataclasses.fields(x) if f.init})
    return x

program = serq.compile(sys.argv[1])
if depth:
    program = swap(program)
try:
    print(serq.run(program).json())
except ValueError as e:
    print("error:", e)
"""


def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run_child(shape, depth):
    env = dict(os.environ)
    env.pop("SERQ_DEBUG", None)
    return subprocess.run(["timeout", str(TIME_LIMIT_S), sys.executable, "-c", CHILD,
                           str(DATA / "deep_markers.sq"), shape, str(depth)],
                          capture_output=True, text=True, env=env, preexec_fn=limit_memory)


@pytest.fixture(scope="module")
def shallow():
    done = run_child("abs", 0)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("{"), done.stdout
    return done.stdout


# three shapes in the default run (each takes seconds), the rest behind the `slow` marker
SHAPES = ["abs", "left_add", "cond"] + [pytest.param(shape, marks=pytest.mark.slow)
                                        for shape in ("right_add", "neg", "min", "pow")]


@pytest.mark.parametrize("shape", SHAPES)
def test_thousands_deep_runs_as_the_shallow_program(shape, shallow):
    done = run_child(shape, 5000)
    assert done.returncode == 0, (done.returncode, done.stderr[-3000:])
    assert done.stdout == shallow


@pytest.mark.parametrize("shape", ["abs", "left_add"])
def test_far_too_deep_is_a_clear_error(shape):
    done = run_child(shape, 300_000)
    assert done.returncode == 0, (done.returncode, done.stderr[-3000:])
    assert done.stdout.startswith("error: the program nests too deeply"), done.stdout[:500]
    assert "Traceback" not in done.stderr


def test_the_cli_reports_a_deep_observation(tmp_path):
    """The issue's reproducer: `observe x = abs(abs(…now…));` 8000 deep; `serq run` must not
    crash (it runs, or says the program nests too deeply: exit 1)."""
    expr = "now"
    for _ in range(8000):
        expr = f"abs({expr})"
    path = tmp_path / "deep.sq"
    path.write_text("workload { arrive batch(1); }\n"
                    f"session {{ observe x = {expr}; }}\nrun {{ horizon 1; }}\n")
    env = dict(os.environ)
    env.pop("SERQ_DEBUG", None)
    done = subprocess.run(["timeout", str(TIME_LIMIT_S), sys.executable, "-m", "serq", "run",
                           "--json", str(path)], capture_output=True, text=True, env=env,
                          preexec_fn=limit_memory)
    assert done.returncode in (0, 1), (done.returncode, done.stderr[-3000:])
    if done.returncode == 0:
        assert '"x":{"count":1,"mean":0,' in done.stdout
    else:
        assert "nests too deeply" in done.stderr and "Traceback" not in done.stderr
