"""Time `serq.compile` on a ~300-line program (the issue's target: under 50 ms).

    python benchmarks/bench_compile.py                       # benchmarks/programs/bench300.sq
    python benchmarks/bench_compile.py -n 50 my_program.sq
    python benchmarks/bench_compile.py --ref /tmp/refvenv/bin/python   # also time the reference

Prints the best and median time of N compilations (after one warm-up compilation) and the
lines compiled per second. With `--ref PYTHON` (or the environment variable SERQ_REF_PYTHON),
PYTHON must be an interpreter that has the reference build, pyserq 0.1.2; it is run as a
separate process (serq never imports pyserq), timed the same way, and the ratio is printed,
together with whether both produce the same IR text.

Not a test: run it on demand. Exit status 0, or 1 when the best time misses --target-ms.
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
DEFAULT_PROGRAM = HERE / "programs" / "bench300.sq"

# run by the reference interpreter, in its own process: argv = program path, repeat count
REF_SCRIPT = r"""
import hashlib, json, statistics, sys, time
import pyserq
path, n = sys.argv[1], int(sys.argv[2])
text = pyserq.compile(path).to_json()
times = []
for _ in range(n):
    t = time.perf_counter()
    pyserq.compile(path)
    times.append(time.perf_counter() - t)
print(json.dumps({"best": min(times), "median": statistics.median(times),
                  "version": pyserq.__version__,
                  "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()}))
"""


def time_serq(path: str, n: int):
    sys.path.insert(0, str(ROOT))  # the working tree's serq, when it is not installed
    import serq
    text = serq.compile(path).to_json()  # warm-up (imports, caches) and the IR to compare
    times = []
    for _ in range(n):
        t = time.perf_counter()
        serq.compile(path)
        times.append(time.perf_counter() - t)
    return {"best": min(times), "median": statistics.median(times), "version": serq.__version__,
            "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()}


def time_reference(python: str, path: str, n: int):
    try:
        proc = subprocess.run([python, "-c", REF_SCRIPT, path, str(n)], capture_output=True, text=True)
    except OSError as e:
        raise SystemExit(f"cannot run the reference interpreter {python}: {e.strerror}")
    if proc.returncode != 0:
        raise SystemExit(f"the reference run failed ({python}):\n{proc.stderr.strip()}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Time serq.compile on a program (default: a 300-line one).")
    ap.add_argument("program", nargs="?", default=str(DEFAULT_PROGRAM), help="a .sq file (default: %(default)s)")
    ap.add_argument("-n", "--repeat", type=int, default=20, help="timed compilations (default %(default)s)")
    ap.add_argument("--ref", metavar="PYTHON", default=os.environ.get("SERQ_REF_PYTHON"),
                    help="an interpreter with pyserq 0.1.2 to time as well (default: $SERQ_REF_PYTHON)")
    ap.add_argument("--target-ms", type=float, default=50.0,
                    help="the best time to stay under (default %(default)s ms)")
    opts = ap.parse_args(argv)

    path = os.path.abspath(opts.program)
    with open(path, encoding="utf-8") as f:
        lines = sum(1 for _ in f)
    ours = time_serq(path, opts.repeat)
    best_ms = ours["best"] * 1000
    print(f"program     {os.path.relpath(path)} ({lines} lines)")
    print(f"serq {ours['version']}  best {best_ms:8.2f} ms   median {ours['median'] * 1000:8.2f} ms   "
          f"{lines / ours['best']:,.0f} lines/s   (best of {opts.repeat})")
    if opts.ref:
        ref = time_reference(opts.ref, path, opts.repeat)
        print(f"pyserq {ref['version']} best {ref['best'] * 1000:8.2f} ms   median {ref['median'] * 1000:8.2f} ms   "
              f"{lines / ref['best']:,.0f} lines/s")
        print(f"ratio       serq / pyserq = {ours['best'] / ref['best']:.1f}x (best times)")
        print(f"same IR     {'yes' if ours['sha256'] == ref['sha256'] else 'NO: the IR texts differ'}")
    ok = best_ms < opts.target_ms
    print(f"target      best < {opts.target_ms:g} ms: {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
