"""`serq.compile`: source text (or a file) to a validated IR ``Program``.

The pipeline of language.md §0: lex, parse (with `use`, `def` expansion and the parse-time
sugar), assemble the session, the parser-level checks, link, lint, validate.
"""
from __future__ import annotations

import math
import operator
import os
import re

from serq.deep import deep
from serq.files import os_error_text, read_bytes
from serq.errors import CompileError, RangeError
from serq.ir import types as T
from serq.ir.validate import validate
from serq.ir.claims_check import check_claims
from serq.lang import ast as A
from serq.lang.diagnostics import Source, fail
from serq.lang.lexer import EOF, lex
from serq.lang.link import Linker
from serq.lang.parser import Parser
from serq.lang.walk import all_stmts, reads_name, stmt_exprs, sub_blocks
from serq.lang.words import CONTEXT, LIVE_FUNCTIONS

_IDENT = re.compile(r"[^\W\d]\w*\Z")


@deep
def compile(path=None, *, source=None, sets=None, defs=None, seed=None, horizon=None,
            warmup=None, arrivals=None, trace=None) -> T.Program:
    """Compile a serQ program given by ``path`` or as ``source`` text (pyserq's API)."""
    path, trace = check_arguments(path, source, sets, defs, seed, horizon, warmup, arrivals,
                                  trace)
    return _compile(path, source, sets, defs, seed, horizon, warmup, arrivals, trace)


def compile_view(path=None, *, source=None, sets=None, defs=None) -> T.Program:
    """The program compiled for its deployment view (``serq draw``; pyserq 0.1.3's
    ``load_drawn``): the session block is what one request runs — the `server` block when
    the workload's session says `request;`, else the session itself."""
    path, _ = check_arguments(path, source, sets, defs, None, None, None, None, None)
    return _compile(path, source, sets, defs, None, None, None, None, None, view=True)


def _compile(path, source, sets, defs, seed, horizon, warmup, arrivals, trace, view=False):
    if (path is None) == (source is None):
        raise CompileError("compile: give exactly one of `path` and `source=`")
    sets = dict(sets or {})
    defs = dict(defs or {})
    if path is not None:
        path = os.fspath(path)
        try:
            text = read_bytes(path).decode("utf-8")
        except OSError as e:
            raise CompileError(f"cannot read {path}: {os_error_text(e)}") from None
        except UnicodeDecodeError:
            raise CompileError(f"cannot read {path}: stream did not contain valid UTF-8") from None
        base_dir = os.path.dirname(path)
    else:
        text = source
        base_dir = None
    set_exprs = {name: set_value(name, v) for name, v in sets.items()}
    def_toks = {name: def_override(name, v) for name, v in defs.items()}
    toks = lex(Source(text))
    parser = Parser(toks, base_dir=base_dir, from_file=path is not None,
                    defs_override=def_toks, sets=set_exprs)
    parsed = parser.program()
    for name in defs:
        if name not in parser.defs:
            declared = sorted(d.name for d in parser.defs.values() if d.is_expr)
            raise CompileError(
                f"unknown --def `{name}`\nhelp: --def replaces the body of a declared "
                f"`def NAME(...) = expr;`; the program declares: "
                f"{', '.join(declared) if declared else 'none'}")
    session = assemble(parser, parsed, view)
    check_defs(parsed)
    check_hoisted(parsed, session)
    opts = {"seed": None if seed is None else int(seed),
            "horizon": None if horizon is None else float(horizon),
            "warmup": None if warmup is None else float(warmup),
            "arrivals": None if arrivals is None else int(arrivals),
            "trace": trace}
    linker = Linker(parsed, set_exprs, opts)
    linker.session = session
    prog = linker.link()
    try:
        validate(prog)
        if prog.version == T.IR_VERSION_CLAIMS:
            check_claims(prog)
    except ValueError as e:
        raise CompileError(str(e)) from None
    if base_dir is not None and trace is None:  # the trace= argument is read from the cwd
        object.__setattr__(prog, "base_dir", base_dir)
    return prog


# -- keyword arguments: converted as the reference's bindings do, in signature order ------

def _type(x):
    return type(x).__name__


def _pathlike(name, x):
    if x is None:
        return None
    if isinstance(x, bytes) and name == "trace":
        raise TypeError(f"argument '{name}': 'bytes' object cannot be converted to 'PyString'")
    try:
        return os.fspath(x)
    except TypeError as e:
        raise TypeError(f"argument '{name}': {e}") from None


def _string(name, x):
    if not isinstance(x, str):
        raise TypeError(f"argument '{name}': '{_type(x)}' object cannot be converted to "
                        f"'PyString'")


def _real(x):
    return hasattr(type(x), "__float__") or hasattr(type(x), "__index__")


def _too_big(x) -> bool:
    """A number (an int) too large for an f64."""
    try:
        float(x)
    except OverflowError:
        return True
    except (TypeError, ValueError):
        return False
    return False


def _u64(name, x):
    if x is None:
        return
    if isinstance(x, float) or not hasattr(type(x), "__index__"):
        raise TypeError(f"argument '{name}': '{_type(x)}' object cannot be interpreted as an "
                        f"integer")
    v = operator.index(x)
    if not 0 <= v < 2 ** 64:
        raise RangeError(f"argument '{name}': expected an integer from 0 to 2^64-1, got "
                         f"{_shown_int(v)}")


def _shown_int(v: int) -> str:
    text = str(v)
    return text if len(text) <= 40 else f"an integer of {len(text.lstrip('-'))} digits"


def _f64(name, x):
    if x is None:
        return
    if not _real(x):
        raise TypeError(f"argument '{name}': must be real number, not {_type(x)}")
    try:
        float(x)
    except OverflowError:
        raise RangeError(f"argument '{name}': {_shown_int(operator.index(x))} is too large "
                         f"for a float (at most about 1.8e308)") from None


def check_arguments(path, source, sets, defs, seed, horizon, warmup, arrivals, trace):
    path = _pathlike("path", path)
    if source is not None:
        _string("source", source)
    for name, table in (("sets", sets), ("defs", defs)):
        if table is None:
            continue
        if not isinstance(table, dict):
            raise TypeError(f"argument '{name}': '{_type(table)}' object cannot be converted "
                            f"to 'PyDict'")
        for k, v in table.items():
            _string(name, k)
            if name == "defs":
                _string(name, v)
            elif _real(v) and not isinstance(v, str) and _too_big(v):
                raise TypeError(  # pyserq 0.1.2's text, word for word
                    f"argument 'sets': failed to extract enum SetValue ('Num | Expr')\n"
                    f"- variant Num (Num): TypeError: failed to extract field SetValue::Num.0, "
                    f"caused by OverflowError: int too large to convert to float\n"
                    f"- variant Expr (Expr): TypeError: failed to extract field "
                    f"SetValue::Expr.0, caused by TypeError: '{_type(v)}' object cannot be "
                    f"converted to 'PyString'")
            elif not (_real(v) or isinstance(v, str)):
                t = _type(v)
                raise TypeError(
                    f"argument 'sets': failed to extract enum SetValue ('Num | Expr')\n"
                    f"- variant Num (Num): TypeError: failed to extract field SetValue::Num.0, "
                    f"caused by TypeError: must be real number, not {t}\n"
                    f"- variant Expr (Expr): TypeError: failed to extract field "
                    f"SetValue::Expr.0, caused by TypeError: '{t}' object cannot be converted "
                    f"to 'PyString'")
    _u64("seed", seed)
    _f64("horizon", horizon)
    _f64("warmup", warmup)
    _u64("arrivals", arrivals)
    trace = _pathlike("trace", trace)
    return path, trace


def set_value(name, v):
    """A `sets` value: a number used exactly, or a string parsed as an expression."""
    if not isinstance(name, str) or not _IDENT.match(name):
        raise CompileError(f"invalid set name `{name}`; expected an identifier")
    if isinstance(v, (bool, int, float)):
        return float(v)
    text = str(v)
    return parse_expression(text, f"invalid expression in set `{name} = {text}`")


def def_override(name, v):
    text = str(v)
    parse_expression(text, f"invalid expression in --def `{name} = {text}`")
    return lex(Source(text))


def parse_expression(text, context):
    try:
        p = Parser(lex(Source(text)))
        e = p.expr()
        if not p.at(EOF):
            t = p.peek()
            from serq.lang.lexer import describe
            fail(f"expected Eof, found {describe(t)}", t.pos)
        return e
    except CompileError as err:
        pos = getattr(err, "pos", None)
        where = f"{pos.line}:{pos.col}: " if pos is not None else ""
        raise CompileError(f"{context}: {where}{getattr(err, 'bare', str(err))}") from None


# ---------------------------------------------------------------------------------------
# assembly: one session statement list


def assemble(parser, parsed, view=False):
    from serq.lang.queue_decl import expand_calls, gateway_of
    w = parsed.workload
    wl_session = w.session if w is not None else None
    server = parsed.server
    requests = ([s for s in all_stmts(wl_session) if type(s) is A.RequestS]
                if wl_session is not None else [])
    for s in requests:  # the gateways first, as the reference
        if s.gateway is not None:
            gateway_of(parser, s)
    if server is None and any(s.gateway is None for s in requests):
        fail("`request;` needs a `server` block; name a gateway with `request NAME;`",
             next(s for s in requests if s.gateway is None).pos)
    if wl_session is not None and parsed.session is not None:
        fail("a program has one session: inside `workload` or at top level, not both",
             parsed.eof)
    if server is not None and wl_session is None:
        fail("`server` needs a `session` inside `workload` that says `request;`", server[1])
    if wl_session is not None:
        bare = [s for s in requests if s.gateway is None]
        if not requests and server is None:
            fail("a `session` inside `workload` is written against a `server` block; name a "
                 "gateway with `request NAME;`, or write `session` at top level",
                 w.session_pos)
        if server is not None and not bare:
            fail("`server` is never requested: the workload's session has no `request;`",
                 server[1])
    if parser.deferred is not None:  # the first def use reading a live value
        raise parser.deferred
    for blk in (w.init if w else None, w.turn if w else None):
        if blk:
            expand_calls(parser, blk)
    if wl_session is None:
        session = parsed.session[0] if parsed.session is not None else []
        expand_calls(parser, session)
        return session
    if server is not None:
        expand_calls(parser, server[0])
    expand_calls(parser, wl_session)
    if view:  # what one request runs: the server, or the first gateway's route, after
        # the client's `set`s (so that the attributes it reads are known; they draw nothing)
        sets = [s for s in all_stmts(wl_session) if type(s) is A.SetS]
        if server is not None:
            return sets + list(server[0])
        return sets + splice(parser, [requests[0]], [])
    return splice(parser, wl_session, server[0] if server else [])


def splice(parser, block, server):
    from serq.lang.queue_decl import route_of
    out = []
    for s in block:
        t = type(s)
        if t is A.RequestS:
            if s.gateway is None:
                out.extend(server)
            else:
                out.extend(route_of(parser, s))
            continue
        if t is A.HoldS or t is A.LoopS:
            s.body = splice(parser, s.body, server)
        elif t is A.BranchS:
            s.then = splice(parser, s.then, server)
            s.other = splice(parser, s.other, server)
        out.append(s)
    return out


# ---------------------------------------------------------------------------------------
# parser-level checks after assembly


def check_defs(parsed):
    pools = {d.name for d in parsed.pools}
    stages = {d.name for d in parsed.stages}
    lets = {d.name for d in parsed.lets}
    for d in parsed.defs.values():
        what = None
        if d.name in pools:
            what = "a pool"
        elif d.name in stages:
            what = "a stage"
        elif d.name in lets:
            what = "a `let` constant"
        if what:
            fail(f"`{d.name}` is defined, and is also {what}", d.pos)


def check_hoisted(parsed, session):
    if not parsed.hoisted:
        return
    w = parsed.workload
    blocks = [w.init if w and w.init else [], w.turn if w and w.turn else [], session]
    hoisted_sets = {id(s) for _, _, _, h in parsed.hoisted for s in h.body[:len(h.bindings)]}
    attrs = set()
    for b in blocks:
        for s in all_stmts(b):
            if type(s) in (A.SetS, A.ChooseS) and id(s) not in hoisted_sets:
                attrs.add(s.name)
    pools = {d.name for d in parsed.pools}
    stages = {d.name for d in parsed.stages}
    lets = {d.name for d in parsed.lets}
    for name, e, pos, h in parsed.hoisted:
        what = None
        if name in T.BUILTIN_ATTRS or name in attrs:
            what = "an attribute the program sets"
        elif name in CONTEXT or name == "inf":
            what = "a name the language supplies"
        elif name in pools:
            what = "a pool"
        elif name in stages:
            what = "a stage"
        elif name in lets:
            what = "a `let` constant"
        if what:
            fail(f"the body reads `{name}`, which is also {what}: the body would not say "
                 f"which it means", pos, extra=("help: rename the binding",))
        if reads_name(e, name):  # hoisted into the body, it would read itself
            fail(f"the binding `{name}` reads itself", pos)
        live = live_read(e)
        if live:
            help_ = ("help: in the body read `cached`, the units the admission consumed"
                     if live in ("`cached`", "`cachedin(…)`") else
                     "help: name what the body needs with a `set` in the body")
            fail(f"the body reads `{name}`, and `{name}` reads {live}: the body sees a "
                 f"binding that reads only attributes and constants", pos, extra=(help_,))
        for b in blocks:
            if reads_outside(b, name, h):
                fail(f"`{name}` is read outside the body of the hold that binds it", pos,
                     extra=("help: a header's binding is the header's and its body's; name "
                            "a value the rest of the program reads with `set`",))


def live_read(e):
    from serq.lang.walk import nodes
    for x in nodes(e):
        if type(x) is A.Name and (x.name == "cached" or x.name in CONTEXT):
            return f"`{x.name}`"
        if type(x) is A.Call and (x.name in LIVE_FUNCTIONS or x.name == "blocksize"):
            return f"`{x.name}(…)`"
    return None


def reads_outside(block, name, hold):
    for s in block:
        if s is hold:
            continue
        if any(reads_name(x, name) for x in stmt_exprs(s)):
            return True
        if type(s) is A.HoldS and name in s.bound:
            continue
        for b in sub_blocks(s):
            if reads_outside(b, name, hold):
                return True
    return False
