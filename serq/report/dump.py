"""Dumps of a report's records: one file per observation (``time,session,turn,value``), and
optionally one per gauge (``time,value``, its change points); CSV, or Parquet with pyarrow.

Floats are written with ``repr`` (they read back exactly with ``float()``); NaN and the
infinities as ``nan``, ``inf``, ``-inf``.
"""
from __future__ import annotations

import math
import os
import pathlib
import tempfile

__all__ = ["dump_csv", "dump_parquet"]


def _cell(x) -> str:
    if isinstance(x, int):
        return str(x)
    x = float(x)
    if x != x:
        return "nan"
    if x == math.inf:
        return "inf"
    if x == -math.inf:
        return "-inf"
    return repr(x)


def _file_name(name: str, suffix: str) -> str:
    bad = {"/", "\\", "\0"} | {c for c in (os.sep, os.altsep) if c}
    if not name or name in (".", "..") or any(c in name for c in bad):
        raise ValueError(f"cannot dump {name!r}: not a plain file name")
    return name + suffix


def dump_csv(report, directory, *, gauges=False):
    """Write ``DIRECTORY/<observation>.csv`` for every observation of ``report`` (header
    ``time,session,turn,value``, one row per sample, in record order), creating the directory
    as needed; with ``gauges=True`` also ``DIRECTORY/<gauge>.gauge.csv`` (``time,value``).

    Returns the paths written (``pathlib.Path``), observations first, in program order. A name
    that is not a plain file name (a path separator, ``..``) is a ``ValueError``, raised before
    anything is written.
    """
    directory = pathlib.Path(directory)
    jobs = [(directory / _file_name(name, ".csv"), o) for name, o in report.observes.items()]
    gjobs = ([(directory / _file_name(name, ".gauge.csv"), g)
              for name, g in report.gauges.items()] if gauges else [])
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for path, o in jobs:
        lines = ["time,session,turn,value"]
        for t, s, k, v in zip(o.times, o.sessions, o.turns, o.samples, strict=True):
            lines.append(f"{_cell(t)},{_cell(s)},{_cell(k)},{_cell(v)}")
        _write(path, lines)
        written.append(path)
    for path, g in gjobs:
        lines = ["time,value"]
        for t, v in zip(g.times, g.values, strict=True):
            lines.append(f"{_cell(t)},{_cell(v)}")
        _write(path, lines)
        written.append(path)
    return written


def _write(path, lines):
    """Write ``lines`` (UTF-8, ``\\n`` line ends) to ``path`` with :func:`_replace`."""
    data = ("\n".join(lines) + "\n").encode("utf-8")
    _replace(path, lambda f: f.write(data))


def dump_parquet(report, directory, *, gauges=False):
    """:func:`dump_csv` as Parquet files (the ``pandas`` extra's pyarrow):
    ``DIRECTORY/<observation>.parquet`` with columns ``time``, ``session``, ``turn``,
    ``value``, and with ``gauges=True`` ``DIRECTORY/<gauge>.gauge.parquet`` (``time``,
    ``value``). Returns the paths written, observations first."""
    from serq.extras import need
    need("pandas", "Parquet dumps", ("pyarrow",))
    import pyarrow as pa
    import pyarrow.parquet as pq
    directory = pathlib.Path(directory)
    jobs = [(directory / _file_name(name, ".parquet"),
             {"time": pa.array(o.times, pa.float64()), "session": pa.array(o.sessions, pa.int64()),
              "turn": pa.array(o.turns, pa.int64()), "value": pa.array(o.samples, pa.float64())})
            for name, o in report.observes.items()]
    if gauges:
        jobs += [(directory / _file_name(name, ".gauge.parquet"),
                  {"time": pa.array(g.times, pa.float64()),
                   "value": pa.array(g.values, pa.float64())})
                 for name, g in report.gauges.items()]
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for path, columns in jobs:
        table = pa.table(columns)
        _replace(path, lambda f, t=table: pq.write_table(t, f))
        written.append(path)
    return written


def _replace(path, fill):
    """Write a new file beside ``path`` (``fill`` gets it open in binary mode) and rename it
    over ``path``: an existing ``path`` — a symbolic link included — is replaced, never
    written through (a link to another file must not have that file overwritten), and a
    reader never sees a half-written file."""
    path = pathlib.Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), 0o666 & ~_umask())  # as open() would make it, not 0600
            fill(f)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
