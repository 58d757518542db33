"""The ``serq`` console command's entry point: Ctrl-C is handled from the first instant.

The console script imports this module and calls :func:`main`. Importing the command line
pulls in the compiler, the interpreter and numpy (about 0.2 s); a Ctrl-C in that time used to
escape as a ``KeyboardInterrupt`` traceback. This module is tiny (``serq/__init__`` loads
nothing eagerly), and :func:`main` first installs a SIGINT handler that ends the process at
once with ``serq: interrupted`` and status 130 — the same as an interrupt later on. Once the
command line is imported, Python's usual handler is restored, and ``serq.cli.main`` turns a
``KeyboardInterrupt`` into the same message and status. (What comes before — the Python
interpreter's own start-up, some 20 ms — is beyond any Python program's reach.)
"""
import os
import sys

try:  # the C module: `signal` itself imports enum, a few milliseconds more without a handler
    import _signal as signal
except ImportError:  # not CPython
    import signal

EXIT_INTERRUPTED = 130


def _interrupted_while_starting(signum, frame):
    try:
        os.write(2, b"serq: interrupted\n")
    except OSError:
        pass
    os._exit(EXIT_INTERRUPTED)


def _install() -> None:
    try:
        signal.signal(signal.SIGINT, _interrupted_while_starting)
    except ValueError:  # not the main thread (imported by some other program): leave it
        pass


def main(argv=None) -> int:
    """Run the command line; returns (and, as a script, exits with) its status."""
    _install()
    try:
        from serq.cli import main as cli_main  # the heavy imports, under the handler above
        if signal.getsignal(signal.SIGINT) is _interrupted_while_starting:
            signal.signal(signal.SIGINT, signal.default_int_handler)
        status = cli_main(argv)
    except KeyboardInterrupt:  # between the handler's swap and cli_main's own handling
        _interrupted_while_starting(signal.SIGINT, None)
    except SystemExit as e:  # argparse: --help, --version, usage errors
        status = e.code
    return _flush_stdout(status)


def _flush_stdout(status):
    """Flush what is still buffered on stdout (argparse's ``--help``) while a failure can be
    reported as a write error with status 1, rather than by the interpreter at exit."""
    stream = sys.stdout
    if stream is None:
        return status
    try:
        stream.flush()
    except (OSError, ValueError) as e:
        _silence(stream)
        if isinstance(e, BrokenPipeError):  # the reader went away (`serq --help | head -1`)
            return status
        from serq.files import os_error_text
        why = os_error_text(e) if isinstance(e, OSError) else "it is closed"
        try:
            os.write(2, f"cannot write to standard output: {why}\n".encode())
        except OSError:
            pass
        return 1
    return status


def _silence(stream) -> None:
    """Point stdout at the null device, so that the flush at exit has nothing to fail on."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())
    except (OSError, ValueError):
        pass
