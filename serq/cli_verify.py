"""``serq verify FILE``: the program's claims over a bounded workload family (every workload
run), beyond it by random sampling (hypothesis), and with ``--lemmas`` the z3 proofs of the
per-iteration lemmas the papers' claims rest on. Parsing and output only: the work is
:mod:`serq.claims.verify` and :mod:`serq.claims.lemmas` (docs/claims.md "serq verify").

Exit status: 0 when every `every`/`at end` claim holds on everything run and every `some`
claim is witnessed (and every lemma is proved); 1 when one is not, or the input does not load;
2 usage error.
"""
from __future__ import annotations


import math

__all__ = ["add_command", "cmd_verify"]

MAX_WORKLOADS = 1_000_000  # the bounded-exhaustive part runs each one: more is a typo
MAX_SESSIONS = 64

HONEST = ("Verified for the bounded family above (every workload run once, on serq's "
          "simulator) and tested beyond it; neither is a proof for all workloads.")


def _count(value: str) -> int:
    import argparse
    try:
        n = int(value, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {value}")
    return n


def _sessions(value: str) -> int:
    import argparse
    n = _count(value)
    if not 1 <= n <= MAX_SESSIONS:
        raise argparse.ArgumentTypeError(f"expected a whole number from 1 to {MAX_SESSIONS}, "
                                         f"got {n}")
    return n


def add_command(sub) -> None:
    from serq.cli import _add_program_options
    p = sub.add_parser(
        "verify", help="check a program's claims over a bounded workload family",
        description="Run FILE's claims on every workload of a bounded family (n sessions, "
                    "the attributes `init` draws on a grid of values, arrival times on a grid "
                    "where the arrival law leaves them free), then on random workloads beyond "
                    "it (hypothesis); with --lemmas, prove the lemmas the papers' claims rest "
                    "on with z3. A verdict is about the family it names, never about all "
                    "workloads.",
        epilog="Exit status: 0 every claim holds (every `some` claim witnessed, every lemma "
               "proved); 1 one does not, or the input does not load; 2 usage error.")
    _add_program_options(p, run_settings=True)
    g = p.add_argument_group("the family")
    g.add_argument("--sessions", type=_sessions, default=3, metavar="N",
                   help=f"workloads of 1 to N sessions (default 3, at most {MAX_SESSIONS})")
    g.add_argument("--values", action="append", default=[], metavar="NAME=SPEC",
                   help="the values of a drawn attribute: a comma list or A..B (whole "
                        "numbers); default 0,1,2 (repeatable)")
    g.add_argument("--times", metavar="LIST",
                   help="the arrival-time grid (comma list) when the arrival law leaves the "
                        "times free (poisson, drawn renewal); default 0, one and two mean gaps")
    g.add_argument("--samples", type=_count, default=100, metavar="K",
                   help="random workloads beyond the bound, per claim (hypothesis; 0: none; "
                        "default 100)")
    g.add_argument("--no-exhaustive", action="store_true",
                   help="skip the bounded-exhaustive part")
    g.add_argument("--lemmas", action="store_true",
                   help="also prove the per-iteration lemmas of formal.md §6.6 with z3 "
                        "(the `verify` extra)")
    p.set_defaults(func=cmd_verify, parser=p)


def _out(text: str) -> None:
    """Written as it comes (the verdicts appear one by one), checked (``serq.output``)."""
    from serq.output import write_stdout
    write_stdout(text)


def cmd_verify(args) -> int:
    from serq.cli import load
    from serq.claims import verify as V
    from serq.claims.family import family_of
    ok = True
    if args.lemmas:
        ok = _lemmas() and ok
    program = load(args)
    if not program.claims:
        _out(f"{args.file}: no claims to verify\n")
        return 0 if ok else 1
    values = dict(V.parse_values(s) for s in args.values)
    times = None
    if args.times is not None:
        try:
            times = [float(x) for x in args.times.split(",")]
        except ValueError:
            times = [math.nan]
        if not all(math.isfinite(t) and t >= 0 for t in times):
            args.parser.error(f"--times {args.times}: expected a comma list of finite "
                              f"times >= 0")
    fam = family_of(program, args.sessions, values, times)
    total = fam.size(cap=MAX_WORKLOADS)
    if total > MAX_WORKLOADS:
        raise ValueError(f"the family ({fam.describe()}) has more than {MAX_WORKLOADS:,} "
                         f"workloads, too many to run each: lower --sessions or give fewer "
                         f"--values or --times")
    _out(f"serq verify {args.file}\n")
    _out(f"  runs on: {V.SEMANTICS}\n")
    _out(f"  family: {fam.describe()}: {total} workload{'s' if total != 1 else ''}\n")
    if not args.no_exhaustive:
        _out("\nbounded-exhaustive (every workload of the family, one run each)\n")
        for v in V.exhaustive(fam):
            _out(f"  {v.line(fam, total)}\n")
            ok = ok and v.holds and not (v.kind == "some_iteration" and v.witness is None)
    if args.samples:
        from serq.extras import need
        need("verify", "serq verify's random part (--samples)", ["hypothesis"])
        n, vmax, tmax = V.default_random_bounds(fam)
        _out(f"\nrandom, beyond the bound ({V.bounds_text(fam, n, vmax, tmax)}; hypothesis, "
             f"derandomized)\n")
        for name, found, read, distinct in V.randomised(fam, args.samples, n, vmax, tmax):
            if found is None:
                _out(f"  {name}: no counterexample in {distinct} sample"
                     f"{'s' if distinct != 1 else ''} (distinct random workloads; {read} runs "
                     f"read the claim)\n")
            else:
                w, r = found
                at = f" at t = {V.show_t(r.first)}" if r.first is not None else ""
                _out(f"  {name}: FAILS{at}; shrunk counterexample: {w.describe()}\n")
                ok = False
    _out(f"\n{HONEST}\n")
    return 0 if ok else 1


def _lemmas() -> bool:
    from serq.extras import need
    need("verify", "serq verify --lemmas", ["z3"])
    from serq.claims.lemmas import LEMMAS
    _out("lemmas (z3: a proof of the encoded formula, trusting z3 and the encoding; "
         "serq/claims/lemmas.py)\n")
    ok = True
    for lemma in LEMMAS:
        verdict, detail = lemma.prove()
        ok = ok and verdict == "proved"
        _out(f"  {lemma.name}: {verdict}{' — ' + detail if detail else ''}\n")
    _out("\n")
    return ok
