"""Where a run spends its time, in each engine (issue 10; the figures in benchmarks/README.md).

    python benchmarks/profile_run.py                       # the four run benchmarks
    python benchmarks/profile_run.py benchmarks/programs/step_kv.sq --horizon 500 --top 15

The interpreted engine (``SERQ_PURE=1``) is profiled with ``cProfile``: the top functions by
own time (``tottime``), as a share of the run. The compiled engine's functions are C, which
``cProfile`` does not see (Cython would have to compile them with its ``profile`` directive,
which changes the code measured), so it is sampled with Linux ``perf`` (``perf record -e
cpu-clock``, the kernel's timer: no hardware counters needed) and the top symbols are shown by
their own samples: Cython's C functions (``__pyx_...``, demangled to module and function
where the name says it), CPython's (``_PyEval_EvalFrameDefault`` is interpreted Python code
still in the run) and libm's. Without ``perf`` the compiled part is skipped with a note.

Each profile is one run of the program (compiled once, untimed) in a separate process;
``--horizon`` shortens the runs. Not a test.
"""
import argparse
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT = [HERE / "programs" / f"{n}.sq" for n in ("mm1_run", "mgc_ps", "step_kv",
                                                     "sessions_prefix")]

CHILD = r"""
import cProfile, json, pstats, sys
import serq
path, opts, mode, top = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], int(sys.argv[4])
from serq import deep
# run on this thread (serq.deep would run it on a big-stack thread, which cProfile does not
# follow): a program of the benchmarks nests a few levels only
deep._state.limit = sys.getrecursionlimit()
program = serq.compile(path, **opts)
serq.run(program)  # imports and first-run costs out of the profile
if mode == "interpreted":
    prof = cProfile.Profile()
    prof.enable()
    report = serq.run(program)
    prof.disable()
    st = pstats.Stats(prof)
    total = sum(v[2] for v in st.stats.values())
    rows = sorted(st.stats.items(), key=lambda kv: -kv[1][2])[:top]
    print(json.dumps({"events": report.events, "rows": [
        [f"{pathlib_name(f)}:{line}({fn})", v[1], v[2] / total] for (f, line, fn), v in rows]}))
else:
    report = serq.run(program)
    print(json.dumps({"events": report.events}))
"""
CHILD = CHILD.replace("import serq\n", "import serq\nimport os\n"
                      "def pathlib_name(f):\n"
                      "    parts = f.replace(os.sep, '/').split('/')\n"
                      "    return '/'.join(parts[-2:]) if 'serq' in parts else parts[-1]\n", 1)


def child_env(mode):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("SERQ_PURE", None)
    if mode == "interpreted":
        env["SERQ_PURE"] = "1"
    return env


def interpreted(path, opts, top):
    p = subprocess.run([sys.executable, "-c", CHILD, path, json.dumps(opts), "interpreted",
                        str(top)], env=child_env("interpreted"), capture_output=True, text=True)
    if p.returncode:
        raise SystemExit(p.stderr)
    out = json.loads(p.stdout.splitlines()[-1])
    print(f"  interpreted (cProfile, own time; {out['events']:,} events)")
    for name, calls, share in out["rows"]:
        print(f"    {100 * share:5.1f} %  {calls:>10,}  {name}")


def _symbol(sym):
    """``__pyx_pf_4serq_3sim_6engine_3Sim_4loop`` -> ``engine: Sim_4loop`` (roughly)."""
    m = re.match(r"__pyx_(?:pw|pf|f|gb)_(.*)", sym)
    if not m:
        return sym
    parts = re.findall(r"\d+([A-Za-z_][A-Za-z0-9_]*?)(?=\d|$)", m.group(1))
    return ".".join(parts) if parts else sym


def compiled(path, opts, top):
    if shutil.which("perf") is None:
        print("  compiled: perf is not installed (skipped)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "perf.data")
        p = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "2000", "-o", data,
                            sys.executable, "-c", CHILD, path, json.dumps(opts), "compiled",
                            str(top)], env=child_env("compiled"), capture_output=True,
                           text=True)
        if p.returncode:
            print(f"  compiled: perf record failed: {p.stderr.strip()[-300:]}")
            return
        events = json.loads(p.stdout.splitlines()[-1])["events"]
        by_dso = _perf_report(data, "dso")
        by_symbol = _perf_report(data, "dso,symbol")
    print(f"  compiled (perf, own samples of the whole process: the compile and two runs of "
          f"{events:,} events)")
    print("    by library: " + ", ".join(f"{share:.0f} % {_dso(dso)}"
                                         for share, dso, _ in by_dso[:6]))
    for share, dso, sym in by_symbol[:top]:
        print(f"    {share:5.1f} %  {_dso(dso):<14} {_symbol(sym)}")


def _perf_report(data, sort):
    rep = subprocess.run(["perf", "report", "-i", data, "--no-children", "--stdio", "--sort",
                          sort, "--percent-limit", "0.3"], capture_output=True, text=True)
    rows = []
    for line in rep.stdout.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+(\S+)(?:\s+\[.\]\s+(\S+))?", line)
        if m and not line.lstrip().startswith("#"):
            rows.append((float(m.group(1)), m.group(2), m.group(3) or ""))
    return rows


def _dso(name):
    """``engine.cpython-311-x86_64-linux-gnu.so`` -> ``engine.so``; libpython -> python."""
    if ".cpython-" in name:
        return name.split(".")[0] + ".so"
    return "python" if name.startswith("libpython") else name


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("programs", nargs="*", help="programs (default: the four run benchmarks)")
    ap.add_argument("--horizon", type=float, help="replace the programs' horizon")
    ap.add_argument("--top", type=int, default=12, help="rows per profile (default %(default)s)")
    ap.add_argument("--modes", default="interpreted,compiled")
    opts = ap.parse_args(argv)
    compile_opts = {} if opts.horizon is None else {"horizon": opts.horizon}
    for program in opts.programs or [str(p) for p in DEFAULT]:
        print(f"program {os.path.relpath(program)}")
        for mode in opts.modes.split(","):
            (interpreted if mode == "interpreted" else compiled)(
                os.path.abspath(program), compile_opts, opts.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
