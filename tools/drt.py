#!/usr/bin/env python3
"""Differential random testing of serq against the reference build pyserq 0.1.2.

A tool, not a test: it needs the reference installed in its own virtual environment
(default /tmp/refvenv, `pip install pyserq==0.1.2`), and is never run by the test suite.

It generates random, valid serQ programs from a grammar-directed generator (arrivals,
traces, multi-turn sessions, holds on pools with every clause, fifo/ps/delay/step stages,
shared stages, gauges, every distribution and function ...), compiles and runs each one
with the reference (a persistent child process under the reference's python) and with
serq (a persistent child process under the project's python, /work/main on sys.path), in
parallel, and compares:

* the compile outcome (both refuse with the same text, or both compile);
* the run outcome: the same ValueError text, or `Report.json()` field by field (numbers
  exactly, -0.0 apart from 0.0; `serq_version` ignored) and every observation's
  samples/times/sessions/turns and every gauge's times/values.

Programs the reference refuses to compile are counted and skipped (when serq refuses them
with the same text). Programs on which the reference panics (PanicException) or hangs
(time limit) are recorded as reference defects under OUT/refdefects/.

Every divergence is written to OUT/div/NAME.sq with NAME.note (the first differing fields),
then (with --shrink) shrunk line/statement-wise to OUT/findings/NAME.sq.

Modes (all compare with the reference the same way):

* default: programs from the grammar-directed generator (`Gen`), and with probability
  `--mutate` (default 0.3) a corpus program (run/ and compile/ sources) with perturbed numbers
  and swapped options (`mutate`); a quarter of them also get compile() keyword arguments
  (seed, horizon, warmup, sets, defs) written on a first line `//@kw {json}`.
* `--tokmut`: token-level mutations (delete, duplicate, replace, swap, insert) of every corpus
  source, compiled only: error texts and IR.
* `--tokrun`: the same on the run programs only, compiled and run.
* `--valmut`: generated programs with a context variable, a draw, a live read, NaN or an old
  name put where a number or a name was (validation and link errors, mostly).
* `--irmut`: mutated IR texts through Program.from_json / to_json (the load family).
* `--irrun`: the IR-only run cases (explicit sessions) with perturbed floats, loaded and run.

Usage (from the repository root):

    python3 tools/drt.py --n 2000 --seed 1           # generate and compare 2000 programs
    python3 tools/drt.py --minutes 30 --seed 7       # run for 30 minutes
    python3 tools/drt.py --tokmut --minutes 5        # compile-only fuzzing of the error texts
    python3 tools/drt.py --replay FILE.sq            # compare one program, print the diff
    python3 tools/drt.py --shrink FILE.sq            # minimise one diverging program (greedy)
    python3 tools/drt.py --gen 5 --seed 3            # print 5 generated programs

Use both cores by starting two drivers with different `--seed`s (each runs its reference and
serq children in parallel). Options: --ref-python (default /tmp/refvenv/bin/python),
--serq-python (default .venv/bin/python, else python3), --serq-root (the directory whose `serq`
package is tested; default the working tree, e.g. a `git archive HEAD | tar -x -C DIR` copy so
that edits in progress do not get in the way), --out (default /tmp/drt), --timeout (per program,
5 s; a serq timeout is retried alone with 60 s). The working directory of both children is
OUT/work, where the trace CSV files are written (programs say `trace "t1.csv"`) and the
corpus's traces/ are copied. Divergences go to OUT/div (OUT/tokdiv, OUT/irdiv for the other
modes) as NAME.sq + NAME.note; reference panics and hangs to OUT/refdefects.
"""

import argparse
import importlib.util
import json
import math
import os
import random
import select
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SERQ_ROOT = ROOT  # where `import serq` finds the package (--serq-root)
CHECK_PY = os.path.join(os.path.dirname(ROOT), "shared", "conformance", "check.py")

# ------------------------------------------------------------------------------------------
# worker side (runs inside the reference's or the project's python)

WORKER_CODE = r'''
import json, sys, os, traceback
modname = sys.argv[1]
if modname == "serq":
    sys.path.insert(0, sys.argv[2])
mod = __import__(modname)
out = sys.stdout
sys.stdout = sys.stderr
def lst(x):
    return None if x is None else [v for v in x]
for line in sys.stdin:
    req = json.loads(line)
    res = {}
    try:
        if req.get("ir") is not None:
            try:
                prog = mod.Program.from_json(req["ir"])
            except ValueError as e:
                res = {"status": "compile_error", "msg": str(e)}
                raise StopIteration
            if not req.get("run_ir"):
                res = {"status": "ok", "ir": prog.to_json(), "json": None}
                raise StopIteration
        else:
          try:
            prog = mod.compile(source=req["src"], **req.get("kw", {}))
          except ValueError as e:
            res = {"status": "compile_error", "msg": str(e)}
            raise StopIteration
        ir = prog.to_json()
        if req.get("compile_only"):
            res = {"status": "ok", "ir": ir, "json": None}
            raise StopIteration
        try:
            rep = mod.run(prog)
        except ValueError as e:
            res = {"status": "run_error", "msg": str(e), "ir": ir}
            raise StopIteration
        text = rep.json()
        doc = json.loads(text)
        obs = {}
        for name in doc.get("observes", {}):
            o = rep.observe(name)
            obs[name] = None if o is None else {"samples": lst(o.samples), "times": lst(o.times),
                                                "sessions": lst(o.sessions), "turns": lst(o.turns)}
        gs = {}
        for name in doc.get("gauges", {}):
            g = rep.gauge(name)
            gs[name] = None if g is None else {"times": lst(g.times), "values": lst(g.values)}
        res = {"status": "ok", "ir": ir, "json": text, "observes": obs, "gauges": gs}
    except StopIteration:
        pass
    except BaseException as e:
        res = {"status": "crash", "type": type(e).__name__, "msg": str(e)[:2000],
               "tb": traceback.format_exc()[-3000:]}
    out.write(json.dumps(res) + "\n")
    out.flush()
'''


class Worker:
    def __init__(self, python, modname, cwd):
        self.python, self.modname, self.cwd = python, modname, cwd
        self.p = None
        self.restarts = 0

    def start(self):
        self.p = subprocess.Popen([self.python, "-c", WORKER_CODE, self.modname, SERQ_ROOT],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, cwd=self.cwd, text=True,
                                  bufsize=1)

    def send(self, src, compile_only=False, kw=None, ir=None, run_ir=False):
        if self.p is None or self.p.poll() is not None:
            self.start()
        self.p.stdin.write(json.dumps({"src": src, "compile_only": compile_only, "kw": kw or {},
                                       "ir": ir, "run_ir": run_ir}) + "\n")
        self.p.stdin.flush()
        self.t0 = time.time()

    def recv(self, timeout):
        left = timeout - (time.time() - self.t0)
        r, _, _ = select.select([self.p.stdout], [], [], max(left, 0))
        if not r:
            self.kill()
            return {"status": "timeout"}
        line = self.p.stdout.readline()
        if not line:
            self.kill()
            return {"status": "died"}
        return json.loads(line)

    def kill(self):
        if self.p is not None:
            try:
                self.p.kill()
                self.p.wait()
            except Exception:
                pass
        self.p = None
        self.restarts += 1


# ------------------------------------------------------------------------------------------
# comparison

def load_check():
    spec = importlib.util.spec_from_file_location("conformance_check", CHECK_PY)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


CHECK = None


def compare(ref, got):
    """Returns (kind, diffs): kind in match, skip, refdefect, diverge."""
    global CHECK
    if CHECK is None:
        CHECK = load_check()
    rs, gs = ref["status"], got["status"]
    if rs == "crash" and "Panic" in ref.get("type", "") or rs in ("timeout", "died"):
        return "refdefect", [f"reference {rs}: {ref.get('type', '')} {ref.get('msg', '')[:300]}",
                             f"serq: {gs} {got.get('msg', '')[:300]}"]
    if rs == "crash":
        return "refdefect", [f"reference crash {ref.get('type')}: {ref.get('msg')}"]
    if rs == "compile_error":
        if gs == "compile_error" and got["msg"] == ref["msg"]:
            return "skip", []
        return "diverge", ["compile: reference refuses: " + ref["msg"][:1500],
                           f"serq: {gs}: " + (got.get("msg") or "")[:1500]]
    if gs in ("ok", "run_error") and ref.get("ir") != got.get("ir"):
        a, b = ref.get("ir") or "", got.get("ir") or ""
        k = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
        return "diverge", [f"ir: first difference at char {k}: reference ...{a[max(0, k - 150):k + 80]!r}",
                           f"serq ...{b[max(0, k - 150):k + 80]!r}"]
    if gs != rs:
        return "diverge", [f"status: reference {rs} {ref.get('msg', '')[:800]}",
                           f"serq {gs}: {got.get('type', '')} {got.get('msg', '')[:800]}",
                           got.get("tb", "")[-1500:]]
    if rs == "run_error":
        if ref["msg"] == got["msg"]:
            return "match", []
        return "diverge", ["run error text: reference " + repr(ref["msg"]), "serq " + repr(got["msg"])]
    out = []
    if ref.get("json") is None:
        return "match", []
    try:
        want = CHECK.parse_report(ref["json"])
        have = CHECK.parse_report(got["json"])
    except Exception as e:
        return "diverge", [f"json parse: {e}"]
    want.pop("serq_version", None)
    have.pop("serq_version", None)
    CHECK.compare_values(want, have, "", out, limit=20)
    for name, w in ref["observes"].items():
        g = got["observes"].get(name)
        if w is None or g is None:
            if (w is None) != (g is None):
                out.append(f"observe({name}) None mismatch")
            continue
        for k in ("samples", "times", "sessions", "turns"):
            CHECK.compare_values(w[k], g[k], f"observe({name}).{k}", out, limit=40)
    for name, w in ref["gauges"].items():
        g = got["gauges"].get(name)
        if w is None or g is None:
            if (w is None) != (g is None):
                out.append(f"gauge({name}) None mismatch")
            continue
        for k in ("times", "values"):
            CHECK.compare_values(w[k], g[k], f"gauge({name}).{k}", out, limit=40)
    return ("diverge" if out else "match"), out


# ------------------------------------------------------------------------------------------
# the generator

TRACES = {
    "t1.csv": "session,turn,new,out,think,forced\n0,0,100,10,1.5,0\n0,1,50,5,2.0,1\n0,2,30,8,0.5,0\n"
              "1,0,70,7,0.5,0\n2,0,200,20,1,0\n2,1,40,12,0,1\n",
    "t2.csv": "session,turn,new,out,think\n10,0,64,16,2\n10,1,32,4,0.25\n20,0,300,5,2\n30,0,7,7,0\n"
              "30,1,90,30,3\n30,2,16,2,1\n30,3,48,9,0.5\n",
    "t3.csv": "session,turn,new,out,think,forced\n5,0,120,24,3.0,0\n5,1,180,40,2.5,0\n7,0,40,3,0,0\n",
}


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)
        self.seed = seed

    # helpers
    def ch(self, *xs):
        return self.r.choice(xs)

    def p(self, prob):
        return self.r.random() < prob

    def num(self, lo, hi, nd=2):
        v = round(self.r.uniform(lo, hi), nd)
        if self.p(0.3):
            v = int(v) if int(v) > 0 or lo <= 0 else v
        return repr(v) if isinstance(v, float) else str(v)

    def ipos(self, lo, hi):
        return str(self.r.randint(lo, hi))

    # ---- distributions
    def dist(self, mean_scale=1.0):
        k = self.r.randrange(6)
        m = mean_scale
        if k == 0:
            return f"~exp({self.num(0.3 * m, 2 * m)})"
        if k == 1:
            return f"~det({self.num(0.2 * m, 2 * m)})"
        if k == 2:
            a = round(self.r.uniform(0.05, 1) * m, 2)
            return f"~uniform({a}, {round(a + self.r.uniform(0.1, 2) * m, 2)})"
        if k == 3:
            return f"~erlang({self.r.randint(1, 4)}, {self.num(0.3 * m, 2 * m)})"
        if k == 4:
            return f"~h2({self.num(0.3 * m, 2 * m)}, {self.num(1.1, 6)})"
        return f"(1 + ~bernoulli({self.num(0.1, 0.9)})) * {self.num(0.2 * m, m)}"

    def posdist(self, m=1.0):
        """a positive time: a distribution plus a small positive constant"""
        return f"{self.num(0.01, 0.3 * m)} + {self.dist(m)}"

    # ---- program
    def program(self):
        r = self.r
        self.lines = []
        self.attrs = ["serial", "turn_no"]  # readable attributes
        self.hidden = []
        self.obs_n = 0
        self.bs = self.ch(1, 4, 8, 16)
        self.use_trace = self.p(0.25)
        self.trace_file = self.ch(*TRACES)
        arrival_kind = self.ch("poisson", "poisson", "batch", "closed", "renewal", "renewal")
        self.closed = arrival_kind == "closed"
        self.multi_turn = self.p(0.45) or self.use_trace
        lets = []
        self.pre_attrs = []
        for _ in range(r.randint(0, 3)):
            a = self.ch("prompt", "o", "prio", "len", "cls", "sz")
            if a not in self.pre_attrs:
                self.pre_attrs.append(a)
        self.pre_hidden = [self.ch(*self.pre_attrs)] if self.pre_attrs and self.p(0.25) else []
        self.defs = []
        if self.p(0.2):
            lets.append(f"def svc_time(x) = {self.ch('~exp(x)', 'x + ~uniform(0, 1)', '0.1 + x * ~erlang(2, 1)')};")
            self.defs.append("svc_time")
        if self.p(0.25):
            lets.append(f"let lam = {self.num(0.2, 2)};")
            lets.append(f"let scale = 2 * lam + {self.r.randint(0, 3)};")
            self.defs.append("lam")
        if self.p(0.5):
            lets.append(f"let bs = {self.bs};")
            self.bsname = "bs"
        else:
            self.bsname = str(self.bs)
        # ---- stages
        self.stages = {}  # name -> dict(kind, n (array size or None), literal cap)
        self.delays = []
        self.pools = {}
        nst = r.randint(1, 4)
        names = ["svc", "engine", "net", "cpu", "disk", "E2", "link", "rep"]
        r.shuffle(names)
        stage_lines = []
        self.want_share = self.p(0.2)
        self.share_stages = []
        for i in range(nst):
            nm = names[i]
            kind = self.ch("fifo", "fifo", "ps", "step", "step", "delay")
            arr = self.ch(None, None, None, 2, 3)
            self.stages[nm] = {"kind": kind, "n": arr}
        # always a delay stage for think times / gates
        self.stages["gate"] = {"kind": "delay", "n": None}
        self.delays.append("gate")
        if self.want_share:
            for nm in ("nicA", "nicB"):
                self.stages[nm] = {"kind": "ps", "n": self.ch(None, None, 2), "lit": True}
                self.share_stages.append(nm)
        # ---- pools
        npools = self.ch(0, 1, 1, 2, 2, 3)
        pnames = ["kv", "seats", "host", "mem"]
        for i in range(npools):
            nm = pnames[i]
            self.pools[nm] = {"n": self.ch(None, None, None, None, 2)}
        self.steps = [s for s, d in self.stages.items() if d["kind"] == "step"]
        # memory assignment
        for s in self.steps:
            kvs = [p for p in self.pools if self.pools[p]["n"] is None]
            self.stages[s]["memory"] = self.ch(*kvs) if kvs and self.p(0.75) else None
        pool_lines = []
        for s_ in self.steps:
            m = self.stages[s_].get("memory")
            if m:
                self.pools[m]["memory"] = True
        for nm, pd in self.pools.items():
            pool_lines.append(self.pool_decl(nm, pd))
        for nm, sd in self.stages.items():
            stage_lines.append(self.stage_decl(nm, sd))
        # ---- workload
        wl = []
        if arrival_kind == "poisson":
            wl.append(f"arrive poisson({self.num(0.2, 3)});")
        elif arrival_kind == "batch":
            wl.append(f"arrive batch({r.randint(1, 8)});")
        elif arrival_kind == "closed":
            wl.append(f"arrive closed({r.randint(1, 6)});")
        else:
            g = self.ch(f"{self.num(0.3, 2)}", self.posdist(1.0), self.dist(1.0) if self.p(0.3) else "~exp(1)",
                        f"~uniform({self.num(0.2, 0.5)}, {self.num(1, 2)})", f"~erlang(2, {self.num(0.5, 2)})")
            wl.append(f"arrive renewal({g});")
        if self.use_trace:
            wl.append(f'trace "{self.trace_file}"{" ordered" if self.p(0.5) else ""};')
            self.attrs += ["new", "out", "think", "more", "forced"]
        init = []
        self.user_attrs = []
        for a in self.pre_attrs:
            self.user_attrs.append(a)
            init.append(f"set {a} = {self.init_expr(a)};")
        if self.p(0.2):
            init.append(f"observe ini{self.obs_n} = {self.ch('serial', 'now', self.dist())};")
            self.obs_n += 1
        self.attrs += self.user_attrs
        if self.pre_hidden:
            self.hidden = list(self.pre_hidden)
            wl.append(f"hidden {', '.join(self.hidden)};")
        turnb = []
        if self.multi_turn and not self.use_trace:
            turnb.append(f"set think = {self.posdist(1.0)};")
            turnb.append(f"set more = {self.ch('~bernoulli(%s)' % self.num(0.3, 0.9), 'turn_no < %d ? 1 : 0' % r.randint(1, 4))};")
            self.attrs += ["think", "more"]
            if self.p(0.4):
                turnb.append(f"set add = {self.ch('10 + floor(~exp(30))', '~uniform(1, 50)', '16 * turn_no')};")
                self.attrs.append("add")
        if init:
            wl.append("init { " + " ".join(init) + " }")
        if turnb:
            wl.append("turn { " + " ".join(turnb) + " }")
        self.visible = [a for a in self.attrs if a not in self.hidden]
        # ---- session / server
        kernel = self.p(0.35)
        self.side = "server"
        self.stmt_def = None
        if self.pools and self.p(0.2):
            self.stmt_def = ("def visit(st, p, amount) {\n  hold p (amount) { run st (" + self.ch("1", "0.5 + ~exp(1)", "amount / 10") + "); }\n}")
        server_body = self.server_body()
        body = self.client_body(server_body if kernel else None)
        gauges = []
        if self.p(0.6):
            for gi in range(r.randint(1, 3)):
                gauges.append(f"gauge g{gi} = {self.gauge_expr()};")
        share = []
        if self.used_share:
            share.append(f"share {self.ch('maxmin', 'bottleneck')};")
        # run settings
        horizon = self.ch(20, 40, 60, 100, 150)
        runs = [f"horizon {horizon};"]
        if self.p(0.4):
            runs.append(f"warmup {self.ch(1, 5, 10, horizon // 3)};")
        runs.append(f"seed {r.randint(0, 1000) if self.p(0.9) else self.ch(2 ** 53 + 1, 2 ** 63, 2 ** 64 - 1, 4294967297)};")
        if self.p(0.12) and arrival_kind in ("poisson", "renewal"):
            runs.append(f"arrivals {r.randint(3, 30)};")
        out = []
        out += lets
        items = pool_lines + stage_lines
        out += items
        if self.stmt_def:
            out.append(self.stmt_def)
        if kernel:
            out.append("workload { " + " ".join(wl) + " }")
            out.append("session {\n" + self.indent(body) + "\n}")
        else:
            out.append("workload {\n  " + "\n  ".join(wl) + "\n  session {\n" + self.indent(body, 4) + "\n  }\n}")
            out.append("server {\n" + self.indent(server_body) + "\n}")
        out += share
        out += gauges
        out.append("run { " + " ".join(runs) + " }")
        return "\n".join(out) + "\n"

    used_share = False

    def indent(self, stmts, k=2):
        return "\n".join(" " * k + s for s in "\n".join(stmts).split("\n"))

    def init_expr(self, a):
        if a == "prompt":
            return self.ch(f"16 + floor(~exp({self.r.randint(20, 150)}))",
                           f"{self.bsname} * (1 + floor(~uniform(0, 6)))", "32 + floor(~uniform(0, 100))")
        if a == "o":
            return self.ch("1 + floor(~exp(10))", "2 + floor(~uniform(0, 20))", f"{self.r.randint(1, 12)}")
        if a == "prio":
            return self.ch("floor(~uniform(0, 3))", "~bernoulli(0.4)", "2 - serial")
        if a == "len":
            return self.ch("20 + 10 * floor(~uniform(0, 8))", "40 + floor(~exp(40))")
        if a == "cls":
            return "~bernoulli(%s)" % self.num(0.2, 0.8)
        return self.ch("~exp(3)", "~det(3) + ~uniform(-1, 1)", "~h2(2, 4)", "~erlang(3, 2)")

    # ---- declarations
    def pool_decl(self, nm, pd):
        r = self.r
        opts = []
        cap = self.ch(f"{r.randint(4, 60)} * {self.bsname}", str(r.randint(2, 400)), "inf" if self.p(0.2) else "100", str(r.randint(1, 6)))
        if pd.get("memory") and self.p(0.6):
            cap = f"{r.randint(6, 24)} * {self.bsname}"
        pd["small"] = cap.isdigit() and int(cap) <= 6
        opts.append(f"cap {cap};")
        if self.p(0.5):
            opts.append(f"block {self.ch(self.bsname, str(self.ch(2, 5, 10, 16)))};")
        if self.p(0.5):
            if self.p(0.5):
                opts.append("evict lru;")
            else:
                va = self.user_attrs_pre() or ["serial"]
                keys = [self.ch("waiting", "size", "-size", "age", "-age", "last", "-last", self.ch(*va), "-" + self.ch(*va), "-serial",
                                "turn_no", "waiting ? 0 : size", "age > 2 ? 1 : 0", "floor(age)")
                        for _ in range(r.randint(1, 3))]
                opts.append(f"evict by ({', '.join(keys)});")
        if self.p(0.75 if pd.get("memory") else 0.45):
            opts.append(f"preempt {self.ch('lifo', 'lifo', 'none')};")
        if self.p(0.3):
            va = self.user_attrs_pre() or ["serial"]
            keys = [self.ch("serial", "-serial", "waited", "waited < 3 ? 1 : 0", "floor(serial / 2)", "-waited",
                            "turn_no", self.ch(*va), "-" + self.ch(*va), f"{self.ch(*va)} == 1 && waited < 4 ? 1 : 0",
                            "waited > 2 ? 0 : 1 + serial")
                      for _ in range(r.randint(1, 3))]
            opts.append(f"queue by ({', '.join(keys)});")
        elif self.p(0.1):
            opts.append("queue fifo;")
        if self.p(0.25):
            eng = [s for s in self.stages if self.stages[s]["kind"] == "step" and self.stages[s]["n"] is None]
            if eng:
                opts.append(f"admit via {self.ch(*eng)};")
                pd["admit_via"] = True
        if self.p(0.15):
            tiers = [p for p in self.pools if p != nm and self.pools[p]["n"] is None]
            links = [s for s in self.stages if self.stages[s]["kind"] in ("fifo", "delay") and self.stages[s]["n"] is None]
            if any(self.pools[p].get("spills") for p in self.pools):
                tiers = []  # one spilling pool at most: spill cycles hang serq (a known finding)
            if tiers and links and pd["n"] is None:
                pd["spills"] = True
                opts.append(f"spill {self.ch(*tiers)} via {self.ch(*links)} ({self.ch('size / 100', 'size / 50 + 0.01', '0.1')}) "
                            f"when ({self.ch('size >= 10', '1', 'age > 1', 'serial % 1 == 0' if False else 'serial >= 1')});")
        pd["opts"] = opts
        arr = f"[{pd['n']}]" if pd["n"] else ""
        return f"pool {nm}{arr} {{ {' '.join(opts)} }}"

    def user_attrs_pre(self):
        return [a for a in self.pre_attrs if a not in self.pre_hidden]

    def stage_decl(self, nm, sd):
        r = self.r
        arr = f"[{sd['n']}]" if sd["n"] else ""
        k = sd["kind"]
        if k == "fifo":
            return f"stage {nm}{arr} : fifo{self.ch('', '(1)', '(2)', '(3)')};"
        if k == "delay":
            return f"stage {nm}{arr} : delay;"
        if k == "ps":
            if sd.get("lit"):
                cap = self.num(0.5, 20)
            elif self.pre_attrs and self.p(0.15):
                cap = self.ch(f"min({self.ch(*self.pre_attrs)}, present)", f"{self.ch(*self.pre_attrs)} == {self.ch(*self.pre_attrs)} ? 1 : 2",
                              f"max(1, {self.ch(*self.pre_attrs)})")
            else:
                cap = self.ch(self.num(0.5, 4), "min(present, 2)", "present <= 2 ? present : 2 + 0.5 * (present - 2)",
                              f"min(present, 3) * {self.num(0.3, 1)}", "1 / (1 + present)", "sqrt(present)")
            return f"stage {nm}{arr} : ps({cap});"
        opts = []
        if self.p(0.8):
            opts.append(f"budget {self.ch(str(r.randint(4, 512)), '256 - 4 * decoders', '64 + (residents > 3 ? 0 : 32)', 'max(16, 128 - kv_decode / 16)', 'min(serial, 64)', 'serial == serial ? 8 : 32', '0 / 0' if self.p(0.2) else '100')};")
        if self.p(0.4):
            opts.append(f"chunk {self.ch(str(r.randint(1, 96)), 'kv_prefill > 256 ? 96 : 48 + kv_decode / 64', '0', '16 * (1 + decoders)')};")
        terms = [self.num(0.01, 0.5)]
        if self.p(0.1):
            terms.append("(serial == serial ? 0.1 : 0.2)")
        for t in ("tokens", "decoders", "kv_decode", "kv_prefill", "attention", "residents", "prefilled"):
            if self.p(0.3):
                terms.append(f"{self.ch('0.001', '0.0004', '0.00002', '0.01', '0.0000001')} * {t}")
        opts.append(f"cost {' + '.join(terms)};")
        if self.p(0.5):
            opts.append("serve " + self.ch("admission", "decode first", "exclusive prefill",
                                           "by (%s)" % ", ".join(self.ch("decoding", "remaining", "-admission", "admission", "-remaining", "serial", "residents - serial", self.ch(*(self.user_attrs_pre() or ["turn_no"])), "decoders", "kv_decode > 100 ? remaining : -remaining", "remaining * (1 - decoding)") for _ in range(r.randint(1, 3)))) + ";")
        if sd.get("memory"):
            opts.append(f"memory {sd['memory']};")
        return f"stage {nm}{arr} : step {{ {' '.join(opts)} }}"

    # ---- expressions
    def stage_ref(self, nm, session=True):
        n = self.stages[nm]["n"]
        if not n:
            return nm
        return f"{nm}[{self.ch(*[str(i) for i in range(n)], 'serial % ' + str(n) if False else 'floor(serial / 2) - ' + str(n) + ' * floor(serial / ' + str(2 * n) + ')') if session else self.r.randrange(n)}]"

    def pool_ref(self, nm, idx=None):
        n = self.pools[nm]["n"]
        if not n:
            return nm
        return f"{nm}[{self.r.randrange(n) if idx is None else idx}]"

    def live_fn(self):
        """a read of live state (Session moment)"""
        fns = []
        if self.pools:
            p = self.ch(*self.pools)
            fns.append(f"{self.ch('used', 'free', 'cachedin', 'holders', 'queued')}({self.pool_ref(p)})")
        s = self.ch(*self.stages)
        fns.append(f"{self.ch('queue', 'busy', 'est_lambda', 'est_rho', 'est_wait')}({self.stage_ref(s, False)})")
        if self.p(0.2):
            fns.append(f"price({self.stage_ref(s, False)}, 1, {self.num(0.1, 1)})")
        if self.steps and self.p(0.3):
            fns.append(f"budget_left({self.stage_ref(self.ch(*self.steps), False)})")
        return self.ch(*fns)

    def sexpr(self, depth=0, draw=True):
        """a Session-moment expression"""
        r = self.r
        k = r.randrange(12 if depth < 2 else 5)
        if k == 0:
            return self.num(0, 5)
        if k == 1:
            return self.ch(*self.attrs)
        if k == 2:
            return "now"
        if k == 3:
            return self.dist() if draw else self.num(0.1, 3)
        if k == 4:
            return self.live_fn()
        if k == 5:
            return f"({self.sexpr(depth + 1, draw)} {self.ch('+', '-', '*', '/')} {self.sexpr(depth + 1, draw)})"
        if k == 6:
            return f"{self.ch('min', 'max', 'pow')}({self.sexpr(depth + 1, draw)}, {self.sexpr(depth + 1, draw)})"
        if k == 7:
            return f"{self.ch('abs', 'floor', 'ceil', 'sqrt', 'exp', 'ln')}({self.sexpr(depth + 1, draw)})"
        if k == 8:
            return f"({self.cond()} ? {self.sexpr(depth + 1, draw)} : {self.sexpr(depth + 1, draw)})"
        if k == 9:
            return f"-{self.sexpr(depth + 1, draw)}"
        if k == 10:
            return f"({self.sexpr(depth + 1, draw)}) ^ {self.ch('2', '0.5', '-1')}"
        return f"({self.cond()})"

    def cond(self):
        a = self.ch(*self.attrs, "now")
        return self.ch(f"{a} {self.ch('<', '<=', '>', '>=', '==', '!=')} {self.num(0, 5)}",
                       f"{a} > {self.num(0, 3)} && serial {self.ch('<', '>=')} {self.r.randint(0, 5)}",
                       f"!({a} < {self.num(0, 3)}) || turn_no == 1")

    def work(self, scale=1.0):
        if "svc_time" in self.defs and self.p(0.2):
            return f"svc_time({self.num(0.2, scale)})"
        if "lam" in self.defs and self.p(0.1):
            return f"scale / {self.num(1, 5)}"
        k = self.r.randrange(6)
        if k == 0:
            return self.dist(scale)
        if k == 1:
            return self.num(0.05, 2 * scale)
        if k == 2:
            return self.posdist(scale)
        if k == 3:
            return f"{self.num(0.1, scale)} + {self.sexpr(2)} / 10"
        if k == 4:
            a = self.ch(*self.attrs)
            return f"{self.num(0.05, scale)} + {a} / {self.ch(10, 50, 100)}"
        return f"max(0.1, {self.sexpr(1)})"

    def tokens(self):
        ua = [a for a in self.user_attrs if a in ("prompt", "o", "len")]
        if self.use_trace:
            ua += ["new", "out"]
        if ua and self.p(0.7):
            a = self.ch(*ua)
            return self.ch(a, f"{a} + {self.r.randint(1, 20)}", f"max(1, {a} - cached)" if False else f"{a} - {self.r.randint(0, 8)}")
        return str(self.r.randint(1, 120))

    def units(self, pool):
        ua = [a for a in self.user_attrs if a in ("prompt", "len", "o") and a not in self.hidden]
        if self.use_trace:
            ua += ["new", "out"]
        small = self.pools[pool].get("small")
        if small or self.p(0.3):
            return str(self.r.randint(1, 2))
        if ua and self.p(0.7):
            a = self.ch(*ua)
            return self.ch(a, f"{a} + {self.r.randint(1, 20)}", f"min({a}, 100)")
        return str(self.r.randint(1, 120))

    def gauge_expr(self):
        terms = []
        for _ in range(self.r.randint(1, 2)):
            if self.pools and self.p(0.6):
                p = self.ch(*self.pools)
                fn = self.ch("used", "free", "holders", "queued")
                n = self.pools[p]["n"]
                if n and self.p(0.5):
                    terms.append(f"{self.ch('sum', 'max', 'min')} k in {n} ({fn}({p}[k]))")
                else:
                    terms.append(f"{fn}({self.pool_ref(p)})")
            else:
                s = self.ch(*self.stages)
                fn = self.ch("busy", "queue")
                n = self.stages[s]["n"]
                if n and self.p(0.5):
                    terms.append(f"{self.ch('sum', 'max', 'min')} k in {n} ({fn}({s}[k]))")
                else:
                    terms.append(f"{fn}({self.stage_ref(s, False)})")
        e = f" {self.ch('+', '-', '*')} ".join(terms)
        if self.p(0.2):
            e = f"abs({e})"
        return e

    # ---- statements
    def observe(self, e=None):
        self.obs_n += 1
        nm = self.ch("lat", "resp", "x", "ttft", "w", "hit", "u") + str(self.obs_n)
        return f"observe {nm} = {e if e is not None else self.sexpr()};"

    def run_stmt(self, held, allow_step=True):
        r = self.r
        cands = [s for s in self.stages if s not in self.share_stages]
        if self.share_stages and self.p(0.3):
            a = self.ch(*self.share_stages)
            refs = [self.stage_ref(a)]
            b = self.ch(*self.share_stages)
            if self.p(0.6) and b != a:
                refs.append(self.stage_ref(b))
                self.used_share = True
                if refs[0] == refs[1]:
                    refs.pop()
            elif self.p(0.5) and self.stages[a]["n"]:
                refs = [f"{a}[0]", f"{a}[1]"]
                self.used_share = True
            return [f"run {', '.join(refs)} ({self.work()});"]
        s = self.ch(*cands)
        sd = self.stages[s]
        if sd["kind"] == "step":
            mode = self.ch("prefill", "decode", "prefill")
            grow = ""
            mem = sd.get("memory")
            if mem and mem in held and self.p(0.8):
                grow = f" growing {mem}"
            elif held and self.p(0.15):
                grow = f" growing {self.ch(*held)}"
            if mode:
                return [f"run {self.stage_ref(s)} {mode} ({self.tokens()}){grow};"]
            return [f"run {self.stage_ref(s)} ({self.tokens()}){grow};"]
        return [f"run {self.stage_ref(s)} ({self.work()});"]

    def block_stmts(self, depth, held, cache_hold, n):
        out = []
        for _ in range(n):
            out += self.stmt(depth, held, cache_hold)
        if not any(x.lstrip().startswith(("run", "hold", "choose")) for x in out):
            out += self.run_stmt(held)
        return out

    def stmt(self, depth, held, cache_hold):
        r = self.r
        k = r.random()
        if k < 0.3 or depth >= 3:
            return self.run_stmt(held)
        if k < 0.5 and self.pools:
            return self.hold_stmt(depth, held)
        if k < 0.6:
            a = self.ch("x1", "x2", "t1")
            if a not in self.attrs:
                self.attrs.append(a)
                self.visible.append(a)
            return [f"set {a} = {self.sexpr()};"]
        if k < 0.7:
            if cache_hold and self.p(0.4):
                return [self.observe("cached")]
            return [self.observe()]
        if k < 0.8:
            g = self.ch(self.cond(), f"with ({self.num(0.1, 0.9)})")
            if not g.startswith("with"):
                g = f"({g})"
            body = self.block_stmts(depth + 1, held, cache_hold, r.randint(1, 2))
            s = f"branch {g} {{\n{self.indent(body)}\n}}"
            if self.p(0.5):
                eb = self.block_stmts(depth + 1, held, cache_hold, r.randint(1, 2))
                s += f" else {{\n{self.indent(eb)}\n}}"
            return [s]
        if k < 0.85 and any(self.pools[p]["n"] for p in self.pools) and self.p(0.5):
            p = self.ch(*[p for p in self.pools if self.pools[p]["n"]])
            n = self.pools[p]["n"]
            if any(h.startswith(p + "[") for h in held):
                return self.run_stmt(held)
            keys = [self.ch(f"used({p}[g])", f"holders({p}[g]) + queued({p}[g])", f"free({p}[g])", "g", "-g", f"cachedin({p}[g])")
                    for _ in range(r.randint(1, 2))]
            if "g" not in self.attrs:
                self.attrs.append("g")
                self.visible.append("g")
            body = self.block_stmts(depth + 1, held + [f"{p}[g]"], False, r.randint(1, 2))
            return [f"choose g in {n} by ({', '.join(keys)});",
                    f"hold {p}[g] ({self.units(p)}) {{\n{self.indent(body)}\n}}" + self.ch("", f" cache ({r.randint(1, 50)})")]
        if k < 0.9:
            arrs = [s for s in self.stages if self.stages[s]["n"] and s not in self.share_stages and self.stages[s]["kind"] != "step"]
            if arrs:
                s = self.ch(*arrs)
                n = self.stages[s]["n"]
                keys = [self.ch(f"queue({s}[j])", f"busy({s}[j])", f"est_wait({s}[j])", "j", "-j", "~uniform(0, 1)")
                        for _ in range(r.randint(1, 3))]
                if "j" not in self.attrs:
                    self.attrs.append("j")
                    self.visible.append("j")
                return [f"choose j in {n} by ({', '.join(keys)});", f"run {s}[j] ({self.work()});"]
            return self.run_stmt(held)
        # grow / drop / release / load inside holds
        if held:
            p = self.ch(*held)
            x = r.random()
            if x < 0.5 and not self.pools[p.split("[")[0]].get("small"):
                return [f"grow {p} ({self.ch(str(r.randint(1, 30)), self.bsname)});"]
            if x < 0.8:
                return [f"load {p} ({r.randint(0, 20) if '[' not in p and self.p(0.3) else self.ch('0', '1')});"]
            return [f"drop {self.pool_ref(self.ch(*self.pools))};"] if self.p(0.5) else [f"release {self.ch(*held)};"]
        if self.pools and self.p(0.5):
            return [f"drop {self.pool_ref(self.ch(*self.pools))};"]
        return [self.observe()]

    def hold_stmt(self, depth, held):
        r = self.r
        free = [p for p in self.pools if self.pool_ref(p, 0) not in held]
        if not free:
            return self.run_stmt(held)
        ps = [self.ch(*free)]
        if self.p(0.35):
            others = [p for p in free if p not in ps]
            if others:
                ps.append(self.ch(*others))
        parts = []
        bind = None
        if self.p(0.2):
            if self.steps and self.p(0.5):
                bind = ("left", f"budget_left({self.ch(*[s for s in self.steps if not self.stages[s]['n']] or ['x'])})")
                if bind[1] == "budget_left(x)":
                    bind = None
            else:
                ua = [a for a in self.visible if a in ("prompt", "len", "new")]
                if ua:
                    a = self.ch(*ua)
                    bind = ("need", f"{self.bsname} * ceil({a} / {self.bsname})")
        newheld = list(held)
        for p in ps:
            ref = self.pool_ref(p)
            u = self.units(p)
            if bind and self.p(0.7):
                u = self.ch(bind[0], f"min({u}, {bind[0]})")
            s = f"{ref} ({u})"
            if self.p(0.25):
                s += f" reserve ({self.ch(u + ' + ' + str(r.randint(1, 30)), str(r.randint(1, 200)))})"
            parts.append(s)
            newheld.append(ref)
        has_cache = self.p(0.5)
        head = "hold " + ", ".join(parts)
        if has_cache and self.p(0.3):
            head += f" reuse ({self.ch('serial', '16', 'prompt' if 'prompt' in self.visible else '8', 'turn_no * 10')})"
        if bind:
            head += f" at admission ({bind[0]} = {bind[1]})"
        body = self.block_stmts(depth + 1, newheld, has_cache, r.randint(1, 3))
        s = f"{head} {{\n{self.indent(body)}\n}}"
        if has_cache:
            s += f" cache ({self.ch(self.units(ps[0]), str(r.randint(1, 200)))})"
        if self.p(0.15):
            s += f" lease {self.ch(*newheld[len(held):])} ({self.ch('2', 'inf', '0.5', '~exp(1)')})"
        return [s]

    def server_body(self):
        r = self.r
        out = []
        for _ in range(r.randint(1, 3)):
            k = r.random()
            if self.stmt_def and self.p(0.3):
                pl = [p for p in self.pools if not self.pools[p]["n"]]
                st = [s for s in self.stages if self.stages[s]["kind"] in ("fifo", "delay", "ps") and not self.stages[s]["n"] and s not in self.share_stages]
                if pl and st:
                    out.append(f"visit({self.ch(*st)}, {self.ch(*pl)}, {self.units(self.ch(*pl))});")
                    continue
            mem_steps = [s for s in self.steps if self.stages[s].get("memory")]
            if k < 0.4 and mem_steps:
                out += self.llm_template(self.ch(*mem_steps))
            elif k < 0.5 and self.steps:
                e = self.ch(*self.steps)
                out += [f"run {self.stage_ref(e)} prefill ({self.tokens()});", self.observe("now - t0"),
                        f"run {self.stage_ref(e)} decode ({self.tokens()});"]
            elif k < 0.6 and len([p for p in self.pools if not self.pools[p]["n"]]) >= 2:
                out += self.pd_template()
            else:
                out += self.block_stmts(depth=0, held=[], cache_hold=False, n=r.randint(1, 3))
        return out

    def llm_template(self, e):
        r = self.r
        mem = self.stages[e]["memory"]
        others = [p for p in self.pools if p != mem and not self.pools[p]["n"]]
        tok = [a for a in self.visible if a in ("prompt", "len", "new")]
        P = self.ch(*tok) if tok and self.p(0.8) else str(r.randint(8, 200))
        outs = [a for a in self.attrs if a in ("o", "out")]
        O = self.ch(*outs) if outs and self.p(0.8) else str(r.randint(1, 30))
        heads = []
        if others and self.p(0.5):
            heads.append(f"{self.ch(*others)} (1)")
        bind = None
        u = self.ch(P, f"{P} + {O}" if O in self.visible else P, f"min({P}, {r.randint(16, 128)})",
                    f"min({P}, {r.randint(8, 48)})", f"min({P}, {r.randint(8, 48)})", "1", str(self.bs))
        if self.p(0.3) and self.stages[e]["n"] is None:
            bind = f"left = budget_left({e})"
            u = f"min({P}, left)"
        elif self.p(0.2):
            bind = f"known = computed < {P} ? {P} : computed + 1"
            u = self.ch("known", "min(known, 64)")
        h = f"{mem} ({u})"
        if self.p(0.4):
            h += f" reserve ({self.ch(P, P + ' + 16', 'known' if bind and 'known' in bind else P)})"
        heads.append(h)
        if self.p(0.5):
            heads.reverse()
        cache = self.p(0.5)
        head = "hold " + ", ".join(heads)
        if cache and self.p(0.4):
            head += f" reuse ({self.ch(P, str(r.randint(0, 64)), 'serial * 8')})"
        if bind:
            head += f" at admission ({bind})"
        eref = self.stage_ref(e)
        body = []
        if cache and self.p(0.5):
            body.append(self.observe("cached"))
        if self.p(0.3):
            body.append(self.observe(self.ch("computed", f"used({mem})", f"free({mem})", "now - t0")))
        pw = self.ch(P, f"{P} - cached" if cache else P, "known" if bind and "known" in bind else P)
        body.append(f"run {eref} prefill ({pw}) growing {mem};")
        body.append(self.observe("now - t0"))
        if self.p(0.3):
            body += self.block_stmts(1, [mem], cache, 1)
        body.append(f"run {eref} decode ({O}) growing {mem};")
        if self.p(0.2):
            body.append(f"grow {mem} ({self.ch('16', self.bsname, '1')});")
        s = f"{head} {{\n{self.indent(body)}\n}}"
        if cache:
            s += f" cache ({self.ch(P, P + ' + ' + O if O in self.visible else P, str(r.randint(0, 300)))})"
        if self.p(0.15):
            s += f" lease {mem} ({self.ch('2', 'inf', '0.5')})"
        out = [s]
        if self.p(0.3):
            out.append(self.observe(self.ch(f"cachedin({mem})", f"used({mem})", "now - t0")))
        return out

    def pd_template(self):
        r = self.r
        pl = [p for p in self.pools if not self.pools[p]["n"]]
        a, b = r.sample(pl, 2)
        tok = [x for x in self.visible if x in ("prompt", "len", "new")]
        P = self.ch(*tok) if tok else str(r.randint(8, 100))
        st = [s for s in self.stages if s not in self.share_stages and self.stages[s]["kind"] != "step"]
        s1 = self.ch(*st)
        out = [f"hold {a} ({P}) {{\n  run {self.stage_ref(s1)} ({self.work()});\n}}"
               + self.ch(f" cache ({P})", "") + f" lease {a} ({self.ch('2', 'inf', '1.5', '0')})",
               self.observe(f"used({a})")]
        body = [f"run {self.stage_ref(self.ch(*st))} ({P} / 100);", f"load {b} ({self.ch(P, '0', '1')});",
                f"release {a};", self.observe(f"cachedin({a})")]
        if self.p(0.5):
            body.append(f"grow {b} ({self.ch('16', '1', self.bsname)});")
        out.append(f"hold {b} ({P}) {{\n{self.indent(body)}\n}}" + self.ch(f" cache ({P})", ""))
        if self.p(0.5):
            out.append(f"drop {a};")
        return out

    def client_body(self, server_body):
        """the workload session (server_body None) or the kernel session"""
        r = self.r
        req = ["request;"] if server_body is None else server_body
        pre = []
        if self.closed:
            pre.append(f"run gate ({self.posdist(0.5)});")
        if self.multi_turn:
            think = "think" if "think" in self.attrs else self.posdist()
            endc = self.ch("more == 0", f"turn_no >= {r.randint(1, 4)}", "more == 0 || turn_no > 4")
            loopb = ["turn;", "set t0 = now;"] + req + [self.observe("now - t0")]
            if "more" in self.attrs and self.p(0.3):
                # c07 style: turn before the loop, branch on `more`
                loopb = ["set t0 = now;"] + req + [self.observe("now - t0"),
                         f"branch (more) {{ run gate ({think}); turn; }} else {{ end; }}"]
                if "t0" not in self.attrs:
                    self.attrs.append("t0")
                return pre + ["turn;", "loop {\n" + self.indent(loopb) + "\n}"]
            if self.p(0.5):
                loopb.append(f"branch ({endc}) {{ end; }}")
                loopb.append(f"run gate ({think});")
            else:
                loopb.append(f"branch (!({endc})) {{ run gate ({think}); }} else {{ end; }}")
            if "t0" not in self.attrs:
                self.attrs.append("t0")
            return pre + ["loop {\n" + self.indent(loopb) + "\n}"]
        body = pre + ["set t0 = now;"] + req + [self.observe("now - t0")]
        if self.p(0.4):
            body.append("end;")
        if "t0" not in self.attrs:
            self.attrs.append("t0")
        return body


# compile() keyword arguments: a program may carry them on a first line `//@kw {json}`

def kwargs_of(src):
    if src.startswith("//@kw "):
        return json.loads(src.split("\n", 1)[0][6:])
    return {}


def add_kwargs(seed, src):
    r = random.Random(seed * 7 + 3)
    if r.random() > 0.25:
        return src
    kw = {}
    if r.random() < 0.5:
        kw["seed"] = r.choice([0, 1, 7, 2 ** 32 + 5, 2 ** 53 + 1, 2 ** 63 + 11, 2 ** 64 - 1, r.randint(0, 10 ** 6)])
    m = re.search(r"horizon (\d+)", src)
    if m and r.random() < 0.3:
        kw["horizon"] = max(1, int(m.group(1)) // r.choice([1, 2, 3]))
        if r.random() < 0.3:
            kw["warmup"] = r.choice([0, 0.5, 2.25])
    lets = re.findall(r"^let (\w+) = ", src, re.M)
    if lets and r.random() < 0.5:
        nm = r.choice(lets)
        kw["sets"] = {nm: r.choice([2, 0.5, 3.75, "1/4", "2 * 2", True, 16])}
    if "def svc_time" in src and r.random() < 0.5:
        kw["defs"] = {"svc_time": r.choice(["~det(x)", "x * 2", "~erlang(3, x)"])}
    if not kw:
        return src
    return "//@kw " + json.dumps(kw) + "\n" + src


# ------------------------------------------------------------------------------------------
# the mutator: the corpus's run programs with perturbed numbers and swapped options

import re

CORPUS_RUN = os.path.join(os.path.dirname(CHECK_PY), "run")
SWAPS = [
    ("evict lru", ["evict by (waiting, -age)", "evict by (-size)", "evict by (age)", "evict lru"]),
    ("preempt lifo", ["preempt none", "preempt lifo"]),
    ("preempt none", ["preempt lifo", "preempt none"]),
    ("serve admission", ["serve decode first", "serve exclusive prefill", "serve by (remaining)"]),
    ("serve decode first", ["serve admission", "serve exclusive prefill", "serve by (-admission)"]),
    ("serve exclusive prefill", ["serve admission", "serve decode first", "serve by (decoding, remaining)"]),
    ("share maxmin", ["share bottleneck"]),
    ("share bottleneck", ["share maxmin"]),
    (" ordered;", [";", " ordered;"]),
    ("queue fifo", ["queue by (serial)", "queue by (-serial)"]),
    ("arrive poisson(", ["arrive poisson(", "arrive renewal(0.3 + ~exp(1) * "]),
    ("arrive batch(", ["arrive closed(", "arrive batch("]),
    ("arrive closed(", ["arrive batch(", "arrive closed("]),
    ("~exp(", ["~exp(", "~det(", "~h2(2, 3) * (", "~erlang(2, "]),
    (": fifo(", [": fifo(", ": ps("]),
    (": delay;", [": delay;", ": fifo(2);", ": ps(1);"]),
]
NUM_RE = re.compile(r"(?<![\w.])(\d+\.\d+|\d+)(?![\w.])")


def corpus_programs():
    out = []
    if not os.path.isdir(CORPUS_RUN):
        return out
    for d in (CORPUS_RUN, os.path.join(os.path.dirname(CHECK_PY), "compile")):
        for nm in sorted(os.listdir(d)):
            if nm.endswith(".sq") and not nm.startswith("long_"):
                with open(os.path.join(d, nm)) as f:
                    txt = f.read()
                if "use " not in txt:
                    out.append((nm, txt))
    return out


_CORPUS = None


def mutate(seed):
    global _CORPUS
    if _CORPUS is None:
        _CORPUS = corpus_programs()
    r = random.Random(seed)
    rare = [c for c in _CORPUS if re.search(r"^queue |\n *(prefill|decode|tool|transfer) ", c[1], re.M)]
    nm, src = r.choice(rare if rare and r.random() < 0.3 else _CORPUS)
    lines = []
    for line in src.split("\n"):
        code, sep, comment = line.partition("//")
        if "trace" in code or code.strip().startswith("use"):
            lines.append(code)
            continue
        for a, bs in SWAPS:
            if a in code and r.random() < 0.3:
                code = code.replace(a, r.choice(bs), 1)

        def num(m):
            t = m.group(1)
            if r.random() > 0.25:
                return t
            before = code[max(0, m.start() - 10):m.start()]
            if "horizon" in before:
                return str(max(1, int(float(t) * r.uniform(0.3, 1.0))))
            if "seed" in before:
                return str(r.randint(0, 999))
            v = float(t)
            if "." in t:
                return repr(round(v * r.uniform(0.5, 2.0), 3))
            iv = int(v)
            if iv <= 1:
                return t if r.random() < 0.5 else str(iv + 1)
            return str(max(1, int(iv * r.uniform(0.5, 1.6))))
        code = NUM_RE.sub(num, code)
        lines.append(code)
    text = "\n".join(lines)
    if "horizon" not in text:
        text += f"\nrun {{ horizon {r.choice([5, 20, 50, 100])}; }}\n"
    if "seed" not in text and r.random() < 0.7:
        text += f"\nrun {{ seed {r.randint(0, 999)}; }}\n"
    return f"// mutated from {nm}\n" + text


# token-level mutation of every corpus source, compiled only (error texts and IR)

TOK_RE = re.compile(r'//[^\n]*|"[^"\n]*"|\d+\.\d*(?:[eE][-+]?\d+)?|\d+(?:[eE][-+]?\d+)?|[A-Za-z_][A-Za-z_0-9]*'
                    r'|<=|>=|==|!=|&&|\|\||[^\s]')
VOCAB = ["pool", "stage", "queue", "workload", "session", "server", "hold", "run", "set", "observe", "branch",
         "with", "else", "loop", "choose", "in", "by", "turn", "end", "request", "grow", "drop", "release",
         "load", "lease", "cache", "reuse", "reserve", "at", "admission", "growing", "prefill", "decode",
         "tool", "transfer", "from", "to", "on", "mark", "let", "def", "gauge", "share", "maxmin",
         "bottleneck", "fifo", "ps", "delay", "step", "budget", "chunk", "cost", "memory", "serve", "first",
         "exclusive", "cap", "block", "evict", "lru", "preempt", "lifo", "none", "spill", "via", "when",
         "admit", "arrive", "poisson", "batch", "closed", "renewal", "trace", "ordered", "init", "hidden",
         "horizon", "warmup", "seed", "arrivals", "inf", "now", "present", "size", "age", "waiting", "waited",
         "tokens", "decoders", "cached", "serial", "self", "sum", "max", "min", "used", "queue", "pull",
         "latency", "nic", "route", "fits", "keep", "where", "enter", "claim", "if", "while",
         "(", ")", "{", "}", "[", "]", ";", ",", ".", ":", "=", "+", "-", "*", "/", "^", "?", "!", "~",
         "<", ">", "<=", "==", "!=", "&&", "||", "0", "1", "2.5", "-1", "1e400", "0.5", "100", '"x.csv"']


def corpus_sources():
    d = os.path.dirname(CHECK_PY)
    out = []
    for sub in ("compile", "errors", "run"):
        p = os.path.join(d, sub)
        for nm in sorted(os.listdir(p)):
            if nm.endswith(".sq"):
                with open(os.path.join(p, nm)) as f:
                    out.append((f"{sub}/{nm}", f.read()))
    return out


_SOURCES = None


def token_mutate(seed, run_only=False):
    global _SOURCES
    if _SOURCES is None:
        _SOURCES = corpus_sources()
    r = random.Random(seed)
    pool = [x for x in _SOURCES if x[0].startswith("run/") and "long_" not in x[0]] if run_only else _SOURCES
    nm, src = r.choice(pool)
    toks = [m for m in TOK_RE.finditer(src) if not m.group().startswith("//")]
    if not toks:
        return nm, src
    spans = [[m.start(), m.end(), m.group()] for m in toks]
    names = sorted({t[2] for t in spans if t[2][:1].isalpha()}) or ["x"]
    for _ in range(r.choice([1, 1, 1, 2, 3])):
        i = r.randrange(len(spans))
        op = r.randrange(6)
        if op == 0:
            spans[i][2] = ""
        elif op == 1:
            spans[i][2] = spans[i][2] + " " + spans[i][2]
        elif op == 2:
            spans[i][2] = r.choice(VOCAB)
        elif op == 3:
            spans[i][2] = r.choice(names)
        elif op == 4 and i + 1 < len(spans):
            spans[i][2], spans[i + 1][2] = spans[i + 1][2], spans[i][2]
        else:
            spans[i][2] = spans[i][2] + " " + r.choice(VOCAB + names)
    out, pos = [], 0
    for a, b, t in spans:
        out.append(src[pos:a])
        out.append(t)
        pos = b
    out.append(src[pos:])
    return nm, "".join(out)


# IR-text mutation: Program.from_json error texts and to_json() of what loads

def ir_sources():
    d = os.path.dirname(CHECK_PY)
    out = []
    for sub in ("run", "compile"):
        p = os.path.join(d, sub)
        for nm in sorted(os.listdir(p)):
            if nm.endswith(".ir.json"):
                with open(os.path.join(p, nm)) as f:
                    out.append((f"{sub}/{nm}", f.read()))
    with open(os.path.join(d, "load", "cases.jsonl")) as f:
        for line in f:
            c = json.loads(line)
            out.append(("load/" + c["name"], c["ir"]))
    return out


_IRS = None
IR_VALUES = [0, 1, -1, 2.5, 1e300, -0.0, "inf", "NaN", None, True, [], {}, "", "Exp", "Fifo", "Add",
             [1, 2], {"Num": 1}, 18446744073709551616, 4294967296, 0.5, "x"]


def ir_mutate(seed):
    global _IRS
    if _IRS is None:
        _IRS = ir_sources()
    r = random.Random(seed)
    nm, text = r.choice(_IRS)
    if r.random() < 0.25 and text:
        # text-level: delete/duplicate/replace one character
        i = r.randrange(len(text))
        op = r.randrange(3)
        if op == 0:
            text = text[:i] + text[i + 1:]
        elif op == 1:
            text = text[:i] + text[i] + text[i:]
        else:
            text = text[:i] + r.choice('{}[]",:0123456789-.eE aZ') + text[i + 1:]
        return nm, text
    try:
        doc = json.loads(text)
    except Exception:
        return nm, text
    paths = []

    def walk(x, path):
        paths.append(path)
        if isinstance(x, dict):
            for k, v in x.items():
                walk(v, path + [k])
        elif isinstance(x, list):
            for i, v in enumerate(x):
                walk(v, path + [i])
    walk(doc, [])
    for _ in range(r.choice([1, 1, 2])):
        p = r.choice(paths[1:] or [[]])
        if not p:
            break
        parent = doc
        try:
            for k in p[:-1]:
                parent = parent[k]
            k = p[-1]
            op = r.randrange(5)
            if op == 0 and isinstance(parent, dict):
                del parent[k]
            elif op == 1 and isinstance(parent, dict):
                parent[k + r.choice(["", "_x", "s"])] = parent.pop(k) if r.random() < 0.5 else r.choice(IR_VALUES)
            elif op == 2 and isinstance(parent, list):
                if r.random() < 0.5:
                    parent.pop(k)
                else:
                    parent.insert(k, r.choice(IR_VALUES))
            else:
                v = parent[k]
                if isinstance(v, (int, float)) and not isinstance(v, bool) and r.random() < 0.6:
                    parent[k] = r.choice([v + 1, v - 1, -v, v * 2, 0, 1e400 if False else 1e308, 0.5])
                else:
                    parent[k] = r.choice(IR_VALUES)
        except (KeyError, IndexError, TypeError):
            pass
    return nm, json.dumps(doc, indent=r.choice([None, 2]))


# validation fuzzing: a generated program with a context variable, a draw or a live function
# put where a number or a name was

CTX_VOCAB = ["present", "waited", "size", "age", "last", "waiting", "tokens", "prefilled", "attention",
             "residents", "decoders", "kv_decode", "kv_prefill", "decoding", "admission", "remaining",
             "now", "cached", "computed", "serial", "~exp(1)", "~uniform(0, 1)", "inf", "n", "queued",
             "ntok", "nres", "kvb", "-inf", "0 / 0", "1e400", "blocksize(kv)", "self", "x1", "t0"]


def val_mutate(seed):
    r = random.Random(seed)
    src = Gen(seed).program()
    toks = [m for m in TOK_RE.finditer(src)]
    cands = [m for m in toks if re.fullmatch(r"\d+(\.\d+)?|[a-z_][a-z_0-9]*", m.group())
             and m.group() not in VOCAB[:90]]
    if not cands:
        return src
    out = src
    for m in sorted(r.sample(cands, min(len(cands), r.choice([1, 1, 2]))), key=lambda m: -m.start()):
        v = r.choice(CTX_VOCAB)
        if "kv" in v and "pool kv" not in src:
            v = "now"
        out = out[:m.start()] + v + out[m.end():]
    return out


def ir_num_mutate(seed):
    """an IR-only run case (explicit sessions) with some numbers perturbed, to be run"""
    global _IRS
    d = os.path.join(os.path.dirname(CHECK_PY), "run")
    cands = [n for n in sorted(os.listdir(d)) if n.endswith(".ir.json")
             and not os.path.exists(os.path.join(d, n[:-8] + ".sq")) and "long" not in n]
    r = random.Random(seed)
    nm = r.choice(cands)
    with open(os.path.join(d, nm)) as f:
        doc = json.load(f)

    def walk(x):
        if isinstance(x, dict):
            for k, v in x.items():
                if isinstance(v, float) and r.random() < 0.15:
                    # floats only: the ints of an IR are slots, bases, counts and indices
                    x[k] = max(0.0, v * r.choice([0.5, 2, 1.5, 0.75]))
                else:
                    walk(v)
        elif isinstance(x, list):
            for i, v in enumerate(x):
                if isinstance(v, float) and r.random() < 0.15:
                    x[i] = v * r.choice([0.5, 2, 1.5])
                else:
                    walk(v)
    walk(doc)
    return nm, json.dumps(doc, indent=2)


# ------------------------------------------------------------------------------------------
# shrinking (statement/line-wise; keeps the divergence of the same kind)

def first_line(diffs):
    return diffs[0] if diffs else ""


class Runner:
    def __init__(self, args):
        self.args = args
        work = os.path.join(args.out, "work")
        os.makedirs(work, exist_ok=True)
        tdir = os.path.join(work, "traces")
        os.makedirs(tdir, exist_ok=True)
        src_t = os.path.join(CORPUS_RUN, "traces")
        if os.path.isdir(src_t):
            for nm in os.listdir(src_t):
                with open(os.path.join(src_t, nm)) as f, open(os.path.join(tdir, nm), "w") as g:
                    g.write(f.read())
        for nm, txt in TRACES.items():
            with open(os.path.join(work, nm), "w") as f:
                f.write(txt)
        self.ref = Worker(args.ref_python, "pyserq", work)
        self.serq = Worker(args.serq_python, "serq", work)

    def both(self, src, compile_only=False, kw=None):
        self.ref.send(src, compile_only, kw)
        self.serq.send(src, compile_only, kw)
        a = self.ref.recv(self.args.timeout)
        b = self.serq.recv(self.args.timeout)
        return a, b

    def compare(self, src, compile_only=False, kw=None):
        if kw is None:
            kw = kwargs_of(src)
        a, b = self.both(src, compile_only, kw)
        if b["status"] == "timeout" and a["status"] not in ("timeout", "died"):
            # a slow run of serq on a loaded machine: once more, alone, with a longer limit
            self.serq.send(src, compile_only, kw)
            b = self.serq.recv(max(60, 6 * self.args.timeout))
        return compare(a, b), a, b


def shrink(runner, src, pred):
    """greedy removal of lines and of brace-balanced line ranges while pred(src) holds"""
    lines = src.split("\n")
    changed = True
    while changed:
        changed = False
        i = 0
        while i < len(lines):
            # try removing a balanced chunk starting at line i
            depth = 0
            for j in range(i, len(lines)):
                depth += lines[j].count("{") - lines[j].count("}")
                if depth <= 0:
                    break
            for (a, b) in ((i, j + 1), (i, i + 1)):
                cand = lines[:a] + lines[b:]
                cs = "\n".join(cand)
                if cs != "\n".join(lines) and pred(cs):
                    lines = cand
                    changed = True
                    break
            else:
                i += 1
    return "\n".join(lines)


def divergence_pred(runner, key):
    def pred(src):
        (kind, diffs), a, b = runner.compare(src)
        if kind != "diverge":
            return False
        return diffs and diffs[0].split(":")[0] == key
    return pred


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--minutes", type=float, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="/tmp/drt")
    ap.add_argument("--timeout", type=float, default=5)
    ap.add_argument("--ref-python", default="/tmp/refvenv/bin/python")
    sp = os.path.join(ROOT, ".venv", "bin", "python")
    ap.add_argument("--serq-python", default=sp if os.path.exists(sp) else sys.executable)
    ap.add_argument("--gen", type=int, default=0)
    ap.add_argument("--valmut", action="store_true",
                    help="generated programs with context variables/draws/live reads put in random places")
    ap.add_argument("--irrun", action="store_true",
                    help="IR-only run cases (explicit sessions) with perturbed numbers, loaded and run")
    ap.add_argument("--irmut", action="store_true",
                    help="IR fuzzing: mutated IR texts of the corpus through Program.from_json / to_json")
    ap.add_argument("--tokrun", action="store_true",
                    help="token-level mutations of the corpus's run programs, compiled and run")
    ap.add_argument("--tokmut", action="store_true",
                    help="compile-only fuzzing: token-level mutations of every corpus source")
    ap.add_argument("--mutate", type=float, default=0.3,
                    help="share of programs mutated from the corpus's run/*.sq instead of generated")
    ap.add_argument("--replay")
    ap.add_argument("--shrink")
    ap.add_argument("--auto-shrink", action="store_true")
    ap.add_argument("--serq-root", default=ROOT,
                    help="directory holding the serq package to test (e.g. a `git archive HEAD` copy)")
    args = ap.parse_args(argv)
    global SERQ_ROOT
    SERQ_ROOT = os.path.abspath(args.serq_root)
    if args.gen:
        for i in range(args.gen):
            print(f"// program seed {args.seed + i}")
            print(mutate(args.seed + i) if args.mutate >= 1 else Gen(args.seed + i).program())
        return 0
    runner = Runner(args)
    if args.replay or args.shrink:
        src = open(args.replay or args.shrink).read()
        (kind, diffs), a, b = runner.compare(src)
        try:
            print(kind)
            print("\n".join(diffs[:30]))
        except BrokenPipeError:
            return 0
        if args.shrink and kind == "diverge":
            key = diffs[0].split(":")[0]
            small = shrink(runner, src, divergence_pred(runner, key))
            print("---- shrunk:")
            print(small)
        return 0
    os.makedirs(os.path.join(args.out, "div"), exist_ok=True)
    os.makedirs(os.path.join(args.out, "refdefects"), exist_ok=True)
    stats = {"match": 0, "skip": 0, "refdefect": 0, "diverge": 0}
    skipmsgs = {}
    t_end = time.time() + args.minutes * 60 if args.minutes else None
    i = 0
    seen = {}
    while True:
        if t_end is not None:
            if time.time() > t_end:
                break
        elif i >= args.n:
            break
        seed = args.seed + i
        i += 1
        if args.irmut or args.irrun:
            if args.irrun:
                nm, irt = ir_num_mutate(seed)
            else:
                nm, irt = ir_mutate(seed)
            runner.ref.send("", ir=irt, run_ir=args.irrun)
            runner.serq.send("", ir=irt, run_ir=args.irrun)
            a = runner.ref.recv(args.timeout)
            b = runner.serq.recv(args.timeout)
            kind, diffs = compare(a, b)
            stats[kind] += 1
            if kind == "diverge":
                path = os.path.join(args.out, "irdiv", f"i{seed}")
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path + ".json", "w") as f:
                    f.write(irt)
                with open(path + ".note", "w") as f:
                    f.write(f"from {nm}\n" + "\n".join(diffs[:40]) + "\n")
                print(f"DIVERGE ir seed {seed} ({nm}): {diffs[0][:150]!r}", flush=True)
            if i % 500 == 0:
                print(f"[{i}] {stats}", flush=True)
            continue
        if args.tokmut or args.tokrun or args.valmut:
            if args.valmut:
                nm, src = "gen", val_mutate(seed)
            else:
                nm, src = token_mutate(seed, run_only=args.tokrun)
            (kind, diffs), a, b = runner.compare(src, compile_only=not (args.tokrun or args.valmut))
            stats[kind] += 1
            if kind == "diverge":
                path = os.path.join(args.out, "tokdiv", f"t{seed}")
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path + ".sq", "w") as f:
                    f.write(src)
                with open(path + ".note", "w") as f:
                    f.write(f"from {nm}\n" + "\n".join(diffs[:40]) + "\n")
                print(f"DIVERGE tok seed {seed} ({nm}): {diffs[0][:150]!r}", flush=True)
            if i % 500 == 0:
                print(f"[{i}] {stats}", flush=True)
            continue
        try:
            src = mutate(seed) if args.mutate and (args.mutate >= 1 or random.Random(-seed).random() < args.mutate) else Gen(seed).program()
            src = add_kwargs(seed, src)
        except Exception as e:
            print("generator error", seed, e)
            continue
        (kind, diffs), a, b = runner.compare(src)
        stats[kind] += 1
        if kind == "skip":
            m = a["msg"].split("\n")[0][:80]
            skipmsgs[m] = skipmsgs.get(m, 0) + 1
        if kind in ("diverge", "refdefect"):
            d = "div" if kind == "diverge" else "refdefects"
            path = os.path.join(args.out, d, f"s{seed}")
            with open(path + ".sq", "w") as f:
                f.write(src)
            with open(path + ".note", "w") as f:
                f.write("\n".join(diffs[:40]) + "\n")
            key = diffs[0].split(":")[0] if diffs else ""
            seen[key] = seen.get(key, 0) + 1
            if kind == "diverge":
                print(f"DIVERGE seed {seed}: {diffs[0][:200]}", flush=True)
        if i % 100 == 0:
            print(f"[{i}] {stats}", flush=True)
    print("final", stats)
    print("skips:", json.dumps(sorted(skipmsgs.items(), key=lambda x: -x[1])[:25], indent=1))
    print("divergence keys:", seen)
    with open(os.path.join(args.out, f"stats_{args.seed}.json"), "w") as f:
        json.dump({"stats": stats, "skips": skipmsgs, "keys": seen}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
