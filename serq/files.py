"""Reading the files a program names — the program itself, `use` libraries, IR files, traces —
and wording a failure the way the reference does.

Only regular files are read. The reference opens whatever the path names, so `/dev/zero`
reads forever (until memory runs out) and a FIFO blocks in `open` until a writer comes; serq
refuses such a path at once with ``cannot read PATH: not a regular file (a character
device)`` (the house rule: bad input never hangs). The file is opened non-blocking, so a FIFO
is refused without waiting for a writer, and checked with ``fstat`` on the open descriptor,
so what is checked is what is read. A directory gives the reference's own text, ``Is a
directory (os error 21)``.
"""
from __future__ import annotations

import errno
import io
import os
import stat

__all__ = ["NotRegularFile", "open_regular", "open_text", "read_bytes", "read_text",
           "os_error_text"]

_KINDS = (
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
)


class NotRegularFile(OSError):
    """The path names something other than a regular file (a device, a FIFO, a socket)."""

    def __init__(self, path, kind: str):
        super().__init__(f"not a regular file ({kind})")
        self.path = path

    def __str__(self) -> str:
        return self.args[0]


def _kind(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a file"


def open_regular(path):
    """The regular file at ``path`` opened for reading in binary (a file object to close);
    raises ``OSError`` (the system's error, ``IsADirectoryError`` for a directory,
    :class:`NotRegularFile` for the rest)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
        if not stat.S_ISREG(mode):
            raise NotRegularFile(path, _kind(mode))
        return os.fdopen(fd, "rb", closefd=True)
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path) -> bytes:
    """The whole content of the regular file at ``path`` (errors as :func:`open_regular`)."""
    with open_regular(path) as f:
        return f.read()


def open_text(path, encoding: str = "utf-8", newline=None):
    """The regular file at ``path`` opened for reading as text (errors as
    :func:`open_regular`; a decoding error comes later, from the reads)."""
    return io.TextIOWrapper(open_regular(path), encoding=encoding, newline=newline)


def read_text(path, what: str = "") -> str:
    """The whole text (UTF-8, a BOM dropped) of the regular file at ``path``; any failure is
    a ``ValueError`` naming the file: ``cannot read [WHAT ]PATH: WHY``."""
    where = f"{what} {path}" if what else f"{path}"
    try:
        data = read_bytes(path)
    except OSError as e:
        raise ValueError(f"cannot read {where}: {os_error_text(e)}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ValueError(f"cannot read {where}: not UTF-8 text (byte {e.start} is "
                         f"0x{data[e.start]:02x})") from None


def os_error_text(e: OSError) -> str:
    """An ``OSError`` as the reference (Rust's ``io::Error``) displays it: ``No such file or
    directory (os error 2)``; an error without a number is its text alone."""
    msg = e.strerror or str(e)
    return f"{msg} (os error {e.errno})" if e.errno is not None else msg
