"""Reading JSON exactly as the reference does: serde_json (``from_str``, ``float_roundtrip``)
driving serde-derived types.

The reference's load errors are serde_json's, with serde_json's *positions*, and both depend
on how the parser and the derived visitors interleave: a wrong type is reported before any
syntax error further on, a missing field at the closing brace of its object, an error raised by
a visitor (``missing field``, ``invalid type`` ...) at wherever the parser stands when the
nearest enclosing ``deserialize_*`` call catches it, after that call has tried to close its
array or object. A JSON tree parsed first cannot reproduce that, so this module is a streaming
reader over the UTF-8 bytes that mirrors serde_json's routines one for one (``ws`` is
``parse_whitespace``, ``seq_next`` is ``SeqAccess::next_element_seed`` ...), and a handful
of type descriptors (``Struct``, ``Enum``, ``Seq`` ...) that mirror the derived visitors.
Columns count bytes, as serde_json's do.
"""
from __future__ import annotations

import math
import re
import unicodedata

from serq.ir.json import fmt_float

# serde_json's ErrorCode texts
EOF_LIST = "EOF while parsing a list"
EOF_OBJECT = "EOF while parsing an object"
EOF_STRING = "EOF while parsing a string"
EOF_VALUE = "EOF while parsing a value"
EXPECTED_COLON = "expected `:`"
EXPECTED_LIST_COMMA_OR_END = "expected `,` or `]`"
EXPECTED_OBJECT_COMMA_OR_END = "expected `,` or `}`"
EXPECTED_IDENT = "expected ident"
EXPECTED_VALUE = "expected value"
INVALID_ESCAPE = "invalid escape"
INVALID_NUMBER = "invalid number"
NUMBER_OUT_OF_RANGE = "number out of range"
CONTROL_CHARACTER = "control character (\\u0000-\\u001F) found while parsing a string"
KEY_MUST_BE_A_STRING = "key must be a string"
LONE_LEADING_SURROGATE = "lone leading surrogate in hex escape"
TRAILING_COMMA = "trailing comma"
TRAILING_CHARACTERS = "trailing characters"
UNEXPECTED_END_OF_HEX_ESCAPE = "unexpected end of hex escape"
RECURSION_LIMIT = "recursion limit exceeded"

U64_MAX = (1 << 64) - 1
U32_MAX = (1 << 32) - 1

_WS = re.compile(rb"[ \t\n\r]*")
_DIGITS = re.compile(rb"[0-9]*")
_NUMBER = re.compile(rb"(?:0|[1-9][0-9]*)(\.[0-9]+)?(?:[eE][+-]?([0-9]+))?")
_NUMBER_CONTINUES = frozenset(b"0123456789.eE")
_PLAIN = re.compile(rb'[^"\\\x00-\x1f]*')  # a run of string bytes needing no attention
_HEX = frozenset(b"0123456789abcdefABCDEF")
_ESCAPES = {0x22: '"', 0x5C: "\\", 0x2F: "/", 0x62: "\b", 0x66: "\f", 0x6E: "\n",
            0x72: "\r", 0x74: "\t"}
_LBRACKET, _RBRACKET, _LBRACE, _RBRACE = 0x5B, 0x5D, 0x7B, 0x7D
_QUOTE, _COMMA, _COLON, _MINUS = 0x22, 0x2C, 0x3A, 0x2D


class DeError(Exception):
    """A failed read: the message, and the byte offset serde_json reports it at (``None``
    while no ``deserialize_*`` call has fixed it yet, as for serde's custom errors)."""

    def __init__(self, msg: str, pos: int | None = None):
        super().__init__(msg)
        self.msg = msg
        self.pos = pos


class Reader:
    """serde_json's ``Deserializer<StrRead>``: the input bytes, the index, the depth left."""

    __slots__ = ("s", "n", "i", "depth")

    def __init__(self, data: bytes):
        self.s = data
        self.n = len(data)
        self.i = 0
        self.depth = 128

    # -- positions ------------------------------------------------------------------------

    def error(self, msg: str) -> DeError:
        """serde_json's ``error``: at the current index (after what was consumed)."""
        return DeError(msg, self.i)

    def peek_error(self, msg: str) -> DeError:
        """serde_json's ``peek_error``: one past the current index (the byte looked at)."""
        return DeError(msg, min(self.n, self.i + 1))

    def position(self, pos: int) -> tuple[int, int]:
        """The 1-based line and the byte column of an offset, as serde_json counts them."""
        start = self.s.rfind(b"\n", 0, pos) + 1
        return self.s.count(b"\n", 0, start) + 1, pos - start

    # -- tokens ---------------------------------------------------------------------------

    def ws(self) -> int:
        """``parse_whitespace``: skip blanks; the next byte, or -1 at the end."""
        i = self.i
        if i < self.n:
            c = self.s[i]
            if c > 32:
                return c
            i = self.i = _WS.match(self.s, i).end()
            if i < self.n:
                return self.s[i]
        return -1

    def enter(self) -> None:
        """The ``check_recursion!`` guard of a container (before its bracket is eaten)."""
        self.depth -= 1
        if self.depth == 0:
            raise self.peek_error(RECURSION_LIMIT)

    def parse_ident(self, rest: bytes) -> None:
        """The rest of ``null``/``true``/``false``, byte by byte."""
        s, n = self.s, self.n
        for b in rest:
            if self.i >= n:
                raise self.error(EOF_VALUE)
            c = s[self.i]
            self.i += 1
            if c != b:
                raise self.error(EXPECTED_IDENT)

    def parse_number(self, positive: bool):
        """``parse_integer`` and what follows it (the sign already eaten): ``("u", int)``,
        ``("i", int)`` (negative, fits i64) or ``("f", float)`` -- serde_json's
        ``ParserNumber``. Floats are correctly rounded (``float_roundtrip``)."""
        s, n, i = self.s, self.n, self.i
        m = _NUMBER.match(s, i)
        if m is not None:  # the common, well-formed case in one step
            j = m.end()
            if j >= n or s[j] not in _NUMBER_CONTINUES:
                if m.lastindex is None and j - i <= 19:
                    self.i = j
                    v = int(m.group())
                    if positive:
                        return "u", v
                    return ("i", -v) if 0 < v <= 1 << 63 else ("f", -float(v))
                if m.lastindex is not None and (m.group(2) is None or len(m.group(2)) <= 9):
                    f = float(m.group())
                    self.i = j
                    if f == math.inf:
                        raise self.error(NUMBER_OUT_OF_RANGE)
                    return "f", f if positive else -f
        start = i
        if i >= n:
            raise self.error(EOF_VALUE)
        c = s[i]
        if c == 0x30:
            i += 1
            if i < n and 0x30 <= s[i] <= 0x39:
                self.i = i
                raise self.peek_error(INVALID_NUMBER)
        elif 0x31 <= c <= 0x39:
            i = _DIGITS.match(s, i + 1).end()
        else:
            self.i = i + 1
            raise self.error(INVALID_NUMBER)
        int_end = i
        frac_end = i
        is_float = False
        if i < n and s[i] == 0x2E:  # '.'
            i += 1
            j = _DIGITS.match(s, i).end()
            if j == i:
                self.i = i
                raise self.peek_error(INVALID_NUMBER if i < n else EOF_VALUE)
            i = frac_end = j
            is_float = True
        if i < n and (s[i] == 0x65 or s[i] == 0x45):  # 'e' / 'E'
            is_float = True
            i += 1
            negative_exp = False
            if i < n and (s[i] == 0x2B or s[i] == 0x2D):
                negative_exp = s[i] == 0x2D
                i += 1
            if i >= n:
                self.i = i
                raise self.error(EOF_VALUE)
            if not 0x30 <= s[i] <= 0x39:
                self.i = i + 1
                raise self.error(INVALID_NUMBER)
            j = _DIGITS.match(s, i).end()
            if j - i > 9:
                # serde_json accumulates the exponent in an i32 and gives up on overflow
                e = s[i] - 0x30
                for k in range(i + 1, j):
                    d = s[k] - 0x30
                    if e > 214748364 or (e == 214748364 and d > 7):
                        mantissa = s[start:int_end] + s[int_end + 1:frac_end]
                        if mantissa.strip(b"0") and not negative_exp:
                            self.i = k + 1
                            raise self.error(NUMBER_OUT_OF_RANGE)
                        self.i = j
                        return "f", 0.0 if positive else -0.0
                    e = e * 10 + d
            i = j
        self.i = i
        if not is_float:
            if int_end - start <= 20:
                v = int(s[start:int_end])
                if v <= U64_MAX:
                    if positive:
                        return "u", v
                    if 0 < v <= 1 << 63:
                        return "i", -v
                    return "f", -float(v)
            f = float(s[start:int_end])
        else:
            f = float(s[start:i])
        if f == math.inf:
            raise self.error(NUMBER_OUT_OF_RANGE)
        return "f", f if positive else -f

    def _hex4(self) -> int:
        """``decode_hex_escape``: four hex digits, consumed before they are checked."""
        i = self.i
        if self.n - i < 4:
            self.i = self.n
            raise self.error(EOF_STRING)
        self.i = i + 4
        digits = self.s[i:i + 4]
        if not all(b in _HEX for b in digits):
            raise self.error(INVALID_ESCAPE)
        return int(digits, 16)

    def parse_str(self) -> str:
        """``parse_str`` (the opening quote eaten), validating escapes as for a ``String``."""
        s, n = self.s, self.n
        i = self.i
        j = _PLAIN.match(s, i).end()
        if j < n and s[j] == _QUOTE:
            self.i = j + 1
            return s[i:j].decode("utf-8")
        parts = []
        while True:
            j = _PLAIN.match(s, i).end()
            if j >= n:
                self.i = n
                raise self.error(EOF_STRING)
            parts.append(s[i:j].decode("utf-8"))
            c = s[j]
            if c == _QUOTE:
                self.i = j + 1
                return "".join(parts)
            if c != 0x5C:
                self.i = j + 1
                raise self.error(CONTROL_CHARACTER)
            self.i = j + 1
            parts.append(self._escape())
            i = self.i

    def _escape(self) -> str:
        """``parse_escape`` after the backslash, with ``\\u`` surrogates paired."""
        if self.i >= self.n:
            raise self.error(EOF_STRING)
        c = self.s[self.i]
        self.i += 1
        if c in _ESCAPES:
            return _ESCAPES[c]
        if c != 0x75:  # 'u'
            raise self.error(INVALID_ESCAPE)
        cp = self._hex4()
        if 0xDC00 <= cp <= 0xDFFF:
            raise self.error(LONE_LEADING_SURROGATE)
        if not 0xD800 <= cp <= 0xDBFF:
            return chr(cp)
        for expected in (0x5C, 0x75):  # the trailing surrogate's backslash and 'u'
            if self.i >= self.n:
                raise self.error(EOF_STRING)
            c = self.s[self.i]
            self.i += 1
            if c != expected:
                raise self.error(UNEXPECTED_END_OF_HEX_ESCAPE)
        low = self._hex4()
        if not 0xDC00 <= low <= 0xDFFF:
            raise self.error(LONE_LEADING_SURROGATE)
        return chr(0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00))

    def ignore_str(self) -> None:
        """``ignore_str``: as ``parse_str`` but keeps nothing, pairs no surrogates, and
        reports a control character *at* (not after) its byte."""
        s, n = self.s, self.n
        while True:
            j = _PLAIN.match(s, self.i).end()
            if j >= n:
                self.i = n
                raise self.error(EOF_STRING)
            c = s[j]
            if c == _QUOTE:
                self.i = j + 1
                return
            if c != 0x5C:
                self.i = j
                raise self.error(CONTROL_CHARACTER)
            self.i = j + 1
            if self.i >= n:
                raise self.error(EOF_STRING)
            c = s[self.i]
            self.i += 1
            if c == 0x75:
                self._hex4()
            elif c not in _ESCAPES:
                raise self.error(INVALID_ESCAPE)

    def ignore_number(self) -> None:
        """``ignore_integer`` and friends: the syntax of a number, no range check."""
        s, n = self.s, self.n
        c = s[self.i] if self.i < n else 0
        self.i += 1
        if c == 0x30:
            if self.i < n and 0x30 <= s[self.i] <= 0x39:
                raise self.peek_error(INVALID_NUMBER)
        elif 0x31 <= c <= 0x39:
            self.i = _DIGITS.match(s, self.i).end()
        else:
            self.i = min(self.i, n)
            raise self.error(INVALID_NUMBER)
        if self.i < n and s[self.i] == 0x2E:
            self.i += 1
            j = _DIGITS.match(s, self.i).end()
            if j == self.i:
                raise self.peek_error(INVALID_NUMBER)
            self.i = j
        if self.i < n and (s[self.i] == 0x65 or s[self.i] == 0x45):
            self.i += 1
            if self.i < n and (s[self.i] == 0x2B or s[self.i] == 0x2D):
                self.i += 1
            c = s[self.i] if self.i < n else 0
            self.i = min(self.i + 1, n)
            if not 0x30 <= c <= 0x39:
                raise self.error(INVALID_NUMBER)
            self.i = _DIGITS.match(s, self.i).end()

    # -- containers -----------------------------------------------------------------------

    def seq_next(self, first: bool) -> bool:
        """``SeqAccess::next_element_seed`` up to the element: is there one more?"""
        c = self.ws()
        if c == _RBRACKET:
            return False
        if c == _COMMA and not first:
            self.i += 1
            c = self.ws()
        elif c < 0:
            raise self.peek_error(EOF_LIST)
        elif not first:
            raise self.peek_error(EXPECTED_LIST_COMMA_OR_END)
        if c == _RBRACKET:
            raise self.peek_error(TRAILING_COMMA)
        if c < 0:
            raise self.peek_error(EOF_VALUE)
        return True

    def end_seq(self) -> None:
        """``end_seq``: the closing bracket (a comma found here is eaten first)."""
        c = self.ws()
        if c == _RBRACKET:
            self.i += 1
            return
        if c == _COMMA:
            self.i += 1
            c = self.ws()
            raise self.peek_error(TRAILING_COMMA if c == _RBRACKET else TRAILING_CHARACTERS)
        raise self.peek_error(TRAILING_CHARACTERS if c >= 0 else EOF_LIST)

    def map_key(self, first: bool) -> str | None:
        """``MapAccess::next_key_seed`` with a string key: the key, or ``None`` at ``}``."""
        c = self.ws()
        if c == _RBRACE:
            return None
        if c == _COMMA and not first:
            self.i += 1
            c = self.ws()
        elif c < 0:
            raise self.peek_error(EOF_OBJECT)
        elif not first:
            raise self.peek_error(EXPECTED_OBJECT_COMMA_OR_END)
        if c == _QUOTE:
            self.i += 1
            return self.parse_str()
        if c == _RBRACE:
            raise self.peek_error(TRAILING_COMMA)
        raise self.peek_error(KEY_MUST_BE_A_STRING if c >= 0 else EOF_VALUE)

    def colon(self) -> None:
        """``parse_object_colon``."""
        c = self.ws()
        if c == _COLON:
            self.i += 1
            return
        raise self.peek_error(EXPECTED_COLON if c >= 0 else EOF_OBJECT)

    def end_map(self) -> None:
        """``end_map``: the closing brace."""
        c = self.ws()
        if c == _RBRACE:
            self.i += 1
            return
        if c == _COMMA:
            raise self.peek_error(TRAILING_COMMA)
        raise self.peek_error(TRAILING_CHARACTERS if c >= 0 else EOF_OBJECT)

    def close(self, closer) -> None:
        """After a visitor failed: serde_json still runs ``end_seq``/``end_map`` (whose own
        error is dropped), and what it eats moves the position of the visitor's error."""
        try:
            closer()
        except DeError:
            pass

    # -- whole values ---------------------------------------------------------------------

    def ignore_value(self) -> None:
        """``deserialize_ignored_any`` (``ignore_value``): iterative, no depth limit."""
        stack = bytearray()
        enclosing = None
        s = self.s
        while True:
            c = self.ws()
            if c < 0:
                raise self.peek_error(EOF_VALUE)
            frame = None
            if c == 0x6E:
                self.i += 1
                self.parse_ident(b"ull")
            elif c == 0x74:
                self.i += 1
                self.parse_ident(b"rue")
            elif c == 0x66:
                self.i += 1
                self.parse_ident(b"alse")
            elif c == _MINUS:
                self.i += 1
                self.ignore_number()
            elif 0x30 <= c <= 0x39:
                self.ignore_number()
            elif c == _QUOTE:
                self.i += 1
                self.ignore_str()
            elif c == _LBRACKET or c == _LBRACE:
                if enclosing is not None:
                    stack.append(enclosing)
                    enclosing = None
                self.i += 1
                frame = c
            else:
                raise self.peek_error(EXPECTED_VALUE)
            if frame is not None:
                accept_comma = False
            elif enclosing is not None:
                accept_comma, frame, enclosing = True, enclosing, None
            elif stack:
                accept_comma, frame = True, stack.pop()
            else:
                return
            while True:
                c = self.ws()
                if c == _COMMA and accept_comma:
                    self.i += 1
                    break
                if (c == _RBRACKET and frame == _LBRACKET) or (c == _RBRACE and frame == _LBRACE):
                    pass
                elif c >= 0:
                    if accept_comma:
                        raise self.peek_error(EXPECTED_LIST_COMMA_OR_END if frame == _LBRACKET
                                              else EXPECTED_OBJECT_COMMA_OR_END)
                    break
                else:
                    raise self.peek_error(EOF_LIST if frame == _LBRACKET else EOF_OBJECT)
                self.i += 1
                if not stack:
                    return
                frame = stack.pop()
                accept_comma = True
            if frame == _LBRACE:
                c = self.ws()
                if c == _QUOTE:
                    self.i += 1
                elif c >= 0:
                    raise self.peek_error(KEY_MUST_BE_A_STRING)
                else:
                    raise self.peek_error(EOF_OBJECT)
                self.ignore_str()
                c = self.ws()
                if c == _COLON:
                    self.i += 1
                elif c >= 0:
                    raise self.peek_error(EXPECTED_COLON)
                else:
                    raise self.peek_error(EOF_OBJECT)
            enclosing = frame

    def any_value(self):
        """``deserialize_any`` into serde's ``Content`` (what an untagged enum buffers):
        ``("num", float)``, ``("str", text)`` or ``("other", None)``."""
        c = self.ws()
        if c < 0:
            raise self.peek_error(EOF_VALUE)
        try:
            if c == 0x6E:
                self.i += 1
                self.parse_ident(b"ull")
            elif c == 0x74:
                self.i += 1
                self.parse_ident(b"rue")
            elif c == 0x66:
                self.i += 1
                self.parse_ident(b"alse")
            elif c == _MINUS:
                self.i += 1
                return "num", float(self.parse_number(False)[1])
            elif 0x30 <= c <= 0x39:
                return "num", float(self.parse_number(True)[1])
            elif c == _QUOTE:
                self.i += 1
                return "str", self.parse_str()
            elif c == _LBRACKET:
                self.enter()
                self.i += 1
                try:
                    first = True
                    while self.seq_next(first):
                        first = False
                        self.any_value()
                except DeError:
                    self.depth += 1
                    self.close(self.end_seq)
                    raise
                self.depth += 1
                self.end_seq()
            elif c == _LBRACE:
                self.enter()
                self.i += 1
                try:
                    first = True
                    while self.map_key(first) is not None:
                        first = False
                        self.colon()
                        self.any_value()
                except DeError:
                    self.depth += 1
                    self.close(self.end_map)
                    raise
                self.depth += 1
                self.end_map()
            else:
                raise self.peek_error(EXPECTED_VALUE)
        except DeError as e:
            if e.pos is None:
                e.pos = self.i
            raise
        return "other", None

    def invalid_type(self, expected: str) -> DeError:
        """``peek_invalid_type``: consume the scalar that is there and say what it is."""
        c = self.s[self.i] if self.i < self.n else 0
        if c == 0x6E:
            self.i += 1
            self.parse_ident(b"ull")
            what = "null"
        elif c == 0x74:
            self.i += 1
            self.parse_ident(b"rue")
            what = "boolean `true`"
        elif c == 0x66:
            self.i += 1
            self.parse_ident(b"alse")
            what = "boolean `false`"
        elif c == _MINUS:
            self.i += 1
            what = _number_text(self.parse_number(False))
        elif 0x30 <= c <= 0x39:
            what = _number_text(self.parse_number(True))
        elif c == _QUOTE:
            self.i += 1
            what = "string " + rust_debug(self.parse_str())
        elif c == _LBRACKET:
            what = "sequence"
        elif c == _LBRACE:
            what = "map"
        else:
            return self.peek_error(EXPECTED_VALUE)
        return DeError(f"invalid type: {what}, expected {expected}", self.i)


def _number_text(number) -> str:
    """serde's ``Unexpected`` for a parsed number, as serde_json displays it."""
    kind, v = number
    if kind == "f":
        return f"floating point `{fmt_float(v)}`"
    return f"integer `{v}`"


# Grapheme_Extend code points outside the Mn/Me categories (Rust escapes them in Debug).
_GRAPHEME_EXTEND_EXTRA = frozenset(
    [0x200C, 0x09BE, 0x09D7, 0x0B3E, 0x0B57, 0x0BBE, 0x0BD7, 0x0CC2, 0x0CD5, 0x0CD6, 0x0D3E,
     0x0D57, 0x0DCF, 0x0DDF, 0x1B35, 0x302E, 0x302F, 0xFF9E, 0xFF9F, 0x1133E, 0x11357,
     0x114B0, 0x114BD, 0x115AF, 0x11930, 0x1D165]
    + list(range(0x1D16E, 0x1D173)) + list(range(0x1F3FB, 0x1F400)))
_DEBUG_ESCAPES = {"\0": "\\0", "\t": "\\t", "\r": "\\r", "\n": "\\n", "\\": "\\\\", '"': '\\"'}


def rust_debug(text: str) -> str:
    """Rust's ``{:?}`` of a string (serde's ``Unexpected::Str``): quoted, with ``\\n``-style
    escapes and ``\\u{..}`` for what Rust deems unprintable or grapheme-extending."""
    out = ['"']
    for ch in text:
        if ch in _DEBUG_ESCAPES:
            out.append(_DEBUG_ESCAPES[ch])
        elif " " <= ch <= "~":
            out.append(ch)
        else:
            cat = unicodedata.category(ch)
            if (cat in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs", "Mn", "Me")
                    or ord(ch) in _GRAPHEME_EXTEND_EXTRA):
                out.append("\\u{%x}" % ord(ch))
            else:
                out.append(ch)
    out.append('"')
    return "".join(out)


def one_of(names) -> str:
    """serde's ``OneOf``: how an unknown variant's alternatives are listed."""
    if len(names) == 1:
        return f"`{names[0]}`"
    if len(names) == 2:
        return f"`{names[0]}` or `{names[1]}`"
    return "one of " + ", ".join(f"`{x}`" for x in names)


# ---------------------------------------------------------------------------------------
# type descriptors: each ``read`` is a ``Deserialize::deserialize`` on the reader


def _fix(r: Reader, e: DeError) -> None:
    """``fix_position``: give a positionless error the reader's current index."""
    if e.pos is None:
        e.pos = r.i


class UInt:
    """An unsigned integer field (``u32``, ``u64``, ``usize``) via ``deserialize_number``."""

    def __init__(self, name: str, maximum: int):
        self.name = name
        self.maximum = maximum

    def read(self, r: Reader):
        c = r.ws()
        if c < 0:
            raise r.peek_error(EOF_VALUE)
        try:
            if c == _MINUS:
                r.i += 1
                kind, v = r.parse_number(False)
            elif 0x30 <= c <= 0x39:
                kind, v = r.parse_number(True)
            else:
                raise r.invalid_type(self.name)
            if kind == "u" and v <= self.maximum:
                return v
            if kind == "f":
                raise DeError(f"invalid type: floating point `{fmt_float(v)}`, "
                              f"expected {self.name}")
            raise DeError(f"invalid value: integer `{v}`, expected {self.name}")
        except DeError as e:
            _fix(r, e)
            raise


class F64:
    """A plain ``f64`` field: any JSON number, integers included."""

    def read(self, r: Reader):
        c = r.ws()
        if c < 0:
            raise r.peek_error(EOF_VALUE)
        try:
            if c == _MINUS:
                r.i += 1
                return float(r.parse_number(False)[1])
            if 0x30 <= c <= 0x39:
                return float(r.parse_number(True)[1])
            raise r.invalid_type("f64")
        except DeError as e:
            _fix(r, e)
            raise


class Bool:
    """A ``bool`` field."""

    def read(self, r: Reader):
        c = r.ws()
        if c < 0:
            raise r.peek_error(EOF_VALUE)
        try:
            if c == 0x74:
                r.i += 1
                r.parse_ident(b"rue")
                return True
            if c == 0x66:
                r.i += 1
                r.parse_ident(b"alse")
                return False
            raise r.invalid_type("a boolean")
        except DeError as e:
            _fix(r, e)
            raise


class Str:
    """A ``String`` field."""

    def read(self, r: Reader):
        c = r.ws()
        if c < 0:
            raise r.peek_error(EOF_VALUE)
        try:
            if c == _QUOTE:
                r.i += 1
                return r.parse_str()
            raise r.invalid_type("a string")
        except DeError as e:
            _fix(r, e)
            raise


class Opt:
    """``Option<T>``: ``null`` is ``None``; anything else is read as ``T``."""

    def __init__(self, inner):
        self.inner = inner

    def read(self, r: Reader):
        if r.ws() == 0x6E:
            r.i += 1
            r.parse_ident(b"ull")
            return None
        return self.inner.read(r)


class Real:
    """The reference's ``real`` adapter: a number, or the strings ``"inf"``/``"-inf"``,
    through an untagged enum (so the whole value is parsed before it is judged)."""

    def read(self, r: Reader):
        kind, v = r.any_value()
        if kind == "num":
            return v
        if kind == "str":
            if v == "inf":
                return math.inf
            if v == "-inf":
                return -math.inf
            raise DeError(f'expected a number, "inf" or "-inf", found "{v}"')
        raise DeError("data did not match any variant of untagged enum Real")


def _read_seq(r: Reader, expected: str, visit):
    """``deserialize_seq``: an array handed to ``visit``, or an invalid type."""
    c = r.ws()
    if c < 0:
        raise r.peek_error(EOF_VALUE)
    try:
        if c != _LBRACKET:
            raise r.invalid_type(expected)
        r.enter()
        r.i += 1
        try:
            value = visit(r)
        except DeError:
            r.depth += 1
            r.close(r.end_seq)
            raise
        r.depth += 1
        r.end_seq()
        return value
    except DeError as e:
        _fix(r, e)
        raise


class Seq:
    """``Vec<T>``, as a tuple."""

    def __init__(self, inner):
        self.inner = inner

    def _visit(self, r: Reader):
        out = []
        read = self.inner.read
        first = True
        while r.seq_next(first):
            first = False
            out.append(read(r))
        return tuple(out)

    def read(self, r: Reader):
        return _read_seq(r, "a sequence", self._visit)


class Tuple:
    """A Rust tuple ``(A, B, ...)`` or a tuple variant's fields: an array of exactly that
    many elements (extra ones are serde_json's trailing characters). ``build`` makes the
    value from the elements (default: a tuple); ``expected`` names a tuple variant."""

    def __init__(self, items, build=None, expected=None):
        self.items = items
        self.build = build
        self.expected = expected or f"a tuple of size {len(items)}"
        self.length = (f"{expected} with {len(items)} elements" if expected
                       else self.expected)

    def _visit(self, r: Reader):
        values = []
        for k, item in enumerate(self.items):
            if not r.seq_next(k == 0):
                raise DeError(f"invalid length {k}, expected {self.length}")
            values.append(item.read(r))
        return tuple(values) if self.build is None else self.build(*values)

    def read(self, r: Reader):
        return _read_seq(r, self.expected, self._visit)


MISSING = object()
NO_DEFAULT = object()  # a required field (serde's missing field error)


class Struct:
    """A derived struct (or struct variant): a JSON object by field name -- unknown keys
    ignored, duplicates refused, absent options ``None`` -- or, serde's quirk, an array of
    the fields in order."""

    def __init__(self, expected: str, fields, build):
        # fields: (name, type, default[, seq_default]). ``default`` is NO_DEFAULT for a
        # required field, else what an absent key gives (``None`` for an ``Option``);
        # ``seq_default`` (``#[serde(default)]`` fields only) lets an array stop before it.
        self.expected = expected
        self.names = [f[0] for f in fields]
        self.types = [f[1] for f in fields]
        self.defaults = [f[2] for f in fields]
        self.seq_defaults = [f[3] if len(f) > 3 else False for f in fields]
        self.index = {name: k for k, name in enumerate(self.names)}
        self.length = f"{expected} with {len(fields)} element{'' if len(fields) == 1 else 's'}"
        self.build = build

    def _visit_map(self, r: Reader):
        values = [MISSING] * len(self.names)
        first = True
        index, types = self.index, self.types
        while True:
            key = r.map_key(first)
            if key is None:
                break
            first = False
            k = index.get(key)
            if k is None:
                r.colon()
                r.ignore_value()
                continue
            if values[k] is not MISSING:
                raise DeError(f"duplicate field `{key}`")
            r.colon()
            values[k] = types[k].read(r)
        for k, v in enumerate(values):
            if v is MISSING:
                if self.defaults[k] is NO_DEFAULT:
                    raise DeError(f"missing field `{self.names[k]}`")
                values[k] = self.defaults[k]
        return self.build(*values)

    def _visit_seq(self, r: Reader):
        values = []
        for k, item in enumerate(self.types):
            if r.seq_next(k == 0):
                values.append(item.read(r))
            elif self.seq_defaults[k]:
                values.append(self.defaults[k])
            else:
                raise DeError(f"invalid length {k}, expected {self.length}")
        return self.build(*values)

    def read(self, r: Reader):
        c = r.ws()
        if c < 0:
            raise r.peek_error(EOF_VALUE)
        try:
            if c == _LBRACE:
                visit, closer = self._visit_map, r.end_map
            elif c == _LBRACKET:
                visit, closer = self._visit_seq, r.end_seq
            else:
                raise r.invalid_type(self.expected)
            r.enter()
            r.i += 1
            try:
                value = visit(r)
            except DeError:
                r.depth += 1
                r.close(closer)
                raise
            r.depth += 1
            closer()
            return value
        except DeError as e:
            _fix(r, e)
            raise


class Enum:
    """A derived externally tagged enum. ``variants``: ``(name, payload, build[, kind])``
    where the payload is ``None`` for a unit variant (``"Name"`` or ``{"Name": null}``), else
    the type read after the key and handed to ``build``; ``kind`` is ``"newtype variant"``
    (the default), ``"tuple variant"`` or ``"struct variant"``, for the message given when
    a bare string names a variant that has a payload."""

    def __init__(self, variants):
        self.names = [v[0] for v in variants]
        self.variants = {v[0]: (v[1], v[2]) for v in variants}
        self.kinds = {v[0]: v[3] if len(v) > 3 else "newtype variant" for v in variants}
        self.unknown = one_of(self.names)
        # unit variants read from a bare string are the common case: prebuilt values
        self.units = {v[0]: v[2]() for v in variants if v[1] is None}

    def _variant(self, r: Reader):
        """The variant name: ``deserialize_identifier`` (a string) and the derived
        identifier visitor (unknown names refused)."""
        c = r.ws()
        if c < 0:
            raise r.peek_error(EOF_VALUE)
        try:
            if c != _QUOTE:
                raise r.invalid_type("variant identifier")
            r.i += 1
            name = r.parse_str()
            if name not in self.variants:
                raise DeError(f"unknown variant `{name}`, expected {self.unknown}")
            return name
        except DeError as e:
            _fix(r, e)
            raise

    def read(self, r: Reader):
        c = r.ws()
        if c == _QUOTE:
            name = self._variant(r)
            unit = self.units.get(name)
            if unit is not None:
                return unit
            raise DeError(f"invalid type: unit variant, expected {self.kinds[name]}")
        if c == _LBRACE:
            r.enter()
            r.i += 1
            try:
                c = r.ws()
                if c != _QUOTE:  # the variant is read as an object key
                    raise r.peek_error(EXPECTED_VALUE if c == _RBRACE else
                                       KEY_MUST_BE_A_STRING if c >= 0 else EOF_OBJECT)
                name = self._variant(r)
                r.colon()
                payload, build = self.variants[name]
                if payload is None:
                    _read_unit(r)
                    value = self.units[name]
                else:
                    value = build(payload.read(r))
            finally:
                r.depth += 1
            c = r.ws()
            if c == _RBRACE:
                r.i += 1
                return value
            raise r.error(EXPECTED_VALUE if c >= 0 else EOF_OBJECT)
        raise r.peek_error(EOF_VALUE if c < 0 else EXPECTED_VALUE)


def _read_unit(r: Reader) -> None:
    """``deserialize_unit``: the ``null`` of ``{"End": null}``."""
    c = r.ws()
    if c < 0:
        raise r.peek_error(EOF_VALUE)
    try:
        if c != 0x6E:
            raise r.invalid_type("unit")
        r.i += 1
        r.parse_ident(b"ull")
    except DeError as e:
        _fix(r, e)
        raise


def from_str(ty, data: bytes):
    """``serde_json::from_str``: the value, then nothing but whitespace."""
    r = Reader(data)
    try:
        value = ty.read(r)
        if r.ws() >= 0:
            raise r.peek_error(TRAILING_CHARACTERS)
    except DeError as e:
        _fix(r, e)
        line, column = r.position(e.pos)
        e.msg = f"{e.msg} at line {line} column {column}"
        raise
    return value
