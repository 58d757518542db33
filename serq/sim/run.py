"""``run(program)``: load the trace, run the simulator, build the report (interpreter.md §12)."""
from __future__ import annotations

import gc
import math
import os
import threading

from serq.deep import deep
from serq.errors import SerqError, SimulationError
from serq.ir import types as T
from serq.ir.validate import validate
from serq.sim.fmt import display
from serq.sim.scheduler import pending_events

NAN = math.nan
# The cyclic garbage collector's first threshold during a run (see young_gc)
GC_YOUNG = 50_000
_gc_runs = {"lock": threading.Lock(), "running": 0, "saved": None}


def trace_path(program):
    """Where the program's trace is read: a program compiled from a file remembers the file's
    directory and reads a relative `trace "F"` there, as pyserq 0.1.2 does (`Path::join`:
    ``sub/x.sq`` reads ``sub/F``; ir.md §7); a program from source text, from JSON, or given
    ``trace=`` reads it relative to the current directory."""
    base = program.base_dir
    return program.trace if base is None else os.path.join(base, program.trace)


def _load_trace(program):
    """The program's trace (a ``serq.trace.Trace``) or ``None``."""
    if program.trace is None:
        return None
    from serq.trace import load_trace
    try:
        return load_trace(trace_path(program))
    except SerqError as e:
        raise SimulationError(str(e)) from None


def check_program(program):
    """The IR checks of ``Program.from_json`` again, at the run's entry: a ``Program`` edited
    with ``dataclasses.replace`` was never checked (interpreter.md §12; ir.md §13.2), and
    what the reference's checks let through but its run panics on is refused here too."""
    if not isinstance(program, T.Program):
        raise TypeError("run() takes a serq.Program (from serq.compile or Program.from_json)")
    try:
        validate(program, for_run=True)
    except (AttributeError, TypeError, KeyError, IndexError) as e:
        if isinstance(e, TypeError) and str(e).startswith("Program."):
            raise
        raise TypeError(f"run(): the Program does not hold a well-formed IR ({e}); "
                        f"make it with serq.compile or Program.from_json") from None


@deep
def run(program, *, hooks=None, check=False):
    """Run ``program`` (a ``serq.Program``) and return its ``Report``.

    ``hooks``: an observer (``serq.sim.hooks.Hooks``) called at every event and every
    iteration of a step stage; None (the default) runs without any. ``check``: assert the
    invariant monitors (``serq.sim.monitors``, formal.md §6.4) at every event and
    iteration; a broken one raises ``SimulationError``."""
    from serq.sim.engine import Sim
    check_program(program)
    trace = _load_trace(program)
    sim = None
    young_gc(True)
    try:
        if trace is None:
            sim = Sim(program)
        else:
            sim = Sim(program, trace.sessions, trace.times)
        if check:
            from serq.sim.hooks import Tee
            from serq.sim.monitors import Monitors
            monitors = Monitors(program)
            hooks = monitors if hooks is None else Tee(monitors, hooks)
        if hooks is not None:
            from serq.sim.hooks import HookBus
            sim.hooks = HookBus(sim, hooks)
            sim.hooks.attach()
        end = sim.run()
        return build_report(sim, end)
    except MemoryError:
        raise out_of_memory(sim, program) from None
    finally:
        young_gc(False)


def young_gc(start):
    """At the start of a run, raise the collector's first threshold to ``GC_YOUNG``; at its
    end (also after an error), restore the caller's thresholds once no other run (nested, or
    on another thread) is going on.

    A run allocates and frees millions of container objects (sessions, jobs, frames,
    events), nearly all freed by their reference counts; with CPython's default threshold
    (700) the collector still visits the young ones every few hundred allocations, a few
    per cent of a compiled run (issue 10). With the higher threshold it runs about 70 times
    less often, and the cycles a run does make (a closure and the run it reads, a session's
    frames) are still collected, once that many objects are pending. A threshold of 0 (the
    collector disabled by threshold) or one already higher is kept."""
    state = _gc_runs
    with state["lock"]:
        if start:
            state["running"] += 1
            if state["running"] == 1:
                threshold = state["saved"] = gc.get_threshold()
                if 0 < threshold[0] < GC_YOUNG:
                    gc.set_threshold(GC_YOUNG, *threshold[1:])
        else:
            state["running"] -= 1
            if state["running"] == 0:
                gc.set_threshold(*state["saved"])


def out_of_memory(sim, program):
    """The error for a run that ran out of memory: not a bug, but something the program
    makes grow -- say what, with the figures, and what to change.

    The memory is exhausted when this is called, and building the message takes some: the
    figures are counted first, then the run's records (observations, gauge points) are freed
    -- the run is over -- so that the message never meets a second MemoryError (the CLI
    would report that one as an internal error)."""
    if sim is None:
        err = SimulationError(f"run: out of memory while preparing the run (a program of "
                              f"{len(program.pools)} pools and {len(program.stages)} stages)")
        err.time, err.session, err.statement = 0.0, None, None
        return err
    samples = sum(len(rec) for rec in sim.obs)
    points = sum(len(g) for g in sim.gauge_points)
    events = pending_events(sim)
    for rec in sim.obs:
        rec.release()
    for g in sim.gauge_points:
        g.release()
    sim.pre_obs = None
    grew = sorted([(samples, f"{samples} observation samples (every `observe` keeps each "
                             f"value: a shorter horizon, or fewer observations, keeps fewer)"),
                   (sim.live, f"{sim.live} live sessions (arrivals faster than the "
                              f"deployment serves them: a lower rate or a shorter horizon)"),
                   (events, f"{events} pending events"),
                   (points, f"{points} gauge change points (a shorter horizon keeps fewer)")],
                  key=lambda x: -x[0])
    then = "".join(f"; then {text}" for n, text in grew[1:] if n)
    err = SimulationError(f"run: out of memory at time {display(sim.now)}, after "
                          f"{sim.events} events; what grew most: {grew[0][1]}{then}")
    err.time, err.session, err.statement = sim.now, None, None
    return err


def build_report(sim, end):
    """The run's ``Report`` (spec §12). Observations and gauges keep the run's records and
    make their lists when first read (``Observe.of_records``, ``Gauge.of_points``): a run
    returns without turning every sample into Python objects (issue 10), and each gauge is
    detached from its expression first, so the report does not keep the run alive."""
    from serq.report import Gauge, Observe, Pool, Report, Stage
    p = sim.p
    warmup = p.warmup
    span = end - warmup
    observes = [Observe.of_records(name, rec) for name, rec in zip(p.observes, sim.obs)]
    gauges = [Gauge.of_points(g.name, kept.detach(), warmup, end)
              for g, kept in zip(p.gauges, sim.gauge_points)]
    stages = [Stage(**st.row(end, span)) for st in sim.stages]
    pools = [Pool(**pl.row(end)) for pl in sim.pools]
    return Report(horizon=p.horizon, end=end, warmup=warmup, seed=p.seed, events=sim.events,
                  arrivals=sim.arrivals, ended=sim.ended, turns=sim.turns,
                  mean_live=sim.live_avg.mean(end), observes=observes, gauges=gauges,
                  stages=stages, pools=pools)
