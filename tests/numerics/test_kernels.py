"""§4.8 B: kernel invariance (B6), the inverse test (B7), attention across decode, prefill
and chunk plans (B8), chunk-relative splits (B9), a poisoned cache (B10), the hidden-reduction
lint and dtype guards (§4.11). Lean: matmul_batchInvariant, rmsNorm_batchInvariant (B6, B7),
KVLayoutPolicy.canonical / fixedSplitKVTree (B8, B9), RefinesForward (tiled, by test)."""
import ast
import pathlib

import numpy as np
import pytest

from serq.numerics import fp
from serq.numerics.kernels import StepInfo, get_kernels
from serq.numerics.kernels.tiled import TILE

M_SIZES = (1, 2, 3, 4, 7, 8, 15, 16, 17, 64, 257)
RNG = np.random.default_rng(11)
X = RNG.standard_normal((257, 64)).astype(np.float32)
W = RNG.standard_normal((64, 192)).astype(np.float32)
G = (1 + 0.1 * RNG.standard_normal(64)).astype(np.float32)


def selected_rows(kset, op, m):
    """Row 0's output when it sits at every position of a batch of m (shuffled others), the
    batch's step info saying m tokens; plus a non-contiguous input."""
    k = get_kernels(kset)
    out = []
    for pos in sorted({0, m // 2, m - 1}):
        others = X[1:][RNG.permutation(256)[:m - 1]]
        batch = np.insert(others, pos, X[0], axis=0)
        step = StepInfo(m, m, 0)
        out.append(k.matmul(batch, W, step)[pos] if op == "matmul" else k.rmsnorm(batch, G, 1e-5, step)[pos])
    wide = np.zeros((m, 128), dtype=np.float32)
    wide[:, ::2] = np.insert(X[1:m], 0, X[0], axis=0)
    strided = wide[:, ::2]                                    # non-contiguous rows
    out.append(k.matmul(strided, W, StepInfo(m, m, 0))[0] if op == "matmul"
               else k.rmsnorm(strided, G, 1e-5, StepInfo(m, m, 0))[0])
    return out


@pytest.mark.parametrize("kset", ["exact", "tiled"])
@pytest.mark.parametrize("op", ["matmul", "rmsnorm"])
def test_b6_selected_row_invariant(kset, op):
    alone = selected_rows(kset, op, 1)[0]
    for m in M_SIZES:
        for row in selected_rows(kset, op, m):
            assert fp.bits_equal(row, alone), (kset, op, m)


def test_tiled_self_test_chose_a_tile():
    k = get_kernels("tiled")
    assert TILE is not None and not k.fallback, k.note   # the measurement box passes at 8 rows


@pytest.mark.parametrize("op", ["matmul", "rmsnorm"])
def test_b7_default_kernels_are_batch_dependent(op):
    k = get_kernels("default")
    f = (lambda x, m: k.matmul(x, W, StepInfo(m, m, 0))) if op == "matmul" else \
        (lambda x, m: k.rmsnorm(x, G, 1e-5, StepInfo(m, m, 0)))
    batched = f(X[:64], 64)
    mismatches = sum(not fp.bits_equal(batched[i], f(X[i:i + 1], 1)[0]) for i in range(64))
    assert mismatches > 0


def _attend(kset, n_prefix, chunks, query_pos, fp32=True):
    """Output at ``query_pos`` after writing KV chunk by chunk (the cache holds every
    position up to the chunk end; queries are the chunk's tokens)."""
    k = get_kernels(kset)
    rng = np.random.default_rng(5)
    L = sum(chunks)
    q = rng.standard_normal((L, 4, 16)).astype(np.float32)
    kk = rng.standard_normal((L, 4, 16)).astype(np.float32)
    vv = rng.standard_normal((L, 4, 16)).astype(np.float32)
    start = 0
    for n in chunks:
        if start <= query_pos < start + n:
            out = k.attention(q[start:start + n], kk[:start + n], vv[:start + n], start,
                              StepInfo(n + n_prefix, 2, 1))
            return out[query_pos - start]
        start += n
    raise AssertionError("query position outside the plan")


PLANS = [[70], [1] * 70, [10, 25, 35], [7] * 10, [32, 32, 6], [16, 16, 16, 16, 6], [31, 1, 33, 5],
         [69, 1]]


@pytest.mark.parametrize("kset", ["exact", "tiled"])
def test_b8_attention_same_bits_for_every_plan(kset):
    for pos in (0, 30, 31, 32, 33, 63, 64, 65, 69):
        want = _attend(kset, 0, [70], pos)
        for plan in PLANS:
            assert fp.bits_equal(_attend(kset, 0, plan, pos), want), (plan, pos)


def test_b8_inverse_default_attention_differs():
    diffs = sum(not fp.bits_equal(_attend("default", 0, plan, 69), _attend("default", 0, [70], 69))
                for plan in PLANS)
    assert diffs > 0


def test_b9_chunk_relative_needs_aligned_chunks():
    want = _attend("exact", 0, [70], 69)
    for plan in ([70], [32, 32, 6], [64, 6]):
        assert fp.bits_equal(_attend("chunk-rel", 0, plan, 69), want), plan
    bad = [plan for plan in ([10, 25, 35], [7] * 10) if not fp.bits_equal(_attend("chunk-rel", 0, plan, 69), want)]
    assert bad == [[10, 25, 35], [7] * 10]


def test_b10_poisoned_cache_changes_nothing():
    k = get_kernels("exact")
    rng = np.random.default_rng(9)
    q = rng.standard_normal((3, 4, 16)).astype(np.float32)
    kv = rng.standard_normal((2, 40, 4, 16)).astype(np.float32)
    clean = k.attention(q, kv[0], kv[1], 37, StepInfo())
    for poison in (np.nan, np.inf, -np.inf):
        bad = np.full((2, 70, 4, 16), poison, dtype=np.float32)
        bad[:, :40] = kv
        assert fp.bits_equal(k.attention(q, bad[0], bad[1], 37, StepInfo()), clean)


# -- hidden reductions and dtypes (§4.11) -----------------------------------------------------
NUMERICS = pathlib.Path(__file__).resolve().parents[2] / "serq" / "numerics"
INVARIANT_FILES = ["kernels/exact.py", "kernels/attention.py", "schedule.py", "model.py", "kvcache.py"]
FORBIDDEN = {"sum", "dot", "einsum", "mean", "matmul", "tensordot", "inner", "vdot", "prod",
             "cumsum", "cumprod", "nansum", "average", "var", "std", "trace", "norm", "max", "min",
             "amax", "amin", "argmax", "argmin", "ptp"}
UFUNC_REDUCERS = {"reduce", "accumulate", "reduceat"}


def hidden_reductions(path):
    """``@``; ``np.<reduction>(...)``; ``x.<reduction>(...)`` on any object but the kernel set (ndarray methods);
    ``np.<ufunc>.reduce/accumulate``; the builtin ``sum``. (``Schedule.reduce`` and Python's
    ``max`` over ints are the allowed, explicit forms.)"""
    tree = ast.parse(path.read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            found.append(f"{path.name}:{node.lineno}: @")
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name) and f.id == "sum":
            found.append(f"{path.name}:{node.lineno}: sum()")
        if not isinstance(f, ast.Attribute):
            continue
        if f.attr in FORBIDDEN and not (isinstance(f.value, ast.Name) and f.value.id == "kernels"):
            found.append(f"{path.name}:{node.lineno}: {f.attr}()")
        elif (f.attr in UFUNC_REDUCERS and isinstance(f.value, ast.Attribute)
              and isinstance(f.value.value, ast.Name) and f.value.value.id in ("np", "numpy")):
            found.append(f"{path.name}:{node.lineno}: np.{f.value.attr}.{f.attr}()")
    return found


def test_lint_no_hidden_reduction_in_invariant_code():
    found = [hit for f in INVARIANT_FILES for hit in hidden_reductions(NUMERICS / f)]
    assert found == []


def test_lint_sees_a_planted_reduction(tmp_path):
    p = tmp_path / "k.py"
    p.write_text("import numpy as np\ndef f(x, w):\n    return np.sum(x @ w, axis=0).mean() + "
                 "np.add.reduce(x) + sum(x) + x.max()\n")
    assert len(hidden_reductions(p)) == 6


@pytest.mark.parametrize("kset", ["exact", "tiled", "default"])
def test_dtype_guards(kset):
    k = get_kernels(kset)
    x64 = np.ones((2, 64))
    with pytest.raises(fp.DtypeError):
        k.matmul(x64, W, StepInfo())
    with pytest.raises(fp.DtypeError):
        k.rmsnorm(x64, G, 1e-5, StepInfo())
    assert k.matmul(X[:3], W, StepInfo(3, 1, 0)).dtype == np.float32
    assert k.rmsnorm(X[:3], G, 1e-5, StepInfo(3, 1, 0)).dtype == np.float32


@pytest.mark.parametrize("kset", ["exact", "tiled"])
def test_b8_batched_decodes_equal_one_by_one(kset):
    """attention_many vectorises single-query rows across requests: same bits as each alone."""
    k = get_kernels(kset)
    rng = np.random.default_rng(4)
    items = []
    for p in (0, 31, 32, 33, 70, 5):
        kv = rng.standard_normal((2, p + 1, 4, 16)).astype(np.float32)
        items.append((rng.standard_normal((1, 4, 16)).astype(np.float32), kv[0], kv[1], p))
    items.append((rng.standard_normal((3, 4, 16)).astype(np.float32), *rng.standard_normal((2, 40, 4, 16)).astype(np.float32), 37))
    many = k.attention_many(items, StepInfo(9, 7, 6))
    for got, (q, kk, vv, start) in zip(many, items):
        assert fp.bits_equal(got, k.attention(q, kk, vv, start, StepInfo()))
