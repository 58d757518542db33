"""The reference's error layout: ``L:C: message``, the source line, a caret line, then
``help:``/``note:`` lines.

A position belongs to a *source* (the program text, or a library read by ``use``); an error
inside a library is prefixed with the library's path as written. Tokens produced by a
``def`` expansion remember where each enclosing use was, which becomes ``note: in `f`, used
at L:C`` lines.
"""
from __future__ import annotations

from serq.errors import CompileError


class Source:
    """One text the compiler reads: the program or a library."""
    __slots__ = ("text", "lines", "prefix")

    def __init__(self, text: str, prefix: str = ""):
        self.text = text
        self.lines = text.split("\n")
        self.prefix = prefix  # "./lib.sq:" for libraries, "" for the program

    def line(self, n: int) -> str:
        return self.lines[n - 1] if 0 < n <= len(self.lines) else ""


class Pos:
    """Where a token is: its source, line, column, length and the def uses around it."""
    __slots__ = ("src", "line", "col", "length", "uses")

    def __init__(self, src, line, col, length=1, uses=()):
        self.src = src
        self.line = line
        self.col = col
        self.length = length
        self.uses = uses  # tuple of (def name, Pos of the use), innermost last


def excerpt(pos: Pos, caret_len: int = 1) -> str:
    line_no = str(pos.line)
    text = pos.src.line(pos.line)
    pad = " " * len(line_no)
    indent = []
    chars = list(text)
    for c in chars[:pos.col - 1]:
        indent.append("\t" if c == "\t" else " ")
    return f"{line_no} | {text}\n{pad} | {''.join(indent)}{'^' * max(caret_len, 1)}"


def render(message: str, pos: Pos | None = None, *, link: bool = False, extra=(),
           caret_len: int | None = None) -> str:
    """The full text of an error: position and excerpt when known, then extra lines."""
    head = "link error: " + message if link else message
    if pos is None:
        parts = [head]
    else:
        n = caret_len if caret_len is not None else (pos.length if link else 1)
        parts = [f"{pos.src.prefix}{pos.line}:{pos.col}: {head}", excerpt(pos, n)]
    # the error's own lines (help:, note:) come first, then one line per enclosing def
    # expansion, innermost first — the reference's order (language.md 6.1, recorded in
    # tests/lang/test_reference_errors.py)
    parts.extend(extra)
    if pos is not None and not link:  # a link error in a def body names no use (reference)
        for name, use in reversed(pos.uses):
            parts.append(f"note: in `{name}`, used at {use.line}:{use.col}")
    return "\n".join(parts)


def fail(message: str, pos: Pos | None = None, *, link: bool = False, extra=(),
         caret_len: int | None = None):
    err = CompileError(render(message, pos, link=link, extra=extra, caret_len=caret_len))
    err.bare = message
    err.pos = pos
    raise err
