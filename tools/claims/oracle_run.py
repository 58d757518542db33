"""Run with the reference (e.g. /tmp/ref13/bin/python, pyserq 0.1.3): for each case NAME.sq
(+ NAME.args.json) in DIR, write NAME.oracle.json: {"error": text} or {"report": the parsed
Report.json()}. Never imported by serq or its tests."""
import json
import os
import sys

import pyserq

d = sys.argv[1]
for f in sorted(os.listdir(d)):
    if not f.endswith(".sq"):
        continue
    base = os.path.join(d, f[:-3])
    args = {}
    if os.path.exists(base + ".args.json"):
        args = json.load(open(base + ".args.json"))
    cwd = os.getcwd()
    os.chdir(args.pop("_cwd", d))
    try:
        p = pyserq.compile(source=open(base + ".sq").read(), **args)
        out = {"report": json.loads(pyserq.run(p).json())}
    except ValueError as e:
        out = {"error": str(e)}
    finally:
        os.chdir(cwd)
    json.dump(out, open(base + ".oracle.json", "w"))
