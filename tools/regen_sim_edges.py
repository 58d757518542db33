"""Regenerate tests/golden/sim_edges/NAME.expected.json with the reference build.

Run with an interpreter that has the reference, pyserq 0.1.2 (never a dependency of serq):

    /tmp/refvenv/bin/python tools/regen_sim_edges.py            # rewrite every expectation
    /tmp/refvenv/bin/python tools/regen_sim_edges.py --verify   # write nothing; exit 1 on a change
    /tmp/refvenv/bin/python tools/regen_sim_edges.py NAME ...   # only these cases

Each case is `NAME.sq` (compiled with the keyword arguments of `NAME.args.json` when present)
or `NAME.ir.json` (loaded with `Program.from_json`), run from the folder itself (so relative
trace paths resolve there) in a child process with a time limit. `NAME.expected.json` holds
`{"report": <Report.json() text>}` or `{"error": <str of the ValueError>}`; a case on which the
reference panics or hangs does not belong here (it is reported, and nothing is written). The
test suite never imports this file (pytest collects only test_*.py).
"""
import argparse
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
CASES = ROOT / "tests" / "golden" / "sim_edges"
TIMEOUT_S = 120

CHILD = r"""
import json, sys
import pyserq
assert pyserq.__version__ == "0.1.2", pyserq.__version__
path, args = sys.argv[1], json.loads(sys.argv[2])
try:
    if path.endswith(".ir.json"):
        with open(path) as f:
            program = pyserq.Program.from_json(f.read())
    else:
        program = pyserq.compile(path, **args)
    out = {"report": pyserq.run(program).json()}
except ValueError as e:
    out = {"error": str(e)}
print(json.dumps(out))
"""


def expectation(case: pathlib.Path) -> dict:
    args_path = case.with_name(case.name.split(".")[0] + ".args.json")
    args = args_path.read_text() if args_path.exists() else "{}"
    done = subprocess.run([sys.executable, "-c", CHILD, case.name, args], cwd=CASES,
                          capture_output=True, text=True, timeout=TIMEOUT_S)
    if done.returncode != 0:
        raise RuntimeError(f"{case.name}: the reference failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--verify", action="store_true",
                    help="write nothing; exit 1 if a file would change")
    ap.add_argument("names", nargs="*", help="case names (default: every case)")
    opts = ap.parse_args()
    cases = sorted(list(CASES.glob("*.sq")) + list(CASES.glob("*.ir.json")))
    if opts.names:
        cases = [c for c in cases if c.name.split(".")[0] in opts.names]
    changed = 0
    for case in cases:
        name = case.name.split(".")[0]
        try:
            text = json.dumps(expectation(case), indent=1) + "\n"
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            print(f"{name}: not written: {e}", file=sys.stderr)
            changed += 1
            continue
        out = CASES / (name + ".expected.json")
        old = out.read_text() if out.exists() else None
        if old != text:
            changed += 1
            print(f"{name}: {'would change' if opts.verify else 'written'}")
            if not opts.verify:
                out.write_text(text)
    return 1 if (opts.verify and changed) else 0


if __name__ == "__main__":
    sys.exit(main())
