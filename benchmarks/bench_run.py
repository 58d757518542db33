"""Events per second of `serq.run`, in both engines, against the reference (issue 10).

    python benchmarks/bench_run.py              # the four programs below, both engines
    python benchmarks/bench_run.py -n 5 --program benchmarks/programs/step_kv.sq
    python benchmarks/bench_run.py --program a.sq --program b.sq --horizon 1e5
    python benchmarks/bench_run.py --modes interpreted --no-ref

The default programs are the issue's four: M/M/1 at rho 0.8 (programs/mm1_run.sq), an M/G/c
processor-sharing network (programs/mgc_ps.sq), the vLLM-like engine under KV pressure with
preemption (programs/step_kv.sq) and multi-turn prefix-cache sessions
(programs/sessions_prefix.sq).

Each program is timed in each engine (`--modes`, default `compiled,interpreted`): a separate
process per engine, `SERQ_PURE=1` for the interpreted one (serq/compiled.py), which imports the
working tree's serq, compiles the program once and runs it N times (`-n`, default 3); only
`serq.run(program)` is timed, the report built inside it included. It prints the events of a
run (the report's `events`: popped events, stale ones included), the best and median times and
events per second of the best run, and which engine ran (a mode that the build does not have,
e.g. compiled without a C compiler, says so).

The reference interpreter is used when `--ref PYTHON` is given, else when the environment
variable SERQ_REF_PYTHON names one, else /tmp/refvenv/bin/python if it exists (`--no-ref`
turns that off). It runs the same program, compiled by pyserq from the same text with the same
options, in a separate process (serq never imports pyserq), timed the same way; the script
prints its events per second, the ratio of each engine to it, and whether the reports are the
same JSON text.

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
DEFAULT_PROGRAMS = [HERE / "programs" / f"{name}.sq"
                    for name in ("mm1_run", "mgc_ps", "step_kv", "sessions_prefix")]
MODES = ("compiled", "interpreted")
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
                  "times": times,
                  "version": pyserq.__version__,
                  "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()}))
"""


# run by serq in its own process, one per engine: the same as REF_SCRIPT, plus the engine
SERQ_SCRIPT = REF_SCRIPT.replace("pyserq", "serq").replace(
    "print(json.dumps({", "from serq import compiled\nprint(json.dumps({'engine': compiled.describe(), ")


def time_serq(path: str, n: int, opts: dict, mode: str):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("SERQ_PURE", None)
    if mode == "interpreted":
        env["SERQ_PURE"] = "1"
    proc = subprocess.run([sys.executable, "-c", SERQ_SCRIPT, path, str(n), json.dumps(opts)],
                          capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise ValueError(proc.stderr.strip().splitlines()[-1])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def time_reference(python: str, path: str, n: int, opts: dict):
    try:
        proc = subprocess.run([python, "-c", REF_SCRIPT, path, str(n), json.dumps(opts)],
                              capture_output=True, text=True)
    except OSError as e:
        raise SystemExit(f"cannot run the reference interpreter {python}: {e.strerror}")
    if proc.returncode != 0:
        raise SystemExit(f"the reference run failed ({python}):\n{proc.stderr.strip()}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def time_rounds(ref, path, opts, compile_opts, modes):
    """``opts.rounds`` rounds of: the reference, then each engine, ``opts.repeat`` runs each;
    each side's best and median over all its runs. A mode that fails is not run again."""
    theirs, by_mode, failed = None, {}, {}
    for _ in range(opts.rounds):
        if ref:
            theirs = merged(theirs, time_reference(ref, path, opts.repeat, compile_opts))
        for mode in modes:
            if mode in failed:
                continue
            try:
                by_mode[mode] = merged(by_mode.get(mode),
                                       time_serq(path, opts.repeat, compile_opts, mode))
            except ValueError as e:
                failed[mode] = e
    return theirs, by_mode, failed


def merged(before, now):
    """One round's result added to the rounds before it (None: the first)."""
    if before is None:
        return now
    times = before["times"] + now["times"]
    return dict(now, times=times, best=min(times), median=statistics.median(times))


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
    ap = argparse.ArgumentParser(description="Events per second of serq.run on programs, in "
                                             "both engines, against the reference.")
    ap.add_argument("--program", metavar="FILE", action="append",
                    help="a .sq file (repeatable; default: the four of programs/: "
                         + ", ".join(p.name for p in DEFAULT_PROGRAMS) + ")")
    ap.add_argument("--modes", default=",".join(MODES),
                    help="the engines to time, comma-separated (default %(default)s)")
    ap.add_argument("-n", "--repeat", type=int, default=3, help="timed runs (default %(default)s)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="alternate the reference and each engine this many times, N runs "
                         "each time, and report the best and median of all (default "
                         "%(default)s; on a noisy machine both then see its slow and fast "
                         "minutes)")
    ap.add_argument("--horizon", type=float, help="replace the programs' horizon")
    ap.add_argument("--seed", type=int, help="replace the programs' seed")
    ap.add_argument("--set", dest="sets", metavar="NAME=EXPR", action="append", type=_assignment,
                    default=[], help="override a `let` (repeatable)")
    ap.add_argument("--ref", metavar="PYTHON",
                    help="an interpreter with pyserq 0.1.2 to time as well (default: "
                         f"$SERQ_REF_PYTHON, else {DEFAULT_REF} if it exists)")
    ap.add_argument("--no-ref", action="store_true", help="do not time the reference")
    opts = ap.parse_args(argv)
    if opts.repeat < 1 or opts.rounds < 1:
        ap.error("-n and --rounds must be at least 1")
    modes = [m.strip() for m in opts.modes.split(",") if m.strip()]
    if not modes or set(modes) - set(MODES):
        ap.error(f"--modes: choose among {', '.join(MODES)}")

    compile_opts = {}
    if opts.sets:
        compile_opts["sets"] = dict(opts.sets)
    if opts.horizon is not None:
        compile_opts["horizon"] = opts.horizon
    if opts.seed is not None:
        compile_opts["seed"] = opts.seed
    ref = reference_python(opts)
    status = 0
    for program in opts.program or [str(p) for p in DEFAULT_PROGRAMS]:
        path = os.path.abspath(program)
        print(f"program     {os.path.relpath(path)}"
              + (f"  {json.dumps(compile_opts)}" if compile_opts else ""))
        theirs, by_mode, failed = time_rounds(ref, path, opts, compile_opts, modes)
        if theirs:
            print(f"  pyserq {theirs['version']:<12} {theirs['events']:>10,} events   best "
                  f"{theirs['best']:8.3f} s   median {theirs['median']:8.3f} s   "
                  f"{theirs['events'] / theirs['best']:>12,.0f} events/s")
        for mode in modes:
            if mode in failed:
                print(f"  serq {mode} cannot run it: {failed[mode]}")
                status = 1
                continue
            ours = by_mode[mode]
            rate = ours["events"] / ours["best"]
            line = (f"  serq {mode:<14} {ours['events']:>10,} events   best {ours['best']:8.3f} s"
                    f"   median {ours['median']:8.3f} s   {rate:>12,.0f} events/s")
            if theirs:
                ratio = rate / (theirs["events"] / theirs["best"])
                same = "same report" if ours["sha256"] == theirs["sha256"] else \
                    "REPORTS DIFFER"
                line += f"   {ratio:6.3f}x pyserq   {same}"
            print(line + ("" if ours["engine"] == "compiled" or mode == "interpreted"
                          else f"   (engine: {ours['engine']})"))
    return status


if __name__ == "__main__":
    sys.exit(main())
