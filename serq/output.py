"""Checked output for the command line: every byte written, or a named write error.

A plain ``sys.stdout.buffer.write`` can lose data without a word: one ``write(2)`` moves at
most 2,147,479,552 bytes on Linux, and a short write of a large buffer was ignored (an IR over
2 GiB came out cut and the status was 0). Here the bytes go to the file descriptor in a loop
that continues after a short write and turns a failure — a full disk, a closed stdout — into a
:class:`WriteError` that names the destination (``cannot write to standard output: No space
left on device (os error 28)``), which the command line reports with status 1.
"""
from __future__ import annotations

import errno
import io
import os
import select
import sys

from serq.files import os_error_text

__all__ = ["WriteError", "write_all", "write_stdout", "CHUNK"]

# the most bytes handed to one write(2); well under the kernel's 2 GiB cap
CHUNK = 1 << 26

STDOUT = "standard output"


class WriteError(ValueError):
    """Output could not be written; the message names where: ``cannot write to WHERE: WHY``."""

    def __init__(self, where: str, why: str):
        super().__init__(f"cannot write to {where}: {why}")
        self.where = where


def write_all(fd: int, data: bytes, where: str) -> None:
    """Write all of ``data`` to the descriptor ``fd``, continuing after short writes (and
    waiting when a non-blocking descriptor is full). ``BrokenPipeError`` passes through (the
    reader went away: the caller decides); any other failure is a :class:`WriteError`."""
    view = memoryview(data)
    done = 0
    while done < len(view):
        try:
            n = os.write(fd, view[done:done + CHUNK])
        except BlockingIOError:
            select.select([], [fd], [])
            continue
        except InterruptedError:
            continue
        except BrokenPipeError:
            raise
        except OSError as e:
            raise WriteError(where, os_error_text(e)) from None
        if n <= 0:
            raise WriteError(where, os_error_text(OSError(errno.EIO, "no progress writing")))
        done += n


def _descriptor(stream):
    """The stream's file descriptor, or None when it has none (an in-memory stream)."""
    try:
        return stream.fileno()
    except (AttributeError, io.UnsupportedOperation):
        return None


def write_stdout(text: str) -> None:
    """Write ``text`` to standard output as UTF-8 bytes (the IR is exact bytes, whatever the
    locale), checked: a :class:`WriteError` when it cannot all be written."""
    stream = sys.stdout
    if stream is None or getattr(stream, "closed", False):
        raise WriteError(STDOUT, "it is closed")
    data = text.encode("utf-8")
    try:
        stream.flush()
        fd = _descriptor(stream)
    except BrokenPipeError:
        raise
    except ValueError:  # a closed file object
        raise WriteError(STDOUT, "it is closed") from None
    except OSError as e:
        raise WriteError(STDOUT, os_error_text(e)) from None
    if fd is not None:
        write_all(fd, data, STDOUT)
        return
    # no descriptor (a test's captured stream): the stream's own, checked, writes
    try:
        buf = getattr(stream, "buffer", None)
        if buf is None:
            stream.write(text)
        else:
            buf.write(data)
        stream.flush()
    except BrokenPipeError:
        raise
    except OSError as e:
        raise WriteError(STDOUT, os_error_text(e)) from None
