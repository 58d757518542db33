"""``serq run``'s output formats: the text report, the report's JSON (exactly v0.1.2's unless
``--percentiles`` asks for more), and ``--format vllm`` (``vllm bench serve``'s result keys,
:mod:`serq.report.vllm`). Parsing and rendering only; docs/tools.md has the details."""
from __future__ import annotations

import json

__all__ = ["add_output_options", "check_output_options", "render_report"]

FORMATS = ("text", "json", "vllm")


def add_output_options(group) -> None:
    """The output options of ``serq run`` (``--json`` is defined by the caller)."""
    group.add_argument("--format", choices=FORMATS,
                       help="text (default), json (= --json), or vllm: the keys of "
                            "`vllm bench serve`'s result JSON (TTFT, TPOT, ITL, E2EL in ms, "
                            "throughput, goodput)")
    group.add_argument("--percentiles", metavar="LIST",
                       help="observation percentiles, e.g. 50,90,95,99: columns of the text "
                            "report; with json a last key `percentiles` (the v0.1.2 keys are "
                            "unchanged); with vllm the pNN_*_ms keys (default 99)")
    group.add_argument("--goodput", metavar="KEY:MS", nargs="+", action="extend",
                       help="with --format vllm: SLOs for request_goodput, e.g. ttft:500 "
                            "tpot:50 (milliseconds; keys ttft, tpot, e2el)")
    group.add_argument("--time-unit", choices=("s", "ms", "us", "ns"), default=None,
                       help="with --format vllm: the program's time unit (default s)")
    group.add_argument("--dump-gauges", action="store_true",
                       help="with --dump: also write each gauge's change points to "
                            "DIR/NAME.gauge.csv (time,value)")
    group.add_argument("--dump-format", choices=("csv", "parquet"), default="csv",
                       help="with --dump: csv (default) or parquet (pyarrow): NAME.parquet, "
                            "NAME.gauge.parquet")
    group.add_argument("--map", dest="maps", metavar="METRIC=OBS", action="append",
                       default=[],
                       help="with --format vllm: the observation behind a metric (ttft, "
                            "tpot, itl, e2el, output_tokens, input_tokens); repeatable")


def check_output_options(args) -> None:
    """Validate the output options before the run (a ``ValueError`` with the message);
    sets ``args.format``, ``args.percentile_list``, ``args.goodput_slos``, ``args.names``."""
    from serq.report.metrics import parse_percentiles
    fmt = args.format or ("json" if args.json else "text")
    if args.json and fmt != "json":
        raise ValueError(f"--json and --format {fmt} contradict each other")
    args.format = fmt
    args.percentile_list = (parse_percentiles(args.percentiles)
                            if args.percentiles is not None else None)
    vllm_only = [o for o, v in (("--goodput", args.goodput), ("--time-unit", args.time_unit),
                                ("--map", args.maps)) if v]
    if vllm_only and fmt != "vllm":
        raise ValueError(f"{', '.join(vllm_only)} apply to --format vllm only")
    if (args.dump_gauges or args.dump_format != "csv") and args.dump is None:
        raise ValueError("--dump-gauges and --dump-format apply with --dump DIR only")
    if args.dump_format == "parquet":
        from serq.extras import need
        need("pandas", "--dump-format parquet", ("pyarrow",))
    from serq.report.vllm import parse_goodput
    args.goodput_slos = parse_goodput(args.goodput or [])
    names = {}
    for item in args.maps:
        key, sep, obs = item.partition("=")
        key = key.strip()
        if not sep or key not in ("ttft", "tpot", "itl", "e2el", "output_tokens",
                                  "input_tokens") or not obs.strip():
            raise ValueError(f"--map {item!r}: expected METRIC=OBSERVATION with METRIC one of "
                             f"ttft, tpot, itl, e2el, output_tokens, input_tokens")
        names[key] = obs.strip()
    args.names = names


def render_report(args, report) -> str:
    """The report's text in the chosen format, ending with a newline."""
    if args.format == "json":
        text = report.json()
        if args.percentile_list:
            from serq.report.json import percentiles_json
            text = text[:-1] + "," + percentiles_json(report, args.percentile_list) + "}"
        return text + "\n"
    if args.format == "vllm":
        from serq.report.vllm import vllm_metrics
        doc = vllm_metrics(report, time_unit=args.time_unit or "s", names=args.names,
                           goodput=args.goodput_slos,
                           percentiles=args.percentile_list or (99.0,))
        return json.dumps(doc, indent=2, allow_nan=False) + "\n"
    from serq.report import format_text
    text = format_text(report, program_name=args.file, percentiles=args.percentile_list)
    return text if text.endswith("\n") else text + "\n"
