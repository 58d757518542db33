"""Differential testing of claims against pyserq 0.1.3 (formal.md §6.5; docs/claims.md).

    .venv/bin/python tools/claims/fuzz.py OUTDIR [--oracle /tmp/ref13/bin/python] [-n 4]
                                              [--seed 1] [-k TEXT]

Takes the run programs of the conformance corpus (../shared/conformance/run), appends random
claims to each (iteration claims over its step stages, `at end` claims over its observations,
`given` over its attributes, and some that must be refused), has the reference (a separate
interpreter, never imported here) compile and run every variant, and compares serq's answer:
the error text, or the report's `claims` array. A variant whose report differs from the
reference's outside `claims` (the two builds' random draws differ) is counted as skipped.
Cases that disagree are listed; `--keep` writes the agreeing ones as golden data.
"""
import argparse
import json
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
RUN = os.path.join(ROOT, "..", "shared", "conformance", "run")

ITER_VARS = ["tokens", "prefilled", "decoders", "residents", "kv_decode", "kv_prefill",
             "attention", "demand", "served", "arrived", "now"]
CONSTS = [0, 1, 2, 3, 4, 5, 8, 10, 16, 32, 64, 100, 128, 256, 512, 1000, 5000]
AGGS = ["total", "count", "largest", "smallest", "prefix_total"]
CMPS = ["<", "<=", ">", ">=", "==", "!="]


def rnd_iter_expr(r, info, depth=0):
    if depth < 2 and r.random() < 0.3:
        op = r.choice(["&&", "||"])
        return f"({rnd_iter_expr(r, info, depth + 1)} {op} {rnd_iter_expr(r, info, depth + 1)})"
    if r.random() < 0.1 and info["stages"]:
        f = r.choice(["queue", "busy"])
        lhs = f"{f}({r.choice(info['stage_refs'])})"
    elif r.random() < 0.1 and info["pools"]:
        f = r.choice(["used", "free", "holders", "queued"])
        lhs = f"{f}({r.choice(info['pools'])})"
    else:
        lhs = r.choice(ITER_VARS)
        if r.random() < 0.3:
            lhs = f"{lhs} {r.choice(['+', '-', '*'])} {r.choice(ITER_VARS)}"
    rhs = r.choice(CONSTS) if not lhs.startswith("now") else round(r.uniform(0, info["horizon"]), 1)
    return f"{lhs} {r.choice(CMPS)} {rhs}"


def rnd_end_expr(r, info, depth=0):
    if depth < 2 and r.random() < 0.3:
        op = r.choice(["&&", "||"])
        return f"({rnd_end_expr(r, info, depth + 1)} {op} {rnd_end_expr(r, info, depth + 1)})"
    if not info["observes"] or r.random() < 0.1:
        return f"now {r.choice(CMPS)} {round(r.uniform(0, info['horizon']), 1)}"
    o = r.choice(info["observes"])
    a = r.choice(AGGS)
    if r.random() < 0.4:
        b = r.choice(AGGS)
        return f"{a}({o}) {r.choice(CMPS)} {b}({r.choice(info['observes'])})"
    return f"{a}({o}) {r.choice(CMPS)} {r.choice(CONSTS)}"


def rnd_given(r, info):
    attrs = info["attrs"]
    a = r.choice(attrs)
    return f"{a} {r.choice(CMPS)} {r.choice([0, 1, 2, 3, 5, 10, 50])}"


BAD = [
    "at end (served > 0)", "at end (min(now, 3) > 0 && ~uniform(0, 1) > 0)",
    "every iteration of {stage} (floor(demand / 2) > 0 ? {attr} : 0)",
    "every iteration of {stage} (budget_left({stage}) > 0 || tokens > 0)",
    "at end (largest({obs}) > 0 ? 1 : waiting)", "at end (now > 0 && residents > 0)",
    "every iteration of {stage} (!(count({obs}) > 0))",
    "at end (total({obs}) > 0);\nclaim bad : at end (1)", "at end (tokens > 0)", "at end ({attr} > 0)",
    "every iteration of {stage} (total({obs}) > 0)", "every iteration of {stage} ({attr} > 0)",
    "every iteration of {stage} (~exp(1) > 0)", "every iteration of {stage} (work({stage}) > 0)",
    "at end (busy({stage}) > 0)", "every iteration of nosuch (1)", "at end (total(nosuch) > 0)",
    "every iteration of {stage} (decoding > 0)", "at end (count({obs} + 1) > 0)",
]


def claims_for(r, info, n, bad=0.15):
    out = []
    for i in range(n):
        given = f"given ({rnd_given(r, info)}) " if info["attrs"] and r.random() < 0.25 else ""
        x = r.random()
        if info["steps"] and x < 0.55:
            kind = r.choice(["every", "some"])
            body = f"{kind} iteration of {r.choice(info['steps'])} ({rnd_iter_expr(r, info)})"
        else:
            body = f"at end ({rnd_end_expr(r, info)})"
        out.append(f"claim k{i} {given}: {body};")
    if r.random() < bad:
        bad = r.choice(BAD).format(attr=r.choice(info["attrs"] or ["serial"]),
                                   stage=r.choice(info["steps"] or info["stage_refs"] or ["S"]),
                                   obs=r.choice(info["observes"] or ["x"]))
        out.insert(r.randrange(len(out) + 1), f"claim bad : {bad};")
    return out


def program_info(serq, path, args):
    cwd = os.getcwd()
    os.chdir(os.path.dirname(path))
    try:
        p = serq.compile(source=open(path).read(), **args)
    finally:
        os.chdir(cwd)
    stages, steps, refs = [], [], []
    for s in p.stages:
        ref = s.name if s.index is None else f"{s.name}[{s.index}]"
        refs.append(ref)
        if type(s.kind).__name__ == "Step":
            steps.append(ref)
        stages.append(s.name)
    pools = [x.name if x.index is None else f"{x.name}[{x.index}]" for x in p.pools]
    attrs = [a for a in p.attrs if "." not in a]
    return {"stages": stages, "steps": steps, "stage_refs": refs, "pools": pools,
            "observes": [o for o in p.observes], "attrs": attrs, "horizon": p.horizon}


def ours(serq, base, args):
    cwd = os.getcwd()
    os.chdir(args.pop("_cwd"))
    try:
        p = serq.compile(source=open(base + ".sq").read(), **args)
        return {"report": json.loads(serq.run(p).json())}
    except ValueError as e:
        return {"error": str(e)}
    finally:
        os.chdir(cwd)


def strip(rep):
    rep = dict(rep)
    rep.pop("serq_version", None)
    rep.pop("claims", None)
    for s in rep.get("stages", []):
        s.pop("idle_with_work", None)
    return rep


def keep(outdir, case, base, want):
    """A golden case: the program, its arguments (``_cwd: "run"``: the corpus' run folder,
    where its traces are), and the reference's answer (error text or claims array)."""
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, case + ".sq"), "w") as f:
        f.write(open(base + ".sq").read())
    args = json.load(open(base + ".args.json"))
    args["_cwd"] = "run"
    json.dump(args, open(os.path.join(outdir, case + ".args.json"), "w"))
    exp = {"error": want["error"]} if "error" in want else {"claims": want["report"]["claims"]}
    json.dump(exp, open(os.path.join(outdir, case + ".expected.json"), "w"), indent=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--oracle", default="/tmp/ref13/bin/python")
    ap.add_argument("-n", type=int, default=4, help="variants per program")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-k", default="")
    ap.add_argument("--bad", type=float, default=0.15,
                    help="the chance a variant gets one claim that must be refused")
    ap.add_argument("--keep", help="write the agreeing cases here as golden data")
    ap.add_argument("--keep-every", type=int, default=1, help="keep every N-th agreeing case")
    a = ap.parse_args()
    sys.path.insert(0, ROOT)
    import serq
    r = random.Random(a.seed)
    os.makedirs(a.outdir, exist_ok=True)
    names = sorted(f[:-3] for f in os.listdir(RUN) if f.endswith(".sq") and a.k in f)
    made = []
    for name in names:
        path = os.path.join(RUN, name + ".sq")
        argp = os.path.join(RUN, name + ".args.json")
        args = json.load(open(argp)) if os.path.exists(argp) else {}
        args.pop("_file", None)
        if os.path.exists(os.path.join(RUN, name + ".err")):
            continue
        try:
            info = program_info(serq, path, dict(args))
        except ValueError:
            continue
        src = open(path).read()
        for v in range(a.n):
            case = f"{name}__{v}"
            with open(os.path.join(a.outdir, case + ".sq"), "w") as f:
                f.write(src.rstrip("\n") + "\n" + "\n".join(claims_for(r, info, r.randint(2, 5), a.bad))
                        + "\n")
            json.dump(dict(args, _cwd=os.path.abspath(RUN)),
                      open(os.path.join(a.outdir, case + ".args.json"), "w"))
            made.append(case)
    subprocess.run([a.oracle, os.path.join(HERE, "oracle_run.py"), a.outdir], check=True,
                   timeout=3600)
    agree = differ = skipped = 0
    for case in made:
        base = os.path.join(a.outdir, case)
        want = json.load(open(base + ".oracle.json"))
        got = ours(serq, base, json.load(open(base + ".args.json")))
        if "error" in want and "error" not in got and "claim" not in want["error"]:
            skipped += 1  # 0.1.3 refuses the base program (not a claims matter)
            os.rename(base + ".sq", base + ".sq.skipped")
            continue
        if "error" in want or "error" in got:
            ok = want == got
        elif strip(want["report"]) != strip(got["report"]):
            skipped += 1
            os.rename(base + ".sq", base + ".sq.skipped")
            continue
        else:
            ok = want["report"]["claims"] == got["report"]["claims"]
        if ok:
            agree += 1
            if a.keep and agree % a.keep_every == 0:
                keep(a.keep, case, base, want)
        else:
            differ += 1
            print(f"DIFFER {case}")
            print("  want:", json.dumps(want.get("error") or want["report"]["claims"])[:1500])
            print("  got: ", json.dumps(got.get("error") or got["report"]["claims"])[:1500])
    print(f"{agree} agree, {differ} differ, {skipped} skipped (reports differ outside claims)")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
