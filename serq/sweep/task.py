"""One replication: compile (or load) the program at one point of a grid with one seed, run
it, and reduce its report to named numbers (:func:`serq.report.metrics.flat_metrics`).

Tasks are plain picklable data and :func:`run_task` a top-level function, so the same task
runs in this process, in a ``concurrent.futures`` process pool, or on a dask or ray worker.
"""
from __future__ import annotations

import dataclasses

__all__ = ["Source", "Task", "load_program", "run_task"]


@dataclasses.dataclass(frozen=True)
class Source:
    """What to run: a program file (``.sq`` compiled, ``.json`` loaded as IR), the fixed
    ``--set`` / ``--def`` overrides and the run settings (``horizon``, ``warmup``,
    ``arrivals``, ``trace``) that every replication shares."""
    path: str
    sets: tuple = ()
    defs: tuple = ()
    settings: tuple = ()
    percentiles: tuple = (50.0, 90.0, 95.0, 99.0)


@dataclasses.dataclass(frozen=True)
class Task:
    """One replication: the point's ``--set`` values and the seed."""
    source: Source
    point: tuple  # ((name, value), ...)
    seed: int


def load_program(source: Source, point=(), seed=None):
    """The program of ``source`` at ``point`` with ``seed`` (the program's own seed when
    ``None``). IR files take the run settings only (a point needs ``let``s: a ``.sq`` file)."""
    import serq
    settings = dict(source.settings)
    if seed is not None:
        settings["seed"] = seed
    if source.path.lower().endswith(".json"):
        if point:
            raise ValueError(f"{source.path} is IR: --set needs a program (.sq) file")
        program = serq.Program.from_json(_read_ir(source.path))
        if settings:
            from serq.ir.validate import validate
            program = dataclasses.replace(program, **settings)
            validate(program)
        return program
    sets = dict(source.sets)
    sets.update(point)
    return serq.compile(source.path, sets=sets, defs=dict(source.defs), **settings)


def _read_ir(path):
    from serq.files import read_text
    return read_text(path)


def run_task(task: Task) -> dict:
    """Run one replication; returns ``{metric: value}``."""
    import serq
    from serq.report.metrics import flat_metrics
    program = load_program(task.source, task.point, task.seed)
    return flat_metrics(serq.run(program), task.source.percentiles)
