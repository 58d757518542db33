"""The ``serq`` command line: argument parsing and exit codes only.

Every command calls the library (``serq.compile``, ``Program.from_json``, ``serq.run``,
``serq.report``); this module turns its results into output and its errors into one message
on stderr and an exit status:

* 0 — success;
* 1 — the input does not load or the run fails (the library's message, ``str(error)``, is
  printed as it is), or a run left a session stuck (after the report);
* 2 — a usage error (argparse's message);
* 130 — interrupted (Ctrl-C).

A traceback is printed only when the environment sets ``SERQ_DEBUG=1``.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import threading
import time

PROG = "serq"

EXIT_OK = 0
EXIT_INPUT = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

_SOURCE_OPTIONS = ("sets", "defs")  # apply to a program's text only
_RUN_OPTIONS = ("seed", "horizon", "warmup", "arrivals", "trace")  # replace `run { }` settings


# ---------------------------------------------------------------------------------------
# option values


def _assignment(kind):
    """An argparse type for ``NAME=TEXT``: returns ``(NAME, TEXT)``; the text is kept as a
    string, which the compiler parses (an expression for ``--set``, a body for ``--def``)."""
    def parse(value: str):
        name, sep, text = value.partition("=")
        if not sep:
            raise argparse.ArgumentTypeError(f"expected NAME={kind}, got {value!r}")
        return name.strip(), text
    parse.__name__ = f"NAME={kind}"
    return parse


def _u64(value: str) -> int:
    try:
        n = int(value, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {value!r}") from None
    if not 0 <= n < 2**64:
        raise argparse.ArgumentTypeError(f"expected an integer from 0 to 2^64-1, got {value}")
    return n


def _directory(value: str) -> str:
    if not value:
        raise argparse.ArgumentTypeError("expected a directory, got an empty name")
    return value


def _count(value: str) -> int:
    try:
        n = int(value, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {n}")
    return n


def _real(value: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {value!r}") from None


# ---------------------------------------------------------------------------------------
# the parser


def _version() -> str:
    """The version, and on a second line which engine runs (serq/compiled.py) and, when the
    build record says so, how it was built (a profile-guided build, setup.py)."""
    from serq import IR_VERSION, __version__, compiled
    return (f"{PROG} {__version__} (IR version {IR_VERSION})\n"
            f"engine: {compiled.describe(build=True)}")


class _Version(argparse.Action):
    """``--version``, importing the library only when it is asked for."""
    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                 help="print the version and exit"):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        try:
            _out(_version() + "\n")
        except ValueError as e:  # a write error
            _err(f"{e}\n")
            parser.exit(EXIT_INPUT)
        parser.exit(EXIT_OK)


class _Parser(argparse.ArgumentParser):
    """argparse, with what it prints on stdout (``--help``) written by the checked writer:
    argparse itself drops a write error silently (help lost, status 0)."""

    def _print_message(self, message, file=None):
        if message and (file is None or file is sys.stdout):
            _out(message)
        else:
            super()._print_message(message, file)


def _add_program_options(p: argparse.ArgumentParser, run_settings: bool) -> None:
    p.add_argument("file", metavar="FILE",
                   help="a program (.sq), or an IR text (.json) read with Program.from_json")
    g = p.add_argument_group("compile options (for .sq files)")
    g.add_argument("--set", dest="sets", metavar="NAME=EXPR", action="append",
                   type=_assignment("EXPR"), default=[],
                   help="override the declared `let NAME` with the expression EXPR (repeatable)")
    g.add_argument("--def", dest="defs", metavar="NAME=BODY", action="append",
                   type=_assignment("BODY"), default=[],
                   help="replace the body of the expression definition `def NAME(...)` "
                        "(repeatable)")
    if run_settings:
        g.add_argument("--seed", type=_u64, metavar="N", help="the run's seed (replaces `run { seed }`)")
        g.add_argument("--horizon", type=_real, metavar="T", help="the run's horizon")
        g.add_argument("--warmup", type=_real, metavar="T", help="the run's warm-up")
        g.add_argument("--arrivals", type=_u64, metavar="N",
                       help="stop arrivals after N and drain (poisson or renewal workloads)")
        g.add_argument("--trace", metavar="F", help="the trace file (replaces the workload's `trace`)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description="serQ: compile and inspect serving specifications (.sq programs and "
                    "their JSON IR).",
        epilog="Exit status: 0 success, 1 the input does not load, 2 usage error. "
               "Set SERQ_DEBUG=1 for a traceback on unexpected errors.")
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    check = sub.add_parser(
        "check", help="compile a program and print a one-line summary",
        description="Compile FILE (or load it as IR when it ends in .json) and print a "
                    "one-line summary: pools, stages, attributes, blocks.")
    _add_program_options(check, run_settings=False)
    check.set_defaults(func=cmd_check, parser=check)

    ir = sub.add_parser(
        "ir", help="compile a program and print its IR (JSON)",
        description="Compile FILE (or load it as IR when it ends in .json) and print the IR "
                    "text, Program.to_json(), followed by a newline.")
    _add_program_options(ir, run_settings=True)
    ir.set_defaults(func=cmd_ir, parser=ir)

    run = sub.add_parser(
        "run", help="run a program and print its report",
        description="Compile FILE (or load it as IR when it ends in .json), run it, and print "
                    "the report: a human-readable text, or with --json the report's JSON "
                    "(Report.json()), exactly as the reference writes it.",
        epilog="Exit status: 0 success; 1 the input does not load, the run fails, or a "
               "session is stuck (reported after the report); 2 usage error; 130 interrupted.")
    _add_program_options(run, run_settings=True)
    out = run.add_argument_group("output")
    out.add_argument("--json", action="store_true",
                     help="print the report as JSON (Report.json()) instead of text")
    out.add_argument("--dump", metavar="DIR", type=_directory,
                     help="also write every observation's records to DIR/NAME.csv "
                          "(time,session,turn,value); DIR is created if needed")
    run.add_argument("--semantics", choices=("sim", "ref"), default="sim",
                     help="sim: the simulator (default); ref: the reference semantics serq.ref "
                          "(the IR-10 fragment only, exact; time averages not reported)")
    out.add_argument("--plan", metavar="PLAN",
                     help="also write the first step stage's per-iteration plan (slices and "
                          "pool events) to PLAN as JSON Lines, for `serq numerics check` "
                          "(docs/numerics.md)")
    from serq.cli_report import add_output_options
    add_output_options(out)
    run.add_argument("--check", action="store_true",
                     help="assert the invariant monitors (docs/formal.md) at every event and "
                          "iteration; a broken invariant is a run error; on success a line on "
                          "stderr says what was checked")
    run.set_defaults(func=cmd_run, parser=run)

    from serq.cli_trace import add_parser as add_trace
    trace, trace_import = add_trace(sub, _real, _count)
    trace.set_defaults(parser=trace)
    trace_import.set_defaults(func=cmd_trace_import, parser=trace_import)
    from serq.cli_sweep import add_commands as add_sweep_commands
    add_sweep_commands(sub)
    from serq.cli_drt import add_parser as add_drt
    add_drt(sub)
    from serq.cli_verify import add_command as add_verify_command
    add_verify_command(sub)
    from serq.cli_plot import add_command as add_plot_command
    add_plot_command(sub)
    from serq.cli_numerics import add_parsers as add_numerics
    add_numerics(sub, _count, _add_program_options, load, _real)
    from serq.cli_draw import add_parser as add_draw
    draw = add_draw(sub, _assignment)
    draw.set_defaults(func=cmd_draw, parser=draw)
    return parser


# ---------------------------------------------------------------------------------------
# commands


def _compile_kwargs(args) -> dict:
    kw = {"sets": dict(args.sets), "defs": dict(args.defs)}
    for name in ("seed", "horizon", "warmup", "arrivals", "trace"):
        value = getattr(args, name, None)
        if value is not None:
            kw[name] = value
    return kw


def _given_options(args, names) -> list:
    """The options among ``names`` written on the command line, as their option names."""
    out = []
    for name in names:
        value = getattr(args, name, None)
        if value not in (None, []):
            out.append("--" + {"sets": "set", "defs": "def"}.get(name, name))
    return out


def _run_settings(args) -> dict:
    """The run options written on the command line: ``{field: value}``."""
    out = {}
    for name in _RUN_OPTIONS:
        value = getattr(args, name, None)
        if value is not None:
            out[name] = float(value) if name in ("horizon", "warmup") else value
    return out


def _read_text(path: str) -> str:
    """The text of an IR file; errors are worded like the compiler's for a program file."""
    from serq.files import os_error_text, read_bytes
    try:
        data = read_bytes(path)
    except OSError as e:
        raise ValueError(f"cannot read {path}: {os_error_text(e)}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"cannot read {path}: stream did not contain valid UTF-8") from None


def load(args):
    """The program named by ``args.file``: compiled, or loaded from IR for a ``.json`` file.

    For IR, ``--set`` and ``--def`` (which edit a program's text) are ignored with a note; the
    run options replace the IR's run settings and the result is validated again, as
    ``Program.from_json`` would (the same messages)."""
    import serq
    path = args.file
    if path.lower().endswith(".json"):
        ignored = _given_options(args, _SOURCE_OPTIONS)
        if ignored:
            _note(f"{path} is read as IR; {' and '.join(ignored)} apply to program text "
                  f"only and were ignored")
        program = serq.Program.from_json(_read_text(path))
        settings = _run_settings(args)
        if settings:
            from serq.ir.validate import validate
            program = dataclasses.replace(program, **settings)
            validate(program)
        return program
    return serq.compile(path, **_compile_kwargs(args))


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def summary(path: str, program) -> str:
    """``FILE: ok — N pools, M stages, K attributes, B blocks`` (``, C claims`` when the
    program has claims)."""
    return (f"{path}: ok \u2014 {_plural(len(program.pools), 'pool')}, "
            f"{_plural(len(program.stages), 'stage')}, "
            f"{_plural(len(program.attrs), 'attribute')}, "
            f"{_plural(len(program.blocks), 'block')}"
            + (f", {_plural(len(program.claims), 'claim')}" if program.claims else ""))


def cmd_check(args) -> int:
    program = load(args)
    _out(summary(args.file, program) + "\n")
    return EXIT_OK


def cmd_ir(args) -> int:
    program = load(args)
    _out(program.to_json() + "\n")
    return EXIT_OK


def cmd_run(args) -> int:
    import serq
    from serq.cli_report import check_output_options, render_report
    check_output_options(args)
    program = load(args)
    if args.dump is not None:
        _prepare_dump(args.dump)  # before the run: nothing computed is lost
    _timed_trace_note(program)
    if args.semantics == "ref" and getattr(args, "plan", None) is not None:
        raise ValueError("--plan records the simulator's iterations: it needs --semantics sim")
    if args.semantics == "ref" and args.check:
        raise ValueError("--check monitors the simulator's run: it needs --semantics sim")
    monitors = None
    if args.check:
        from serq.sim.monitors import Monitors
        monitors = Monitors(program)
    with _Progress(sys.stderr), _plan_recorder(args, program) as hooks:
        if monitors is not None:
            from serq.sim.hooks import Tee
            hooks = monitors if hooks is None else Tee(monitors, hooks)
        if args.semantics == "ref":
            import serq.ref
            report = serq.ref.run(program)
        else:
            report = serq.run(program) if hooks is None else serq.run(program, hooks=hooks)
    _out(render_report(args, report))
    if args.dump is not None:
        _dump(report, args.dump, args.dump_gauges, args.dump_format)
    if monitors is not None:
        _err(f"{PROG}: check: {monitors.describe()}\n")
    stuck = [(_member(p), p.stuck) for p in report.pools if p.stuck]
    if stuck:  # the report is out; say why the status is 1
        total = sum(n for _, n in stuck)
        where = (f"pool {stuck[0][0]}" if len(stuck) == 1 else
                 "pools " + ", ".join(f"{name} ({n})" for name, n in stuck))
        _err(f"{PROG}: {_plural(total, 'session')} stuck in {where} (preempted again before "
             f"making any progress: a possible livelock)\n")
        return EXIT_INPUT
    return EXIT_OK


def cmd_draw(args) -> int:
    from serq.cli_draw import cmd_draw as run_draw
    return run_draw(args, _out, _err)


class _plan_recorder:
    """``--plan PLAN``: the hooks observer writing the plan (None without the option); the
    file is checked (a step stage, a writable path) before the run starts, written new and
    renamed over PLAN when the run ends well (``serq.output.replacing``: a failed or
    interrupted run leaves an existing PLAN as it was)."""
    def __init__(self, args, program):
        self.file = None
        self.hooks = None
        path = getattr(args, "plan", None)
        if path is None:
            return
        import io
        from serq.numerics.export import PlanRecorder
        from serq.output import check_output_file, replacing
        check_output_file(path, "--plan")
        self.replacing = replacing(path)
        self.file = io.TextIOWrapper(self.replacing.__enter__(), encoding="utf-8")
        try:
            self.hooks = PlanRecorder(program, self.file, args.file)
        except BaseException as e:
            self.__exit__(type(e), e, None)
            raise

    def __enter__(self):
        return self.hooks

    def __exit__(self, kind, error, tb):
        if self.file is None:
            return False
        file, self.file = self.file, None
        try:
            file.flush()
            file.detach()
        except OSError as e:
            if kind is None:
                kind, error = type(e), e
        except ValueError:
            pass
        return self.replacing.__exit__(kind, error, tb)


def cmd_trace_import(args) -> int:
    from serq.cli_trace import cmd_trace_import as run_import
    return run_import(args, _err)


def _timed_trace_note(program) -> None:
    """Say when the trace's arrival times replace the workload's `arrive` (serq extension)."""
    from serq.sim.run import trace_path
    from serq.trace import has_times
    if program.trace is not None and has_times(trace_path(program)):
        _note("the trace gives arrival times: its sessions start at those times, in place "
              "of the workload's `arrive` (see docs/traces.md)")


def _member(row) -> str:
    """A report row's name: ``kv``, or ``kv[2]`` for a member of an array."""
    return row.name if row.index is None else f"{row.name}[{row.index}]"


def _prepare_dump(directory: str) -> None:
    """Make sure the ``--dump`` directory exists and takes files, before the run: create it
    as needed, then create and remove a file in it (the one test that works whoever runs
    serq, root included, and whatever the file system)."""
    import tempfile
    from serq.files import os_error_text
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise ValueError(f"cannot write to {directory}: it exists and is not a directory")
    try:
        os.makedirs(directory, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=directory, prefix=".serq-probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise ValueError(f"cannot write to {directory}: {os_error_text(e)}") from None


def _dump(report, directory: str, gauges: bool = False, fmt: str = "csv") -> None:
    from serq.report import dump_csv, dump_parquet
    write = dump_parquet if fmt == "parquet" else dump_csv
    kind = "Parquet file" if fmt == "parquet" else "CSV file"
    try:
        paths = list(write(report, directory, gauges=gauges))
    except OSError as e:
        from serq.files import os_error_text
        raise ValueError(f"cannot write to {e.filename or directory}: "
                         f"{os_error_text(e)}") from None
    if paths:
        names = ", ".join(os.path.basename(os.fspath(p)) for p in paths)
        _err(f"{PROG}: wrote {_plural(len(paths), kind)} to {directory}: {names}\n")
    else:
        what = "observes nothing" if not gauges else "observes nothing and has no gauges"
        _err(f"{PROG}: the program {what}; no {kind} written to {directory}\n")


class _Progress:
    """An elapsed-time line on stderr while a long run goes on (only on a terminal).

    Nothing is written for the first ``delay`` seconds, nor ever when the stream is not a
    terminal (a pipe, a file, a test) or ``SERQ_PROGRESS=0``; the line is erased when the run
    ends. It runs on a daemon thread; the run itself is untouched."""

    FRAMES = "|/-\\"

    def __init__(self, stream, delay: float = 2.0, interval: float = 0.2):
        self.stream = stream
        self.delay = delay
        self.interval = interval
        self.width = 0
        self.stop = threading.Event()
        self.thread = None

    def enabled(self) -> bool:
        if os.environ.get("SERQ_PROGRESS", "") == "0":
            return False
        try:
            return self.stream.isatty()
        except (AttributeError, ValueError, OSError):
            return False

    def __enter__(self):
        if self.enabled():
            self.start = time.monotonic()
            self.thread = threading.Thread(target=self._loop, name="serq-progress", daemon=True)
            self.thread.start()
        return self

    def _loop(self):
        if self.stop.wait(self.delay):
            return
        frame = 0
        while not self.stop.is_set():
            line = (f"{PROG}: running {self.FRAMES[frame % len(self.FRAMES)]} "
                    f"{time.monotonic() - self.start:.0f} s")
            self._write("\r" + line.ljust(self.width))
            self.width = len(line)
            frame += 1
            self.stop.wait(self.interval)

    def _write(self, text):
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):
            pass

    def __exit__(self, *exc):
        if self.thread is not None:
            self.stop.set()
            self.thread.join()
            if self.width:
                self._write("\r" + " " * self.width + "\r")
        return False


# ---------------------------------------------------------------------------------------
# output and errors


def _out(text: str) -> None:
    """Write ``text`` to stdout, every byte or a named write error (``serq.output``)."""
    from serq.output import write_stdout
    write_stdout(text)


def _err(text: str) -> None:
    """A message on stderr; when stderr itself cannot take it there is nowhere to say so."""
    stream = sys.stderr
    if stream is None:
        return
    try:
        try:
            stream.write(text)
        except UnicodeEncodeError:
            stream.write(text.encode("ascii", "backslashreplace").decode("ascii"))
        stream.flush()
    except (OSError, ValueError):
        pass


def _note(text: str) -> None:
    _err(f"{PROG}: note: {text}\n")


def _debug() -> bool:
    return os.environ.get("SERQ_DEBUG", "") == "1"


def main(argv=None) -> int:
    parser = build_parser()
    try:
        args, extra = parser.parse_known_args(argv)  # exits with status 2 on usage errors
    except ValueError as e:  # --help could not be written (serq.output.WriteError)
        _err(f"{e}\n")
        return EXIT_INPUT
    except BrokenPipeError:  # `serq --help | head -1`
        _silence_stdout()
        return EXIT_OK
    if extra:  # reported by the command's parser, with the command's usage line
        args.parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        return args.func(args)
    except ValueError as e:  # the input does not load: the library's message, as it is
        if _debug():
            raise
        _err(f"{e}\n")
        place = _place(e)
        if place:
            _err(f"note: {place}\n")
        return EXIT_INPUT
    except OSError as e:
        if isinstance(e, BrokenPipeError):  # `serq ir x.sq | head`
            _silence_stdout()
            return EXIT_OK
        if _debug():
            raise
        from serq.files import os_error_text
        where = f"{e.filename}: " if e.filename else ""
        _err(f"{PROG}: {where}{os_error_text(e)}\n")
        return EXIT_INPUT
    except KeyboardInterrupt:
        if _debug():
            raise
        _err(f"{PROG}: interrupted\n")
        return EXIT_INTERRUPTED
    except MemoryError as e:  # not a bug: the input asks for more than the machine gives
        if _debug():
            raise
        what = f" ({e})" if str(e) else ""
        _err(f"{PROG}: out of memory{what}: the program, its IR text or its run needs more "
             f"memory than this process may use (a smaller program, --horizon or --arrivals "
             f"needs less)\n")
        return EXIT_INPUT
    except Exception as e:  # a bug in serq: say so in one line
        if _debug():
            raise
        _err(f"{PROG}: internal error: {type(e).__name__}: {e}\n"
             f"{PROG}: this is a bug in serq; run with SERQ_DEBUG=1 for a traceback\n")
        return EXIT_INPUT


def _place(error) -> str:
    """Where a run failed (a ``SimulationError``'s ``time``, ``session``, ``statement``):
    ``at time 12.5, session 3, in `branch` ``; empty when the error names no place."""
    from serq.errors import SimulationError
    if not isinstance(error, SimulationError):
        return ""
    parts = []
    t = getattr(error, "time", None)
    if isinstance(t, (int, float)):
        from serq.sim.fmt import display
        parts.append(f"at time {display(float(t))}")
    serial = getattr(error, "session", None)
    if serial is not None:
        parts.append(f"session {serial}")
    statement = getattr(error, "statement", None)
    if statement:
        parts.append(f"in `{statement}`")
    return ", ".join(parts)


def _silence_stdout() -> None:
    """After a broken pipe, point stdout at devnull so the interpreter's final flush is quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    sys.exit(main())
