"""Run with the reference (pyserq 0.1.3): compile tests/claims/errors_base.sq with each
fragment of tests/claims/error_fragments.txt appended (fragments separated by lines `%%`;
the base is compiled with horizon 50, seed 1) and write tests/claims/errors.json: a list of
{"fragment", "error"} (error null when the fragment compiles). Never imported by serq."""
import json
import os

import pyserq

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "claims")
base = open(os.path.join(HERE, "errors_base.sq")).read()
frags = [f.strip("\n") for f in open(os.path.join(HERE, "error_fragments.txt")).read()
         .split("\n%%\n") if f.strip()]
out = []
for f in frags:
    try:
        pyserq.compile(source=base + f + "\n", horizon=50.0, seed=1)
        err = None
    except ValueError as e:
        err = str(e)
    out.append({"fragment": f, "error": err})
json.dump(out, open(os.path.join(HERE, "errors.json"), "w"), indent=1, ensure_ascii=False)
print(len(out), "fragments,", sum(o["error"] is not None for o in out), "errors")
