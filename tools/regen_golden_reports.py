"""Regenerate tests/golden/NAME.report.json from examples/NAME.sq with the reference build.

Run with an interpreter that has the reference, pyserq 0.1.2 (never a dependency of serq):

    /path/to/refvenv/bin/python tools/regen_golden_reports.py            # rewrite the reports
    /path/to/refvenv/bin/python tools/regen_golden_reports.py --verify   # write nothing; exit 1 on a change
    /path/to/refvenv/bin/python tools/regen_golden_reports.py mm1 router # only these examples

Each golden report holds `pyserq.run(pyserq.compile("examples/NAME.sq")).json()` (the
program's own `run { }` settings, nothing overridden) followed by one newline. The test
suite never imports this file (pytest collects only test_*.py).
"""
import argparse
import pathlib
import sys
import time

import pyserq  # the reference build: run this script only in its virtual environment

ROOT = pathlib.Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--verify", action="store_true", help="write nothing; exit 1 if a file would change")
    ap.add_argument("names", nargs="*", help="example names (default: every examples/*.sq)")
    opts = ap.parse_args()
    if pyserq.__version__ != "0.1.2":
        print(f"expected pyserq 0.1.2, found {pyserq.__version__}", file=sys.stderr)
        return 2
    sources = sorted((ROOT / "examples").glob("*.sq"))
    if opts.names:
        sources = [sq for sq in sources if sq.stem in opts.names]
    changed = 0
    for sq in sources:
        t = time.perf_counter()
        text = pyserq.run(pyserq.compile(str(sq))).json() + "\n"
        took = time.perf_counter() - t
        out = GOLDEN / (sq.stem + ".report.json")
        old = out.read_text(encoding="utf-8") if out.exists() else None
        if old == text:
            print(f"same {out.relative_to(ROOT)} ({took:.2f} s)")
            continue
        changed += 1
        print(("would write " if opts.verify else "wrote ") + f"{out.relative_to(ROOT)} ({took:.2f} s)")
        if not opts.verify:
            out.write_text(text, encoding="utf-8", newline="\n")
    return 1 if opts.verify and changed else 0


if __name__ == "__main__":
    sys.exit(main())
