"""Regenerate tests/golden/NAME.ir.json from examples/NAME.sq with the reference build.

Run with an interpreter that has the reference, pyserq 0.1.2 (never a dependency of serq):

    /path/to/refvenv/bin/python tools/regen_golden.py            # rewrite the golden files
    /path/to/refvenv/bin/python tools/regen_golden.py --verify   # write nothing; exit 1 on a change

Each golden file holds `pyserq.compile("examples/NAME.sq").to_json()` followed by one newline.
The test suite never imports this file (pytest collects only test_*.py).
"""
import argparse
import pathlib
import sys

import pyserq  # the reference build: run this script only in its virtual environment

ROOT = pathlib.Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--verify", action="store_true", help="write nothing; exit 1 if a file would change")
    opts = ap.parse_args()
    if pyserq.__version__ != "0.1.2":
        print(f"expected pyserq 0.1.2, found {pyserq.__version__}", file=sys.stderr)
        return 2
    changed = 0
    for sq in sorted((ROOT / "examples").glob("*.sq")):
        text = pyserq.compile(str(sq)).to_json() + "\n"
        out = GOLDEN / (sq.stem + ".ir.json")
        old = out.read_text(encoding="utf-8") if out.exists() else None
        if old == text:
            continue
        changed += 1
        print(("would write " if opts.verify else "wrote ") + str(out.relative_to(ROOT)))
        if not opts.verify:
            out.write_text(text, encoding="utf-8", newline="\n")
    return 1 if opts.verify and changed else 0


if __name__ == "__main__":
    sys.exit(main())
