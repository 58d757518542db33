"""A run stops when it is interrupted, in both engines (serq/sim/interrupts.py).

A compiled run executes no bytecode, and CPython acts on an interrupt only between two
bytecode instructions: the event loop calls the interpreted ``interrupts.poll`` every
``POLL_EVENTS`` events for that. Each case runs a practically endless M/M/1 in a child
process under ``timeout`` (a run that ignores the interrupt fails the test, it does not hang
it), once compiled (when the compiled engine is there) and once with ``SERQ_PURE=1``; the child
prints how long the run took to stop after the interrupt."""
import os
import pathlib
import resource
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
MM1 = str(ROOT / "examples" / "mm1.sq")
TIME_LIMIT_S = 60
MEMORY_LIMIT = 2 << 30  # the run keeps its observations: one that goes on fails, never swaps
# seconds a run may take to stop (the loop polls every few milliseconds; a loaded machine)
STOP_WITHIN_S = 2.0

CHILD = r"""
import dataclasses, os, signal, sys, threading, time
import serq
from serq import deep
from serq.sim.engine import Sim

program = dataclasses.replace(serq.compile(sys.argv[1]), horizon=1e15)
sent = []

def interrupt():
    time.sleep(0.3)  # the run is in its event loop by then
    sent.append(time.monotonic())
    if sys.argv[2] == "worker":  # what serq.deep does on Ctrl-C: an exception sent to its worker
        deep._interrupt(next(t for t in threading.enumerate() if t.name == "serq-deep"))
    else:  # Ctrl-C on the main thread, which runs the loop itself
        os.kill(os.getpid(), signal.SIGINT)

threading.Thread(target=interrupt, daemon=True).start()
try:
    if sys.argv[2] == "worker":
        serq.run(program)  # the run on serq.deep's worker thread, the caller waiting
    else:
        Sim(program).run()
except KeyboardInterrupt:
    print(time.monotonic() - sent[0])
"""


def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _modes():
    """Both engines when the compiled one is built and current, else the interpreted one."""
    from serq import compiled
    pure = os.environ.pop(compiled.PURE_VARIABLE, None)
    try:
        built = compiled.describe() == "compiled"
    finally:
        if pure is not None:
            os.environ[compiled.PURE_VARIABLE] = pure
    return ["compiled", "interpreted"] if built else ["interpreted"]


@pytest.mark.parametrize("mode", _modes())
@pytest.mark.parametrize("where", ["worker", "main"])
def test_an_interrupted_run_stops(where, mode):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("SERQ_DEBUG", None)
    env.pop("SERQ_PURE", None)
    if mode == "interpreted":
        env["SERQ_PURE"] = "1"
    done = subprocess.run(["timeout", str(TIME_LIMIT_S), sys.executable, "-c", CHILD, MM1, where],
                          capture_output=True, text=True, env=env, cwd=ROOT,
                          preexec_fn=limit_memory)
    assert done.returncode == 0, (done.returncode, done.stderr[-3000:])
    assert 0 <= float(done.stdout) < STOP_WITHIN_S, done.stdout
