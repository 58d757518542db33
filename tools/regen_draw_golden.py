"""Regenerate expected.json with the reference: pyserq 0.1.3's `draw`.

    /tmp/ref13/bin/python tools/regen_draw_golden.py

Writes, for every program of cases.py and every examples/*.sq file, the SVG and the TikZ text
that `pyserq.draw(..., format=...)` returns (pyserq 0.1.3, the first build with `draw`).
"""
import glob
import json
import os
import sys

import pyserq

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.join(ROOT, "tests", "golden", "draw")
sys.path.insert(0, HERE)
from cases import PROGRAMS  # noqa: E402

out = {"provenance": "pyserq 0.1.3 draw(format=svg|tikz); tools/regen_draw_golden.py",
       "programs": {}, "examples": {}}
for name, src in PROGRAMS.items():
    out["programs"][name] = {f: pyserq.draw(source=src, format=f) for f in ("svg", "tikz")}
for path in sorted(glob.glob(os.path.join(ROOT, "examples", "*.sq"))):
    name = os.path.basename(path)
    out["examples"][name] = {f: pyserq.draw(path, format=f) for f in ("svg", "tikz")}
with open(os.path.join(HERE, "expected.json"), "w") as f:
    json.dump(out, f, indent=1, sort_keys=True)
    f.write("\n")
print(len(out["programs"]), "programs,", len(out["examples"]), "examples")
