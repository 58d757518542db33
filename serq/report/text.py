"""The report for people: a run summary and aligned tables (observations, gauges, stages, step
engines, pools), with notes on what deserves a second look.

Numbers carry 4 significant digits (confidence half-widths 2), never more digits than a float
has and never an exponent between 1e-3 and 1e7; ``—`` stands for a value that does not exist
(NaN/inf: fewer than 40 samples for a CI, no completions for a mean wait, ...). Only sections
with rows are shown; pool counters that are zero in every row are folded into one line.
"""
from __future__ import annotations

import math

__all__ = ["format_text", "fmt_number"]

DASH = "—"


def _counter(x):
    """A counter (units may be fractional without blocks): whole numbers without ``.0``."""
    if isinstance(x, float) and x == x and x not in (float("inf"), float("-inf")) \
            and x == int(x):
        return str(int(x))
    return x if isinstance(x, int) else fmt_number(x)


def fmt_number(x, sig=4) -> str:
    """A number for a person: integers exactly, floats to ``sig`` significant digits
    (trailing zeros dropped), exponent form only for very large or small magnitudes, ``—``
    for ``None``, NaN and the infinities."""
    if x is None or isinstance(x, bool):
        return DASH if x is None else str(x)
    if isinstance(x, int):
        return str(x)
    x = float(x)
    if not math.isfinite(x):
        return DASH
    if x == 0:
        return "0"
    a = abs(x)
    if 1e-3 <= a < 1e7:
        dec = max(0, sig - 1 - math.floor(math.log10(a)))
        s = f"{x:.{dec}f}"
        if "." in s:
            s = s.rstrip("0").rstrip(".")
        return "0" if s in ("-0", "") else s
    m, e = f"{x:.{sig - 1}e}".split("e")
    if "." in m:
        m = m.rstrip("0").rstrip(".")
    return f"{m}e{int(e)}"


def _pct(x) -> str:
    if x is None or not math.isfinite(x):
        return DASH
    return f"{100.0 * x:.1f}%"


def _pm(mean, ci) -> str:
    """``mean ± ci`` (the ± part left out when there is no CI)."""
    m = fmt_number(mean)
    if mean is None or not math.isfinite(mean) or ci is None or not math.isfinite(ci):
        return m
    return f"{m} ± {fmt_number(ci, 2)}"


def _table(title, header, rows, left=1):
    """An aligned table: the first ``left`` columns left-aligned, the rest right-aligned."""
    cols = len(header)
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(cols)]

    def line(cells):
        out = []
        for i, c in enumerate(cells):
            c = str(c)
            out.append(c.ljust(widths[i]) if i < left else c.rjust(widths[i]))
        return ("  " + "  ".join(out)).rstrip()

    rule = "  " + "  ".join("─" * w for w in widths)
    return [title, line(header), rule] + [line(r) for r in rows]


def _is_step(s) -> bool:
    return bool(s.iterations) or any(
        v is not None and math.isfinite(v)
        for v in (s.mean_decode_batch, s.mean_decode_step, s.mean_itl))


def _label(row) -> str:
    return row.name if row.index is None else f"{row.name}[{row.index}]"


def _percentile_columns(percentiles):
    if not percentiles:
        return ["p99"]
    from serq.report.metrics import percentile_name
    return [percentile_name(q) for q in percentiles]


def _percentile_cells(o, percentiles):
    if not percentiles:
        return [fmt_number(o.p99)]
    from serq.report.metrics import observation_metrics, percentile_name
    m = observation_metrics(o, percentiles)
    return [fmt_number(m.get(percentile_name(q))) for q in percentiles]


def format_text(report, program_name=None, percentiles=None) -> str:
    """The report as text: a run summary, then one table per non-empty section.
    ``percentiles`` (e.g. ``(50, 90, 99)``) replaces the observations' p99 column with one
    column per percentile (:func:`serq.report.metrics.percentile`)."""
    r = report
    out = []
    title = f"serq {r.serq_version} run" + (f" of {program_name}" if program_name else "")
    out.append(title)
    span = r.end - r.warmup
    end = fmt_number(r.end)
    if r.end < r.horizon:
        end += " (before the horizon: the arrivals ran out)"
    out.append(f"  horizon {fmt_number(r.horizon)}   end {end}   warm-up {fmt_number(r.warmup)}"
               f"   measured {fmt_number(span)}   seed {r.seed}")
    out.append(f"  events {r.events}   arrivals {r.arrivals}   ended {r.ended}   "
               f"turns {r.turns}   mean live {fmt_number(r.mean_live)}")
    notes = []

    if r.observes:
        rows = []
        pcols = _percentile_columns(percentiles)
        for name, o in r.observes.items():
            rows.append([name, o.count, _pm(o.mean, o.ci), fmt_number(o.cv2)]
                        + _percentile_cells(o, percentiles))
            if o.count == 0:
                notes.append(f"observation {name} recorded nothing after the warm-up")
            elif o.samples and all(x == 0 for x in o.samples):
                notes.append(f"observation {name} is 0 in all {o.count} samples "
                             f"(a test that never held?)")
        short = [n for n, o in r.observes.items() if 0 < o.count < 40]
        if short:
            notes.append("no CI below 40 samples: " + ", ".join(short))
        out.append("")
        out += _table("observations",
                      ["name", "count", "mean ± 95% CI", "cv²"] + pcols, rows)

    if r.gauges:
        rows = [[name, _pm(g.mean, g.ci), fmt_number(g.min), fmt_number(g.max)]
                for name, g in r.gauges.items()]
        out.append("")
        out += _table("gauges (time average over the measured span)",
                      ["name", "mean ± 95% CI", "min", "max"], rows)

    if r.claims:
        kinds = {"every_iteration": "every iteration", "some_iteration": "some iteration",
                 "at_end": "at end"}
        rows = [[c.name, kinds[c.kind], c.describe()] for c in r.claims]
        out.append("")
        out += _table("claims (checked on this run's path only)", ["claim", "kind", "result"],
                      rows, left=3)

    if r.stages:
        rows = [[_label(s), fmt_number(s.mean_number), _pct(s.utilization), s.completed,
                 fmt_number(s.throughput), fmt_number(s.mean_wait), fmt_number(s.mean_service)]
                for s in r.stages]
        out.append("")
        out += _table("stages",
                      ["stage", "mean number", "utilisation", "completed", "throughput",
                       "mean wait", "mean service"], rows)
        steps = [s for s in r.stages if _is_step(s)]
        if steps:
            rows = [[_label(s), s.iterations, _pct(s.prefill_only), _pct(s.decode_only),
                     _pct(s.mixed), fmt_number(s.mean_decodes), fmt_number(s.mean_decode_batch),
                     fmt_number(s.mean_decode_step), fmt_number(s.mean_itl),
                     fmt_number(s.itl_p50), fmt_number(s.itl_p99)] for s in steps]
            out.append("")
            out += _table("step engines (fractions of the measured time; ITL p50/p99 within "
                          "0.5%)",
                          ["stage", "iterations", "prefill", "decode", "mixed", "decodes",
                           "batch", "step", "ITL mean", "ITL p50", "ITL p99"], rows)

    if r.pools:
        counters = [("admissions", "admitted"), ("evicted_entries", "evicted"),
                    ("evicted_units", "ev. units"), ("preemptions", "preempted"),
                    ("spills", "spills"), ("rejected", "rejected"), ("stuck", "stuck")]
        shown = [(f, h) for f, h in counters if any(getattr(p, f) for p in r.pools)]
        zero = [h for f, h in counters if (f, h) not in shown]
        rows = [[_label(p), fmt_number(p.mean_used), fmt_number(p.mean_cached),
                 fmt_number(p.mean_queue), fmt_number(p.mean_holders), fmt_number(p.mean_wait)]
                + [_counter(getattr(p, f)) for f, _ in shown] for p in r.pools]
        out.append("")
        out += _table("pools (means over the measured span; counters over the whole run)",
                      ["pool", "used", "cached", "queue", "holders", "wait"]
                      + [h for _, h in shown], rows)
        if zero:
            out.append("  zero in every pool: " + ", ".join(zero))
        for p in r.pools:
            if p.stuck:
                notes.append(f"pool {_label(p)}: {p.stuck} session(s) stuck (preempted again "
                             f"without progress: a livelock)")
            if p.rejected:
                notes.append(f"pool {_label(p)}: {p.rejected} session(s) rejected")

    if notes:
        out.append("")
        out.append("notes")
        out += [f"  - {n}" for n in notes]
    return "\n".join(out) + "\n"
