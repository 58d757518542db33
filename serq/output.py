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
import stat
import sys
import tempfile

from serq.files import os_error_text

__all__ = ["WriteError", "write_all", "write_stdout", "check_output_file", "replacing",
           "replace_file",
           "CHUNK"]

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


# ---------------------------------------------------------------------------------------
# output files: checked before the work, written to a new file and renamed over the name


def _streamed(path) -> bool:
    """Whether ``path`` is written through rather than replaced: it names a device, a FIFO
    or a socket, directly or by a link (``-o /dev/stdout``, ``/dev/null``): replacing that
    would put a file where the system expects a device."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    return not stat.S_ISREG(st.st_mode) and not stat.S_ISDIR(st.st_mode)


def check_output_file(path, option: str = "") -> None:
    """Make sure a file can be written at ``path`` before the long work that produces it
    (nothing computed is lost): a name is given, it is not a directory, its directory exists
    and takes a new file (a file created and removed there: the one test that works whoever
    runs serq, root included). Raises :class:`WriteError` (``option`` names the option in
    the message for an empty name)."""
    path = os.fspath(path)
    if not path:
        raise WriteError(f"the file named by {option}" if option else "the output",
                         "the name is empty")
    if os.path.isdir(path):
        raise WriteError(path, "it is a directory")
    if _streamed(path):
        return
    parent = os.path.dirname(path) or "."
    try:
        fd, probe = tempfile.mkstemp(dir=parent, prefix=".serq-probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        if isinstance(e, FileNotFoundError):
            raise WriteError(path, f"its directory {parent} does not exist") from None
        raise WriteError(path, os_error_text(e)) from None


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


class replacing:
    """``with replacing(path) as f:`` — ``f`` is a new file beside ``path``, open in binary
    mode; when the block ends without an exception it is renamed over ``path``, otherwise it
    is removed and ``path`` is left as it was. An existing ``path`` — a symbolic link
    included — is replaced, never written through (its target is not overwritten), and a
    reader never sees a half-written file. A device or FIFO (``/dev/stdout``) is written
    directly. Every failure to write is a :class:`WriteError` naming ``path``."""

    def __init__(self, path):
        self.path = os.fspath(path)
        self.tmp = None
        self.file = None

    def __enter__(self):
        check_output_file(self.path)
        try:
            if _streamed(self.path):
                self.file = open(self.path, "wb")
                return self.file
            fd, self.tmp = tempfile.mkstemp(dir=os.path.dirname(self.path) or ".",
                                            prefix=f".{os.path.basename(self.path)}.",
                                            suffix=".tmp")
            self.file = os.fdopen(fd, "wb")
            os.fchmod(fd, 0o666 & ~_umask())  # as open() would make it, not 0600
        except OSError as e:
            self._discard()
            raise WriteError(self.path, os_error_text(e)) from None
        return self.file

    def __exit__(self, kind, error, tb):
        try:
            self.file.close()
            if kind is None and self.tmp is not None:
                os.replace(self.tmp, self.path)
                self.tmp = None
        except OSError as e:
            if kind is None:
                kind, error = type(e), e
        self._discard()
        if isinstance(error, OSError) and not isinstance(error, BrokenPipeError):
            raise WriteError(self.path, os_error_text(error)) from None
        return False

    def _discard(self):
        if self.tmp is not None:
            try:
                os.unlink(self.tmp)
            except OSError:
                pass
            self.tmp = None


def replace_file(path, fill) -> None:
    """Write the file ``path`` (as :class:`replacing`): ``fill`` gets the new file, open in
    binary mode."""
    with replacing(path) as f:
        fill(f)
