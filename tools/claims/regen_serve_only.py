"""Run with pyserq 0.1.3: write tests/claims/serve_only/NAME.report.json for every NAME.sq
there, the text of Report.json() parsed and re-written without the fields serq's report does
not have (0.1.3's `idle_with_work` per stage and `over_cap` per pool) and `serq_version`."""
import glob
import json
import os

import pyserq

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "claims",
                    "serve_only")
for sq in sorted(glob.glob(os.path.join(HERE, "*.sq"))):
    r = json.loads(pyserq.run(pyserq.compile(sq)).json())
    r.pop("serq_version")
    for s in r["stages"]:
        s.pop("idle_with_work")
    for p in r["pools"]:
        p.pop("over_cap")
    json.dump(r, open(sq[:-3] + ".report.json", "w"), indent=1)
    print(os.path.basename(sq), r["stages"][0]["iterations"], "iterations")
