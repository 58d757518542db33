"""Replications, sweeps and capacity search over a program's ``let``s (the ``sweep`` extra:
scipy for Student-t quantiles, tqdm for the progress bar).

* :mod:`serq.sweep.grid` — ``--set NAME=VALUES`` axes and the grid of points;
* :mod:`serq.sweep.task` — one replication (point, seed) reduced to named metrics;
* :mod:`serq.sweep.replicate` — across-replication means and Student-t 95 % CIs;
* :mod:`serq.sweep.runner` — the grid × seeds on a process pool, dask or ray;
* :mod:`serq.sweep.capacity` — the largest knob value meeting SLOs, by bisection.
"""
from serq.sweep.grid import Axis, grid_points, parse_axis
from serq.sweep.replicate import Interval, interval, summarize
from serq.sweep.runner import BACKENDS, SweepResult, run_sweep
from serq.sweep.task import Source, Task, run_task

__all__ = ["Axis", "parse_axis", "grid_points", "Interval", "interval", "summarize",
           "BACKENDS", "SweepResult", "run_sweep", "Source", "Task", "run_task"]
