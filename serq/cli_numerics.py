"""``serq numerics ...`` (batch-invariance.md §4.7), registered by serq/cli.py: ``check``
replays a step plan on the tiny model and reports, per request, whether it is invariant (exit
0 when every replayed request is invariant, 1 otherwise or on bad input, 2 on usage errors);
``cost`` prices determinism modes for a program (serq.numerics.cost). Kept apart from
serq/cli.py so that `serq run` never imports numpy kernels; serq.numerics is imported only
when a numerics command runs.
"""
from __future__ import annotations

import json
import os
import sys

from serq.output import write_stdout


def add_parsers(sub, positive_int, program_options=None, load=None, real=float):
    """Register ``serq numerics {check,cost}`` on the top-level subparsers (serq/cli.py
    passes its option helpers and its program loader, so `cost` reads FILE like `run`)."""
    top = sub.add_parser("numerics", help="batch-invariant inference: check plans, price determinism",
                         description="Batch-invariant inference on a tiny seeded model "
                                     "(docs/numerics.md).")
    nsub = top.add_subparsers(dest="numerics_command", metavar="COMMAND", required=True)
    add_check_parser(nsub, positive_int)
    if program_options is not None:
        add_cost_parser(nsub, positive_int, program_options, load, real)
    top.set_defaults(parser=top)
    return top


def _seed(value: str) -> int:
    """A numpy seed: a whole number from 0 to 2^32-1."""
    import argparse
    try:
        n = int(value, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
    if not 0 <= n < 2**32:
        raise argparse.ArgumentTypeError(f"expected a whole number from 0 to 2^32-1, got {n}")
    return n


def add_check_parser(sub, positive_int):
    p = sub.add_parser(
        "check", help="replay a step plan on the tiny model and check batch invariance",
        description="Replay PLAN (written by `serq run FILE --plan PLAN`) on a tiny seeded "
                    "causal LM with the chosen kernel set, compare every replayed request with "
                    "the reference decoder (each request alone, the same kernels), and report "
                    "per request: token stream equal, logits bit-equal, KV block fingerprints "
                    "consistent, the first divergence, and the margin audit.",
        epilog="Exit status: 0 every replayed request is invariant (with --dvr: every committed "
               "stream equals the reference); 1 otherwise, or the plan does not load; 2 usage error.")
    p.add_argument("plan", metavar="PLAN", help="a plan file (JSON Lines)")
    p.add_argument("--kernels", default="exact",
                   choices=["exact", "tiled", "default", "chunk-rel", "blas"],
                   help="the kernel set (default: exact)")
    p.add_argument("--dvr", type=positive_int, metavar="W",
                   help="decode/verify/rollback: the kernels are the fast path, verified by "
                        "`exact` every W tokens")
    p.add_argument("--group", type=positive_int, default=8, metavar="G",
                   help="requests verified together (with --dvr; default 8)")
    p.add_argument("--requests", default="16", metavar="N|all",
                   help="how many requests to replay (default 16; `all` for every one)")
    p.add_argument("--pick", choices=["preempted", "first"], default="preempted",
                   help="which requests: preempted ones first, then in order of appearance "
                        "(default), or in order of appearance")
    p.add_argument("--near-ties", type=positive_int, metavar="K",
                   help="plant a near-tie every K generated tokens (a request-local logits "
                        "processor: the runner-up set one ulp below the reference's winner), "
                        "so that batch-dependent drift flips tokens deterministically")
    p.add_argument("--fp32", action="store_true",
                   help="fp32 activations (default: bf16-rounded activations, fp32 logits)")
    p.add_argument("--model-seed", type=_seed, default=0, metavar="S",
                   help="the tiny model's seed (0 to 2^32-1)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=cmd_check, parser=p)
    return p


def add_cost_parser(sub, positive_int, program_options, load, real):
    p = sub.add_parser(
        "cost", help="price determinism modes for a program with a step stage",
        description="Run FILE once per determinism mode, each time with the first step stage's "
                    "cost rewritten for the mode (none: as written; batch_invariant: times "
                    "--multiplier; dvr: verify slices of --window tokens in groups of --group "
                    "for a --fraction of decode tokens, plus rollback recompute at --rollback "
                    "per verify), with the same seed, and compare the runs. The program and its "
                    "IR are not changed.")
    program_options(p, run_settings=True)
    g = p.add_argument_group("determinism modes")
    g.add_argument("--modes", default="none,batch_invariant,dvr", metavar="LIST",
                   help="comma-separated modes to run (default: none,batch_invariant,dvr)")
    g.add_argument("--multiplier", type=real, default=1.34, metavar="M",
                   help="batch_invariant: step cost multiplier (default 1.34, SGLang's overhead)")
    g.add_argument("--window", type=positive_int, default=8, metavar="W", help="dvr: verify window")
    g.add_argument("--group", type=positive_int, default=8, metavar="G", help="dvr: requests per verify pass")
    g.add_argument("--fraction", type=real, default=1.0, metavar="F",
                   help="dvr: fraction of decode tokens that ask for determinism (default 1)")
    g.add_argument("--rollback", type=real, default=0.01, metavar="R",
                   help="dvr: rollbacks per verify (default 0.01; measure it with "
                        "`serq numerics check --dvr`)")
    p.set_defaults(func=lambda args: cmd_cost(args, load), parser=p)
    return p


def cmd_cost(args, load) -> int:
    import serq
    from serq.numerics.cost import Mode, price, summary_rows
    kinds = [m.strip() for m in args.modes.split(",") if m.strip()]
    bad = [k for k in kinds if k not in ("none", "batch_invariant", "dvr")]
    if bad or not kinds:
        raise ValueError(f"--modes: unknown mode {bad[0] if bad else '(none given)'!r} "
                         "(none, batch_invariant, dvr)")
    if (not 0 < args.multiplier < float("inf") or not 0 <= args.fraction <= 1
            or not 0 <= args.rollback <= 1):
        raise ValueError("--multiplier must be a finite number > 0, --fraction and --rollback "
                         "in [0, 1]")
    modes = [Mode(k, args.multiplier, args.window, args.group, args.fraction, args.rollback) for k in kinds]
    program = load(args)
    rows = summary_rows(program, price(program, modes, serq.run))
    write_stdout(format_cost(args.file, program, rows))
    return 0


def format_cost(path, program, rows):
    from serq.numerics.cost import step_stage
    _, stage = step_stage(program)
    names = list(rows[0]["observations"])
    base = rows[0]

    def cell(v, b):
        if v != v:
            return "nan"
        ratio = f" (x{v / b:.3g})" if b and b == b and row is not base else ""
        return f"{v:.4g}{ratio}"

    out = [f"determinism cost of {path}: step stage {stage.name}, seed {program.seed}, "
           f"horizon {program.horizon:g}, warm-up {program.warmup:g} (same seed for every mode)",
           ""]
    head = ["mode", "iterations", f"{stage.name} throughput", "sessions ended"] + [f"{n} mean" for n in names]
    table = [head]
    for row in rows:
        table.append([row["mode"], str(row["iterations"]), cell(row["throughput"], base["throughput"]),
                      cell(row["ended"], base["ended"])] +
                     [cell(row["observations"][n], base["observations"][n]) for n in names])
    widths = [max(len(r[i]) for r in table) for i in range(len(head))]
    for r in table:
        out.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip())
    out.append("")
    out.append("ratios are against the first mode; the program and its IR are unchanged "
               "(the cost is rewritten in memory: docs/numerics.md)")
    return "\n".join(out) + "\n"


def _requests_arg(text):
    if text == "all":
        return None
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise ValueError(f"--requests: expected a positive integer or `all`, got {text!r}")
    return n


def _progress():
    if not sys.stderr.isatty() and os.environ.get("SERQ_PROGRESS") != "1":
        return None
    return lambda text: print(f"serq numerics: {text}", file=sys.stderr, flush=True)


def cmd_check(args) -> int:
    from serq.numerics.checker import check_plan, plan_requests
    from serq.numerics.model import TinyCausalLM, TinyConfig
    from serq.numerics.trace import read_plan
    limit = _requests_arg(args.requests)
    plan = read_plan(args.plan)
    block = plan.header.get("block")
    cfg = TinyConfig(block=block if isinstance(block, int) and block > 0 else 16,
                     bf16=not args.fp32, seed=args.model_seed)
    report = check_plan(plan, args.kernels, TinyCausalLM(cfg), limit, args.dvr, args.group,
                        preempted_first=args.pick == "preempted", progress=_progress(),
                        near_ties=args.near_ties)
    total = len(plan_requests(plan))
    if args.json:
        write_stdout(json.dumps(report_json(report, args, total), indent=1) + "\n")
    else:
        write_stdout(format_report(report, args, plan, total))
    return 0 if report.ok else 1


def _events(plan):
    counts = {}
    for st in plan.steps:
        for e in st.events:
            counts[e.kind] = counts.get(e.kind, 0) + 1
    return counts


def format_report(report, args, plan, total):
    rows = report.requests.values()
    ev = _events(plan)
    out = [f"plan {args.plan}: {total} requests, {len(plan.steps)} iterations "
           f"(stage {plan.header.get('stage', '?')}, KV block {plan.header.get('block', '?')}; "
           f"{ev.get('preempt', 0)} preemptions, {ev.get('prefix_hit', 0)} prefix hits)",
           f"replayed {len(report.requests)} requests ({args.pick} first) over {report.steps} "
           f"iterations; model: {report.model}"]
    if report.planted:
        out.append(f"near-ties planted every {args.near_ties} generated tokens: {report.planted}")
    if report.dvr is None:
        out.append(f"kernels {report.kernels}; reference: {report.reference}, each request alone")
    else:
        out.append(f"DVR: fast path {report.kernels}, verifier and reference {report.reference}, "
                   f"window {args.dvr}, group {args.group}")
    out.append("")
    out.append(f"{'request':<9} {'prompt':>6} {'tokens':>6} {'chunks':>6} {'preempt':>7} {'hits':>4} "
               f"{'batch':>5}  {'stream':<8} {'logits':<10} {'kv':<6} first divergence")
    for r in rows:
        if report.dvr is None:
            logits = "bit-equal" if r.logits_bit_equal else "differ"
            kv = "ok" if r.kv_consistent else "differ"
            stream = "equal" if r.tokens_equal else f"@{r.token_divergence}"
            div = (f"step {r.first_divergence.step} position {r.first_divergence.position}"
                   if r.first_divergence else "-")
        else:
            logits = kv = "-"
            stream = "equal" if r.committed_equal else "DIFFERS"
            div = "-"
        out.append(f"{r.request:<9} {r.prompt:>6} {r.generated:>6} {r.chunks:>6} {r.preemptions:>7} "
                   f"{r.prefix_hits:>4} {r.max_batch:>5}  {stream:<8} {logits:<10} {kv:<6} {div}")
    out.append("")
    good = sum(1 for r in rows if r.invariant)
    n = len(report.requests)
    if report.dvr is None:
        compared = sum(r.compared for r in rows)
        out.append(f"{good}/{n} requests invariant "
                   f"({sum(1 for r in rows if not r.logits_bit_equal)} with logit-bit mismatches, "
                   f"{sum(1 for r in rows if not r.tokens_equal)} token streams diverge, "
                   f"{report.kv_conflicts} KV prefix keys with more than one fingerprint; "
                   f"{compared} aligned logit vectors compared)")
        div = report.first_divergence
        if div is not None:
            out.append(f"first divergence: {div}")
        tok = [r for r in rows if r.token_divergence is not None]
        if tok:
            first = min(tok, key=lambda r: r.token_divergence - r.prompt)
            out.append(f"first token divergence: {first.request} at position {first.token_divergence} "
                       f"(generated token {first.token_divergence - first.prompt})")
        out.append(f"margin audit: {report.margin_checked} drifted logit vectors, "
                   f"{len(report.margin_flips)} changed tokens (each with margin <= 2 eps: "
                   f"{'yes' if not report.margin_violations else 'NO'}), "
                   f"{len(report.margin_violations)} violations")
    else:
        d = report.dvr
        out.append(f"{good}/{n} committed streams equal the reference "
                   f"({d['tokens_committed']} tokens committed)")
        out.append(f"DVR: {d['verifies']} verifies in {d['verify_passes']} verifier passes, "
                   f"{d['rollbacks']} rollbacks (rollback rate {100 * d['rollback_rate']:.1f}% of "
                   f"verifies), {d['tokens_rejected']} speculated tokens rejected of "
                   f"{d['tokens_verified']} verified")
    for note in dict.fromkeys(report.notes):
        out.append(f"note: {note}")
    return "\n".join(out) + "\n"


def report_json(report, args, total):
    def div(d):
        return None if d is None else dict(d.__dict__)
    return dict(plan=args.plan, kernels=report.kernels, reference=report.reference,
                model=report.model, ok=report.ok, requests_in_plan=total, steps=report.steps,
                near_ties_planted=report.planted,
                kv_conflicts=report.kv_conflicts, margin_checked=report.margin_checked,
                margin_violations=[list(v) for v in report.margin_violations],
                margin_flips=[list(v) for v in report.margin_flips], dvr=report.dvr,
                first_divergence=div(report.first_divergence),
                requests=[dict(request=r.request, prompt=r.prompt, generated=r.generated,
                               invariant=r.invariant, tokens_equal=r.tokens_equal,
                               logits_bit_equal=r.logits_bit_equal, kv_consistent=r.kv_consistent,
                               token_divergence=r.token_divergence, compared=r.compared,
                               committed_equal=r.committed_equal, chunks=r.chunks,
                               preemptions=r.preemptions, prefix_hits=r.prefix_hits,
                               max_batch=r.max_batch,
                               first_divergence=div(r.first_divergence))
                          for r in report.requests.values()])
