"""Regenerate tests/golden/rng/*.json: the random streams and sampling laws of pyserq 0.1.2.

Provenance: every value in these files is an output of the reference build, pyserq 0.1.2
(serQ 0.1.2, IR version 10, from PyPI), recorded by this script; nothing is computed by
serq. Run it with an interpreter that has the reference (never a dependency of serq):

    python3 -m venv /tmp/refvenv && /tmp/refvenv/bin/pip install pyserq==0.1.2
    /tmp/refvenv/bin/python tools/regen_rng_golden.py            # rewrite the golden files
    /tmp/refvenv/bin/python tools/regen_rng_golden.py --verify   # write nothing; exit 1 on a change

What is recorded:

* streams.json - `pyserq.Rng(seed)`: the first next_u32 / next_u64 / random_f64 values of
  fresh generators for several seeds (0, 1, 7, 12345, 2^63+5, 2^64-1 and the five stream
  seeds of runs seeded 1 and 7), and long random_f64 / next_u32 runs summarised by sampled
  values and a SHA-256 of the whole sequence.
* mixed.json - `pyserq.Rng(seed)` driven by scripted mixes of next_u32 / next_u64 /
  random_f64 / range calls (the script is in the file), including reads that start at
  every offset around the 64-word buffer edge and around serq's chunk edges.
* ranges.json - range_u32 / range_u64 / range_f64: small, huge and full ranges, low == high,
  and the refused ones (pyserq raises ValueError and draws nothing: the next draw shows it).
* samplers.json - runs of small programs by `pyserq.run(pyserq.compile(source=...))`: the
  observed samples of `~exp`, `~det`, `~uniform`, `~erlang`, `~h2`, `~bernoulli` (session
  stream, and the workload stream via `init`) with edge arguments (0, -0, negative, inf,
  NaN, subnormal), Poisson arrival times (arrival stream) and unordered trace choices
  (trace stream). Each case holds its program text.

Floats are written as `float.hex` strings (exact, with the sign of zero; a NaN as "nan" or
"-nan" by its sign bit, which pyserq's results carry deterministically).
The test suite never imports this file (pytest collects only test_*.py).
"""
import argparse
import hashlib
import json
import math
import pathlib
import random
import struct
import sys
import tempfile

import pyserq  # the reference build: run this script only in its virtual environment

ROOT = pathlib.Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "golden" / "rng"
M64 = (1 << 64) - 1
STREAM_XOR = {
    "arrival": 0,
    "workload": 0x9E3779B97F4A7C15,
    "session": 0x5851F42D4C957F2D,
    "evict": 0x2545F4914F6CDD1D,
    "trace": 0x6A09E667F3BCC908,
}
PROVENANCE = ("recorded from the reference build pyserq 0.1.2 (serQ 0.1.2, IR 10, PyPI) by "
              "tools/regen_rng_golden.py; floats are float.hex strings")


def hx(x):
    """float.hex, with the sign of a NaN kept ("-nan"; float.fromhex reads it back)."""
    x = float(x)
    if x != x:
        return "-nan" if math.copysign(1.0, x) < 0 else "nan"
    return x.hex()


def digest_f64(values):
    return hashlib.sha256(b"".join(struct.pack("<d", v) for v in values)).hexdigest()


def digest_u32(values):
    return hashlib.sha256(b"".join(struct.pack("<I", v) for v in values)).hexdigest()


# --------------------------------------------------------------------------- streams.json

def streams():
    seeds = [0, 1, 7, 12345, 2**63 + 5, M64]
    for base in (1, 7):
        seeds += [base ^ x for x in STREAM_XOR.values() if x]
    cases = []
    for s in seeds:
        r = pyserq.Rng(s)
        u32 = [r.next_u32() for _ in range(200)]
        r = pyserq.Rng(s)
        u64 = [r.next_u64() for _ in range(150)]
        r = pyserq.Rng(s)
        f64 = [hx(r.random_f64()) for _ in range(150)]
        cases.append({"seed": s, "u32": u32, "u64": u64, "f64": f64})
    deep = []
    for s, n in ((1, 200000), (2**63 + 5, 50000), (7 ^ STREAM_XOR["session"], 200000)):
        r = pyserq.Rng(s)
        vals = [r.random_f64() for _ in range(n)]
        deep.append({"seed": s, "kind": "f64", "n": n, "every": 997,
                     "sampled": [hx(v) for v in vals[::997]], "sha256": digest_f64(vals)})
    for s, n in ((2, 150001),):
        r = pyserq.Rng(s)
        vals = [r.next_u32() for _ in range(n)]
        deep.append({"seed": s, "kind": "u32", "n": n, "every": 991,
                     "sampled": vals[::991], "sha256": digest_u32(vals)})
    return {"provenance": PROVENANCE + "; pyserq.Rng(seed) fresh generators",
            "cases": cases, "deep": deep,
            "digest": "sha256 of the values packed little-endian ('<d' for f64, '<I' for u32)"}


# --------------------------------------------------------------------------- mixed.json

def apply(r, op):
    """Run one scripted op on pyserq.Rng r; returns the JSON-able result."""
    name = op[0]
    try:
        if name == "u32":
            return r.next_u32()
        if name == "u64":
            return r.next_u64()
        if name == "f64":
            return hx(r.random_f64())
        if name == "ru32":
            return r.range_u32(op[1], op[2])
        if name == "ru64":
            return r.range_u64(op[1], op[2])
        if name == "rf64":
            return hx(r.range_f64(float.fromhex(op[1]), float.fromhex(op[2])))
    except ValueError as e:
        return "ValueError: " + str(e)
    raise AssertionError(name)


def random_ops(rnd, count, weights):
    ops = []
    for _ in range(count):
        c = rnd.choices(range(6), weights)[0]
        if c == 0:
            ops.append(["u32"])
        elif c == 1:
            ops.append(["u64"])
        elif c == 2:
            ops.append(["f64"])
        elif c == 3:
            n = rnd.choice([1, 2, 3, 7, 1000, 2**31 + 1, 2**32 - 1, 2**32, rnd.randrange(1, 2**32)])
            lo = rnd.randrange(2**32 - n + 1)
            ops.append(["ru32", lo, lo + n - 1])
        elif c == 4:
            n = rnd.choice([1, 5, 2**32, 2**63 + 1, 2**64 - 1, 2**64, rnd.randrange(1, 2**64)])
            lo = rnd.randrange(2**64 - n + 1)
            ops.append(["ru64", lo, lo + n - 1])
        else:
            lo = rnd.uniform(-100, 100)
            ops.append(["rf64", hx(lo), hx(lo + rnd.choice([0.0, 1.0, rnd.random() * 50]))])
    return ops


def mixed():
    rnd = random.Random(20240612)
    programs = []
    for seed, count, weights in ((1, 4000, [3, 2, 5, 1, 1, 1]), (2**63 + 5, 4000, [1, 1, 8, 0, 0, 0]),
                                 (M64, 3000, [4, 1, 1, 0, 0, 0]),
                                 (5 ^ STREAM_XOR["trace"], 3000, [1, 1, 1, 3, 1, 1])):
        ops = random_ops(rnd, count, weights)
        r = pyserq.Rng(seed)
        programs.append({"seed": seed, "ops": [op + [apply(r, op)] for op in ops]})
    # every start offset around the 64-word buffer edges and serq's chunk edges below 262144
    # (a first chunk of 4 blocks, then 64, 128, ... blocks: word offsets 64, 1088, 3136,
    # 7232, ...; up to 4096 blocks with numpy, and every 4096 words from 7232 on compiled,
    # whose chunks stop doubling at 256 blocks)
    edges = []
    for base in (64, 128, 192, 1088, 3136, *range(7232, 262144, 4096)):
        for off in (-3, -2, -1, 0, 1, 2):
            edges.append(base + off)
    for seed in (3, 2**64 - 2):
        for skip in edges:
            for tail in (["u64", "f64", "u32", "f64", "u64"], ["f64", "f64", "u32", "u32", "u64"]):
                r = pyserq.Rng(seed)
                last = None
                for _ in range(skip):
                    last = r.next_u32()
                programs.append({"seed": seed, "skip_u32": skip, "last_skipped": last,
                                 "ops": [[t, apply(r, [t])] for t in tail]})
    return {"provenance": PROVENANCE + "; pyserq.Rng(seed) driven by the scripted ops",
            "ops": "u32/u64/f64: next_u32/next_u64/random_f64; ru32/ru64/rf64 low high: "
                   "range_u32/range_u64/range_f64; the last item is the result ('ValueError: ...' "
                   "when pyserq raised); skip_u32: next_u32 calls before the ops (last_skipped "
                   "is the last of them)",
            "programs": programs}


# --------------------------------------------------------------------------- ranges.json

def ranges():
    inf, nan = math.inf, math.nan
    calls = []
    u32_cases = [(0, 0), (5, 5), (2**32 - 1, 2**32 - 1), (0, 1), (0, 2), (0, 9), (10, 20),
                 (0, 2**31), (0, 2**31 - 1), (1, 2**32 - 1), (0, 2**32 - 2), (0, 2**32 - 1),
                 (123456, 4000000000), (7, 3), (2**32 - 1, 0)]
    u64_cases = [(0, 0), (9, 9), (M64, M64), (0, 1), (0, 6), (0, 2**32 - 1), (0, 2**32),
                 (0, 2**63), (0, 2**63 - 1), (1, M64), (0, M64 - 1), (0, M64),
                 (2**40, 2**62 + 12345), (8, 2), (M64, 0)]
    f64_cases = [(0.0, 1.0), (-1.0, 1.0), (3.0, 3.0), (-0.0, -0.0), (-0.0, 0.0), (0.0, -0.0),
                 (5e-324, 1e-323), (1e300, 1.7976931348623157e308), (-1e308, 0.0),
                 (-1.7976931348623157e308, -1e300), (2.5, 1e9), (1.0, 2.0),
                 (5.0, 3.0), (nan, 1.0), (0.0, nan), (-inf, inf), (0.0, inf), (inf, inf),
                 (-inf, -inf), (-1e308, 1e308)]
    for seed in (0, 1, 2**63 + 5):
        r = pyserq.Rng(seed)
        seq = []
        for rep in range(3):
            for lo, hi in u32_cases:
                seq.append(["ru32", lo, hi])
                seq.append(["u32"])
            for lo, hi in u64_cases:
                seq.append(["ru64", lo, hi])
                seq.append(["u32"])
            for lo, hi in f64_cases:
                seq.append(["rf64", hx(lo), hx(hi)])
                seq.append(["u32"])
        calls.append({"seed": seed, "ops": [op + [apply(r, op)] for op in seq]})
    # many draws of a few ranges (the rejection branch of the canon method is rare for
    # small spans and frequent for spans just above a power of two)
    bulk = []
    for seed, kind, lo, hi, n in ((11, "ru32", 0, 2**31, 2000), (12, "ru32", 3, 2**32 - 2, 2000),
                                  (13, "ru64", 0, 2**63, 2000), (14, "ru64", 1, 2**64 - 3, 2000),
                                  (15, "ru32", 0, 5, 2000), (16, "ru64", 100, 2**33 + 7, 2000)):
        r = pyserq.Rng(seed)
        vals = [apply(r, [kind, lo, hi]) for _ in range(n)]
        bulk.append({"seed": seed, "op": [kind, lo, hi], "values": vals})
    return {"provenance": PROVENANCE + "; pyserq.Rng(seed).range_*; each range call is "
                                       "followed by a next_u32 that shows what it consumed",
            "programs": calls, "bulk": bulk}


# --------------------------------------------------------------------------- samplers.json

def ir_seed(program):
    """The seed the run uses: the IR's (a program's numbers are f64, so `seed 2^63+5` is
    2^63); the cases record it, not the literal of the program text."""
    return json.loads(program.to_json())["seed"]


def lit(x):
    """Source text for the value x. The language has no NaN literal: `0/0` evaluates (at
    run time, on x86) to the NaN with the sign bit set and `-(0/0)` to the positive one."""
    if x != x:
        return "(0/0)" if math.copysign(1.0, x) < 0 else "(-(0/0))"
    if x == math.inf:
        return "inf"
    if x == -math.inf:
        return "(-inf)"
    if x == 0 and math.copysign(1.0, x) < 0:
        return "(-0)"
    return repr(x) if x >= 0 else "(-%r)" % (-x)


def session_case(stmts, n, seed, stream="session"):
    """stmts: list of (name, dist, args); the session (or init block) sets and observes each."""
    body = " ".join(f"set {v} = ~{d}({', '.join(lit(a) for a in args)}); observe {v} = {v};"
                    for v, d, args in stmts)
    if stream == "session":
        src = (f"workload {{ arrive batch({n}); }}\nsession {{ {body} end; }}\n"
               f"run {{ horizon 10; seed {seed}; }}\n")
    else:
        src = (f"workload {{ arrive batch({n}); init {{ {body} }} }}\nsession {{ end; }}\n"
               f"run {{ horizon 10; seed {seed}; }}\n")
    prog = pyserq.compile(source=src)
    rep = pyserq.run(prog)
    obs = {v: [hx(x) for x in rep.observe(v).samples] for v, _, _ in stmts}
    for v in obs:
        assert len(obs[v]) == n, (src, v, len(obs[v]))
    return {"program": src, "stream": stream, "seed": ir_seed(prog), "sessions": n,
            "draws": [[v, d, [hx(a) for a in args]] for v, d, args in stmts], "observed": obs}


def samplers():
    nan, inf = math.nan, math.inf
    nnan = -math.nan                     # the NaN with the sign bit set (what `0/0` gives)
    E = [0.0, -0.0, 1.0, -1.0, 2.5, nan, nnan, inf, -inf, 1e-320, 1e308, -3.7]
    cases = []
    seed = 100
    def add(stmts, n=12, stream="session"):
        nonlocal seed
        seed += 1
        cases.append(session_case(stmts, n, seed, stream))
    for m in E:
        add([("x", "exp", [m])])
        add([("x", "bernoulli", [m])])
        add([("x", "det", [m])], n=3)
    for p in (0.3, 0.999, 0.5):
        add([("x", "bernoulli", [p])], n=40)
    for a in (0.0, -0.0, 2.0, -1.0, nan, nnan, inf, -inf, 1e308):
        for b in (0.0, -0.0, 5.0, -1.0, nan, nnan, inf, -inf, -1e308):
            add([("x", "uniform", [a, b])], n=6)
    for m in (0.0, -0.0, 2.0, -1.0, nan, nnan, inf, 1e-320, 5e-324, 1e-310,
              1.7976931348623157e308):
        for c in (0.0, 0.5, 1.0, 1.0000001, 4.0, 100.0, 1e20, nan, nnan, inf, -2.0):
            add([("x", "h2", [m, c])], n=10)
    rnd = random.Random(7)
    for _ in range(25):
        m = rnd.choice([rnd.uniform(0, 10), 10 ** rnd.uniform(-300, 300)])
        c = rnd.choice([rnd.uniform(1, 20), 10 ** rnd.uniform(0, 30), 1 + rnd.random() * 1e-8])
        add([("x", "h2", [m, c])], n=20)
    for k in (0.0, -0.0, 1.0, 2.7, 3.0, nan, nnan, -inf, -5.0, 0.999, 1.999, 7.5, 40.0):
        for m in (0.0, -0.0, 6.0, -1.0, nan, nnan, inf, -inf, 1e-320):
            add([("x", "erlang", [k, m])], n=6)
    # the probe p36 mix (several laws per session, draws interleaved in statement order)
    mix = [("a", "uniform", [2.0, 5.0]), ("b", "erlang", [3.0, 6.0]), ("c", "h2", [2.0, 4.0]),
           ("d", "bernoulli", [0.3]), ("e", "det", [7.0]), ("f", "exp", [2.0])]
    add(mix, n=60)
    add(mix, n=60, stream="workload")
    add([("x", "exp", [2.0]), ("y", "h2", [1.5, 9.0])], n=80, stream="workload")
    arrivals = []
    for seed, rate in ((5, 0.7), (6, 3.0), (7, 1.0 / 3.0), (8, 0.007), (2**63 + 5, 12.5),
                       (2**63 + 2048, 1.25), (M64, 2.0)):
        horizon = 2000.0 if rate < 10 else 200.0
        src = (f"workload {{ arrive poisson({rate!r}); }}\nsession {{ observe t = now; end; }}\n"
               f"run {{ horizon {horizon!r}; seed {seed}; }}\n")
        prog = pyserq.compile(source=src)
        t = pyserq.run(prog).observe("t").samples
        arrivals.append({"program": src, "stream": "arrival", "seed": ir_seed(prog), "rate": hx(rate),
                         "times": [hx(x) for x in t]})
    traces = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed, n, sessions in ((11, 7, 300), (12, 1, 20), (13, 2, 200), (14, 1000, 300),
                                  (2**62 + 2**40, 3, 100)):
            path = pathlib.Path(tmp) / f"tr{n}.csv"
            path.write_text("session,turn,new,out,think\n"
                            + "".join(f"{s},0,{s},1,0\n" for s in range(n)))
            src = (f'workload {{ arrive batch({sessions}); trace "{path}";\n'
                   f"  session {{ turn; request; end; }} }}\nserver {{ observe n = new; }}\n"
                   f"run {{ horizon 10; seed {seed}; }}\n")
            prog = pyserq.compile(source=src)
            picks = pyserq.run(prog).observe("n").samples
            traces.append({"program": src.replace(str(path), f"tr{n}.csv"), "stream": "trace",
                           "seed": ir_seed(prog), "n": n, "picks": [int(x) for x in picks],
                           "trace": f"tr{n}.csv: sessions 0..{n - 1}, one turn each, new = "
                                    "the session number"})
    return {"provenance": PROVENANCE + "; observed samples of pyserq.run on each case's program",
            "laws": "session/workload cases: sessions run in serial order, each making its draws "
                    "in statement order from Rng(seed ^ STREAM_XOR[stream]); arrivals: times of "
                    "Poisson arrivals (the first at 0, then cumulative gaps from Rng(seed)); "
                    "traces: the session index chosen for each spawned session",
            "sessions": cases, "arrivals": arrivals, "traces": traces}


# --------------------------------------------------------------------------- main

def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--verify", action="store_true", help="write nothing; exit 1 if a file would change")
    opts = ap.parse_args()
    if pyserq.__version__ != "0.1.2":
        print(f"expected pyserq 0.1.2, found {pyserq.__version__}", file=sys.stderr)
        return 2
    changed = 0
    OUT.mkdir(parents=True, exist_ok=True)
    for name, make in (("streams", streams), ("mixed", mixed), ("ranges", ranges),
                       ("samplers", samplers)):
        text = json.dumps(make(), indent=None, separators=(",", ":")) + "\n"
        out = OUT / f"{name}.json"
        old = out.read_text(encoding="utf-8") if out.exists() else None
        if old == text:
            continue
        changed += 1
        print(("would write " if opts.verify else "wrote ") + str(out.relative_to(ROOT)))
        if not opts.verify:
            out.write_text(text, encoding="utf-8", newline="\n")
    return 1 if opts.verify and changed else 0


if __name__ == "__main__":
    sys.exit(main())
