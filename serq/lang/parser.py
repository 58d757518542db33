"""Tokens to a parse tree, with the reference's parse-time sugar.

The parser does more than build a tree, because the reference does these things while
parsing and their errors (and the IR) depend on it: `use` splices a library's tokens, a
`def` use is expanded token by token where it stands, serving forms pick the stage
declared *above* them, `at admission` bindings are substituted into the hold header, array
sizes are folded from the `let`s seen so far, and queue declarations add pools and stages.
"""
from __future__ import annotations

import math
import os

from serq.lang import ast as A
from serq.errors import CompileError
from serq.files import os_error_text, read_bytes
from serq.lang.diagnostics import Pos, Source, fail
from serq.lang.fold import FoldError, fold_const
from serq.lang.lexer import EOF, IDENT, NUM, STR, Token, describe, lex, show_f64
from serq.lang.words import (DISTS, FUNCTION_NAMES, KEYWORDS, LIVE_FUNCTIONS, RETIRED,
                             CONTEXT, retired_name)

MAX_EXPANSION = 100000
# top-level words that begin their own item even before `pull` (`run`, `share` do not)
PULL_NOT_AFTER = frozenset(("let", "def", "use", "pool", "stage", "queue", "workload",
                            "session", "server", "gauge", "claim"))
STATEMENT_WORDS = frozenset(("turn", "end", "request", "set", "observe", "hold", "grow",
                             "load", "drop", "release", "run", "branch", "loop", "choose",
                             "mark"))
OPEN = {"LParen": "RParen", "LBracket": "RBracket", "LBrace": "RBrace"}
CLOSE = {"RParen", "RBracket", "RBrace"}
CMP = {"Lt": "Lt", "Le": "Le", "Gt": "Gt", "Ge": "Ge", "EqEq": "Eq", "Ne": "Ne"}


class Def:
    __slots__ = ("name", "params", "body", "is_expr", "pos", "assigns", "holds",
                 "has_turn")

    def __init__(self, name, params, body, is_expr, pos):
        self.name = name
        self.params = params  # [(name, Pos)]
        self.body = body  # [Token]
        self.is_expr = is_expr
        self.pos = pos
        self.assigns = set()
        self.holds = False
        self.has_turn = False


class Workload:
    __slots__ = ("arrival", "trace", "ordered", "init", "turn", "session", "hidden",
                 "pos", "session_pos")

    def __init__(self, pos):
        self.pos = pos
        self.arrival = None  # (kind, expr, pos) or None
        self.trace = None
        self.ordered = False
        self.init = None
        self.turn = None
        self.session = None
        self.session_pos = None
        self.hidden = []  # [(name, pos)]


class Parsed:
    """Everything the linker needs from the text."""

    def __init__(self):
        self.lets = []  # [LetD]
        self.pools = []  # [PoolD]
        self.stages = []  # [StageD]
        self.gauges = []  # [GaugeD]
        self.workload = None
        self.server = None  # (stmts, pos)
        self.session = None  # top-level (stmts, pos)
        self.share = None  # ("MaxMin"|"Bottleneck", pos)
        self.run = {}  # key -> (expr, pos)
        self.defs = {}
        self.eof = None
        self.hoisted = []  # [(binding name, expr, pos, body stmts)]
        self.claims = []  # [ClaimD] (extension)


class Parser:
    def __init__(self, toks, *, base_dir=None, from_file=False, defs_override=None,
                 sets=None):
        self.toks = toks
        self.i = 0
        self.out = Parsed()
        self.base_dir = base_dir
        self.from_file = from_file
        self.used_files = set()
        self.defs_override = defs_override or {}
        self.sets = sets or {}
        self.let_values = {}  # name -> (value or None, set of lets read)
        self.expanded = 0
        self.in_entry = None  # the queue whose entry is being parsed
        self.deferred = None  # a CompileError raised after parsing
        self.queues = {}
        self.defs = {}
        from serq.lang import queues as Q
        self.Q = Q

    # -- tokens ---------------------------------------------------------------------------

    def peek(self, k=0) -> Token:
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else self.toks[-1]

    def next(self) -> Token:
        t = self.toks[self.i]
        if t.kind != EOF:
            self.i += 1
        return t

    def at(self, kind) -> bool:
        return self.toks[self.i].kind == kind

    def at_word(self, word) -> bool:
        t = self.toks[self.i]
        return t.kind == IDENT and t.val == word

    def accept(self, kind):
        if self.toks[self.i].kind == kind:
            return self.next()
        return None

    def accept_word(self, word):
        if self.at_word(word):
            return self.next()
        return None

    def expect(self, kind) -> Token:
        t = self.peek()
        if t.kind != kind:
            fail(f"expected {kind}, found {describe(t)}", t.pos)
        return self.next()

    def expect_ident(self) -> Token:
        t = self.peek()
        if t.kind != IDENT:
            fail(f"expected identifier, found {describe(t)}", t.pos)
        return self.next()

    def expect_word(self, word) -> Token:
        t = self.peek()
        if not t.is_word(word):
            fail(f"expected `{word}`, found {describe(t)}", t.pos)
        return self.next()

    def name_token(self) -> Token:
        """An identifier naming something new (a `let`, an attribute): no retired word."""
        t = self.expect_ident()
        if t.val in RETIRED:
            fail(retired_name(t.val), t.pos)
        return t

    # -- program --------------------------------------------------------------------------

    def program(self) -> Parsed:
        while not self.at(EOF):
            self.item()
        self.out.eof = self.peek().pos
        self.out.defs = self.defs
        return self.out

    def item(self):
        t = self.peek()
        if t.kind != IDENT:
            fail(f"unexpected {describe(t)} at top level", t.pos)
        if t.pos.src.prefix and t.val not in ("def", "use"):
            fail(f"a library holds definitions: found `{t.val}` where `def` or `use` goes",
                 t.pos)
        w = t.val
        if self.peek(1).is_word("pull") and w not in PULL_NOT_AFTER:
            return self.Q.pull_relation(self)
        handler = {
            "let": self.let_item, "def": self.def_item, "use": self.use_item,
            "pool": self.pool_item, "stage": self.stage_item, "queue": self.queue_item,
            "workload": self.workload_item, "session": self.session_item,
            "server": self.server_item, "share": self.share_item,
            "gauge": self.gauge_item, "run": self.run_item, "claim": self.claim_item,
        }.get(w)
        if handler is None:
            fail(f"unexpected `{w}` at top level", t.pos)
        handler()

    def let_item(self):
        self.next()
        name = self.name_token()
        self.expect("Assign")
        e = self.expr()
        self.expect("Semi")
        self.declare_let(A.LetD(name.val, e, name.pos))

    def declare_let(self, d):
        self.out.lets.append(d)
        reads = set()
        try:
            v = fold_const(d.expr, self.let_lookup(reads))
        except FoldError:
            v = None
        deps = set(reads)
        for r in reads:
            deps |= self.let_values.get(r, (None, set()))[1]
        self.let_values[d.name] = (v, deps)

    def let_lookup(self, reads):
        def look(name, pos=None):
            if name == "inf" and name not in self.let_values:
                return math.inf
            if name in self.let_values:
                reads.add(name)
                v = self.let_values[name][0]
                if v is None:
                    raise FoldError("not constant")
                return v
            raise FoldError("not constant")
        return look

    def array_size(self):
        """``[expr]`` after a pool, stage or queue name, folded now."""
        self.expect("LBracket")
        t = self.peek()
        e = self.expr()
        reads = set()
        try:
            v = fold_const(e, self.let_lookup(reads))
        except FoldError:
            fail("array size must be a positive integer or a `let` constant that is one",
                 t.pos)
        deps = set(reads)
        for r in reads:
            deps |= self.let_values[r][1]
        if deps & set(self.sets):
            name = next(n for n in self.sets if n in deps)
            fail(f"--set {name} affects an array size resolved during parsing", t.pos)
        if not (math.isfinite(v) and v >= 1 and v == math.floor(v)):
            fail(f"array size must be a positive integer, found {show_f64(v)}", t.pos)
        if v > 10000:
            fail(f"array size {show_f64(v)} is more than a family holds (10000): every "
                 f"member is a pool or stage of its own", t.pos)
        self.expect("RBracket")  # the reference folds the size before it looks for `]`
        return int(v)

    # -- def and use ----------------------------------------------------------------------

    def def_item(self):
        self.next()
        nt = self.expect_ident()
        name = nt.val
        if name in KEYWORDS or name in FUNCTION_NAMES or name in DISTS:
            fail(f"`{name}` is a word of the language", nt.pos)
        if name in RETIRED:
            fail(retired_name(name), nt.pos)
        if name in self.defs:
            fail(f"`{name}` is defined twice", nt.pos)
        for d in self.defs.values():
            if calls(d.body, name):
                fail(f"`{d.name}` uses `{name}`, which is defined after it: a definition "
                     f"uses the ones before it", nt.pos)
        self.expect("LParen")
        params = []
        while not self.at("RParen"):
            p = self.expect_ident()
            if p.val in RETIRED:
                fail(retired_name(p.val), p.pos)
            if p.val in KEYWORDS or p.val in FUNCTION_NAMES:
                fail(f"`{p.val}` is a word of the language: name the parameter otherwise",
                     p.pos)
            if any(p.val == q for q, _ in params):
                fail(f"`{p.val}` is a parameter twice", p.pos)
            params.append((p.val, p.pos))
            if not self.accept("Comma"):
                break
        self.expect("RParen")
        t = self.peek()
        if t.kind == "Assign":
            self.next()
            body = self.capture(nt, until_semi=True)
            if not body:
                fail(f"`def {name}` has no expression", nt.pos)
            is_expr = True
        elif t.kind == "LBrace":
            self.next()
            body = self.capture(nt, until_semi=False)
            is_expr = False
        else:
            fail(f"expected `= expression;` or `{{ statements }}` after `def {name}(…)`, "
                 f"found {describe(t)}", t.pos)
        if name in self.defs_override:
            if not is_expr:
                fail(f"--def {name}: `def {name}` is statements; --def replaces the body "
                     f"of an expression definition", nt.pos)
            body = [Token(x.kind, x.val, Pos(nt.pos.src, nt.pos.line, nt.pos.col,
                                             x.pos.length, nt.pos.uses))
                    for x in self.defs_override[name][:-1]]
        if calls(body, name):
            fail(f"`{name}` uses itself", nt.pos)
        d = Def(name, params, body, is_expr, nt.pos)
        self.scan_def_body(d)
        pnames = {p for p, _ in params}
        for k, x in enumerate(body):
            if x.kind != IDENT:
                continue
            prev = body[k - 1] if k else None
            nxt = body[k + 1] if k + 1 < len(body) else None
            # the reference's rule: a parameter right before `=`, or right after `choose`
            bound = (prev is not None and prev.is_word("choose") and x.val in pnames)
            bound = bound or (x.val in pnames and nxt is not None and nxt.kind == "Assign")
            bound = bound or (x.val in pnames and prev is not None and prev.kind == IDENT
                              and prev.val in ("sum", "min", "max") and nxt is not None
                              and nxt.is_word("in"))
            if bound:
                fail(f"`{x.val}` is a parameter, and the body names with it what it "
                     f"assigns or binds", nt.pos)
        self.defs[name] = d

    def scan_def_body(self, d):
        """What the body assigns (its `set`/`choose` names, binding names), and whether
        it holds or says `turn;`/`request;` — for the checks at each use."""
        b = d.body
        for k, x in enumerate(b):
            if x.kind != IDENT:
                continue
            # the reference's rule: a name right before `=` (not an `observe`'s), or
            # right after `choose`
            prev = b[k - 1] if k else None
            if k + 1 < len(b) and b[k + 1].kind == "Assign" and not (
                    prev is not None and prev.is_word("observe")):
                d.assigns.add(x.val)
            if prev is not None and prev.is_word("choose"):
                d.assigns.add(x.val)
            if x.val == "hold":
                d.holds = True
            elif x.val in ("turn", "request"):
                d.has_turn = True
        # binding names: `at admission ( NAME = ..., NAME = ... )`
        for k, x in enumerate(b):
            if x.is_word("at") and k + 2 < len(b) and b[k + 1].is_word("admission"):
                depth = 0
                for m in range(k + 2, len(b)):
                    y = b[m]
                    if y.kind in OPEN:
                        depth += 1
                    elif y.kind in CLOSE:
                        depth -= 1
                        if depth == 0:
                            break
                    elif (depth == 1 and y.kind == IDENT and m + 1 < len(b)
                          and b[m + 1].kind == "Assign"
                          and b[m - 1].kind in ("LParen", "Comma")):
                        d.assigns.add(y.val)
        if d.holds:
            d.assigns |= {"cached", "computed"}
        # and what the defs it uses assign, as the reference counts it: `s1(q)` is refused
        # at that use when `s1`'s body calls an `s0` that sets `q`
        for k, x in enumerate(b[:-1]):
            callee = self.defs.get(x.val) if x.kind == IDENT else None
            if callee is not None and b[k + 1].kind == "LParen":
                d.assigns |= callee.assigns

    def capture(self, nt, until_semi):
        """The raw tokens of a def body, up to `;` at depth 0 or the matching `}`."""
        depth = 0
        body = []
        while True:
            t = self.peek()
            if t.kind == EOF:
                fail(f"`def {nt.val}` is not closed", nt.pos)
            if t.kind in OPEN:
                depth += 1
            elif t.kind in CLOSE:
                if depth == 0:
                    if not until_semi and t.kind == "RBrace":
                        self.next()
                        return body
                    fail(f"unmatched {t.kind}", t.pos)
                depth -= 1
            elif t.kind == "Semi" and depth == 0 and until_semi:
                self.next()
                return body
            body.append(self.next())

    def use_item(self):
        ut = self.next()
        st = self.peek()
        if st.kind != STR:
            fail(f"expected string, found {describe(st)}", st.pos)
        self.next()
        self.expect("Semi")
        path = st.val
        if not self.from_file:
            fail(f'`use "{path}"` reads a file next to the program, and this program was '
                 f'given as text', ut.pos)
        here = os.path.dirname(ut.pos.src.prefix[:-1]) if ut.pos.src.prefix else self.base_dir
        shown = os.path.join(here, path) if here else path
        try:
            real = os.path.realpath(shown)
            if real in self.used_files:
                return
            text = read_bytes(shown).decode("utf-8")
        except OSError as e:
            fail(f"cannot read `{path}`: {os_error_text(e)}", ut.pos)
        except UnicodeDecodeError:
            fail(f"cannot read `{path}`: stream did not contain valid UTF-8", ut.pos)
        self.used_files.add(real)
        toks = lex(Source(text, shown + ":"))[:-1]
        self.toks[self.i:self.i] = toks

    # -- def expansion --------------------------------------------------------------------

    def call_args_tokens(self, start):
        """Split the tokens of ``NAME ( ... )`` at index start into argument runs."""
        toks = self.toks
        j = start + 2
        depth = 0
        args = [[]]
        while True:
            t = toks[j] if j < len(toks) else toks[-1]
            if t.kind == EOF:
                fail("the use of a definition is not closed", toks[start].pos)
            if t.kind in OPEN:
                depth += 1
            elif t.kind in CLOSE:
                if depth == 0:
                    if t.kind != "RParen":
                        fail(f"unmatched {t.kind}", t.pos)
                    break
                depth -= 1
            elif t.kind == "Comma" and depth == 0:
                args.append([])
                j += 1
                continue
            args[-1].append(t)
            j += 1
        if len(args) == 1 and not args[0]:
            args = []
        return args, j  # j: index of the closing paren

    def expand(self, d: Def, as_statement: bool):
        start = self.i
        nt = self.toks[start]
        use = (d.name, nt.pos)
        args, close = self.call_args_tokens(start)
        if len(args) != len(d.params):
            fail(f"`{d.name}` takes {len(d.params)} argument(s), got {len(args)}", nt.pos)
        for (pname, _), a in zip(d.params, args):
            if not a:
                fail(f"`{d.name}`: the argument for `{pname}` is empty", nt.pos)
        self.check_args(d, args, nt, as_statement)
        sub = {}
        for (pname, _), a in zip(d.params, args):
            # an argument's tokens are the expansion's too: errors in them name the use
            a = [Token(x.kind, x.val, Pos(x.pos.src, x.pos.line, x.pos.col, x.pos.length,
                                          x.pos.uses + (use,))) for x in a]
            if is_reference(a):
                sub[pname] = a
            else:
                sub[pname] = ([Token("LParen", "(", a[0].pos)] + a
                              + [Token("RParen", ")", a[-1].pos)])
        out = []
        for t in d.body:
            if t.kind == IDENT and t.val in sub:
                out.extend(sub[t.val])
            else:
                p = t.pos
                out.append(Token(t.kind, t.val, Pos(p.src, p.line, p.col, p.length,
                                                    p.uses + nt.pos.uses + (use,))))
        end = close + 1
        if d.is_expr:
            cp = self.toks[close].pos
            out = ([Token("LParen", "(", Pos(nt.pos.src, nt.pos.line, nt.pos.col, 1,
                                              nt.pos.uses + (use,)))] + out
                   + [Token("RParen", ")", Pos(cp.src, cp.line, cp.col, 1,
                                               cp.uses + (use,)))])
        else:
            semi = self.toks[end] if end < len(self.toks) else self.toks[-1]
            if semi.kind != "Semi":
                fail(f"expected `;` after `{d.name}(…)`, found {describe(semi)}", semi.pos)
            end += 1
        self.expanded += len(out)
        if self.expanded > MAX_EXPANSION:
            fail("the definitions expand to more than a program can hold", nt.pos)
        self.toks[start:end] = out

    def check_args(self, d, args, nt, as_statement):
        body_counts = {}
        for t in d.body:
            if t.kind == IDENT:
                body_counts[t.val] = body_counts.get(t.val, 0) + 1
        for (pname, _), a in zip(d.params, args):
            n = body_counts.get(pname, 0)
            if any(t.kind == "Tilde" for t in a) and n > 1:
                fail(f"the argument for `{pname}` draws, and `{d.name}` reads `{pname}` {n} "
                     f"times: it would draw {n} times", nt.pos,
                     extra=("help: `set` the draw first and pass the name",))
            for k, t in enumerate(a):
                if t.kind == IDENT and t.val in d.assigns:
                    nxt = a[k + 1] if k + 1 < len(a) else None
                    if nxt is not None and nxt.kind == "LParen":
                        continue
                    fail(f"the argument for `{pname}` reads `{t.val}`, which `{d.name}` "
                         f"assigns: it would read the body's `{t.val}`, not this one",
                         nt.pos, extra=("help: `set` the value under another name first and "
                                        "pass that; a key over a `choose` of the body is "
                                        "written where the `choose` is",))
            if as_statement:
                for k, t in enumerate(a):
                    if t.kind != IDENT:
                        continue
                    nxt = a[k + 1] if k + 1 < len(a) else None
                    prev = a[k - 1] if k else None
                    if prev is not None and prev.kind == "Tilde":
                        continue
                    if t.val in LIVE_FUNCTIONS and nxt is not None and nxt.kind == "LParen":
                        self.defer(f"the argument for `{pname}` of `{d.name}` reads `{t.val}(…)`, "
                             f"which changes while statements run: the body would read it "
                             f"where it reads the parameter, not here", nt.pos,
                             extra=(f"help: `set` the value first (`set t = {t.val}(…);`) "
                                    f"and pass the name",))
                    if t.val in CONTEXT and (nxt is None or nxt.kind != "LParen"):
                        # the reference names no enclosing def use for this one (probed
                        # with pyserq 0.1.2: tests/lang/test_reference_errors.py)
                        at = Pos(nt.pos.src, nt.pos.line, nt.pos.col, nt.pos.length)
                        self.defer(f"an argument of `{d.name}` reads `{t.val}`, which changes while "
                             f"statements run: the body would read it where it reads the "
                             f"parameter, not here", at,
                             extra=(f"help: `set` the value first (`set t = {t.val};`) and "
                                    f"pass the name",))

    def defer(self, message, pos, extra=()):
        """An error the reference reports after parsing, when the session is assembled:
        the first one found is kept."""
        if self.deferred is None:
            try:
                fail(message, pos, extra=extra)
            except CompileError as err:
                self.deferred = err

    def def_use(self, as_statement):
        """If the current token starts a use of a def, expand it and return True."""
        t = self.peek()
        if t.kind != IDENT or not self.peek(1).kind == "LParen":
            return False
        d = self.defs.get(t.val)
        if d is None:
            return False
        if as_statement and d.is_expr:
            fail(f"`{d.name}` is an expression (`def {d.name}(…) = …;`), not statements",
                 t.pos)
        if not as_statement and not d.is_expr:
            fail(f"`{d.name}` is statements (`def {d.name}(…) {{ … }}`), not an expression",
                 t.pos)
        self.expand(d, as_statement)
        return True

    # -- expressions ----------------------------------------------------------------------

    def expr(self):
        c = self.or_expr()
        if self.at("Question"):
            q = self.next()
            a = self.expr()
            self.expect("Colon")
            b = self.expr()
            return A.Cond(c, a, b, q.pos)
        return c

    def or_expr(self):
        a = self.and_expr()
        while self.at("OrOr"):
            t = self.next()
            a = A.Binary("Or", a, self.and_expr(), t.pos)
        return a

    def and_expr(self):
        a = self.cmp_expr()
        while self.at("AndAnd"):
            t = self.next()
            a = A.Binary("And", a, self.cmp_expr(), t.pos)
        return a

    def cmp_expr(self):
        a = self.add_expr()
        k = self.peek().kind
        if k in CMP:
            t = self.next()
            a = A.Binary(CMP[k], a, self.add_expr(), t.pos)
        return a

    def add_expr(self):
        a = self.mul_expr()
        while True:
            k = self.peek().kind
            if k == "Plus" or k == "Minus":
                t = self.next()
                a = A.Binary("Add" if k == "Plus" else "Sub", a, self.mul_expr(), t.pos)
            else:
                return a

    def mul_expr(self):
        a = self.unary()
        while True:
            k = self.peek().kind
            if k == "Star" or k == "Slash":
                t = self.next()
                a = A.Binary("Mul" if k == "Star" else "Div", a, self.unary(), t.pos)
            else:
                return a

    def unary(self):
        t = self.peek()
        if t.kind == "Minus":
            self.next()
            return A.Unary("Neg", self.unary(), t.pos)
        if t.kind == "Not":
            self.next()
            return A.Unary("Not", self.unary(), t.pos)
        if t.kind == "Tilde":
            self.next()
            nt = self.expect_ident()
            self.expect("LParen")
            args = []
            if not self.at("RParen"):
                args.append(self.expr())
                while self.accept("Comma"):
                    args.append(self.expr())
            self.expect("RParen")
            return A.Sample(nt.val, args, nt.pos)
        a = self.atom()
        if self.at("Caret"):
            c = self.next()
            return A.Binary("Pow", a, self.unary(), c.pos)
        return a

    def atom(self):
        t = self.peek()
        if t.kind == NUM:
            self.next()
            return A.Num(t.val, t.pos)
        if t.kind == "LParen":
            self.next()
            e = self.expr()
            self.expect("RParen")
            return e
        if t.kind == IDENT:
            if self.def_use(as_statement=False):
                return self.atom()
            w = t.val
            k1 = self.peek(1)
            if (w in ("max", "min", "sum") and k1.kind == IDENT
                    and self.peek(2).is_word("in")):
                return self.aggregate()
            if k1.kind == "LParen":
                self.next()
                self.next()
                args = []
                if not self.at("RParen"):
                    args.append(self.call_arg())
                    while self.accept("Comma"):
                        args.append(self.call_arg())
                self.expect("RParen")
                return A.Call(w, args, t.pos)
            if k1.kind == "Dot":
                self.next()
                self.next()
                m = self.expect_ident()
                return A.Dotted(w, m.val, t.pos)
            if k1.kind == "LBracket":
                j = self.skip_brackets(self.i + 1)
                if j is not None and self.toks[j].kind == "Dot":
                    fail("`Q[…].x` reads the request's attribute, which is no member's: "
                         "write `Q.x`", t.pos)
            if w == "self" and self.in_entry is None:
                fail("`self` is a queue entry's word: the member's own index", t.pos)
            self.next()
            return A.Name(w, t.pos)
        fail(f"expected an expression, found {describe(t)}", t.pos)

    def skip_brackets(self, j):
        """Index after the balanced ``[ ... ]`` starting at j (None if unbalanced)."""
        depth = 0
        toks = self.toks
        while j < len(toks):
            k = toks[j].kind
            if k in OPEN:
                depth += 1
            elif k in CLOSE:
                depth -= 1
                if depth == 0:
                    return j + 1
            elif k == EOF:
                return None
            j += 1
        return None

    def skip_square(self, j):
        """Index after the ``[ ... ]`` starting at j, counting only square brackets, as
        the reference's look-ahead for a reference argument (None if unclosed)."""
        depth = 0
        toks = self.toks
        while j < len(toks):
            k = toks[j].kind
            if k == "LBracket":
                depth += 1
            elif k == "RBracket":
                depth -= 1
                if depth == 0:
                    return j + 1
            elif k == EOF:
                return None
            j += 1
        return None

    def call_arg(self):
        """A call argument: a reference when it is a lone name, ``name[...]``, ``name.x``
        or ``name[...].x`` directly followed by `,` or `)`; else an expression."""
        t = self.peek()
        if t.kind == IDENT:
            j = self.i + 1
            if self.toks[j].kind == "LBracket":
                j = self.skip_square(j)
            if j is not None and self.toks[j].kind == "Dot":
                j = min(j + 2, len(self.toks) - 1)  # `.` and one token, any token
            if j is not None and self.toks[j].kind in ("Comma", "RParen") and not (
                    t.val in self.defs and self.toks[self.i + 1].kind == "LParen"):
                return self.ref()
        return self.expr()

    def ref(self) -> A.Ref:
        t = self.expect_ident()
        index = None
        bpos = None
        if self.at("LBracket"):
            self.next()
            bpos = self.peek().pos
            index = self.expr()
            self.expect("RBracket")
        member = None
        if self.at("Dot"):
            self.next()
            mt = self.expect_ident()
            member = mt.val
            self.Q.member_ref(self, t.val, index, mt)
        return A.Ref(t.val, index, member, t.pos, bpos)

    def aggregate(self):
        kt = self.next()
        vt = self.next()
        self.next()  # in
        c = self.peek()
        if c.kind == NUM:
            self.next()
            count = A.Num(c.val, c.pos)
        elif c.kind == IDENT:
            self.next()
            count = A.Name(c.val, c.pos)
        elif c.kind == "LParen":
            self.next()
            count = self.expr()
            self.expect("RParen")
        else:
            self.next()  # the reference points past the token it names
            fail(f"`{kt.val} {vt.val} in` takes a number, a constant's name or `( expr )`, "
                 f"found {describe(c)}", self.peek().pos)
        self.expect("LParen")
        body = self.expr()
        self.expect("RParen")
        return A.Agg(kt.val, vt.val, vt.pos, count, body, kt.pos)

    # -- pools and stages -----------------------------------------------------------------

    def pool_item(self):
        self.next()
        nt = self.expect_ident()
        size = self.array_size() if self.at("LBracket") else None
        d = A.PoolD(nt.val, size, nt.pos)
        self.pool_body(d)
        self.out.pools.append(d)
        return d

    def pool_body(self, d):
        self.expect("LBrace")
        while not self.at("RBrace"):
            ot = self.expect_ident()
            o = ot.val
            if o == "cap":
                d.cap = self.expr()
            elif o == "block":
                d.block = self.expr()
            elif o == "evict":
                if self.accept_word("lru"):
                    d.evict = None
                else:
                    self.expect_word("by")
                    d.evict = self.key_list()
            elif o == "preempt":
                if self.accept_word("lifo"):
                    d.preempt = "Lifo"
                else:
                    self.expect_word("none")
                    d.preempt = "None"
            elif o == "queue":
                if self.accept_word("fifo"):
                    d.queue = None
                else:
                    self.expect_word("by")
                    d.queue = self.key_list()
            elif o == "spill":
                to = self.expect_ident()
                self.expect_word("via")
                via = self.expect_ident()
                self.expect("LParen")
                work = self.expr()
                self.expect("RParen")
                self.expect_word("when")
                self.expect("LParen")
                when = self.expr()
                self.expect("RParen")
                d.spill = (to.val, to.pos, via.val, via.pos, work, when)
            elif o == "admit":
                self.expect_word("via")
                s = self.expect_ident()
                d.admit_via = (s.val, s.pos)
            else:
                fail(f"unknown pool option `{o}`", self.peek().pos)
            self.expect("Semi")
        self.next()

    def key_list(self):
        self.expect("LParen")
        keys = [self.expr()]
        while self.accept("Comma"):
            keys.append(self.expr())
        self.expect("RParen")
        return keys

    def stage_item(self):
        self.next()
        nt = self.expect_ident()
        size = self.array_size() if self.at("LBracket") else None
        self.expect("Colon")
        d = self.stage_kind(nt.val, size, nt.pos)
        self.out.stages.append(d)
        return d

    def stage_kind(self, name, size, pos, link_latency=False):
        kt = self.peek()
        if kt.kind != IDENT:
            fail(f"unknown stage kind {describe(kt)}", kt.pos)
        self.next()
        k = kt.val
        d = A.StageD(name, size, pos, k)
        if k == "fifo":
            if self.accept("LParen"):
                d.arg = self.expr()
                self.expect("RParen")
            else:
                d.arg = A.Num(1.0, kt.pos)
        elif k == "ps":
            self.expect("LParen")
            d.arg = self.expr()
            self.expect("RParen")
        elif k == "delay":
            pass
        elif k == "step":
            self.step_body(d)
        else:
            fail(f"unknown stage kind `{k}`", kt.pos)
        if self.at_word("latency") and not link_latency:
            fail("`latency` belongs to the `serve` of a queue that plays `link`: a link's "
                 "fixed wait", self.peek().pos)
        if k != "step" and not (link_latency and self.at_word("latency")):
            self.expect("Semi")
        return d

    def step_body(self, d):
        self.expect("LBrace")
        serve_seen = False
        while not self.at("RBrace"):
            ot = self.expect_ident()
            o = ot.val
            if o == "budget":
                d.budget = self.expr()
            elif o == "cost":
                d.cost = self.expr()
            elif o == "chunk":
                d.chunk = self.expr()
            elif o == "memory":
                m = self.expect_ident()
                d.memory = (m.val, m.pos)
            elif o == "serve":
                if serve_seen:
                    fail("`serve` twice: a step stage serves its residents in one way",
                         self.peek().pos)
                serve_seen = True
                if self.at_word("only"):  # extension: `serve only (e) [mode]`
                    self.next()
                    self.expect("LParen")
                    d.only = self.expr()
                    self.expect("RParen")
                    if self.at("Semi"):
                        d.serve = None
                        self.expect("Semi")
                        continue
                st = self.peek()
                if st.is_word("exclusive") and d.only is not None:
                    fail("`serve only (…) exclusive prefill`: the exclusive rule admits a "
                         "waiting prefill in place of the decodes it displaces, and what "
                         "`only` would do to either is a third rule", st.pos)
                if self.accept_word("admission"):
                    d.serve = None
                elif st.is_word("decode"):
                    self.next()
                    self.expect_word("first")
                    d.serve = "first"
                elif st.is_word("exclusive"):
                    self.next()
                    self.expect_word("prefill")
                    d.serve = "excl"
                elif st.is_word("by"):
                    self.next()
                    d.serve = self.key_list()
                elif d.only is not None:
                    fail("`serve` takes `admission`, `decode first`, `by (keys)` or `exclusive "
                         "prefill`, the first three after an optional `only (expr)`; found "
                         f"{describe(st)}", st.pos)
                else:
                    bad = st
                    fail("`serve` takes `admission`, `decode first`, `exclusive prefill` or "
                         f"`by (keys)`, found {describe(bad)}", bad.pos)
            elif o == "exclusive":
                fail("`exclusive prefill;` is now `serve exclusive prefill;`: a step stage "
                     "serves its residents in one way", self.peek().pos)
            elif o == "decode":
                fail("`decode first;` is now `serve decode first;`: a step stage serves its "
                     "residents in one way", self.peek().pos)
            else:
                fail(f"unknown step option `{o}`", self.peek().pos)
            self.expect("Semi")
        self.next()
        if d.cost is None:
            fail("a step stage needs `cost`", self.peek().pos)
        self.accept("Semi")

    def queue_item(self):
        self.Q.queue_decl(self)

    # -- workload, session, server --------------------------------------------------------

    def workload_item(self):
        self.next()
        if self.out.workload is not None:
            fail("duplicate workload", self.peek().pos)
        w = Workload(self.peek().pos)
        self.out.workload = w
        self.expect("LBrace")
        while not self.at("RBrace"):
            t = self.peek()
            word = t.val if t.kind == IDENT else None
            if word == "arrive":
                self.next()
                k = self.peek()
                if k.is_word("none"):
                    self.next()
                    w.arrival = None
                elif k.kind == IDENT and k.val in ("poisson", "renewal", "closed", "batch"):
                    self.next()
                    self.expect("LParen")
                    e = self.expr()
                    self.expect("RParen")
                    w.arrival = (k.val, e, k.pos)
                else:
                    fail(f"expected `none`, found {describe(k)}", k.pos)
                self.expect("Semi")
            elif word == "trace":
                self.next()
                st = self.peek()
                if st.kind != STR:
                    fail(f"expected string, found {describe(st)}", st.pos)
                self.next()
                w.trace = st.val
                w.ordered = bool(self.accept_word("ordered"))
                self.expect("Semi")
            elif word == "init":
                self.next()
                w.init = self.block("wlblock")
            elif word == "turn":
                self.next()
                w.turn = self.block("wlblock")
            elif word == "session":
                self.next()
                if w.session is not None:
                    fail("duplicate session in workload", t.pos)
                w.session_pos = t.pos
                w.session = self.block("wl")
            elif word == "hidden":
                self.next()
                n = self.expect_ident()
                w.hidden.append((n.val, n.pos))
                while self.accept("Comma"):
                    n = self.expect_ident()
                    w.hidden.append((n.val, n.pos))
                self.expect("Semi")
            else:
                fail(f"unexpected {describe(t)} in workload", t.pos)
        self.next()

    def session_item(self):
        t = self.next()
        if self.out.session is not None and self.out.session[0]:
            # the reference refuses a second session after a non-empty one, at the token
            # after `session`; after an empty one, the second replaces it
            fail("duplicate session", self.peek().pos)
        self.out.session = (self.block("top"), t.pos)

    def server_item(self):
        t = self.next()
        if self.out.server is not None:
            fail("duplicate server", t.pos)
        self.out.server = (self.block("server"), t.pos)

    def share_item(self):
        t = self.next()
        if self.out.share is not None:
            first = self.out.share[1]
            what = "the pull relation on line" if self.out.share[2] else "the first is on line"
            fail(f"`share` is given twice: {what} {first.line}", t.pos)
        k = self.peek()
        if k.is_word("maxmin"):
            v = "MaxMin"
        elif k.is_word("bottleneck"):
            v = "Bottleneck"
        else:
            fail(f"`share` takes `maxmin` or `bottleneck`, found {describe(k)}", k.pos)
        self.next()
        self.expect("Semi")
        self.out.share = (v, t.pos, False)

    def gauge_item(self):
        self.next()
        nt = self.expect_ident()
        self.expect("Assign")
        e = self.expr()
        self.expect("Semi")
        self.out.gauges.append(A.GaugeD(nt.val, e, nt.pos))

    def claim_item(self):
        """``claim NAME [given (g)] : every|some iteration of STAGE (e);`` or ``at end (e);``
        (extension, formal.md §2.2; the texts of pyserq 0.1.3)."""
        self.next()
        nt = self.expect_ident()
        given = None
        if self.accept_word("given"):
            self.expect("LParen")
            given = self.expr()
            self.expect("RParen")
        self.expect("Colon")
        kt = self.peek()
        stage = None
        if kt.is_word("every") or kt.is_word("some"):
            self.next()
            kind = "EveryIteration" if kt.val == "every" else "SomeIteration"
            self.expect_word("iteration")
            self.expect_word("of")
            stage = self.ref_plain()
        elif kt.is_word("at"):
            self.next()
            self.expect_word("end")
            kind = "AtEnd"
        else:
            fail("a claim is `every iteration of STAGE (…)`, `some iteration of STAGE (…)` or "
                 f"`at end (…)`, found {describe(kt)}", kt.pos)
        self.expect("LParen")
        e = self.expr()
        self.expect("RParen")
        self.expect("Semi")
        self.out.claims.append(A.ClaimD(nt.val, nt.pos, given, kind, stage, e))

    def ref_plain(self) -> A.Ref:
        """A stage named by a claim: ``NAME`` or ``NAME[index]``."""
        t = self.expect_ident()
        index = bpos = None
        if self.at("LBracket"):
            self.next()
            bpos = self.peek().pos
            index = self.expr()
            self.expect("RBracket")
        return A.Ref(t.val, index, None, t.pos, bpos)

    def run_item(self):
        self.next()
        self.expect("LBrace")
        while not self.at("RBrace"):
            kt = self.expect_ident()
            e = self.expr()
            self.expect("Semi")
            if kt.val not in ("horizon", "warmup", "seed", "arrivals"):
                fail(f"unknown run option `{kt.val}`", self.peek().pos)
            self.out.run[kt.val] = (e, kt.pos)
        self.next()

    # -- statements -----------------------------------------------------------------------

    def block(self, side):
        self.expect("LBrace")
        out = []
        while not self.at("RBrace"):
            self.statement(side, out)
        self.next()
        return out

    def statement(self, side, out):
        t = self.peek()
        if t.kind != IDENT:
            fail(f"expected a statement, found {describe(t)}", t.pos)
        if self.def_use(as_statement=True):
            return
        w = t.val
        k1 = self.peek(1).kind
        if w in ("prefill", "decode", "tool", "transfer"):
            return self.Q.serving_form(self, side, out)
        if k1 in ("Dot", "LBracket") and w not in STATEMENT_WORDS:
            # a statement's keyword comes first: `run . d` is a `run` missing its stage
            return self.Q.queue_call_stmt(self, side, out)
        if w == "turn":
            if side == "server":
                fail("`turn` is the session's: the next turn is the workload's decision, "
                     "not the server's", t.pos)
            self.next()
            self.expect("Semi")
            out.append(A.TurnS(t.pos))
        elif w == "end":
            if side == "server":
                fail("`end` is the session's: a server is done with a request when its "
                     "block is, and whether the session goes on is the workload's", t.pos)
            self.next()
            self.expect("Semi")
            out.append(A.EndS(t.pos))
        elif w == "request":
            if side == "server":
                fail("`request` inside a server or queue entry: a server does not request "
                     "itself", t.pos)
            if side in ("top", "wlblock"):
                fail("`request` is a statement of the `session` inside `workload`", t.pos)
            self.next()
            g = None
            gpos = None
            if not self.at("Semi"):
                gt = self.expect_ident()
                g, gpos = gt.val, gt.pos
            self.expect("Semi")
            out.append(A.RequestS(g, t.pos, gpos))
        elif w == "set":
            self.next()
            n = self.name_token()
            self.expect("Assign")
            e = self.expr()
            self.expect("Semi")
            out.append(A.SetS(n.val, e, n.pos))
        elif w == "observe":
            self.next()
            n = self.expect_ident()
            self.expect("Assign")
            e = self.expr()
            self.expect("Semi")
            out.append(A.ObserveS(n.val, e, n.pos))
        elif w == "hold":
            out.append(self.hold_stmt(side))
        elif w in ("grow", "load"):
            self.next()
            r = self.ref()
            self.Q.check_foreign_pool(self, w, r)
            self.expect("LParen")
            e = self.expr()
            self.expect("RParen")
            self.expect("Semi")
            out.append((A.GrowS if w == "grow" else A.LoadS)(r, e, t.pos))
        elif w in ("drop", "release"):
            self.next()
            r = self.ref()
            self.Q.check_foreign_pool(self, w, r)
            self.expect("Semi")
            out.append((A.DropS if w == "drop" else A.ReleaseS)(r, t.pos))
        elif w == "run":
            out.append(self.run_stmt())
        elif w == "branch":
            self.next()
            draw = bool(self.accept_word("with"))
            self.expect("LParen")
            g = self.expr()
            self.expect("RParen")
            then = self.block(side)
            other = []
            if self.accept_word("else"):
                other = self.block(side)
            out.append(A.BranchS(g, then, other, t.pos, draw))
        elif w == "loop":
            self.next()
            out.append(A.LoopS(self.block(side), t.pos))
        elif w == "choose":
            self.next()
            n = self.name_token()
            self.expect_word("in")
            c = self.expr()
            self.expect_word("by")
            keys = self.key_list()
            self.expect("Semi")
            out.append(A.ChooseS(n.val, c, keys, n.pos))
        elif w == "mark":
            if self.in_entry is None:
                fail("`mark` is a queue entry's statement: it names a moment the caller "
                     "reads", t.pos)
            self.next()
            n = self.expect_ident()
            self.expect("Semi")
            out.append(self.Q.mark_stmt(self, n))
        elif w in RETIRED:
            fail(RETIRED[w], t.pos)
        else:
            fail(f"unknown statement `{w}`", t.pos)

    def run_stmt(self):
        t = self.next()
        if self.at("LParen"):
            return self.Q.entry_run(self, t)
        stages = [self.ref()]
        while self.accept("Comma"):
            stages.append(self.ref())
        mode = None
        if self.at_word("prefill"):
            self.next()
            mode = "Prefill"
        elif self.at_word("decode"):
            self.next()
            mode = "Decode"
        self.expect("LParen")
        work = self.expr()
        self.expect("RParen")
        growing = None
        if self.accept_word("growing"):
            growing = self.ref()
            self.Q.check_foreign_pool(self, "growing", growing)
        self.expect("Semi")
        return A.RunS(stages, None, work, growing, t.pos, mode)

    def hold_stmt(self, side):
        t = self.next()
        pools = [self.hold_pool()]
        while self.accept("Comma"):
            pools.append(self.hold_pool())
        reuse = None
        if self.accept_word("reuse"):
            self.expect("LParen")
            reuse = self.expr()
            self.expect("RParen")
        bindings = []
        rt = self.peek()
        if rt.kind == IDENT and rt.val in RETIRED:  # an old header word, before `at`
            fail(RETIRED[rt.val], rt.pos)
        if self.at_word("at"):
            self.next()
            if not self.at_word("admission"):
                fail("expected `admission` after `at`", self.peek().pos)
            self.next()
            bindings = self.bindings()
        if self.at_word("where"):
            fail(RETIRED["where"], self.peek().pos)
        if self.at_word("fits"):
            fail("`fits` is now `reserve`", self.peek().pos)
        body = self.block(side)
        if self.at_word("keep"):
            fail(RETIRED["keep"], self.peek().pos)
        cache = None
        if self.accept_word("cache"):
            self.expect("LParen")
            cache = self.expr()
            self.expect("RParen")
        lease = None
        if self.accept_word("lease"):
            r = self.ref()
            self.Q.check_foreign_pool(self, "lease", r)
            self.expect("LParen")
            lt = self.expr()
            self.expect("RParen")
            lease = (r, lt)
        self.accept("Semi")
        h = A.HoldS(pools, reuse, body, cache, lease, t.pos)
        if bindings:
            from serq.lang.bindings import apply_bindings
            apply_bindings(self, h, bindings)
        return h

    def hold_pool(self):
        r = self.ref()
        self.Q.check_foreign_pool(self, "hold", r)
        if self.at_word("fits"):
            fail("`fits` is now `reserve`", self.peek().pos)
        self.expect("LParen")
        u = self.expr()
        self.expect("RParen")
        reserve = None
        if self.at_word("fits"):
            fail("`fits` is now `reserve`", self.peek().pos)
        if self.accept_word("reserve"):
            self.expect("LParen")
            reserve = self.expr()
            self.expect("RParen")
        return A.HoldPoolS(r, u, reserve)

    def bindings(self):
        self.expect("LParen")
        out = []
        while True:
            n = self.name_token()
            if any(n.val == b[0] for b in out):
                fail(f"`{n.val}` is bound twice in one `at admission`", self.peek().pos)
            self.expect("Assign")
            e = self.expr()
            if draws(e):
                fail(f"`{n.val}` draws a sample: a `at admission` binding is substituted, "
                     f"so a name used twice would draw twice", self.peek().pos)
            out.append((n.val, e, n.pos))
            if not self.accept("Comma"):
                break
        from serq.lang.bindings import check_order
        check_order(out)
        self.expect("RParen")
        return out


def draws(e) -> bool:
    """Whether a parse-tree expression contains a sample."""
    from serq.lang.walk import any_node
    return any_node(e, lambda x: isinstance(x, A.Sample))


def is_reference(toks) -> bool:
    """A def argument that is substituted verbatim: a name, or ``name[ ... ]``."""
    if len(toks) == 1:
        return toks[0].kind == IDENT
    if len(toks) >= 3 and toks[0].kind == IDENT and toks[1].kind == "LBracket" \
            and toks[-1].kind == "RBracket":
        depth = 0
        for k, t in enumerate(toks[1:], 1):
            if t.kind in OPEN:
                depth += 1
            elif t.kind in CLOSE:
                depth -= 1
                if depth == 0 and k != len(toks) - 1:
                    return False
        return True
    return False


def calls(body, name):
    """Whether def body tokens use `name` as the reference sees a use: `name (`."""
    return any(t.kind == IDENT and t.val == name and body[k + 1].kind == "LParen"
               for k, t in enumerate(body[:-1]))
