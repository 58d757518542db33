"""``serq sweep`` and ``serq capacity``: replications over a grid of ``let`` values, and the
largest knob value meeting SLOs (the ``sweep`` extra; see docs/tools.md).

Both take every option of ``serq run`` (``--horizon``, ``--warmup``, ``--arrivals``,
``--trace``, ``--def``; ``--seed`` is the first of the seeds) and run their replications on
a process pool (``-j``), dask or ray (``--backend``). Parsing and output only: the work is
:mod:`serq.sweep`.
"""
from __future__ import annotations

import math
import os
import sys

__all__ = ["add_commands", "cmd_sweep", "cmd_capacity"]

MAX_SEEDS = 100_000  # replications per point (as the grid's values per axis): more is a typo


def _positive(value: str) -> int:
    import argparse
    try:
        n = int(value, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return n


def _add_engine_options(p) -> None:
    from serq.sweep.runner import BACKENDS
    g = p.add_argument_group("replications")
    g.add_argument("--seeds", type=_positive, default=8, metavar="N",
                   help="replications per point: seeds S, S+1, ..., S+N-1 with S the --seed "
                        "(default: the program's seed); the same seeds at every point "
                        "(default 8)")
    g.add_argument("-j", "--jobs", type=_positive, metavar="N",
                   help="worker processes (default: the number of CPU cores)")
    g.add_argument("--backend", choices=BACKENDS, default="process",
                   help="process: a local process pool (default); dask: a dask.distributed "
                        "LocalCluster of -j workers, or the scheduler at --address; ray: "
                        "likewise with ray")
    g.add_argument("--address", metavar="ADDR",
                   help="an existing dask scheduler or ray cluster to run on")
    g.add_argument("--percentiles", metavar="LIST", default="50,90,95,99",
                   help="percentiles recorded for every observation (default 50,90,95,99)")
    g.add_argument("--no-progress", action="store_true",
                   help="no progress bar (it shows only when stderr is a terminal)")


def add_commands(sub) -> None:
    """Register ``sweep`` and ``capacity`` on the ``serq`` subparsers."""
    from serq.cli import _add_program_options
    sweep = sub.add_parser(
        "sweep", help="run a grid of --set values × seeds; tidy rows and per-point CIs",
        description="Run FILE at every point of the grid given by --set NAME=VALUES (a comma "
                    "list, or START:STOP:STEP with STOP included) with --seeds replications "
                    "each, in parallel; print each point's across-replication mean ± 95% "
                    "Student-t CI, and write one row per (point, seed) with --out.")
    _add_program_options(sweep, run_settings=True)
    for action in sweep._actions:  # --set takes an axis here, not one expression
        if action.dest == "sets":
            action.metavar = "NAME=VALUES"
            action.help = ("an axis of the grid: a comma list of expressions "
                           "(kv_blocks=2048,4096) or START:STOP:STEP, STOP included "
                           "(lam=11:14:0.5); one value is a fixed override (repeatable)")
    _add_engine_options(sweep)
    out = sweep.add_argument_group("output")
    out.add_argument("--out", metavar="FILE",
                     help="write one row per (point, seed): the knobs, seed and every metric "
                          "(.csv, or .parquet with pyarrow)")
    out.add_argument("--summary", metavar="FILE",
                     help="write the summary: one row per (point, metric) with n, mean, sd, "
                          "ci, lo, hi (.csv or .parquet)")
    out.add_argument("--metrics", metavar="LIST",
                     help="metrics in the printed table (default: every observation's mean "
                          "and p99)")
    sweep.set_defaults(func=cmd_sweep, parser=sweep)

    cap = sub.add_parser(
        "capacity", help="the largest knob value meeting every SLO, by bisection",
        description="Bisect the let --knob over [--lo, --hi] (without them, first find a "
                    "bracket by doubling or halving), each probe --seeds "
                    "replications, for the largest value at which every --slo holds with "
                    "confidence (the 95% CI across replications wholly on the right side of "
                    "the bound). Prints the evidence, one line per probe; the last line is "
                    "the answer.")
    _add_program_options(cap, run_settings=True)
    _add_engine_options(cap)
    q = cap.add_argument_group("search")
    q.add_argument("--knob", required=True, metavar="NAME", help="the let to search over")
    q.add_argument("--slo", dest="slos", action="append", required=True, metavar="SLO",
                   help="METRIC<BOUND, e.g. ttft.p99<1 (statistics mean, p50, p90, p95, p99; "
                        "operators <, <=, >, >=); repeatable, all must hold")
    q.add_argument("--lo", type=float, help="a knob value that meets the SLOs")
    q.add_argument("--hi", type=float, help="a knob value that should not")
    q.add_argument("--start", type=float, default=1.0,
                   help="without --lo and --hi: where the doubling/halving search for the "
                        "bracket starts (default 1; the knob must be positive)")
    q.add_argument("--tol", type=float,
                   help="stop when the bracket is narrower (default its width / 64)")
    q.add_argument("--integer", action="store_true", help="the knob takes integer values")
    q.add_argument("--minimize", action="store_true",
                   help="the SLOs hold above some value (e.g. a cache size): find the "
                        "smallest passing value")
    cap.set_defaults(func=cmd_capacity, parser=cap)


# ---------------------------------------------------------------------------------------


def _source(args, percentiles):
    from serq.cli import _run_settings
    from serq.sweep.task import Source
    settings = {k: v for k, v in _run_settings(args).items() if k != "seed"}
    return Source(path=args.file, defs=tuple(args.defs), settings=tuple(settings.items()),
                  percentiles=percentiles)


def _seeds(args, source):
    from serq.sweep.task import load_program
    base = args.seed if args.seed is not None else load_program(source).seed
    if args.seeds > MAX_SEEDS:
        raise ValueError(f"--seeds {args.seeds}: more than {MAX_SEEDS} replications per point")
    if base + args.seeds > 2**64:
        raise ValueError(f"--seed {base} + --seeds {args.seeds} passes 2^64-1")
    return list(range(base, base + args.seeds))


def _progress_bar(args, total):
    """A tqdm bar on stderr (done/total, rate, ETA), only on a terminal."""
    if args.no_progress or os.environ.get("SERQ_PROGRESS", "") == "0":
        return None
    try:
        if not sys.stderr.isatty():
            return None
    except (AttributeError, ValueError, OSError):
        return None
    from tqdm import tqdm
    return tqdm(total=total, file=sys.stderr, unit="run", desc="serq", leave=False,
                dynamic_ncols=True)


def _needs(args):
    from serq.extras import need
    need("sweep", f"serq {args.command}")
    if args.backend in ("dask", "ray"):
        need(args.backend, f"--backend {args.backend}")


def _check_out(path):
    if path is None:
        return
    from serq.report.tables import TABLE_SUFFIXES
    if not path.lower().endswith(TABLE_SUFFIXES):
        raise ValueError(f"cannot write {path}: the name must end in .csv or .parquet")
    from serq.output import check_output_file
    check_output_file(path)  # before the runs: nothing computed is lost


def cmd_sweep(args) -> int:
    from serq.cli import _out
    from serq.report.metrics import parse_percentiles
    from serq.sweep.grid import parse_axis
    from serq.sweep.runner import run_sweep
    _needs(args)
    for path in (args.out, args.summary):
        _check_out(path)
    axes = [parse_axis(f"{name}={text}") for name, text in args.sets]
    source = _source(args, parse_percentiles(args.percentiles))
    seeds = _seeds(args, source)
    from serq.sweep.grid import grid_points
    total = len(grid_points(axes)) * len(seeds)
    bar = _progress_bar(args, total)
    try:
        result = run_sweep(source, axes, seeds, jobs=args.jobs, backend=args.backend,
                           address=args.address, progress=bar.update if bar else None)
    finally:
        if bar is not None:
            bar.close()
    _out(format_sweep(result, _metric_list(args.metrics, result)) + "\n")
    _write_outputs(args, result)
    return 0


def _metric_list(text, result):
    if text:
        names = [m.strip() for m in text.split(",") if m.strip()]
        unknown = [m for m in names if m not in result.metrics]
        if unknown:
            raise ValueError(f"--metrics: no metric {unknown[0]!r} (e.g. "
                             f"{', '.join(result.metrics[6:10])})")
        return names
    return [m for m in result.metrics
            if m.count(".") == 1 and m.rsplit(".", 1)[1] in ("mean", "p99")]


def format_sweep(result, metrics) -> str:
    """The per-point summary as a table: the knobs, then ``mean ± ci`` of each metric."""
    from serq.report.text import _pm, _table
    n = len(result.seeds)
    header = list(result.knobs) + metrics
    rows = []
    for point, summ in zip(result.points, result.summaries):
        rows.append([str(v) for v in point.values()]
                    + [_pm(summ[m].mean, summ[m].ci) for m in metrics])
    from serq.cli import _plural
    title = (f"serq sweep: {_plural(len(result.points), 'point')} × {_plural(n, 'seed')} "
             f"(seeds {result.seeds[0]}–{result.seeds[-1]}); mean ± 95% CI across seeds")
    return "\n".join(_table(title, header, rows, left=len(result.knobs)))


def _write_outputs(args, result):
    from serq.cli import _err
    from serq.report.tables import write_rows
    written = []
    try:
        if args.out:
            written.append(write_rows(result.rows, args.out))
        if args.summary:
            written.append(write_rows(result.summary_rows(), args.summary))
    except OSError as e:
        raise ValueError(f"cannot write {e.filename}: {e.strerror or e}") from None
    for path in written:
        _err(f"serq: wrote {path}\n")


def cmd_capacity(args) -> int:
    from serq.cli import _out
    from serq.report.metrics import parse_percentiles
    from serq.sweep.capacity import capacity_search, parse_slo
    _needs(args)
    slos = [parse_slo(s) for s in args.slos]
    if any(n == args.knob for n, _ in args.sets):
        raise ValueError(f"--knob {args.knob} is also given with --set")
    for x in (args.lo, args.hi, args.tol, args.start):
        if x is not None and not math.isfinite(x):
            raise ValueError("--lo, --hi, --start and --tol must be finite numbers")
    source = _source(args, parse_percentiles(args.percentiles))
    from dataclasses import replace
    source = replace(source, sets=tuple(args.sets))
    seeds = _seeds(args, source)
    printer = _EvidencePrinter(args.knob, slos, len(seeds))
    _out(printer.header())
    result = capacity_search(source, args.knob, slos, seeds, args.lo, args.hi, tol=args.tol,
                             integer=args.integer, minimize=args.minimize,
                             start=args.start, jobs=args.jobs,
                             backend=args.backend, address=args.address,
                             on_probe=lambda p: _out(printer.row(p)))
    _out(answer_lines(result))
    return 0 if result.answer is not None else 1


class _EvidencePrinter:
    """The evidence table, a row per probe as it finishes (fixed column widths)."""

    def __init__(self, knob, slos, n):
        self.knob, self.slos, self.n = knob, slos, n
        self.widths = [max(12, len(knob))] + [max(24, len(str(s)) + 2) for s in slos] + [6]

    def _line(self, cells):
        return "  " + "  ".join(str(c).rjust(w) for c, w in zip(cells, self.widths)) + "\n"

    def header(self):
        title = (f"serq capacity: {self.knob}, {self.n} seeds per probe; each SLO cell is the "
                 f"mean ± 95% CI (the bound is checked against the CI's far end)\n")
        head = [self.knob] + [str(s) for s in self.slos] + ["result"]
        return title + self._line(head) + self._line(["─" * w for w in self.widths])

    def row(self, probe):
        from serq.report.text import _pm
        cells = [f"{probe.value:.8g}"]
        for s in self.slos:
            iv = probe.intervals[str(s)]
            mark = "ok" if s.met(iv) else "FAIL"
            cells.append(f"{_pm(iv.mean, iv.ci)} {mark}")
        cells.append("pass" if probe.passed else "fail")
        return self._line(cells)


def answer_lines(result) -> str:
    """The verdict; its last line is the answer (``KNOB = VALUE``) or says there is none."""
    k = result.knob
    side = "smallest" if result.minimize else "largest"
    values = [p.value for p in result.probes]
    if result.status == "none":
        edge = max(values) if result.minimize else min(values)
        return f"no value: the SLOs fail already at {k} = {edge:.8g}\n"
    if result.status == "range":
        edge = min(values) if result.minimize else max(values)
        return (f"note: the SLOs hold even at {k} = {edge:.8g}, the end of the range; the "
                f"{side} passing value lies beyond it\n{k} = {result.answer:.8g}\n")
    return f"{side} {k} meeting every SLO (to within the tolerance):\n{k} = {result.answer:.8g}\n"
