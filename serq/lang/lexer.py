"""Text to tokens, with 1-based line and column positions (columns in code points).

There are no reserved words: every keyword is an identifier matched by spelling in the
parser. Numbers carry no sign and no unit; strings have no escapes.
"""
from __future__ import annotations

import re

from serq.ir.floats import display
from serq.lang.diagnostics import Pos, Source, fail

IDENT, NUM, STR, EOF = "ident", "num", "str", "Eof"

TWO = {"<=": "Le", ">=": "Ge", "==": "EqEq", "!=": "Ne", "&&": "AndAnd", "||": "OrOr"}
ONE = {"{": "LBrace", "}": "RBrace", "(": "LParen", ")": "RParen", "[": "LBracket",
       "]": "RBracket", ",": "Comma", ";": "Semi", ":": "Colon", ".": "Dot", "=": "Assign",
       "~": "Tilde", "?": "Question", "+": "Plus", "-": "Minus", "*": "Star", "/": "Slash",
       "^": "Caret", "<": "Lt", ">": "Gt", "!": "Not"}

_FLOAT = re.compile(r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\Z")


class Token:
    __slots__ = ("kind", "val", "pos")

    def __init__(self, kind, val, pos):
        self.kind = kind  # IDENT, NUM, STR, EOF, or a punctuation name ("LBrace", ...)
        self.val = val    # identifier/string text, number value, or the punctuation text
        self.pos = pos

    def is_word(self, word: str) -> bool:
        return self.kind == IDENT and self.val == word

    def __repr__(self):
        return f"Token({self.kind}, {self.val!r}, {self.pos.line}:{self.pos.col})"


def show_f64(x: float) -> str:
    """Rust's ``Display`` for f64 (how the reference names a number token in a message)."""
    return display(x)


def describe(tok: Token) -> str:
    """A token as parse errors name it: `name`, a number, "text", or the variant name."""
    if tok.kind == IDENT:
        return f"`{tok.val}`"
    if tok.kind == NUM:
        return show_f64(tok.val)
    if tok.kind == STR:
        return f'"{tok.val}"'
    return tok.kind


def is_ident_start(c: str) -> bool:
    return c == "_" or c.isalpha()


def is_ident_char(c: str) -> bool:
    return c == "_" or c.isalnum()


def lex(src: Source) -> list:
    text = src.text
    n = len(text)
    toks = []
    i = 0
    line, col = 1, 1
    append = toks.append
    while i < n:
        c = text[i]
        if c == "\n":
            i += 1
            line += 1
            col = 1
            continue
        if c.isspace():
            i += 1
            col += 1
            continue
        if c == "/" and i + 1 < n and text[i + 1] == "/":
            j = text.find("\n", i)
            j = n if j < 0 else j
            col += j - i
            i = j
            continue
        if c == "/" and i + 1 < n and text[i + 1] == "*":
            j = text.find("*/", i + 2)
            if j < 0:
                fail("unterminated block comment", Pos(src, line, col),
                     extra=("help: close this comment with `*/`",))
            body = text[i:j + 2]
            nl = body.count("\n")
            if nl:
                line += nl
                col = len(body) - body.rfind("\n")
            else:
                col += len(body)
            i = j + 2
            continue
        if c.isdigit() and c.isascii() or (c == "." and i + 1 < n and text[i + 1].isdigit()
                                           and text[i + 1].isascii()):
            j = i + 1
            while j < n and (text[j] in "._" or (text[j].isdigit() and text[j].isascii())):
                j += 1
            if j < n and text[j] in "eE":
                k = j + 1
                if k < n and text[k] in "+-":
                    k += 1
                if k < n and text[k].isdigit() and text[k].isascii():
                    while k < n and text[k].isdigit() and text[k].isascii():
                        k += 1
                    j = k
            raw = text[i:j]
            clean = raw.replace("_", "")
            if not _FLOAT.match(clean):
                fail(f"bad number `{clean}`", Pos(src, line, col))
            append(Token(NUM, float(clean), Pos(src, line, col, j - i)))
            col += j - i
            i = j
            continue
        if is_ident_start(c):
            j = i + 1
            while j < n and is_ident_char(text[j]):
                j += 1
            append(Token(IDENT, text[i:j], Pos(src, line, col, j - i)))
            col += j - i
            i = j
            continue
        if c == '"':
            j = text.find('"', i + 1)
            if j < 0:
                fail("unterminated string", Pos(src, line, col + (n - i)))
            s = text[i + 1:j]
            append(Token(STR, s, Pos(src, line, col, j + 1 - i)))
            nl = s.count("\n")
            if nl:
                line += nl
                col = len(s) - s.rfind("\n") + 1
            else:
                col += j + 1 - i
            i = j + 1
            continue
        two = text[i:i + 2]
        if two in TWO:
            append(Token(TWO[two], two, Pos(src, line, col, 2)))
            i += 2
            col += 2
            continue
        if c in ONE:
            append(Token(ONE[c], c, Pos(src, line, col, 1)))
            i += 1
            col += 1
            continue
        fail(f"unexpected character `{c}`", Pos(src, line, col))
    append(Token(EOF, None, Pos(src, line, col, 1)))
    return toks
