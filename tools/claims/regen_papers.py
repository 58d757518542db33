"""Run with pyserq 0.1.3: write tests/golden/papers/NAME.pyserq-0.1.3.json for each
examples/papers/NAME.sq: its `claims` array and its step engine's iteration count. The Dai
programs draw nothing, so serq must give exactly these; Kong's and Bari's draw, and 0.1.3's
draws differ from 0.1.2's (which serq follows), so for them the file is a cross-check of the
results only. Never imported by serq or its tests."""
import glob
import json
import os

import pyserq

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
for sq in sorted(glob.glob(os.path.join(ROOT, "examples", "papers", "*.sq"))):
    r = json.loads(pyserq.run(pyserq.compile(sq)).json())
    name = os.path.basename(sq)[:-3]
    out = {"claims": r["claims"], "iterations": r["stages"][0]["iterations"],
           "arrivals": r["arrivals"], "ended": r["ended"]}
    json.dump(out, open(os.path.join(ROOT, "tests", "golden", "papers",
                                     name + ".pyserq-0.1.3.json"), "w"), indent=1)
    print(name, out["iterations"], [c["result"] for c in r["claims"]])
