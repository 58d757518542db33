"""Queue declarations, pull relations, entry calls and gateway routes (language.md 4.11)."""
from __future__ import annotations

from serq.lang.diagnostics import fail


def parse_queue(p):
    t = p.peek()
    fail("queues are not supported yet", t.pos)


def parse_pull(p):
    t = p.peek()
    fail("pull relations are not supported yet", t.pos)


def parse_call(p, side, out):
    t = p.peek()
    fail("queue calls are not supported yet", t.pos)


def expand_calls(parser, block):
    return block


def route_of(parser, req):
    fail(f"`request {req.gateway}`: no queue `{req.gateway}` is declared", req.name_pos)


def dotted_unknown(e):
    fail(f"`{e.queue}.{e.member}`: no entry of `{e.queue}` marks or sets `{e.member}`, and "
         f"`{e.queue}` has no pool `{e.member}`", e.pos)
