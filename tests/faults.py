"""Seeded faults in ``serq.sim``, for showing that the checks have teeth (issue 9, "DRT has
teeth"): each ``Fault`` breaks one rule of the interpreter spec by monkeypatching one method
of the simulator, the way a plausible bug would, and ``tests/sim/test_faults.py`` asserts that
the invariant monitors, the conformance corpus or DRT catch it. docs/formal.md has the table
of what caught each.

A fault is applied with ``fault.apply(monkeypatch)`` (pytest's fixture, or any object with a
``setattr(target, name, value)``; ``Patch`` below is one that undoes itself) and is active
until the patch is undone. The faults are written here, never in serq/.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import serq.sim.step as step
from serq.sim.exprnodes import Expr
from serq.sim.pools import EPS, PoolOps, PoolState


@dataclass(frozen=True)
class Fault:
    name: str
    rule: str      # the rule it breaks (where in the spec)
    apply: Callable


class Patch:
    """A minimal monkeypatch: ``setattr`` records the old value, ``undo`` restores all."""

    def __init__(self):
        self.saved = []

    def setattr(self, target, name, value):
        self.saved.append((target, name, getattr(target, name)))
        setattr(target, name, value)

    def undo(self):
        while self.saved:
            target, name, value = self.saved.pop()
            setattr(target, name, value)


def _evict(pl, need, cap, pick, whole=False, touch_used=False):
    """An ``evict lru`` loop (no keys, no spill), with the entry chosen by ``pick``."""
    entries = pl.entries
    while pl.used + pl.cached + need > cap and entries:
        ent = pick(entries)
        piece = ent.size if (whole or pl.block is None) else min(pl.block, ent.size)
        ent.size -= piece
        pl.cached -= piece
        pl.evicted_units += piece
        if touch_used:
            pl.used -= piece
        if ent.size <= EPS:
            del entries[ent.key]
            pl.evicted_entries += 1


def _step_method(mp, name, replacement):
    """Step stages made from now on have ``replacement`` for their method ``name``. Compiled,
    ``StepStage`` is a cclass, whose methods cannot be set: the stages are made of a subclass
    that overrides the method (``stages.make_stage`` looks ``step.StepStage`` up each time)."""
    mp.setattr(step, "StepStage", type("StepStage", (step.StepStage,), {name: replacement}))


def _oldest(entries):
    return next(iter(entries.values()))


def _newest(entries):
    return next(reversed(entries.values()))


def _patch_lru(mp, pick, **how):
    """``PoolState.evict`` runs ``_evict`` on a pool that evicts LRU without spill, with its
    entries in LRU order, and is unchanged on the others."""
    evict = PoolState.evict

    def patched(pl, need, cap):
        if pl.evict_keys is None and pl.spill is None and pl.lru_sorted:
            _evict(pl, need, cap, pick, **how)
        else:
            evict(pl, need, cap)
    mp.setattr(PoolState, "evict", patched)


def evict_newest(mp):
    """LRU eviction takes the most recently released entry."""
    _patch_lru(mp, _newest)


def evict_whole_entry(mp):
    """Eviction frees the whole LRU entry instead of one block at a time."""
    _patch_lru(mp, _oldest, whole=True)


def eviction_frees_used(mp):
    """Eviction also takes the evicted units off ``used``."""
    _patch_lru(mp, _oldest, touch_used=True)


def round_blocks_down(mp):
    """Allocations are rounded down to a block instead of up."""
    def up(self, x):
        b = self.block
        if b is None or x == math.inf:
            return x
        return math.floor(x / b) * b
    mp.setattr(PoolState, "up", up)


def round_cache_up(mp):
    """The prefix kept in the cache (and a reuse) is rounded up to a block, not down."""
    def down(self, x):
        b = self.block
        if b is None or x == math.inf:
            return x
        return math.ceil(x / b) * b
    mp.setattr(PoolState, "down", down)


def serve_longest_first(mp):
    """A step stage served in admission order serves the resident with most work left
    first."""
    original = step.StepStage.__init__

    class MostRemaining(Expr):  # a serve key's node (exprnodes): ``-remaining``
        def ev(self, a):
            return -self.sim.ctx.remaining

    def init(self, sim, index, decl):
        original(self, sim, index, decl)
        if self.serve_keys is None and not self.exclusive:
            key = MostRemaining()
            key.sim = sim
            self.serve_keys = [key]
    _step_method(mp, "__init__", init)


def preempt_oldest(mp):
    """Preemption on the engine's memory pool takes the resident admitted first."""
    original = PoolOps.victim

    def victim(self, pl):
        if not pl.engine_memory:
            return original(self, pl)
        best = None
        for x in pl.holders:
            if x.status == 2 and x.stage.is_step and x.stage.memory == pl.index:
                if best is None or x.adm_seq < best.adm_seq:
                    best = x
        return best
    mp.setattr(PoolOps, "victim", victim)


def preempted_to_back(mp):
    """A preempted hold goes to the back of its queue instead of the front."""
    original = PoolOps.enqueue
    mp.setattr(PoolOps, "enqueue", lambda self, s, req, front: original(self, s, req, False))


def cache_blocks_admission(mp):
    """The admission test counts cached units as taken (they must be evicted instead)."""
    def fits(self, need):
        return self.used + self.cached + self.up(need) <= self.cap + EPS
    mp.setattr(PoolState, "fits", fits)


def release_keeps_a_block(mp):
    """Releasing a hold frees one block (or unit) less than it allocated."""
    original = PoolOps.release_units

    def release(self, s, pi, alloc, computed, cache):
        b = self.pools[pi].block or 1.0
        original(self, s, pi, alloc - b if alloc >= b else alloc, computed, cache)
    mp.setattr(PoolOps, "release_units", release)


def drop_token_at_chunk_boundary(mp):
    """At the end of an iteration, a prefill chunk that does not finish its job loses one
    more token of work than it was given (a token dropped at the chunk boundary)."""
    original = step.StepStage.iter_end

    def iter_end(self, epoch):
        run = self.running
        if run is not None and run[0] == epoch:
            for j, tokens in run[1]:
                if not j.decode and j.work - tokens > 1.0:
                    j.work -= 1.0
        return original(self, epoch)
    _step_method(mp, "iter_end", iter_end)


def last_slice_short(mp):
    """The last job of a batch of several gets one token less than the fill gives it."""
    original = step.StepStage.launch

    def launch(self, assign, attn, sums, *rest):
        if len(assign) > 1 and assign[-1][1] > 1.0:
            assign[-1][1] -= 1.0
            ntok, dec, npre, kvb, kvp = sums
            sums = (ntok - 1.0, dec, npre - (0.0 if assign[-1][0].decode else 1.0), kvb, kvp)
        return original(self, assign, attn, sums, *rest)
    _step_method(mp, "launch", launch)


def residents_by_arrival(mp):
    """A new step job joins the end of the residents, not its owner's admission place."""
    original = step.StepStage.add_job

    def add_job(self, owner, work, mode, growing):
        original(self, owner, work, mode, growing)
        res = self.residents
        newest = max(self.jobs.values(), key=lambda j: j.id)
        res.remove(newest)
        res.append(newest)
    _step_method(mp, "add_job", add_job)


def admit_without_fit(mp):
    """A hold admitted by the engine (``admit via``) skips the fit test."""
    original = PoolOps.req_fits

    def req_fits(self, req):
        ok = original(self, req)
        return True if self.admit_budget is not None else ok
    mp.setattr(PoolOps, "req_fits", req_fits)


FAULTS = [
    Fault("evict_newest", "§10 eviction takes the least (release time, number) entry",
          evict_newest),
    Fault("evict_whole_entry", "§10 one piece = one block", evict_whole_entry),
    Fault("eviction_frees_used", "§10 eviction changes cached only", eviction_frees_used),
    Fault("round_blocks_down", "§9 allocations round up to a block", round_blocks_down),
    Fault("round_cache_up", "§9.4/§9.5 reuse and cache keep round down", round_cache_up),
    Fault("serve_longest_first", "§8.4 serve by [] is admission order", serve_longest_first),
    Fault("preempt_oldest", "§9.10 the victim is the newest resident", preempt_oldest),
    Fault("preempted_to_back", "§9.10 a preempted hold queues at the front",
          preempted_to_back),
    Fault("cache_blocks_admission", "§9 cached units never block an admission",
          cache_blocks_admission),
    Fault("release_keeps_a_block", "§9.5 release frees the allocation", release_keeps_a_block),
    Fault("drop_token_at_chunk_boundary", "§8.6 work -= tokens",
          drop_token_at_chunk_boundary),
    Fault("last_slice_short", "§8.3 each job takes min(want, left)", last_slice_short),
    Fault("residents_by_arrival", "§8 residents in admission order", residents_by_arrival),
    Fault("admit_without_fit", "§8.8 an engine admission must fit every pool",
          admit_without_fit),
]


# -- the detectors ----------------------------------------------------------------------------
# Each returns what caught the active fault (a short text) or None. They are run with the
# fault applied; a run that raises something else than a monitor's error is not counted as
# caught by the monitors (the conformance corpus and DRT count any difference or error).

import importlib.util  # noqa: E402
import os  # noqa: E402
import pathlib  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
SHARED = pathlib.Path(os.environ.get("SERQ_SHARED", ROOT.parent / "shared")).resolve()

# programs the monitors run: short runs of the step-engine examples (KV pressure, prefix
# cache, preemption, engine admission), then the corpus's vLLM oracle scenarios
MONITOR_EXAMPLES = [("vllm_engine.sq", 40.0), ("router.sq", 40.0), ("flagship.sq", 60.0),
                    ("pd_disagg.sq", 40.0)]


def _checker():
    spec = importlib.util.spec_from_file_location("conformance_check_faults",
                                                  SHARED / "conformance" / "check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def monitor_programs():
    import serq
    out = [serq.compile(str(ROOT / "examples" / name), horizon=h)
           for name, h in MONITOR_EXAMPLES]
    check = _checker()
    import json
    exp = json.loads((SHARED / "conformance" / "oracle" / "expected.json").read_text())
    for case in exp["cases"]:
        path = SHARED / "conformance" / "run" / (case["run"] + ".ir.json")
        if path.exists():
            out.append(serq.Program.from_json(check.read(str(path))))
    return out


def caught_by_monitors(programs):
    """The first monitor that fires on one of ``programs``: ``invariant (program k)``."""
    import serq
    for k, p in enumerate(programs):
        try:
            serq.run(p, check=True)
        except serq.SimulationError as e:
            name = getattr(e, "invariant", None)
            if name is not None:
                return name
        except Exception:  # a crash is not a monitor's catch
            pass
    return None


def caught_by_conformance(families=("oracle", "run")):
    """The first conformance case (run and vLLM oracle families) that fails."""
    import serq
    check = _checker()
    for cid, fn in check.collect(serq, list(families)):
        try:
            fn()
        except Exception:
            return cid
    return None


def caught_by_drt(cases=200):
    """The first of DRT's fixed cases (formal.md §5.1) where serq.sim and serq.ref differ."""
    from serq.ref import drt
    for seed in range(cases):
        if drt.run_cases([seed]):
            return f"case {seed}"
    return None


DETECTORS = (("monitors", lambda: caught_by_monitors(monitor_programs())),
             ("conformance", caught_by_conformance),
             ("drt", caught_by_drt))


def table(detectors=DETECTORS, faults=FAULTS, out=print):
    """Apply each fault and run every detector: the markdown table of docs/formal.md."""
    out("| fault | rule it breaks | monitors | conformance | DRT (200 fixed cases) |")
    out("|---|---|---|---|---|")
    for f in faults:
        patch = Patch()
        f.apply(patch)
        try:
            cells = [d() for _, d in detectors]
        finally:
            patch.undo()
        out(f"| `{f.name}` | {f.rule} | " + " | ".join(c or "—" for c in cells) + " |")


if __name__ == "__main__":
    table()
