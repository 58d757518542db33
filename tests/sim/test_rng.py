"""serq.sim.rng against values recorded from the reference build, pyserq 0.1.2.

The golden files tests/golden/rng/*.json were written by tools/regen_rng_golden.py running
pyserq 0.1.2 (see its docstring and each file's "provenance" field); floats are float.hex
strings. Every check runs on both keystream backends: numpy (the default) and the
pure-Python fallback (forced with `backend="python"` and with the module flag USE_NUMPY).
"""
import hashlib
import json
import math
import pathlib
import struct

import pytest

from serq.sim import rng as R

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "golden" / "rng"
BACKENDS = ["numpy", "python"] if R.HAVE_NUMPY else ["python"]


def load(name):
    return json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8"))


STREAMS, MIXED, RANGES, SAMPLERS = (load(n) for n in ("streams", "mixed", "ranges", "samplers"))


def fx(h):
    return float.fromhex(h)


def same_float(got, want_hex):
    """Bit-exact comparison: the sign of a zero and the sign bit of a NaN included (the
    NaNs here are all the default quiet NaN, with either sign)."""
    want = fx(want_hex)
    if (want != want) != (got != got):
        return False
    return (got != got or got == want) and math.copysign(1.0, got) == math.copysign(1.0, want)


def apply(r, op):
    name = op[0]
    try:
        if name == "u32":
            return r.next_u32()
        if name == "u64":
            return r.next_u64()
        if name == "f64":
            return r.random_f64().hex()
        if name == "ru32":
            return r.range_u32(op[1], op[2])
        if name == "ru64":
            return r.range_u64(op[1], op[2])
        if name == "rf64":
            return r.range_f64(fx(op[1]), fx(op[2])).hex()
    except ValueError as e:
        return "ValueError: " + str(e)
    raise AssertionError(name)


def test_golden_files_have_provenance():
    for data in (STREAMS, MIXED, RANGES, SAMPLERS):
        assert "pyserq 0.1.2" in data["provenance"]


# --------------------------------------------------------------------------- generator

@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", STREAMS["cases"], ids=lambda c: str(c["seed"]))
def test_fresh_streams(case, backend):
    r = R.Rng(case["seed"], backend=backend)
    assert [r.next_u32() for _ in case["u32"]] == case["u32"]
    r = R.Rng(case["seed"], backend=backend)
    assert [r.next_u64() for _ in case["u64"]] == case["u64"]
    r = R.Rng(case["seed"], backend=backend)
    assert [r.random_f64().hex() for _ in case["f64"]] == case["f64"]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", STREAMS["deep"], ids=lambda c: f'{c["kind"]}-{c["seed"]}')
def test_long_streams(case, backend):
    n = case["n"] if backend == "numpy" else min(case["n"], 3000)
    r = R.Rng(case["seed"], backend=backend)
    if case["kind"] == "f64":
        vals = [r.random_f64() for _ in range(n)]
        assert [v.hex() for v in vals[::case["every"]]] == case["sampled"][:len(vals[::case["every"]])]
        packed = b"".join(struct.pack("<d", v) for v in vals)
    else:
        vals = [r.next_u32() for _ in range(n)]
        assert vals[::case["every"]] == case["sampled"][:len(vals[::case["every"]])]
        packed = b"".join(struct.pack("<I", v) for v in vals)
    if n == case["n"]:
        assert hashlib.sha256(packed).hexdigest() == case["sha256"]
    assert r.position == n * (2 if case["kind"] == "f64" else 1)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("prog", MIXED["programs"][:4], ids=lambda p: str(p["seed"]))
def test_mixed_reads(prog, backend):
    r = R.Rng(prog["seed"], backend=backend)
    ops = prog["ops"] if backend == "numpy" else prog["ops"][:1500]
    got = [apply(r, op[:-1]) for op in ops]
    assert got == [op[-1] for op in ops]


@pytest.mark.parametrize("backend", BACKENDS)
def test_reads_at_buffer_and_chunk_edges(backend):
    """Reads starting at each recorded offset: one generator walks the stream (mostly by
    random_f64) and a copy of it makes the recorded reads at each offset."""
    progs = [p for p in MIXED["programs"] if "skip_u32" in p]
    assert len(progs) > 100
    for seed in sorted({p["seed"] for p in progs}):
        walker = R.Rng(seed, backend=backend)
        for p in sorted((p for p in progs if p["seed"] == seed), key=lambda p: p["skip_u32"]):
            k = p["skip_u32"]
            if backend == "python" and not R.COMPILED and k > 2000:  # (pure Python: slow)
                continue
            while walker.position < k - 2:
                walker.random_f64()
            if walker.position < k - 1:
                walker.next_u32()
            r = walker.copy()
            assert r.position == k - 1
            assert r.next_u32() == p["last_skipped"], k
            assert [apply(r, op[:-1]) for op in p["ops"]] == [op[-1] for op in p["ops"]], k


def test_copy_is_independent():
    a = R.Rng(21)
    for _ in range(37):
        a.next_u32()
    b = a.copy()
    xs = [a.random_f64() for _ in range(5000)]
    assert [b.random_f64() for _ in range(5000)] == xs
    assert a.position == b.position


@pytest.mark.parametrize("backend", BACKENDS)
def test_edge_offsets_cover_the_chunk_edges(backend):
    """The recorded edge offsets include every chunk edge of serq's keystream below 262144
    words (so test_reads_at_buffer_and_chunk_edges reads across each of them)."""
    offsets = {p["skip_u32"] for p in MIXED["programs"] if "skip_u32" in p}
    r = R.Rng(1, backend=backend)
    edges = set()
    limit = 262144 if backend == "numpy" or R.COMPILED else 256   # (Rng._refill)
    while r.position < limit:
        r.random_f64()
        if r.position - r.chunk_base == 2:   # a chunk started with this draw
            edges.add(r.position - 2)
    edges.discard(0)
    assert edges and all({e - 2, e - 1, e, e + 1} <= offsets for e in edges), sorted(edges)


@pytest.mark.parametrize("backend", BACKENDS)
def test_ranges(backend):
    for prog in RANGES["programs"]:
        r = R.Rng(prog["seed"], backend=backend)
        got = [apply(r, op[:-1]) for op in prog["ops"]]
        assert got == [op[-1] for op in prog["ops"]]
    for bulk in RANGES["bulk"]:
        r = R.Rng(bulk["seed"], backend=backend)
        assert [apply(r, bulk["op"]) for _ in bulk["values"]] == bulk["values"]


def test_ranges_cover_the_edge_cases():
    ops = [op for p in RANGES["programs"] for op in p["ops"]]
    assert ["ru32", 0, 2**32 - 1] in [op[:3] for op in ops]
    assert ["ru64", 0, 2**64 - 1] in [op[:3] for op in ops]
    refused = [op for op in ops if isinstance(op[-1], str) and op[-1].startswith("ValueError")]
    assert {op[0] for op in refused} == {"ru32", "ru64", "rf64"}
    assert all(op[-1] == "ValueError: an empty or unbounded range" for op in refused)


def test_range_refusal_draws_nothing():
    a, b = R.Rng(9), R.Rng(9)
    for bad in ((lambda: a.range_u32(5, 3)), (lambda: a.range_u64(2, 1)),
                (lambda: a.range_f64(1.0, 0.0)), (lambda: a.range_f64(0.0, math.inf)),
                (lambda: a.range_f64(math.nan, 1.0)), (lambda: a.range_f64(-1e308, 1e308))):
        with pytest.raises(ValueError, match="an empty or unbounded range"):
            bad()
    assert a.next_u32() == b.next_u32()


def test_argument_errors():
    for seed in (-1, 2**64, 2**70):
        with pytest.raises(ValueError, match="u64"):
            R.Rng(seed)
    for seed in (1.0, "1", None):
        with pytest.raises(TypeError):
            R.Rng(seed)
    assert R.Rng(True).next_u32() == R.Rng(1).next_u32()   # a bool is an int, as in pyserq
    r = R.Rng(0)
    with pytest.raises(ValueError, match="u32"):
        r.range_u32(0, 2**32)
    with pytest.raises(ValueError, match="u32"):
        r.range_u32(-1, 3)
    with pytest.raises(ValueError, match="u64"):
        r.range_u64(0, 2**64)
    with pytest.raises(TypeError):
        r.range_u32(0.0, 3)
    with pytest.raises(TypeError):
        r.range_f64("a", 1.0)
    assert r.range_f64(1, 1) == 1.0
    with pytest.raises(ValueError):
        R.Rng(0, backend="fortran")


def test_module_flag_forces_the_fallback(monkeypatch):
    monkeypatch.setattr(R, "USE_NUMPY", False)
    r = R.Rng(1)
    assert r.backend == "python"
    case = next(c for c in STREAMS["cases"] if c["seed"] == 1)
    assert [r.random_f64().hex() for _ in case["f64"]] == case["f64"]


@pytest.mark.skipif(not R.HAVE_NUMPY, reason="numpy not importable")
def test_backends_agree_on_long_mixed_runs():
    import random
    rnd = random.Random(3)
    a, b = R.Rng(77, backend="numpy"), R.Rng(77, backend="python")
    for _ in range(6000):
        c = rnd.randrange(4)
        if c == 0:
            assert a.next_u32() == b.next_u32()
        elif c == 1:
            assert a.next_u64() == b.next_u64()
        elif c == 2:
            assert a.random_f64() == b.random_f64()
        else:
            assert R.trace_pick(a, 13) == R.trace_pick(b, 13)
    assert a.position == b.position


def test_stream_seeds():
    assert R.stream_seed(1, "arrival") == 1
    assert R.stream_seed(1, "workload") == 1 ^ 0x9E3779B97F4A7C15
    assert R.stream_seed(1, "session") == 1 ^ 0x5851F42D4C957F2D
    assert R.stream_seed(1, "evict") == 1 ^ 0x2545F4914F6CDD1D
    assert R.stream_seed(1, "trace") == 1 ^ 0x6A09E667F3BCC908
    # spec reference_rng.py: first uniforms of the workload / session streams of seed 1
    assert R.Rng(R.stream_seed(1, "workload")).random_f64() == 0.9221439071583398
    assert R.Rng(R.stream_seed(1, "session")).random_f64() == 0.1268258148947381


# --------------------------------------------------------------------------- samplers

LAWS = {   # a law's draw, with the samplers of module `m`
    "exp": lambda m, rng, a: m.sample_exp(rng, a[0]),
    "det": lambda m, rng, a: m.sample_det(a[0]),
    "uniform": lambda m, rng, a: m.sample_uniform(rng, a[0], a[1]),
    "erlang": lambda m, rng, a: m.sample_erlang(rng, a[0], a[1]),
    "h2": lambda m, rng, a: m.sample_h2(rng, a[0], a[1]),
    "bernoulli": lambda m, rng, a: m.sample_bernoulli(rng, a[0]),
}
KIND = {"exp": "Exp", "det": "Det", "uniform": "Uniform", "erlang": "Erlang", "h2": "H2",
        "bernoulli": "Bernoulli"}


def replay(case, backend, via_dispatch=False, mod=R):
    rng = mod.Rng(mod.stream_seed(case["seed"], case["stream"]), backend=backend)
    got = {name: [] for name, _, _ in case["draws"]}
    for _ in range(case["sessions"]):
        for name, dist, args in case["draws"]:
            args = [fx(a) for a in args]
            if via_dispatch:
                got[name].append(mod.sample(rng, KIND[dist], args))
            else:
                got[name].append(LAWS[dist](mod, rng, args))
    return got


def check_case(case, backend, via_dispatch=False, mod=R):
    got = replay(case, backend, via_dispatch, mod)
    for name, want in case["observed"].items():
        bad = [(i, g, w) for i, (g, w) in enumerate(zip(got[name], want)) if not same_float(g, w)]
        assert not bad and len(got[name]) == len(want), (case["program"], name, bad[:3])


@pytest.mark.parametrize("backend", BACKENDS)
def test_sampling_laws(backend):
    for case in SAMPLERS["sessions"]:
        check_case(case, backend)


def test_sampling_through_dispatch():
    for case in SAMPLERS["sessions"][::7]:
        check_case(case, BACKENDS[0], via_dispatch=True)
    with pytest.raises(ValueError):
        R.sample(R.Rng(0), "Weibull", [1.0])


def dist_cases(dist):
    return [c for c in SAMPLERS["sessions"] if any(d == dist for _, d, _ in c["draws"])]


def test_edge_cases_present():
    """The recorded cases include the edge arguments the laws must get right."""
    erl = [tuple(fx(a) for a in c["draws"][0][2]) for c in dist_cases("erlang")
           if len(c["draws"]) == 1]
    ks = {k for k, _ in erl}
    assert any(k != k for k in ks) and 0.0 in ks and 2.7 in ks and -math.inf in ks
    # erlang(1, -0): the sum starts at -0.0 (a 0.0 start would give +0.0)
    case = next(c for c in dist_cases("erlang")
                if len(c["draws"]) == 1 and c["draws"][0][2] == [(1.0).hex(), (-0.0).hex()])
    assert all(v == (-0.0).hex() for v in case["observed"]["x"])
    # a NaN argument of either sign (its sign bit shows in the result: `~exp` flips it,
    # `~erlang` keeps it)
    for dist in ("exp", "erlang", "h2", "uniform", "det"):
        argsets = [c["draws"][0][2] for c in dist_cases(dist) if len(c["draws"]) == 1]
        assert any("nan" in a for a in argsets) and any("-nan" in a for a in argsets), dist
    case = next(c for c in dist_cases("erlang")
                if len(c["draws"]) == 1 and c["draws"][0][2] == [(2.7).hex(), "-nan"])
    assert set(case["observed"]["x"]) == {"-nan"}
    case = next(c for c in dist_cases("exp") if c["draws"][0][2] == ["-nan"])
    assert set(case["observed"]["x"]) == {"nan"}
    h2 = [tuple(fx(a) for a in c["draws"][0][2]) for c in dist_cases("h2") if len(c["draws"]) == 1]
    assert any(c != c for _, c in h2) and any(c < 1 for _, c in h2) and any(m == 5e-324 for m, _ in h2)


def test_erlang_k():
    assert R.erlang_k(math.nan) == 1
    assert R.erlang_k(-math.inf) == 1
    assert R.erlang_k(0.0) == 1
    assert R.erlang_k(1.999) == 1
    assert R.erlang_k(2.7) == 2
    assert R.erlang_k(4294967294.5) == 4294967294
    assert R.erlang_k(1e300) == 4294967295
    assert R.erlang_k(math.inf) == 4294967295


def test_samplers_draw_counts():
    def used(f):
        r = R.Rng(5)
        f(r)
        return r.position // 2
    assert used(lambda r: R.sample_det(3.0)) == 0
    assert used(lambda r: R.sample_exp(r, 1.0)) == 1
    assert used(lambda r: R.sample_uniform(r, 0.0, 1.0)) == 1
    assert used(lambda r: R.sample_bernoulli(r, 0.5)) == 1
    assert used(lambda r: R.sample_h2(r, 1.0, 4.0)) == 2
    assert used(lambda r: R.sample_erlang(r, 3.9, 1.0)) == 3
    assert used(lambda r: R.sample_erlang(r, math.nan, 1.0)) == 1
    assert used(lambda r: R.poisson_gap(r, 2.0)) == 1


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", SAMPLERS["arrivals"], ids=lambda c: str(c["seed"]))
def test_poisson_arrivals(case, backend):
    rng = R.Rng(R.stream_seed(case["seed"], "arrival"), backend=backend)
    rate = fx(case["rate"])
    t, got = 0.0, [0.0]
    for _ in range(len(case["times"]) - 1):
        t = t + R.poisson_gap(rng, rate)
        got.append(t)
    assert [x.hex() for x in got] == case["times"]


def test_poisson_gap_zero_rate_is_ieee():
    assert R.poisson_gap(R.Rng(1), 0.0) == math.inf
    assert R.poisson_gap(R.Rng(1), -0.0) == -math.inf


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", SAMPLERS["traces"], ids=lambda c: str(c["n"]))
def test_trace_picks(case, backend):
    rng = R.Rng(R.stream_seed(case["seed"], "trace"), backend=backend)
    assert [R.trace_pick(rng, case["n"]) for _ in case["picks"]] == case["picks"]


def test_trace_pick_bounds():
    with pytest.raises(ValueError):
        R.trace_pick(R.Rng(0), 0)
    a, b = R.Rng(4), R.Rng(4)
    assert R.trace_pick(a, 2**32) == b.next_u32()      # the full u32 range is a plain draw
    a, b = R.Rng(4), R.Rng(4)
    assert R.trace_pick(a, 2**40) == b.range_u64(0, 2**40 - 1)


def test_module_without_numpy(monkeypatch):
    """With numpy not importable the module loads, picks the fallback, and is exact."""
    import importlib.util
    import sys
    monkeypatch.setitem(sys.modules, "numpy", None)     # makes `import numpy` fail
    source = pathlib.Path(R.__file__).with_name("rng.py")   # R may be the compiled module
    spec = importlib.util.spec_from_file_location("_rng_without_numpy", source)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert not mod.HAVE_NUMPY and not mod.USE_NUMPY
    r = mod.Rng(2**64 - 1)
    assert r.backend == "python"
    case = next(c for c in STREAMS["cases"] if c["seed"] == 2**64 - 1)
    assert [r.random_f64().hex() for _ in case["f64"]] == case["f64"]
    with pytest.raises(ValueError, match="numpy"):
        mod.Rng(1, backend="numpy")


# --------------------------------------------------------------------------- compiled vs interpreted

SOURCE = pathlib.Path(R.__file__).with_name("rng.py")
EDGE = [0.0, -0.0, 1.0, 2.5, -3.0, 0.3, 1e-300, 5e-324, 1e300, math.inf, -math.inf,
        math.nan, -math.nan]


def load_interpreted(name="_rng_interpreted"):
    """serq/sim/rng.py run by the interpreter (whatever `serq.sim.rng` imported as)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, SOURCE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert not mod.COMPILED
    return mod


def bits(x):
    """A float's exact bits (the sign of a zero and of a NaN included)."""
    return struct.pack("<d", x).hex()


def draw_all(mod, backend):
    """Many draws of every read and every sampler of `mod`, as exact values: long streams
    across the chunk edges, random mixes of reads and ranges, and every law on a grid of
    edge arguments (zeros of both signs, subnormals, infinities, NaNs of both signs)."""
    import random
    out = {}
    for seed in (0, 1, 12345, 2**63, 2**64 - 1):
        r = mod.Rng(seed, backend=backend)
        n = 150_000 if backend == "numpy" else 3_000
        out[f"f64 {seed}"] = hashlib.sha256(
            b"".join(struct.pack("<d", r.random_f64()) for _ in range(n))).hexdigest()
        out[f"u32 {seed}"] = [r.next_u32() for _ in range(999)]
        out[f"u64 {seed}"] = [r.next_u64() for _ in range(999)]
        rnd = random.Random(seed)
        mixed = []
        for _ in range(6000):
            c = rnd.randrange(7)
            if c == 0:
                mixed.append(r.next_u32())
            elif c == 1:
                mixed.append(r.next_u64())
            elif c == 2:
                mixed.append(bits(r.random_f64()))
            elif c == 3:
                mixed.append(r.range_u32(rnd.randrange(2**32), 2**32 - 1))
            elif c == 4:
                mixed.append(r.range_u64(0, rnd.choice([1, 6, 2**40, 2**63 + 1, 2**64 - 1])))
            elif c == 5:
                mixed.append(bits(r.range_f64(rnd.choice([-1e300, -1.0, 0.0]), 1e-3)))
            else:
                mixed.append(mod.trace_pick(r, rnd.choice([1, 7, 1000, 2**32, 2**33])))
            if rnd.random() < 0.01:
                r = r.copy()
        out[f"mixed {seed}"] = mixed
        out[f"position {seed}"] = r.position
    r = mod.Rng(99, backend=backend)
    laws = []
    for a in EDGE:
        laws.append(("exp", [bits(mod.sample_exp(r, a)) for _ in range(3)]))
        laws.append(("bernoulli", [bits(mod.sample_bernoulli(r, a)) for _ in range(3)]))
        laws.append(("gap", [bits(mod.poisson_gap(r, a)) for _ in range(3)]))
        laws.append(("k", mod.erlang_k(a)))
        for b in EDGE:
            laws.append(("uniform", [bits(mod.sample_uniform(r, a, b)) for _ in range(3)]))
            laws.append(("h2", [bits(mod.sample_h2(r, a, b)) for _ in range(3)]))
            laws.append(("div", bits(mod._ieee_div(a, b))))
            if mod.erlang_k(a) <= 5:
                laws.append(("erlang", [bits(mod.sample_erlang(r, a, b)) for _ in range(2)]))
    for kind, args in (("Exp", [2.0]), ("Det", [7.0]), ("Uniform", [1.0, 3.0]),
                       ("Erlang", [3.0, 6.0]), ("H2", [2.0, 4.0]), ("Bernoulli", [0.3])):
        laws.append((kind, [bits(mod.sample(r, kind, args)) for _ in range(500)]))
    out["laws"] = laws
    out["laws position"] = r.position
    return out


def compile_copy(tmp_path):
    """A copy of rng.py compiled by Cython (as the top-level module `_rng_compiled`, with
    its rng.pxd), or None when Cython is not importable."""
    try:
        import Cython  # noqa: F401
    except ImportError:
        return None
    import importlib.util
    import subprocess
    import sys
    src = tmp_path / "_rng_compiled.py"
    src.write_text(SOURCE.read_text(encoding="utf-8"), encoding="utf-8")
    pxd = SOURCE.with_suffix(".pxd")
    src.with_suffix(".pxd").write_text(pxd.read_text(encoding="utf-8"), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "Cython.Build.Cythonize", "-3", "-i",
                           src.name], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    built = [p for p in tmp_path.iterdir() if p.name.startswith("_rng_compiled.")
             and p.suffix in (".so", ".pyd")]
    assert len(built) == 1, sorted(p.name for p in tmp_path.iterdir())
    spec = importlib.util.spec_from_file_location("_rng_compiled", built[0])
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_compiled_matches_interpreted(tmp_path):
    """The Cython-compiled module draws what the interpreted source draws, bit for bit, on
    both backends. The compiled module is serq.sim.rng when that is the compiled one, else a
    copy compiled here. Without Cython the interpreted source is checked against the golden
    draws instead (and a warning says the compiled check did not run)."""
    interp = load_interpreted()
    compiled = R if R.COMPILED else compile_copy(tmp_path)
    if compiled is None:
        import warnings
        warnings.warn("Cython is not importable: rng.py was not compiled and compared")
        for backend in BACKENDS:
            for case in STREAMS["cases"]:
                r = interp.Rng(case["seed"], backend=backend)
                assert [r.random_f64().hex() for _ in case["f64"]] == case["f64"]
            for case in SAMPLERS["sessions"]:
                check_case(case, backend, mod=interp)
        return
    assert compiled.COMPILED
    assert compiled.Rng(1).backend == "python"    # compiled, the scalar keystream is C code
    for backend in BACKENDS:
        want = draw_all(interp, backend)
        got = draw_all(compiled, backend)
        for key in want:
            assert got[key] == want[key], (backend, key)


def test_module_without_cython(monkeypatch):
    """With Cython not importable, rng.py runs on serq's no-op stand-in for it."""
    import sys
    monkeypatch.setitem(sys.modules, "cython", None)    # makes `import cython` fail
    mod = load_interpreted("_rng_without_cython")
    from serq import _cython_shim
    assert mod.cython is _cython_shim
    case = next(c for c in STREAMS["cases"] if c["seed"] == 1)
    assert [mod.Rng(1).random_f64().hex() for _ in case["f64"][:1]] == case["f64"][:1]
    r = mod.Rng(1)
    assert [r.random_f64().hex() for _ in case["f64"]] == case["f64"]
