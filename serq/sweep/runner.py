"""Run a grid of points × seeds on a pool of worker processes and collect one tidy row per
replication and one summary (mean and 95 % CI across seeds) per point.

Backends, all running the same picklable :func:`serq.sweep.task.run_task`:

* ``"process"`` (default): ``concurrent.futures.ProcessPoolExecutor`` with ``jobs`` workers;
  ``jobs=1`` runs in this process, one task after the other;
* ``"dask"``: a ``dask.distributed`` client — on ``address`` when given, else on a
  ``LocalCluster`` of ``jobs`` single-threaded worker processes (the ``dask`` extra);
* ``"ray"``: ``ray`` tasks — on the cluster at ``address``, else a local ``ray.init`` with
  ``jobs`` CPUs (the ``ray`` extra).

Every point uses the same seeds (common random numbers), so differences between points are
not blurred by different random streams. Rows come back in grid order whatever order the
workers finish in: a sweep's output depends only on its arguments.
"""
from __future__ import annotations

import os

from serq.sweep.grid import grid_points
from serq.sweep.replicate import summarize
from serq.sweep.task import Task, load_program, run_task

__all__ = ["BACKENDS", "SweepResult", "run_sweep", "run_tasks", "knob_value"]

BACKENDS = ("process", "dask", "ray")


def knob_value(v):
    """A point's value for a table: ``"2048"`` -> 2048, ``"0.5"`` -> 0.5, an expression kept
    as its text."""
    if isinstance(v, str):
        for conv in (int, float):
            try:
                return conv(v)
            except ValueError:
                pass
    return v


class SweepResult:
    """The outcome of a sweep.

    ``knobs``: the swept names; ``points``: ``[{name: value}]`` in grid order; ``seeds``;
    ``rows``: one dict per (point, seed) — the knobs, ``seed``, then every metric;
    ``summaries``: one ``{metric: Interval}`` per point.
    """

    def __init__(self, knobs, points, seeds, rows):
        self.knobs = list(knobs)
        self.points = points
        self.seeds = list(seeds)
        self.rows = rows
        n = len(self.seeds)
        metric_names = [k for k in dict.fromkeys(k for r in rows for k in r)
                        if k not in self.knobs and k != "seed"]
        self.metrics = metric_names
        self.summaries = [summarize(rows[i * n:(i + 1) * n], metric_names)
                          for i in range(len(points))]

    def summary_rows(self) -> list:
        """The summary in long form: one dict per (point, metric) with the knobs,
        ``metric``, ``n``, ``mean``, ``sd``, ``ci``, ``lo``, ``hi``."""
        out = []
        for point, summ in zip(self.points, self.summaries):
            head = {k: knob_value(v) for k, v in point.items()}
            for m, iv in summ.items():
                out.append({**head, "metric": m, **iv.as_dict()})
        return out

    def to_pandas(self):
        """The rows as a ``pandas.DataFrame`` (the ``pandas`` extra)."""
        import pandas as pd
        return pd.DataFrame(self.rows)

    def summary_frame(self):
        """:meth:`summary_rows` as a ``pandas.DataFrame``."""
        import pandas as pd
        return pd.DataFrame(self.summary_rows())


def run_tasks(tasks, *, jobs=None, backend="process", address=None, progress=None):
    """Run ``tasks`` and return their results in task order. ``progress`` is called with no
    argument after each task finishes (a progress bar's ``update``)."""
    tick = progress or (lambda: None)
    jobs = jobs or os.cpu_count() or 1
    if backend == "process":
        return _run_process(tasks, jobs, tick)
    if backend == "dask":
        return _run_dask(tasks, jobs, address, tick)
    if backend == "ray":
        return _run_ray(tasks, jobs, address, tick)
    raise ValueError(f"unknown backend {backend!r} (expected one of {', '.join(BACKENDS)})")


def _run_process(tasks, jobs, tick):
    if jobs == 1 or len(tasks) <= 1:
        out = []
        for t in tasks:
            out.append(run_task(t))
            tick()
        return out
    from concurrent.futures import FIRST_EXCEPTION, ProcessPoolExecutor, wait
    results = [None] * len(tasks)
    with ProcessPoolExecutor(max_workers=min(jobs, len(tasks))) as pool:
        futures = {pool.submit(run_task, t): i for i, t in enumerate(tasks)}
        pending = set(futures)
        while pending:
            done, pending = wait(pending, return_when=FIRST_EXCEPTION)
            for f in done:
                if f.exception() is not None:
                    for p in pending:
                        p.cancel()
                    raise f.exception()
                results[futures[f]] = f.result()
                tick()
    return results


def _run_dask(tasks, jobs, address, tick):
    from dask.distributed import Client, LocalCluster, as_completed
    if address:
        client, cluster = Client(address), None
    else:
        cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
    try:
        futures = client.map(run_task, tasks, pure=False)
        index = {f.key: i for i, f in enumerate(futures)}
        results = [None] * len(tasks)
        for f in as_completed(futures):
            results[index[f.key]] = f.result()  # re-raises a task's error here
            tick()
        return results
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _run_ray(tasks, jobs, address, tick):
    import logging

    import ray
    started = not ray.is_initialized()
    if started:  # quiet: ray's start-up lines would mix with serq's output on stderr
        quiet = {"log_to_driver": False, "logging_level": logging.ERROR}
        if address:
            ray.init(address=address, **quiet)
        else:
            ray.init(num_cpus=jobs, include_dashboard=False, **quiet)
    try:
        remote = ray.remote(run_task)
        refs = [remote.remote(t) for t in tasks]
        index = {r: i for i, r in enumerate(refs)}
        results = [None] * len(tasks)
        pending = list(refs)
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for r in done:
                results[index[r]] = ray.get(r)
                tick()
        return results
    finally:
        if started:
            ray.shutdown()


def run_sweep(source, axes, seeds, *, jobs=None, backend="process", address=None,
              progress=None) -> SweepResult:
    """Run every point of ``axes`` (:class:`serq.sweep.grid.Axis`, swept and fixed) with each
    of ``seeds``. Each point is compiled once here first, so a bad value is reported before
    any work starts (with the compiler's message)."""
    points = grid_points(axes)
    knobs = [k for k in points[0]] if points else []
    for point in points:
        load_program(source, tuple(point.items()))
    tasks = [Task(source, tuple(point.items()), seed) for point in points for seed in seeds]
    results = run_tasks(tasks, jobs=jobs, backend=backend, address=address, progress=progress)
    rows = []
    for task, metrics in zip(tasks, results):
        row = {k: knob_value(v) for k, v in task.point}
        row["seed"] = task.seed
        row.update(metrics)
        rows.append(row)
    return SweepResult(knobs, points, seeds, rows)
