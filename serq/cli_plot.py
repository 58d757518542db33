"""``serq plot``: draw a run or a sweep to an image file (the ``plot`` extra; docs/tools.md).

    serq plot cdf    FILE [run options] [--obs NAME]... -o cdf.png
    serq plot gauges FILE [run options] [--gauge NAME]... -o gauges.png
    serq plot engine FILE [run options] [--stage NAME] [--pool NAME]... -o engine.png
    serq plot sweep  SUMMARY --x KNOB --metric METRIC [--by KNOB] [--slo BOUND] -o curve.png

The first three run the program (as ``serq run`` does) and draw its report; ``sweep`` reads
the summary ``serq sweep --summary`` wrote (.csv or .parquet). Parsing and output only: the
drawing is :mod:`serq.plot`.
"""
from __future__ import annotations

__all__ = ["add_command"]

IMAGE_SUFFIXES = (".png", ".svg", ".pdf")
MAX_DPI = 1200  # a 10 x 6 inch figure at 1200 dpi is 86 megapixels: more is a typo


def _dpi(value: str) -> int:
    import argparse
    try:
        n = int(value, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
    if not 1 <= n <= MAX_DPI:
        raise argparse.ArgumentTypeError(f"expected a whole number from 1 to {MAX_DPI}, "
                                         f"got {n}")
    return n


def add_command(sub) -> None:
    """Register ``plot`` on the ``serq`` subparsers."""
    from serq.cli import _add_program_options
    plot = sub.add_parser(
        "plot", help="draw a run (CDFs, gauges, a step engine) or a sweep (latency-load curves)",
        description="Draw a run or a sweep to an image file (.png, .svg or .pdf).")
    kinds = plot.add_subparsers(dest="kind", metavar="KIND", required=True)

    def image(p):
        p.add_argument("-o", "--out", required=True, metavar="IMAGE",
                       help="the image to write (.png, .svg or .pdf)")
        p.add_argument("--dpi", type=_dpi, default=100,
                       help=f"dots per inch (default 100, at most {MAX_DPI})")

    cdf = kinds.add_parser("cdf", help="the empirical CDF of each observation",
                           description="Run FILE and draw each observation's empirical CDF "
                                       "with its p50 and p99.")
    _add_program_options(cdf, run_settings=True)
    cdf.add_argument("--obs", action="append", metavar="NAME",
                     help="an observation to draw (repeatable; default all)")
    image(cdf)
    cdf.set_defaults(func=cmd_plot, parser=cdf)

    gauges = kinds.add_parser("gauges", help="each gauge over time",
                              description="Run FILE and draw each gauge over time.")
    _add_program_options(gauges, run_settings=True)
    gauges.add_argument("--gauge", action="append", metavar="NAME",
                        help="a gauge to draw (repeatable; default all)")
    image(gauges)
    gauges.set_defaults(func=cmd_plot, parser=gauges)

    engine = kinds.add_parser("engine", help="a step engine's batch and KV usage over time",
                              description="Run FILE recording every step-engine iteration "
                                          "and draw the decode batch, prefill tokens and "
                                          "pool usage over time.")
    _add_program_options(engine, run_settings=True)
    engine.add_argument("--stage", metavar="NAME", help="the step stage (default the first)")
    engine.add_argument("--pool", action="append", metavar="NAME",
                        help="a pool to draw (repeatable; default all)")
    image(engine)
    engine.set_defaults(func=cmd_plot, parser=engine)

    sweep = kinds.add_parser("sweep", help="a metric against a knob, with 95%% CI bands",
                             description="Draw a metric's across-replication mean against a "
                                         "knob with its 95% CI band, from the summary "
                                         "`serq sweep --summary` wrote.")
    sweep.add_argument("file", metavar="SUMMARY", help="a sweep summary (.csv or .parquet)")
    sweep.add_argument("--x", required=True, metavar="KNOB", help="the knob on the x axis")
    sweep.add_argument("--metric", required=True, help="the metric on the y axis (ttft.p99)")
    sweep.add_argument("--by", metavar="KNOB", help="one curve per value of this knob")
    sweep.add_argument("--slo", type=_finite, metavar="BOUND", help="draw a bound")
    image(sweep)
    sweep.set_defaults(func=cmd_plot, parser=sweep)


def _finite(value: str) -> float:
    import argparse
    import math
    try:
        x = float(value)
    except ValueError:
        x = math.nan
    if not math.isfinite(x):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {value!r}")
    return x


def _read_summary(path):
    from serq.extras import need
    need("pandas", "serq plot sweep", ("pandas",))
    import pandas as pd
    from serq.files import open_regular, os_error_text
    try:
        with open_regular(path) as f:  # a regular file: /dev/zero or a FIFO never ends
            if path.lower().endswith(".parquet"):
                return pd.read_parquet(f)
            return pd.read_csv(f)
    except OSError as e:
        raise ValueError(f"cannot read {path}: {os_error_text(e)}") from None
    except (ValueError, ImportError) as e:
        raise ValueError(f"cannot read {path}: {e}") from None
    except Exception as e:  # pyarrow's and pandas' own errors on a damaged file
        raise ValueError(f"cannot read {path}: {type(e).__name__}: {e}") from None


def cmd_plot(args) -> int:
    from serq.cli import _err, load
    from serq.extras import need
    need("plot", "serq plot")
    out = args.out
    if not out.lower().endswith(IMAGE_SUFFIXES):
        raise ValueError(f"cannot write {out}: the name must end in .png, .svg or .pdf")
    from serq.output import check_output_file
    check_output_file(out, "-o")  # before the run: nothing computed is lost
    import serq.plot as P
    if args.kind == "sweep":
        fig = P.load_curve(_read_summary(args.file), args.x, args.metric, by=args.by,
                           slo=args.slo)
    else:
        import serq
        program = load(args)
        if args.kind == "engine":
            from serq.timeline import run_with_timeline
            report, timeline = run_with_timeline(program)
            fig = P.engine(timeline, stage=args.stage, pools=args.pool, warmup=report.warmup)
        else:
            report = serq.run(program)
            fig = (P.cdf(report, args.obs) if args.kind == "cdf"
                   else P.gauges(report, args.gauge))
    P.save(fig, out, dpi=args.dpi)
    _err(f"serq: wrote {out}\n")
    return 0
