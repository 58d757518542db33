"""Events per second of the step engine (continuous batching under KV pressure).

    .venv/bin/python benchmarks/bench_step.py                   # programs/step_*.sq
    .venv/bin/python benchmarks/bench_step.py -n 5 examples/flagship.sq
    .venv/bin/python benchmarks/bench_step.py --ref /tmp/refvenv/bin/python --check

Each program is compiled once and run ``-n`` times (default 3); the best time gives the
events/s (``serq.run`` only, not the compilation). ``--cpu`` times with the process's CPU
clock instead of the wall clock (steadier on a loaded machine). When ``--ref PYTHON`` is given,
or ``SERQ_REF_PYTHON`` is set, or ``/tmp/refvenv/bin/python`` exists, the reference (pyserq
0.1.2) is timed the same way in a separate process (serq never imports it) and the ratio
printed; ``--check`` also compares the two reports' JSON byte for byte.
"""
from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_REF = "/tmp/refvenv/bin/python"

# Times a program with the module named on the command line (serq or pyserq); prints JSON.
TIMER = r"""
import hashlib, json, sys, time
mod = __import__(sys.argv[1])
path, n, cpu = sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
clock = time.process_time if cpu else time.perf_counter
prog = mod.compile(path)
best = None
for _ in range(n):
    t = clock()
    rep = mod.run(prog)
    d = clock() - t
    best = d if best is None or d < best else best
text = rep.json()
print(json.dumps({"events": rep.events, "best": best,
                  "md5": hashlib.md5(text.encode()).hexdigest()}))
"""


def time_program(python, module, path, n, cpu, extra_path=None):
    env = dict(os.environ)
    if extra_path:
        env["PYTHONPATH"] = extra_path + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([python, "-c", TIMER, module, path, str(n), "1" if cpu else "0"],
                         capture_output=True, text=True, env=env, cwd="/")
    if out.returncode != 0:
        raise SystemExit(f"{module} failed on {path}:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("programs", nargs="*")
    ap.add_argument("-n", type=int, default=3, help="runs per program (best is kept)")
    ap.add_argument("--cpu", action="store_true", help="time with the CPU clock")
    ap.add_argument("--ref", default=os.environ.get("SERQ_REF_PYTHON"),
                    help=f"a Python with pyserq 0.1.2 (default {DEFAULT_REF} if it exists)")
    ap.add_argument("--check", action="store_true", help="compare the reports with the ref")
    args = ap.parse_args(argv)
    programs = args.programs or sorted(glob.glob(os.path.join(HERE, "programs", "step_*.sq")))
    ref = args.ref or (DEFAULT_REF if os.path.exists(DEFAULT_REF) else None)
    root = os.path.dirname(HERE)
    status = 0
    for path in programs:
        path = os.path.abspath(path)
        ours = time_program(sys.executable, "serq", path, args.n, args.cpu, extra_path=root)
        rate = ours["events"] / ours["best"]
        line = (f"{os.path.basename(path):24s} {ours['events']:>9,} events  "
                f"serq {rate:>11,.0f} ev/s")
        if ref:
            theirs = time_program(ref, "pyserq", path, args.n, args.cpu)
            ref_rate = theirs["events"] / theirs["best"]
            line += f"  ref {ref_rate:>11,.0f} ev/s  ratio {rate / ref_rate:6.3f}"
            if args.check:
                same = theirs["md5"] == ours["md5"]
                line += "  report " + ("identical" if same else "DIFFERS")
                status |= 0 if same else 1
        print(line, flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
