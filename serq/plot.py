"""Plots of runs and sweeps (the ``plot`` extra, matplotlib): observation CDFs, gauges over
time, a step engine's batch and KV usage over time, and latency–load curves with confidence
bands. Each function returns a ``matplotlib.figure.Figure`` built without pyplot (no global
state, no display needed: it renders with the Agg canvas), which ``save`` writes to a file
and a notebook displays.
"""
from __future__ import annotations

import math

__all__ = ["cdf", "gauges", "engine", "load_curve", "save"]


def _figure(rows, cols, width=6.4, height=2.6):
    from serq.extras import need
    need("plot", "serq.plot")
    from matplotlib.figure import Figure
    fig = Figure(figsize=(width, max(height * rows, 2.8)), layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False)
    return fig, [ax for row in axes for ax in row]


def _grid(n):
    cols = 1 if n == 1 else 2
    return math.ceil(n / cols), cols


def _names(available, names, what):
    if names is None:
        return list(available)
    missing = [n for n in names if n not in available]
    if missing:
        raise ValueError(f"no {what} {missing[0]!r} (the program has: "
                         f"{', '.join(available) or 'none'})")
    return list(names)


def cdf(report, names=None):
    """The empirical CDF of each observation (one panel each; every observation by default),
    with its p50 and p99 marked."""
    from serq.report.metrics import percentile
    chosen = _names(report.observes, names, "observation")
    if not chosen:
        raise ValueError("the program observes nothing: no CDF to draw")
    rows, cols = _grid(len(chosen))
    fig, axes = _figure(rows, cols, width=6.4 if cols == 1 else 9.6)
    for ax, name in zip(axes, chosen):
        xs = sorted(x for x in report.observes[name].samples if math.isfinite(x))
        n = len(xs)
        if n:
            ys = [(i + 1) / n for i in range(n)]
            ax.step(xs, ys, where="post", color="C0", label=name)
            for q, style in ((50, ":"), (99, "--")):
                v = percentile(xs, q, ordered=xs)
                ax.axvline(v, color="C3", linestyle=style, linewidth=1,
                           label=f"p{q} = {v:.4g}")
            ax.legend(loc="lower right", fontsize="small")
        else:
            ax.text(0.5, 0.5, "no samples", ha="center", va="center", transform=ax.transAxes)
        ax.set_title(f"{name} ({n} samples)")
        ax.set_xlabel(name)
        ax.set_ylabel("fraction ≤ x")
        ax.set_ylim(0, 1.02)
        ax.grid(True, alpha=0.3)
    for ax in axes[len(chosen):]:
        ax.set_visible(False)
    return fig


def gauges(report, names=None):
    """Each gauge's value over time (one panel each, a shared time axis), with the warm-up
    shaded and the time average over the measured span as a dashed line."""
    chosen = _names(report.gauges, names, "gauge")
    if not chosen:
        raise ValueError("the program has no gauges to draw")
    fig, axes = _figure(len(chosen), 1, width=8.0, height=2.0)
    for ax, name in zip(axes, chosen):
        g = report.gauges[name]
        if g.times:
            ts = list(g.times) + [report.end]
            vs = list(g.values) + [g.values[-1]]
            ax.step(ts, vs, where="post", color="C0", linewidth=0.8, label=name)
            if math.isfinite(g.mean):
                ax.axhline(g.mean, color="C1", linestyle="--", linewidth=1,
                           label=f"mean {g.mean:.4g}")
        if report.warmup > 0:
            ax.axvspan(0, report.warmup, color="0.85", zorder=0, label="warm-up")
        ax.set_ylabel(name)
        ax.set_xlim(0, report.end)
        ax.legend(loc="upper right", fontsize="small")
        ax.grid(True, alpha=0.3)
    for ax in axes[:-1]:
        ax.sharex(axes[-1])
        ax.tick_params(labelbottom=False)
    axes[-1].set_xlabel("time")
    return fig


def _binned(t, ys, lo, hi, bins):
    """Means of ``ys`` over ``bins`` equal time bins of ``[lo, hi]`` (bin centres, means);
    empty bins are left out."""
    width = (hi - lo) / bins or 1.0
    sums, counts = [0.0] * bins, [0] * bins
    for x, y in zip(t, ys):
        b = min(int((x - lo) / width), bins - 1)
        sums[b] += y
        counts[b] += 1
    centres = [lo + (b + 0.5) * width for b in range(bins) if counts[b]]
    return centres, [sums[b] / counts[b] for b in range(bins) if counts[b]]


def engine(timeline, *, stage=None, pools=None, warmup=None, bins=200):
    """A step engine over time, from a :class:`serq.timeline.Timeline`: the decode batch and
    the prefill tokens per iteration (top; means over ``bins`` time bins, since there are
    thousands of iterations), and each pool's used (solid) and cached (dotted) units as a
    fraction of its capacity at each iteration's start (bottom). ``stage``: which step stage
    (the first by default)."""
    stages = timeline.stages()
    if not stages:
        raise ValueError("the program ran no step-engine iterations: nothing to draw")
    stage = stage or stages[0]
    if stage not in stages:
        raise ValueError(f"no step stage {stage!r} ran (step stages: {', '.join(stages)})")
    idx = [i for i, s in enumerate(timeline.stage) if s == stage]
    chosen = _names(timeline.pools, pools, "pool")
    fig, (top, bottom) = _figure(2, 1, width=8.0, height=2.6)
    t = [timeline.start[i] for i in idx]
    lo, hi = 0.0, max(timeline.end[i] for i in idx)
    xs, batch = _binned(t, [timeline.decoders[i] for i in idx], lo, hi, bins)
    top.plot(xs, batch, color="C0", linewidth=1, label="decode batch")
    top.set_ylabel("decode batch")
    twin = top.twinx()
    xs, pre = _binned(t, [timeline.prefilled[i] for i in idx], lo, hi, bins)
    twin.plot(xs, pre, color="C2", linewidth=1, alpha=0.8, label="prefill tokens")
    twin.set_ylabel("prefill tokens")
    top.set_title(f"step engine {stage}: {len(idx)} iterations "
                  f"(means per iteration over {bins} time bins)")
    handles = top.get_legend_handles_labels()[0] + twin.get_legend_handles_labels()[0]
    top.legend(handles, [h.get_label() for h in handles], loc="upper right",
               fontsize="small")
    for k, name in enumerate(chosen):
        used, cached = timeline.pools[name]
        cap = timeline.caps.get(name) or 1.0
        bottom.step(t, [used[i] / cap for i in idx], where="post", color=f"C{k}",
                    linewidth=0.9, label=f"{name} used")
        if any(cached[i] for i in idx):
            bottom.step(t, [cached[i] / cap for i in idx], where="post", color=f"C{k}",
                        linestyle=":", linewidth=0.9, label=f"{name} cached")
    bottom.set_ylabel("fraction of capacity")
    bottom.set_ylim(0, 1.05)
    bottom.set_xlabel("time")
    bottom.legend(loc="upper right", fontsize="small")
    for ax in (top, bottom):
        if warmup:
            ax.axvspan(0, warmup, color="0.85", zorder=0)
        ax.grid(True, alpha=0.3)
        ax.set_xlim(lo, hi)
    bottom.sharex(top)
    return fig


def _summary_rows(summary):
    if hasattr(summary, "summary_rows"):
        return summary.summary_rows()
    if hasattr(summary, "to_dict"):
        return summary.to_dict("records")
    return list(summary)


def load_curve(summary, x, metric, *, by=None, slo=None, ylabel=None):
    """``metric``'s across-replication mean against the knob ``x`` with its 95 % confidence
    band, one curve per value of the knob ``by``, from a sweep's summary (a
    :class:`serq.sweep.SweepResult`, its ``summary_rows()``, or the ``--summary`` table as
    rows or a DataFrame). ``slo``: a bound drawn as a horizontal line."""
    rows = [r for r in _summary_rows(summary) if r.get("metric") == metric]
    if not rows:
        raise ValueError(f"the sweep summary has no metric {metric!r}")
    for key in [x] + ([by] if by else []):
        if key not in rows[0]:
            raise ValueError(f"the sweep summary has no knob {key!r}")
    groups = {}
    for r in rows:
        groups.setdefault(r[by] if by else None, []).append(r)
    fig, (ax,) = _figure(1, 1, width=6.4, height=4.0)
    for k, (g, rs) in enumerate(groups.items()):
        rs = sorted(rs, key=lambda r: float(r[x]))
        xs = [float(r[x]) for r in rs]
        mean = [float(r["mean"]) for r in rs]
        lo = [float(r["lo"]) for r in rs]
        hi = [float(r["hi"]) for r in rs]
        label = metric if g is None else f"{by} = {g}"
        ax.plot(xs, mean, marker="o", color=f"C{k}", label=label)
        ax.fill_between(xs, lo, hi, color=f"C{k}", alpha=0.2, linewidth=0)
    if slo is not None:
        ax.axhline(slo, color="C3", linestyle="--", linewidth=1, label=f"SLO {slo:g}")
    ax.set_xlabel(x)
    ax.set_ylabel(ylabel or metric)
    ax.set_title(f"{metric} vs {x} (mean, 95% CI band across seeds)")
    ax.legend(fontsize="small")
    ax.grid(True, alpha=0.3)
    return fig


def save(fig, path, dpi=100):
    """Write ``fig`` to ``path`` (the format from its suffix: .png, .svg, .pdf), a new file
    renamed over ``path`` (``serq.output.replace_file``: a ``WriteError`` names it)."""
    import os
    from serq.output import replace_file
    fmt = os.path.splitext(os.fspath(path))[1].lstrip(".").lower() or None
    replace_file(path, lambda f: fig.savefig(f, dpi=dpi, format=fmt))
    return path
