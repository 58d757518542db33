"""``serq verify``: a program's claims over a bounded workload family, exhaustively, and beyond
it by random sampling (formal.md §6.5, §6.8; docs/claims.md "serq verify").

What it establishes, and the words it uses for it:

* exhaustive: every workload of F(n ≤ N, values, times) is run (one path each: the semantics
  is deterministic for a given seed), and each claim read on it. "holds for all |W| workloads
  of F(…)" means exactly that: *verified for the bounded family*, not proved for all
  workloads. A failure is reported with the smallest failing workload (fewest sessions first,
  then the enumeration order).
* random: hypothesis draws workloads beyond the bound (more sessions, larger values, any
  arrival times) and shrinks a failure; "no counterexample in K samples" is a test result.
* `some iteration` claims: a witness is established by the run that shows it.

The runs use the simulator (``serq.sim``, the implementation serq's reports come from): the
independent reference semantics ``serq.ref`` covers the IR-10 fragment only (no claims, no
`serve only`) and has no observer hooks, so each verdict is relative to the simulator's
semantics.
"""
from __future__ import annotations

import dataclasses
import math

from serq.claims.family import Family, Workload, build_program, show_set
from serq.claims.monitor import ClaimMonitor
from serq.sim.run import run as sim_run

SEMANTICS = ("serq.sim (the simulator; the reference semantics serq.ref reads the IR-10 fragment "
             "only and has no observer for claims)")


@dataclasses.dataclass
class Verdict:
    """One claim over the family: counts and the first counterexample or witness."""
    name: str
    kind: str
    in_family: int = 0       # workloads whose sessions all satisfy `given`
    outside: int = 0         # workloads with a session failing `given`
    unevaluated: int = 0     # `at end` with sessions live at the horizon
    failing: object = None   # (Workload, ClaimResult) of the first failure
    witness: object = None   # (Workload, ClaimResult) of the first witness (`some`)

    @property
    def holds(self) -> bool:
        return self.failing is None

    def line(self, family: Family, total: int) -> str:
        f = family.describe()
        head = f"{self.name} ({self.kind.replace('_', ' ')})"
        extra = []
        if self.outside:
            extra.append(f"{self.outside} outside it: a session fails `given`")
        if self.unevaluated:
            extra.append(f"{self.unevaluated} not evaluated: sessions live at the horizon")
        tail = f" [{'; '.join(extra)}]" if extra else ""
        if self.kind == "some_iteration":
            if self.witness is None:
                return f"{head}: not witnessed in any of the {total} workloads of {f}{tail}"
            w, r = self.witness
            return (f"{head}: witnessed (established by one run) at t = {show_t(r.first)} "
                    f"in: {w.describe()}")
        if self.failing is not None:
            w, r = self.failing
            at = f" at t = {show_t(r.first)}" if r.first is not None else ""
            return (f"{head}: FAILS{at}; smallest counterexample in {f}: {w.describe()}")
        n = self.in_family - self.unevaluated
        return (f"{head}: holds for all {n} workload{'s' if n != 1 else ''} of {f}"
                f"{tail}")


def show_t(t) -> str:
    from serq.report.text import fmt_number
    return fmt_number(t)


def run_workload(program):
    """The claims' results on one workload's program."""
    monitor = ClaimMonitor(program)
    sim_run(program, hooks=monitor)
    return monitor.results


def exhaustive(family: Family, progress=None):
    """Run every workload of the family; one ``Verdict`` per claim."""
    claims = family.program.claims
    verdicts = [Verdict(c.name, _kind(c)) for c in claims]
    for k, w in enumerate(family.workloads()):
        results = run_workload(w.program())
        for v, r in zip(verdicts, results):
            record(v, w, r)
        if progress is not None:
            progress(k + 1)
    return verdicts


def record(v: Verdict, w, r):
    if r.result == "out_of_scope":
        v.outside += 1
        return
    v.in_family += 1
    if r.result == "not_evaluated":
        v.unevaluated += 1
    elif r.result in ("fails",) and v.failing is None:
        v.failing = (w, r)
    elif r.result == "witnessed" and v.witness is None:
        v.witness = (w, r)


def _kind(c):
    return {"EveryIteration": "every_iteration", "SomeIteration": "some_iteration",
            "AtEnd": "at_end"}[c.kind]


# ---------------------------------------------------------------------------------------
# beyond the bound: hypothesis


def randomised(family: Family, samples: int, max_sessions: int, max_value: float,
               max_time: float, seed: int = 0):
    """For each universal claim (`every`, `at end`): search ``samples`` random workloads of
    up to ``max_sessions`` sessions, drawn values in 0..max_value (whole numbers), arrival
    times in [0, max_time] (when the family leaves them free), for one that fails; shrink it.
    Returns ``[(claim name, None or (Workload, ClaimResult), samples run that were in the
    family and read, distinct workloads run)]``."""
    from hypothesis import HealthCheck, Phase, find, settings, strategies as st
    from hypothesis.errors import NoSuchExample

    names = [n for _, n in family.drawn]
    free_times = not callable(family.times)

    def session(given):
        values = st.tuples(*[st.integers(0, int(max_value)).map(float) for _ in names])
        if given is None:
            return values
        return values.filter(lambda vs: in_given(family, given, vs))

    @st.composite
    def workloads(draw, given=None):
        n = draw(st.integers(1, max_sessions))
        values = tuple(draw(session(given)) for _ in range(n))
        if free_times:
            times = tuple(sorted(draw(st.lists(st.integers(0, int(max_time)), min_size=n,
                                               max_size=n))))
            times = tuple(float(t) for t in times)
        else:
            times = tuple(family.times(i) for i in range(n))
        return Workload(family, values, times)

    out = []
    cfg = settings(max_examples=samples, database=None, derandomize=True, deadline=None,
                   suppress_health_check=list(HealthCheck),
                   phases=[Phase.generate, Phase.shrink])
    for k, c in enumerate(family.program.claims):
        if c.kind == "SomeIteration":
            continue
        found = {}
        read = [0, set()]

        def fails(w, k=k):
            r = run_workload(build_program(family.program, family.drawn, w.values, w.times))[k]
            read[1].add((w.values, w.times))
            if r.result not in ("out_of_scope", "not_evaluated"):
                read[0] += 1
            if r.result == "fails":
                found[(w.values, w.times)] = r
                return True
            return False
        try:
            w = find(workloads(c.given), fails, settings=cfg)
            out.append((c.name, (w, found.get((w.values, w.times)) or run_workload(w.program())[k]), read[0],
                        len(read[1])))
        except NoSuchExample:
            out.append((c.name, None, read[0], len(read[1])))
    return out


def in_given(family: Family, given, values) -> bool:
    """Whether a session with these drawn values satisfies ``given`` (it reads only the
    session's attributes and constants, so it folds once they are put in)."""
    from serq.claims.family import derived, substitute
    from serq.ir.fold import fold_ir
    p = family.program
    slots = [s for s, _ in family.drawn]
    attrs = dict(zip(slots, values))
    attrs.update(derived(p.blocks[p.init], attrs, slots))
    v = fold_ir(substitute(given, attrs))
    return v is None or v != 0.0


def bounds_text(family: Family, max_sessions, max_value, max_time) -> str:
    parts = [f"n ≤ {max_sessions}"]
    for _, n in family.drawn:
        parts.append(f"{n} ∈ {show_set(range(0, int(max_value) + 1))}")
    if callable(family.times):
        parts.append(family.times.__doc__)
    else:
        parts.append(f"arrival times ∈ {{0..{int(max_time)}}}")
    return ", ".join(parts)


def default_random_bounds(family: Family):
    """Beyond the exhaustive bound: three times the sessions, values up to twice the grid's
    largest (sessions failing a claim's `given` are not drawn for it), arrival times up to
    four times the grid's largest (or a tenth of the horizon)."""
    vmax = max([max(v) for v in family.values.values()] or [0.0])
    tmax = 0.0 if callable(family.times) else max(family.times)
    return (max(3 * family.max_sessions, family.max_sessions + 1),
            max(2 * vmax, vmax + 2), max(4 * tmax, family.program.horizon / 10, 1.0))


MAX_VALUES = 10_000  # values of one drawn attribute in the family: more is a typo


def parse_values(spec: str):
    """``NAME=1,2,3`` or ``NAME=A..B`` (whole numbers A to B) -> (name, values)."""
    name, sep, rest = spec.partition("=")
    if not sep or not name.strip():
        raise ValueError(f"--values {spec}: expected NAME=LIST or NAME=A..B")
    rest = rest.strip()
    try:
        if ".." in rest:
            a, b = rest.split("..")
            lo, hi = int(a), int(b)
            if hi < lo:
                raise ValueError
            if hi - lo >= MAX_VALUES:
                raise ValueError(f"--values {spec}: more than {MAX_VALUES:,} values")
            vals = tuple(float(v) for v in range(lo, hi + 1))
        else:
            vals = tuple(float(x) for x in rest.split(","))
            if any(not math.isfinite(v) for v in vals):
                raise ValueError
    except ValueError as e:
        if str(e).startswith("--values"):
            raise
        raise ValueError(f"--values {spec}: expected a comma list of numbers or A..B with "
                         f"whole numbers A <= B") from None
    return name.strip(), tuple(sorted(set(vals)))
