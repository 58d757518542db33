"""Record the reference's answers for the DRT findings (tests/golden/drt/*.sq): for each program,
pyserq 0.1.2's report JSON (serq_version dropped) and every observation's samples, or its
run-time error text, into tests/golden/drt/NAME.json.

Run with the reference installed in a separate virtual environment (never a dependency):
    /tmp/refvenv/bin/python tools/regen_drt_golden.py
"""
import json
import pathlib
import struct
import sys

import pyserq  # the reference build, 0.1.2

HERE = pathlib.Path(__file__).resolve().parents[1] / "tests" / "golden" / "drt"


def bits(x):
    return struct.pack(">d", x).hex()


def main():
    assert pyserq.__version__ == "0.1.2", pyserq.__version__
    for sq in sorted(HERE.glob("*.sq")):
        out = {"provenance": "pyserq 0.1.2 (PyPI), tools/regen_drt_golden.py"}
        program = pyserq.compile(source=sq.read_text())
        try:
            r = pyserq.run(program)
        except ValueError as e:
            out["error"] = str(e)
        else:
            doc = json.loads(r.json())
            doc.pop("serq_version")
            out["report"] = doc
            out["samples"] = {n: [bits(x) for x in r.observe(n).samples] for n in r.observes}
        (sq.with_suffix(".json")).write_text(json.dumps(out, indent=1) + "\n")
        print("wrote", sq.with_suffix(".json").name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
