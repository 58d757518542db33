"""``serq drt``: differential random testing of serq.sim against serq.ref (formal.md §5, §6.3).

Registered by :mod:`serq.cli`; prints ``N passed, M failed`` last and exits 1 when a case
fails. Progress goes to stderr.
"""
from __future__ import annotations

import sys

HELP = "compare serq.sim with the reference semantics serq.ref on generated programs (DRT)"
DESCRIPTION = (
    "Differential random testing (formal.md §5): run the same IR with the simulator and with "
    "the reference semantics serq.ref and compare every observation per session, times and "
    "values. The fixed mode regenerates upstream's cases (seeds S..S+N-1 of "
    "scripts/lean_drt.py; seeds 0..199 are also checked against the digests pyserq 0.1.2 "
    "recorded). --hypothesis draws N programs over the fragment instead (more preemption, "
    "eviction and growth) and shrinks a divergence to a minimal program. --replay runs the "
    "333-session vLLM replay (examples/vllm_replay.sq) under the three costs of §5.2.")


def add_parser(sub):
    p = sub.add_parser("drt", help=HELP, description=DESCRIPTION,
                       epilog="Exit status: 0 every case agrees; 1 a case diverges; 2 usage "
                              "error (or --hypothesis without the hypothesis package).")
    p.add_argument("--cases", type=_count, default=200, metavar="N",
                   help="number of cases (default 200)")
    p.add_argument("--seed", type=_count, default=0, metavar="S",
                   help="first seed of the fixed mode, or the hypothesis seed (default 0)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--hypothesis", action="store_true",
                      help="draw N programs over the fragment with hypothesis instead "
                           "(pip install 'serq[drt]'); a divergence is shrunk to a minimal program")
    mode.add_argument("--replay", action="store_true",
                      help="run the 333-session replay of formal.md §5.2 "
                           "(examples/vllm_replay.sq) under the step clock, the ns and the µs "
                           "cost instead, with both run times")
    p.add_argument("--save", metavar="DIR",
                   help="write each divergence to DIR/<case>/ (program, both outputs, the "
                        "first difference)")
    p.set_defaults(func=cmd_drt, parser=p)
    return p


def _count(text):
    import argparse
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0: {text}")
    return n


def cmd_drt(args) -> int:
    from serq.ref import drt
    if args.save is not None:
        from serq.cli import _prepare_dump
        _prepare_dump(args.save)  # before the cases: a divergence found must not be lost
    if args.replay:
        return _replay()
    if args.hypothesis:
        try:
            import hypothesis  # noqa: F401  (an optional extra)
        except ImportError:
            print("serq drt --hypothesis needs the hypothesis package: "
                  "pip install 'serq[drt]'", file=sys.stderr)
            return 2
        from serq.ref import hyp
        ran, failed = hyp.run(args.cases, args.seed, save_dir=args.save,
                              progress=drt.stderr_progress(500))
        total = ran
    else:
        seeds = range(args.seed, args.seed + args.cases)
        failed = drt.run_cases(seeds, save_dir=args.save, check_digests=True,
                               progress=drt.stderr_progress(20))
        total = len(seeds)
    from serq.output import write_stdout
    write_stdout("".join(f"{out.name}: {out.diff}\n" for out in failed)
                 + f"{total - len(failed)} passed, {len(failed)} failed\n")
    return 1 if failed else 0


def _replay() -> int:
    from serq.output import write_stdout
    from serq.ref import replay
    failed = 0
    for row in replay.run_all():
        write_stdout(f"{row.name}: {row.observations} observations, {row.preemptions} "
                     f"preemptions, sim {row.sim_s:.1f} s, ref {row.ref_s:.1f} s (CPU): "
                     + ("agree" if row.diff is None else f"DIVERGE: {row.diff}") + "\n")
        failed += row.diff is not None
    write_stdout(f"{len(replay.COSTS) - failed} passed, {failed} failed\n")
    return 1 if failed else 0
