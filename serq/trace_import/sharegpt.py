"""ShareGPT conversations (the default dataset of ``vllm bench serve`` and SGLang's bench).

A JSON array (or JSON lines) of conversations ``{"id": ..., "conversations": [{"from":
"human", "value": TEXT}, {"from": "gpt", "value": TEXT}, ...]}``; the OpenAI-style spelling
``{"messages": [{"role": "user", "content": TEXT}, ...]}`` is read too. Roles: ``human`` /
``user``; ``gpt`` / ``chatgpt`` / ``assistant`` / ``bard`` / ``bing`` / ``model``; ``system``.

What maps to what: one conversation is one session; each user message with the answer after
it is one turn (consecutive messages of one side are joined). ``new`` = the turn's whole
prompt — every earlier message of the conversation (system, user, assistant) plus this user
message, as a chat API resends them — ``out`` = the answer; ``think`` 0 (the file has no
times: the program's own `arrive` and think times apply); ``forced`` 0. A last user message
without an answer is dropped.

Token counts: ShareGPT holds text, and serq has no tokenizer (it needs numpy only). A text
of C characters counts as ``ceil(C / chars_per_token)`` tokens, ``chars_per_token`` = 4 by
default (the usual rule of thumb for English text under GPT-style BPE tokenizers); a
conversation in another language or a code-heavy one differs by a factor that
``--chars-per-token`` can adjust.
"""
from __future__ import annotations

import json
import math

from serq.trace_import import Request, TraceImportError, skip

USER = ("human", "user")
ASSISTANT = ("gpt", "chatgpt", "assistant", "bard", "bing", "model")
SYSTEM = ("system",)


def _documents(path):
    """``(line, object)`` for each conversation: the items of a top-level JSON array, with the
    line each starts on, or one object a line (JSON lines)."""
    from serq.files import open_text, os_error_text
    try:
        with open_text(path, encoding="utf-8-sig") as f:
            text = f.read()
    except OSError as e:
        raise TraceImportError(f"cannot read {path}: {os_error_text(e)}") from None
    except UnicodeDecodeError:
        raise TraceImportError(f"{path}: not a UTF-8 text file") from None
    decoder = json.JSONDecoder()
    i = _skip_space(text, 0)
    lines = _LineCounter(text)
    if i < len(text) and text[i] == "[":
        i = _skip_space(text, i + 1)
        if i < len(text) and text[i] == "]":
            return
        while True:
            start = i
            obj, i = _decode(decoder, text, i, path)
            yield lines.at(start), obj
            i = _skip_space(text, i)
            if i < len(text) and text[i] == ",":
                i = _skip_space(text, i + 1)
                continue
            if i < len(text) and text[i] == "]":
                return
            raise TraceImportError(f"{path}:{lines.at(i)}: invalid JSON: expected `,` or `]` "
                                   "after a conversation")
    while i < len(text):  # JSON lines
        start = i
        obj, i = _decode(decoder, text, i, path)
        yield lines.at(start), obj
        i = _skip_space(text, i)


def _decode(decoder, text, i, path):
    try:
        return decoder.raw_decode(text, i)
    except json.JSONDecodeError as e:
        raise TraceImportError(f"{path}:{e.lineno}:{e.colno}: invalid JSON: {e.msg}") from None


def _skip_space(text, i):
    n = len(text)
    while i < n and text[i] in " \t\r\n":
        i += 1
    return i


class _LineCounter:
    """Line numbers of increasing offsets, counted once."""
    def __init__(self, text):
        self.text = text
        self.pos = 0
        self.line = 1

    def at(self, i):
        if i < self.pos:  # (never happens: offsets only grow)
            self.pos, self.line = 0, 1
        self.line += self.text.count("\n", self.pos, i)
        self.pos = i
        return self.line


def _messages(path, lineno, conv):
    """The conversation's messages as ``(side, text)``, side 'u', 'a' or 's'."""
    if not isinstance(conv, dict):
        raise TraceImportError(f"{path}:{lineno}: expected a conversation object, found "
                               f"{type(conv).__name__}")
    msgs = conv.get("conversations", conv.get("messages"))
    if not isinstance(msgs, list):
        raise TraceImportError(f"{path}:{lineno}: the conversation has no `conversations` "
                               "list (nor `messages`)")
    out = []
    for k, m in enumerate(msgs, start=1):
        if not isinstance(m, dict):
            raise TraceImportError(f"{path}:{lineno}: message {k} is not an object")
        role = m.get("from", m.get("role"))
        text = m.get("value", m.get("content"))
        if not isinstance(role, str) or not isinstance(text, str):
            raise TraceImportError(f"{path}:{lineno}: message {k} needs a `from` (or `role`) "
                                   "and a text `value` (or `content`)")
        role = role.strip().lower()
        side = "u" if role in USER else "a" if role in ASSISTANT else "s" if role in SYSTEM \
            else None
        if side is None:
            raise TraceImportError(f"{path}:{lineno}: message {k}: unknown role `{role}`"
                                   f"\nhelp: roles are {', '.join(USER + ASSISTANT + SYSTEM)}")
        out.append((side, text))
    return out


def turns(messages, count):
    """``(prompt, answer)`` token counts of each answered user message."""
    result = []
    context = 0
    asked = None  # tokens of the pending user message(s)
    answer = None
    for side, text in messages + [("end", "")]:
        if answer is not None and side != "a":  # an answer is complete
            result.append((context + asked, answer))
            context += asked + answer
            asked = answer = None
        if side == "u":
            asked = (asked or 0) + count(text)
        elif side == "a":
            if asked is None:
                context += count(text)  # an assistant message before any question
            else:
                answer = (answer or 0) + count(text)
        elif side == "s":
            if asked is None:
                context += count(text)
            else:
                asked += count(text)
    return result, asked is not None


def read(path: str, window, stats, chars_per_token: float = 4.0):
    if not (chars_per_token > 0 and chars_per_token != math.inf):
        raise TraceImportError(f"--chars-per-token must be a positive number, got "
                               f"{chars_per_token}")
    if window.start is not None or window.end is not None:
        raise TraceImportError("ShareGPT conversations have no times: --start and --end do "
                               "not apply (use --limit)")

    def count(text):
        return math.ceil(len(text) / chars_per_token)

    for lineno, conv in _documents(path):
        if window.done(None):
            return
        stats["rows"] += 1
        pairs, unanswered = turns(_messages(path, lineno, conv), count)
        if unanswered and pairs:
            skip(stats, "unanswered last messages")
        if not pairs:
            skip(stats, "conversations without an answered message")
            continue
        if window.admits(None):
            for new, out in pairs:
                yield Request(lineno, None, new, out)
