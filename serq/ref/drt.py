"""Differential random testing (formal.md §5, §6.3): the same IR run by ``serq.sim`` and by
``serq.ref``, compared per observation name and per session, the (time, value) sequences in
the order made.

The fixed mode regenerates upstream's 200 cases (``scripts/lean_drt.py``, formal.md §5.1) bit
for bit from ``random.Random(seed)`` on the IR-10 ``cache_trace`` template, and also compares
the digests pyserq 0.1.2 recorded for them (``oracle-data/drt-pyserq-0.1.2.json``): a
three-way agreement with no live oracle. ``run_cases`` takes the simulator as a parameter, so
a seeded fault in ``serq.sim`` can be run through the same comparison.

This module is tooling around serq.ref, not part of the reference semantics; it imports
``serq.run`` (the product under test) only when it runs a case.
"""
from __future__ import annotations

import hashlib
import json
import math
import pathlib
import random
import sys
from dataclasses import dataclass, field

from serq.errors import SerqError
from serq.ir.types import Program
from serq.ref.fragment import OutsideFragment

DATA = pathlib.Path(__file__).resolve().parent / "data"
TEMPLATE = DATA / "cache_trace.ir.json"
DIGESTS = DATA / "drt-pyserq-0.1.2.json"
SLOT_NEW, SLOT_OUT, SLOT_THINK, SLOT_FORCED = 3, 4, 5, 7


# -- the case distribution of scripts/lean_drt.py (formal.md §5.1) ----------------------------
def _num(x):
    return {"Num": float(x)}


def cost_ir(coeffs):
    """``((((c0 + tok·Ntok) + pre·Npre) + dec·Ndec) + kv·Kvb) + (2·att2)·Attn``, left-nested,
    every term ``Mul(Num k, Ctx v)`` and every number a float (§5.1)."""
    c0, tok, pre, dec, kv, att2 = coeffs
    e = _num(c0)
    for k, var in ((tok, "Ntok"), (pre, "Npre"), (dec, "Ndec"), (kv, "Kvb"), (2 * att2, "Attn")):
        e = {"Binary": ["Add", e, {"Binary": ["Mul", _num(k), {"Ctx": var}]}]}
    return e


def case_ir(seed: int) -> dict:
    """The IR (as a JSON document) of case ``seed``: the draws in upstream's exact order."""
    rng = random.Random(seed)
    doc = json.loads(TEMPLATE.read_text())
    sessions, longest = [], 0
    for _ in range(rng.randint(1, 40)):
        turns = []
        for _ in range(rng.randint(1, 6)):
            new, out, think = rng.randint(1, 3000), rng.randint(1, 12), rng.randint(0, 50)
            forced = float(rng.random() < 0.2)
            turns.append([[SLOT_NEW, float(new)], [SLOT_OUT, float(out)],
                          [SLOT_THINK, float(think)], [SLOT_FORCED, forced]])
            longest = max(longest, new + out)
        sessions.append({"attrs": [], "turns": turns})
    doc["arrival"] = {"Sessions": sessions}
    blocks = rng.randint(math.ceil(longest / 16) + 1, 4000)
    doc["pools"][0]["cap"] = float(blocks * 16)
    doc["pools"][1]["cap"] = float(rng.randint(1, 64))
    inner = rng.randint(1, 4096)
    budget = rng.choice([16, 64, 256, 512, 1024, 2048, inner])
    inner = rng.randint(1, 512)
    chunk = rng.choice([0, 0, 0, inner])
    if rng.random() < 0.5:
        coeffs = [1, 0, 0, 0, 0, 0]
    else:
        coeffs = [rng.randint(1, 5000), rng.randint(0, 3), rng.randint(0, 60),
                  rng.randint(0, 50), rng.randint(0, 3), rng.randint(0, 3)]
    step = doc["stages"][0]["kind"]["Step"]
    step["budget"], step["chunk"], step["cost"] = _num(budget), _num(chunk), cost_ir(coeffs)
    doc["horizon"] = 1e15
    return doc


def case_program(seed: int) -> Program:
    return Program.from_json(json.dumps(case_ir(seed)))


# -- what is compared --------------------------------------------------------------------
def canonical(report) -> dict:
    """``{name: {str(session): [[time, value], ...]}}``, sessions that made values only, in
    the order made: the form pyserq 0.1.2's digests were taken of (oracle-data/README.md)."""
    out = {}
    for name, o in report.observes.items():
        per = {}
        for v, t, s in zip(o.samples, o.times, o.sessions):
            per.setdefault(str(s), []).append([float(t), float(v)])
        out[name] = per
    return out


def digest(obs: dict) -> str:
    return hashlib.sha256(json.dumps(obs, sort_keys=True).encode("utf-8")).hexdigest()


COUNTERS = ("events", "arrivals", "ended", "turns")
POOL_COUNTERS = ("admissions", "evicted_entries", "evicted_units", "preemptions", "rejected",
                 "stuck")


def first_difference(sim, ref) -> str | None:
    """The first differing observation (name, session, index: both (time, value)), else the
    first differing counter; ``None`` when the two reports agree."""
    a, b = canonical(sim), canonical(ref)
    for name in a:
        for sess in sorted(set(a[name]) | set(b[name]), key=int):
            xs, ys = a[name].get(sess, []), b[name].get(sess, [])
            for i in range(max(len(xs), len(ys))):
                x = xs[i] if i < len(xs) else None
                y = ys[i] if i < len(ys) else None
                if x != y:
                    return (f"observation {name}, session {sess}, value #{i}: "
                            f"sim (time, value) = {x}, ref = {y}")
    for f in COUNTERS:
        if getattr(sim, f) != getattr(ref, f):
            return f"{f}: sim {getattr(sim, f)}, ref {getattr(ref, f)}"
    for ps, pr in zip(sim.pools, ref.pools):
        for f in POOL_COUNTERS:
            if getattr(ps, f) != getattr(pr, f):
                return f"pool {ps.name} {f}: sim {getattr(ps, f)}, ref {getattr(pr, f)}"
    return None


@dataclass
class Outcome:
    """One case: ``diff`` is None when both sides agree (or both refuse with an error)."""
    name: str
    program: Program
    diff: str | None = None
    sim: object = None
    ref: object = None
    notes: list = field(default_factory=list)


def _attempt(fn, program):
    try:
        return fn(program)
    except OutsideFragment:
        raise
    except (SerqError, RecursionError) as e:
        return e


def compare(name, program, sim_run=None) -> Outcome:
    """Run ``program`` on both sides and compare. Two errors agree (each side reports a clear
    error where the reference panics, e.g. a served victim); one error is a divergence."""
    from serq.ref import run as ref_run
    if sim_run is None:
        from serq import run as sim_run
    ref = _attempt(ref_run, program)
    sim = _attempt(sim_run, program)
    out = Outcome(name, program, sim=sim, ref=ref)
    if isinstance(sim, Exception) or isinstance(ref, Exception):
        if not (isinstance(sim, Exception) and isinstance(ref, Exception)):
            out.diff = f"one side failed: sim {_short(sim)}, ref {_short(ref)}"
        return out
    out.diff = first_difference(sim, ref)
    return out


def _short(x):
    return f"error {x}" if isinstance(x, Exception) else "ran"


def save(out: Outcome, root) -> pathlib.Path:
    """Write a divergence to ``root/<case>/``: the program, both outputs, the first
    differing event."""
    d = pathlib.Path(root) / out.name
    d.mkdir(parents=True, exist_ok=True)
    (d / "program.ir.json").write_text(out.program.to_json() + "\n")
    for side in ("sim", "ref"):
        r = getattr(out, side)
        text = (f"error: {r}\n" if isinstance(r, Exception)
                else json.dumps(canonical(r), indent=1) + "\n")
        (d / f"{side}.observations.json").write_text(text)
    (d / "first_difference.txt").write_text((out.diff or "") + "\n")
    return d


def recorded_digests() -> dict:
    """``{seed: sha256}`` recorded from pyserq 0.1.2 (oracle-data/drt-pyserq-0.1.2.json)."""
    doc = json.loads(DIGESTS.read_text())
    return {row["seed"]: row["sha256"] for row in doc["cases"]}


def run_cases(seeds, sim_run=None, save_dir=None, check_digests=False, progress=None):
    """Run the fixed cases ``seeds``; return the list of failing :class:`Outcome` s (empty when
    every case agrees). With ``check_digests`` the sim's observations must also hash to
    pyserq 0.1.2's recorded digest (a three-way agreement)."""
    digests = recorded_digests() if check_digests else {}
    failed = []
    seeds = list(seeds)
    for k, seed in enumerate(seeds):
        out = compare(f"case-{seed}", case_program(seed), sim_run)
        if out.diff is None and seed in digests and not isinstance(out.sim, Exception):
            got = digest(canonical(out.sim))
            if got != digests[seed]:
                out.diff = f"digest {got} differs from pyserq 0.1.2's {digests[seed]}"
        if out.diff is not None:
            failed.append(out)
            if save_dir is not None:
                save(out, save_dir)
        if progress is not None:
            progress(k + 1, len(seeds), len(failed))
    return failed


def stderr_progress(every=20):
    def report(done, total, failed):
        if done % every == 0 or done == total:
            print(f"drt: {done}/{total} cases, {failed} failed", file=sys.stderr, flush=True)
    return report
