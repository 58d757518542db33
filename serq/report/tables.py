"""A report's records as tables (the ``pandas`` extra): one row per observation sample, one
wide row per request (session, turn), gauges' change points; and row lists written as CSV
(no extra needed) or Parquet (pyarrow).

Every observation sample carries the simulated time it was taken at, the serial number of
the session that took it and the session's ``turn_no`` then (spec §12: the records of
``Observe``), so per-request tables need nothing the simulator does not already record.
"""
from __future__ import annotations

import csv
import io
import math
import pathlib

from serq.output import replace_file

__all__ = ["samples_frame", "requests_frame", "gauges_frame", "write_rows", "TABLE_SUFFIXES"]

TABLE_SUFFIXES = (".csv", ".parquet")


def _pandas(what):
    from serq.extras import need
    need("pandas", what, ("pandas",))
    import pandas as pd
    return pd


def samples_frame(report):
    """One row per observation sample, in program order then record order: columns
    ``observation``, ``time``, ``session``, ``turn``, ``value``."""
    pd = _pandas("Report.to_pandas()")
    parts = []
    for name, o in report.observes.items():
        parts.append(pd.DataFrame({
            "observation": pd.Series([name] * len(o.samples), dtype="object"),
            "time": pd.Series(o.times, dtype="float64"),
            "session": pd.Series(o.sessions, dtype="int64"),
            "turn": pd.Series(o.turns, dtype="int64"),
            "value": pd.Series(o.samples, dtype="float64"),
        }))
    if not parts:
        return pd.DataFrame({"observation": pd.Series(dtype="object"),
                             "time": pd.Series(dtype="float64"),
                             "session": pd.Series(dtype="int64"),
                             "turn": pd.Series(dtype="int64"),
                             "value": pd.Series(dtype="float64")})
    return pd.concat(parts, ignore_index=True)


def requests_frame(report):
    """One wide row per request — a (session, turn) pair that observed something — sorted by
    session and turn: ``session``, ``turn``, ``start`` and ``end`` (the times of its first and
    last observation), then one column per observation (NaN where that request did not
    observe it; the last value where it observed it more than once, e.g. after a
    preemption)."""
    pd = _pandas("Report.requests()")
    samples = samples_frame(report)
    keys = ["session", "turn"]
    if samples.empty:
        return pd.DataFrame({"session": pd.Series(dtype="int64"),
                             "turn": pd.Series(dtype="int64"),
                             "start": pd.Series(dtype="float64"),
                             "end": pd.Series(dtype="float64")})
    times = samples.groupby(keys, sort=True)["time"].agg(["min", "max"])
    times.columns = ["start", "end"]
    wide = samples.pivot_table(index=keys, columns="observation", values="value",
                               aggfunc="last", sort=True, dropna=False)
    wide = wide.reindex(columns=[n for n in report.observes if n in wide.columns])
    wide.columns.name = None
    return times.join(wide).reset_index()


def gauges_frame(report):
    """Every gauge's change points: ``gauge``, ``time``, ``value`` (the value holds from
    ``time`` until the gauge's next row)."""
    pd = _pandas("Report.gauges_frame()")
    parts = [pd.DataFrame({"gauge": pd.Series([name] * len(g.times), dtype="object"),
                           "time": pd.Series(g.times, dtype="float64"),
                           "value": pd.Series(g.values, dtype="float64")})
             for name, g in report.gauges.items()]
    if not parts:
        return pd.DataFrame({"gauge": pd.Series(dtype="object"),
                             "time": pd.Series(dtype="float64"),
                             "value": pd.Series(dtype="float64")})
    return pd.concat(parts, ignore_index=True)


def _cell(x) -> str:
    if x is None:
        return ""
    if isinstance(x, bool) or isinstance(x, int):
        return str(int(x))
    if isinstance(x, float):
        if x != x:
            return "nan"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        return repr(x)
    return str(x)


def write_rows(rows, path, columns=None) -> pathlib.Path:
    """Write ``rows`` (dicts) to ``path``: CSV (``.csv``; floats written so they read back
    exactly) or Parquet (``.parquet``, pyarrow). Columns are ``columns`` or every key in
    first-seen order; a missing value is empty (CSV) or null (Parquet). The file is written
    new and renamed over ``path`` (``serq.output.replace_file``: a ``WriteError`` names it)."""
    path = pathlib.Path(path)
    suffix = path.suffix.lower()
    if suffix not in TABLE_SUFFIXES:
        raise ValueError(f"cannot write {path}: the name must end in .csv or .parquet")
    columns = list(columns or dict.fromkeys(k for r in rows for k in r))
    if suffix == ".parquet":
        from serq.extras import need
        need("pandas", f"writing {path.name}", ("pyarrow",))
        import pyarrow as pa
        import pyarrow.parquet as pq
        table = pa.Table.from_pylist([{c: r.get(c) for c in columns} for r in rows])
        replace_file(path, lambda f: pq.write_table(table, f))
        return path

    def fill(binary):
        f = io.TextIOWrapper(binary, encoding="utf-8", newline="")
        w = csv.writer(f, lineterminator="\n")
        w.writerow(columns)
        for r in rows:
            w.writerow([_cell(r.get(c)) for c in columns])
        f.flush()
        f.detach()  # the binary file stays open for replace_file to close
    replace_file(path, fill)
    return path
