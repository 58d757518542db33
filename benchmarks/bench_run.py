"""Events per second of `serq.run` (the interpreter), optionally against the reference.

    python benchmarks/bench_run.py              # programs/mm1_run.sq: M/M/1, rho 0.8, horizon 4e5
    python benchmarks/bench_run.py -n 5 --program benchmarks/programs/step_kv.sq
    python benchmarks/bench_run.py --program a.sq --program b.sq --horizon 1e5
    python benchmarks/bench_run.py --ref /tmp/refvenv/bin/python   # also time pyserq 0.1.2

Each program is compiled once, then run N times (`-n`, default 3) after no warm-up run (the
first run pays for the imports of the interpreter, so it is one of the N and usually not the
best); only `serq.run(program)` is timed, the report built inside it included. It prints the
events of a run (the report's `events`: popped events, stale ones included), the best and
median times and events per second of the best run.

The reference interpreter is used when `--ref PYTHON` is given, else when the environment
variable SERQ_REF_PYTHON names one, else /tmp/refvenv/bin/python if it exists (`--no-ref`
turns that off). It runs the same program, compiled by pyserq from the same text with the same
options, in a separate process (serq never imports pyserq), timed the same way; the script
prints its events per second, the ratio, and whether both reports are the same JSON text.

Not a test: run it on demand (`make bench`). Exit status 0; 1 when a program does not
compile or run, or the reference fails.
"""
import argparse
import hashlib
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_PROGRAM = HERE / "programs" / "mm1_run.sq"
DEFAULT_REF = "/tmp/refvenv/bin/python"

# run by the reference interpreter, in its own process: argv = program path, repeat count,
# compile options as JSON
REF_SCRIPT = r"""
import hashlib, json, statistics, sys, time
import pyserq
path, n, opts = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
program = pyserq.compile(path, **opts)
times, text, events = [], None, None
for _ in range(n):
    t = time.perf_counter()
    report = pyserq.run(program)
    times.append(time.perf_counter() - t)
    text, events = report.json(), report.events
print(json.dumps({"best": min(times), "median": statistics.median(times), "events": events,
                  "version": pyserq.__version__,
                  "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()}))
"""


def time_serq(path: str, n: int, opts: dict):
    sys.path.insert(0, str(ROOT))  # the working tree's serq, when it is not installed
    import serq
    program = serq.compile(path, **opts)
    times, text, events = [], None, None
    for _ in range(n):
        t = time.perf_counter()
        report = serq.run(program)
        times.append(time.perf_counter() - t)
        text, events = report.json(), report.events
    return {"best": min(times), "median": statistics.median(times), "events": events,
            "version": serq.__version__,
            "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()}


def time_reference(python: str, path: str, n: int, opts: dict):
    try:
        proc = subprocess.run([python, "-c", REF_SCRIPT, path, str(n), json.dumps(opts)],
                              capture_output=True, text=True)
    except OSError as e:
        raise SystemExit(f"cannot run the reference interpreter {python}: {e.strerror}")
    if proc.returncode != 0:
        raise SystemExit(f"the reference run failed ({python}):\n{proc.stderr.strip()}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def reference_python(opts) -> str | None:
    if opts.no_ref:
        return None
    if opts.ref:
        return opts.ref
    env = os.environ.get("SERQ_REF_PYTHON")
    if env:
        return env
    return DEFAULT_REF if os.path.exists(DEFAULT_REF) else None


def _assignment(value: str):
    name, sep, text = value.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"expected NAME=EXPR, got {value!r}")
    return name.strip(), text


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Events per second of serq.run on a program "
                                             "(default: M/M/1 at rho 0.8, horizon 4e5).")
    ap.add_argument("--program", metavar="FILE", action="append",
                    help=f"a .sq file (repeatable; default: {DEFAULT_PROGRAM.relative_to(ROOT)})")
    ap.add_argument("-n", "--repeat", type=int, default=3, help="timed runs (default %(default)s)")
    ap.add_argument("--horizon", type=float, help="replace the programs' horizon")
    ap.add_argument("--seed", type=int, help="replace the programs' seed")
    ap.add_argument("--set", dest="sets", metavar="NAME=EXPR", action="append", type=_assignment,
                    default=[], help="override a `let` (repeatable)")
    ap.add_argument("--ref", metavar="PYTHON",
                    help="an interpreter with pyserq 0.1.2 to time as well (default: "
                         f"$SERQ_REF_PYTHON, else {DEFAULT_REF} if it exists)")
    ap.add_argument("--no-ref", action="store_true", help="do not time the reference")
    opts = ap.parse_args(argv)
    if opts.repeat < 1:
        ap.error("-n must be at least 1")

    compile_opts = {}
    if opts.sets:
        compile_opts["sets"] = dict(opts.sets)
    if opts.horizon is not None:
        compile_opts["horizon"] = opts.horizon
    if opts.seed is not None:
        compile_opts["seed"] = opts.seed
    ref = reference_python(opts)
    status = 0
    for program in opts.program or [str(DEFAULT_PROGRAM)]:
        path = os.path.abspath(program)
        print(f"program     {os.path.relpath(path)}"
              + (f"  {json.dumps(compile_opts)}" if compile_opts else ""))
        try:
            ours = time_serq(path, opts.repeat, compile_opts)
        except ValueError as e:
            print(f"  serq cannot run it: {e}")
            status = 1
            continue
        print(f"  serq {ours['version']}    {ours['events']:>10,} events   best "
              f"{ours['best']:8.3f} s   median {ours['median']:8.3f} s   "
              f"{ours['events'] / ours['best']:>12,.0f} events/s   (best of {opts.repeat})")
        if ref:
            theirs = time_reference(ref, path, opts.repeat, compile_opts)
            print(f"  pyserq {theirs['version']}  {theirs['events']:>10,} events   best "
                  f"{theirs['best']:8.3f} s   median {theirs['median']:8.3f} s   "
                  f"{theirs['events'] / theirs['best']:>12,.0f} events/s")
            ratio = (ours["events"] / ours["best"]) / (theirs["events"] / theirs["best"])
            print(f"  ratio       serq / pyserq = {ratio:.3f} (events per second, best runs; "
                  f"pyserq is {1 / ratio:.1f}x faster)")
            same = ours["sha256"] == theirs["sha256"]
            print(f"  same report {'yes' if same else 'NO: the report JSON texts differ'}")
    return status


if __name__ == "__main__":
    sys.exit(main())
