"""``serq trace import FORMAT IN OUT``: a public trace to serq's trace format (docs/traces.md).

Registered by ``serq.cli``; the conversion itself is ``serq.trace_import.import_trace``.
"""
from __future__ import annotations


def add_parser(sub, real, count) -> None:
    trace = sub.add_parser(
        "trace", help="convert public LLM traces to serq's trace format",
        description="Work with trace files. `serq trace import FORMAT IN OUT` converts a "
                    "public LLM-serving trace into serq's trace CSV.")
    tsub = trace.add_subparsers(dest="trace_command", metavar="SUBCOMMAND", required=True)
    imp = tsub.add_parser(
        "import", help="convert an Azure, Mooncake, BurstGPT or ShareGPT trace",
        description="Convert the public trace IN (format FORMAT) into serq's trace format, "
                    "written to OUT. Azure, BurstGPT and Mooncake traces keep their arrival "
                    "times (the `at` column: a run replays them); ShareGPT has none.",
        epilog="Times are in seconds from the trace's first request. See docs/traces.md for "
               "what each format's columns become.")
    imp.add_argument("format", metavar="FORMAT", choices=("azure", "mooncake", "burstgpt",
                                                          "sharegpt"),
                     help="azure, mooncake, burstgpt or sharegpt")
    imp.add_argument("input", metavar="IN", help="the public trace file")
    imp.add_argument("output", metavar="OUT", help="the serq trace file to write")
    imp.add_argument("--scale", type=real, default=1.0, metavar="F",
                     help="multiply every time written by F (0.5: twice as fast)")
    imp.add_argument("--start", type=real, metavar="T",
                     help="keep the sessions arriving at T seconds or later (times then count "
                          "from T)")
    imp.add_argument("--end", type=real, metavar="T",
                     help="keep the sessions arriving before T seconds")
    imp.add_argument("--limit", type=count, metavar="N", help="keep the first N sessions")
    imp.add_argument("--block-size", type=count, default=512, metavar="B",
                     help="mooncake: tokens per hash_ids block (default 512)")
    imp.add_argument("--chars-per-token", type=real, default=4.0, metavar="C",
                     help="sharegpt: characters counted as one token (default 4)")
    imp.add_argument("--model", metavar="NAME",
                     help="burstgpt: keep only the rows of this model (ChatGPT, GPT-4)")
    return trace, imp


def cmd_trace_import(args, err) -> int:
    from serq.trace_import import import_trace
    options = {}
    if args.format == "mooncake":
        options["block_size"] = args.block_size
    elif args.format == "sharegpt":
        options["chars_per_token"] = args.chars_per_token
    elif args.format == "burstgpt" and args.model is not None:
        options["model"] = args.model
    for name, fmt in (("block_size", "mooncake"), ("chars_per_token", "sharegpt"),
                      ("model", "burstgpt")):
        given = getattr(args, name) != {"block_size": 512, "chars_per_token": 4.0,
                                        "model": None}[name]
        if given and args.format != fmt:
            args.parser.error(f"--{name.replace('_', '-')} applies to {fmt} traces only")
    summary = import_trace(args.format, args.input, args.output, scale=args.scale,
                           start=args.start, end=args.end, limit=args.limit, **options)
    err(f"serq: {summary.line()}\n")
    return 0

