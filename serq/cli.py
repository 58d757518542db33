"""The ``serq`` command line: argument parsing and exit codes only.

Every command calls the library (``serq.compile``, ``Program.from_json``); this module turns
its results into output and its errors into one message on stderr and an exit status:

* 0 — success;
* 1 — the input does not load (the library's message, ``str(error)``, is printed as it is);
* 2 — a usage error (argparse's message).

A traceback is printed only when the environment sets ``SERQ_DEBUG=1``.
"""
from __future__ import annotations

import argparse
import os
import sys

PROG = "serq"

EXIT_OK = 0
EXIT_INPUT = 1
EXIT_USAGE = 2

_COMPILE_OPTIONS = ("sets", "defs", "seed", "horizon", "warmup", "arrivals", "trace")


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


def _real(value: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {value!r}") from None


# ---------------------------------------------------------------------------------------
# the parser


def _version() -> str:
    from serq import IR_VERSION, __version__
    return f"{PROG} {__version__} (IR version {IR_VERSION})"


class _Version(argparse.Action):
    """``--version``, importing the library only when it is asked for."""
    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                 help="print the version and exit"):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(_version())
        parser.exit(EXIT_OK)


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
    parser = argparse.ArgumentParser(
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
    check.set_defaults(func=cmd_check)

    ir = sub.add_parser(
        "ir", help="compile a program and print its IR (JSON)",
        description="Compile FILE (or load it as IR when it ends in .json) and print the IR "
                    "text, Program.to_json(), followed by a newline.")
    _add_program_options(ir, run_settings=True)
    ir.set_defaults(func=cmd_ir)
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


def _given_options(args) -> list:
    """The compile options written on the command line, as their option names."""
    out = []
    for name in _COMPILE_OPTIONS:
        value = getattr(args, name, None)
        if value not in (None, []):
            out.append("--" + {"sets": "set", "defs": "def"}.get(name, name))
    return out


def _read_text(path: str) -> str:
    """The text of an IR file; errors are worded like the compiler's for a program file."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise _ReadError(path, e) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"cannot read {path}: stream did not contain valid UTF-8") from None


class _ReadError(ValueError):
    def __init__(self, path, err: OSError):
        reason = err.strerror or str(err)
        code = f" (os error {err.errno})" if err.errno is not None else ""
        super().__init__(f"cannot read {path}: {reason}{code}")


def load(args):
    """The program named by ``args.file``: compiled, or loaded from IR for a ``.json`` file."""
    import serq
    path = args.file
    if path.lower().endswith(".json"):
        ignored = _given_options(args)
        if ignored:
            _note(f"{path} is read as IR; compile options do not apply to it and were "
                  f"ignored: {', '.join(ignored)}")
        return serq.Program.from_json(_read_text(path))
    return serq.compile(path, **_compile_kwargs(args))


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def summary(path: str, program) -> str:
    """``FILE: ok — N pools, M stages, K attributes, B blocks``."""
    return (f"{path}: ok \u2014 {_plural(len(program.pools), 'pool')}, "
            f"{_plural(len(program.stages), 'stage')}, "
            f"{_plural(len(program.attrs), 'attribute')}, "
            f"{_plural(len(program.blocks), 'block')}")


def cmd_check(args) -> int:
    program = load(args)
    _out(summary(args.file, program) + "\n")
    return EXIT_OK


def cmd_ir(args) -> int:
    program = load(args)
    _out(program.to_json() + "\n")
    return EXIT_OK


# ---------------------------------------------------------------------------------------
# output and errors


def _out(text: str) -> None:
    """Write ``text`` to stdout as UTF-8 bytes, whatever the locale (the IR is exact bytes)."""
    stream = sys.stdout
    buf = getattr(stream, "buffer", None)
    if buf is None:
        stream.write(text)
    else:
        stream.flush()
        buf.write(text.encode("utf-8"))
    stream.flush()


def _err(text: str) -> None:
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except UnicodeEncodeError:
        sys.stderr.write(text.encode("ascii", "backslashreplace").decode("ascii"))
        sys.stderr.flush()


def _note(text: str) -> None:
    _err(f"{PROG}: note: {text}\n")


def _debug() -> bool:
    return os.environ.get("SERQ_DEBUG", "") == "1"


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)  # exits with status 2 on usage errors
    try:
        return args.func(args)
    except ValueError as e:  # the input does not load: the library's message, as it is
        if _debug():
            raise
        _err(f"{e}\n")
        return EXIT_INPUT
    except OSError as e:
        if isinstance(e, BrokenPipeError):  # `serq ir x.sq | head`
            _silence_stdout()
            return EXIT_OK
        if _debug():
            raise
        _err(str(_ReadError(e.filename or args.file, e)) + "\n")
        return EXIT_INPUT
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # a bug in serq: say so in one line
        if _debug():
            raise
        _err(f"{PROG}: internal error: {type(e).__name__}: {e}\n"
             f"{PROG}: this is a bug in serq; run with SERQ_DEBUG=1 for a traceback\n")
        return EXIT_INPUT


def _silence_stdout() -> None:
    """After a broken pipe, point stdout at devnull so the interpreter's final flush is quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    sys.exit(main())
