"""Inputs on which the reference (pyserq 0.1.2) hangs, panics or grows without bound: serq
must stop early with a clear error naming what went wrong (exit status 1, no traceback).

Each reproducer runs `python -m serq run FILE` in a child process under `timeout` and a memory
limit, so that a regression shows as a failed test, not a hung or swapping test run."""
import json
import os
import pathlib
import resource
import subprocess
import sys

import pytest

import serq

MEMORY_LIMIT = 2 << 30  # bytes of address space for the child
TIME_LIMIT_S = 120


def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def serq_run(path, *args, cwd=None):
    env = dict(os.environ)
    env.pop("SERQ_DEBUG", None)
    return subprocess.run(["timeout", str(TIME_LIMIT_S), sys.executable, "-m", "serq", "run",
                           str(path), *args], capture_output=True, text=True, cwd=cwd,
                          env=env, preexec_fn=limit_memory)


def assert_clear_error(done, *words):
    assert done.returncode == 1, (done.returncode, done.stderr[-2000:])
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    for word in words:
        assert word in done.stderr, done.stderr


# -- arrivals that never end --------------------------------------------------------------

UNBOUNDED_ARRIVALS = {
    "poisson(-1)": ["poisson(-1)", "negative arrival rate", "clock runs backwards"],
    "poisson(-0)": ["poisson(-0)", "negative arrival rate"],
    "poisson(-inf)": ["poisson(-inf)", "infinitely many sessions at time 0"],
    "poisson(inf)": ["poisson(inf)", "infinitely many sessions at time 0", "arrivals limit"],
    "batch(inf)": ["batch(18446744073709551615)", "refuses more than 100000000 sessions"],
    "closed(inf)": ["closed(18446744073709551615)", "refuses more than 100000000 sessions"],
    "batch(1e18)": ["batch(1000000000000000000)", "refuses more than 100000000 sessions"],
}


@pytest.mark.parametrize("arrive", sorted(UNBOUNDED_ARRIVALS))
def test_arrivals_that_never_end(arrive, tmp_path):
    path = tmp_path / "prog.sq"
    path.write_text(f"stage s : fifo;\nworkload {{ arrive {arrive}; }}\n"
                    f"session {{ run s (1); }}\nrun {{ horizon 10; }}\n")
    assert_clear_error(serq_run(path), "at time 0", *UNBOUNDED_ARRIVALS[arrive])


def test_poisson_inf_limit_past_what_fits(tmp_path):
    path = tmp_path / "prog.sq"
    path.write_text("workload { arrive poisson(inf); }\nsession { observe x = now; }\n"
                    "run { horizon 10; }\n")
    assert_clear_error(serq_run(path, "--arrivals", "1000000000000"),
                       "poisson(inf)` with `arrivals 1000000000000",
                       "refuses more than 100000000 sessions")


# -- IR the reference's checks let through and its run panics on -------------------------

IR_SOURCE = """stage s : fifo;
pool p { cap 10; }
workload { arrive batch(1); }
session { hold p (1) { run s (1); } observe q = queue(s); observe u = used(p); }
run { horizon 10; }
"""


def wrapped_refs():
    """IR texts with one stage or pool reference moved to base 2^64 - 1 (base + count wraps
    to 0 in the reference's check), by where the reference sits."""
    ir = serq.compile(source=IR_SOURCE).to_json()
    needle = '"base": 0'
    out = {}
    at = ir.find(needle)
    while at >= 0:
        out[len(out)] = ir[:at] + '"base": 18446744073709551615' + ir[at + len(needle):]
        at = ir.find(needle, at + 1)
    assert len(out) == 4  # the hold's pool, queue(s), used(p), the run's stage
    return out


@pytest.mark.parametrize("k", sorted(wrapped_refs()))
def test_wrapped_reference_is_refused_at_run(k, tmp_path):
    text = wrapped_refs()[k]
    program = serq.Program.from_json(text)  # the reference's check accepts it, so does serq's
    with pytest.raises(ValueError) as info:
        serq.run(program)
    message = str(info.value)
    assert "reference 18446744073709551615..18446744073709551616 out of range" in message
    path = tmp_path / "prog.ir.json"
    path.write_text(text)
    assert_clear_error(serq_run(path), "out of range", "wraps")


# -- memory ---------------------------------------------------------------------------------

def test_running_out_of_memory_says_what_grew(tmp_path):
    """A legal run whose samples outgrow the memory: a clear error naming what grew, exit 1,
    never "internal error" or "a bug in serq"."""
    path = tmp_path / "prog.sq"
    path.write_text("workload { arrive poisson(100); }\n"
                    "session { observe x = now; observe y = now; }\nrun { horizon 1e9; }\n")
    env = dict(os.environ)
    env.pop("SERQ_DEBUG", None)

    def small_memory():
        resource.setrlimit(resource.RLIMIT_AS, (400 << 20, 400 << 20))

    done = subprocess.run(["timeout", str(TIME_LIMIT_S), sys.executable, "-m", "serq", "run",
                           str(path)], capture_output=True, text=True, env=env,
                          preexec_fn=small_memory)
    assert_clear_error(done, "run: out of memory at time", "what grew most:",
                       "observation samples", "a shorter horizon")
    assert "bug in serq" not in done.stderr


def test_five_pool_families_run_in_little_memory():
    """Five families of 10,000 pools (tests/golden/sim_edges/pool_families.sq): memory grows
    with the pools a run uses, not with those declared (it took 3.8 GB and failed)."""
    path = pathlib.Path(__file__).resolve().parents[1] / "golden" / "sim_edges" / \
        "pool_families.sq"
    env = dict(os.environ)
    env.pop("SERQ_DEBUG", None)

    def limited():
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    done = subprocess.run(["timeout", str(TIME_LIMIT_S), sys.executable, "-m", "serq", "run",
                           "--json", str(path)], capture_output=True, text=True, env=env,
                          preexec_fn=limited)
    assert done.returncode == 0, done.stderr[-2000:]
    expected = json.loads((path.parent / "pool_families.expected.json").read_text())
    assert done.stdout.strip() == expected["report"]
