"""§4.8 A: float32 witness, schedule evaluation, sensitivity, request-locality, layout
self-test. Lean: IEEE32_batchDependentSchedule_counterexample (A1, A4), SumTree.evalWith
(A2), RequestLocalScheduleInvariant (A4)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from serq.numerics import fp
from serq.numerics.kernels.base import StepInfo, elementwise_selftest
from serq.numerics.schedule import (BatchSizePolicy, CanonicalPolicy, Leaf, LocalCtx, Node,
                                    NotRequestLocal, Schedule, check_request_local, evaluate,
                                    fold_scalar, pairwise, sequential)


def test_a1_witness_bits():
    a, b, c, left, right = fp.witness()
    assert (fp.bits(a), fp.bits(b), fp.bits(c)) == (0x60AD78EC, 0xE0AD78EC, 0x3F800000)
    assert a == np.float32(1e20) and b == np.float32(-1e20) and c == np.float32(1)
    assert fp.bits(left) == 0x3F800000 and left == 1
    assert fp.bits(right) == 0 and right == 0


@st.composite
def trees(draw, n):
    items = [Leaf(i) for i in range(n)]
    while len(items) > 1:
        i = draw(st.integers(0, len(items) - 2))
        items[i:i + 2] = [Node(items[i], items[i + 1])]
    return items[0]


SPECIAL = [0.0, -0.0, np.nan, np.inf, -np.inf, 1e20, -1e20, 1.0, 3e-45]


@st.composite
def tree_and_values(draw):
    n = draw(st.integers(1, 12))
    vals = draw(st.lists(st.one_of(st.sampled_from(SPECIAL),
                                   st.floats(-1e6, 1e6, width=32)), min_size=n, max_size=n))
    return draw(trees(n)), np.array(vals, dtype=np.float32)


@settings(max_examples=150, deadline=None)
@given(tree_and_values())
def test_a2_evaluate_equals_scalar_fold(tv):
    """Bit-equal, the sign of zero included; a NaN result must be NaN on both sides (x86
    chooses a NaN's payload and sign by operand order and scalar numpy takes another code path,
    so NaN payloads are not part of the contract)."""
    tree, vals = tv
    want = fold_scalar(tree, list(vals))
    got = evaluate(tree, vals)
    got2 = evaluate(tree, np.stack([vals, vals[::-1].copy()]), axis=1)[0]   # vectorised
    for g in (got, got2):
        if np.isnan(want):
            assert np.isnan(g)
        else:
            assert fp.bits(g) == fp.bits(want)


@pytest.mark.parametrize("sched", [Schedule("pairwise", 37), Schedule("sequential", 19),
                                   Schedule("blocked", 100, 32), Schedule("split", 64, 3),
                                   Schedule("right", 9), Schedule("pairwise", 1)])
def test_schedule_reduce_is_its_tree(sched):
    x = np.random.default_rng(3).standard_normal((5, sched.n, 2)).astype(np.float32) * 1e3
    assert fp.bits_equal(sched.reduce(x, axis=1), evaluate(sched.tree(), x, axis=1))
    assert fp.bits_equal(sched.reduce(x, axis=1, combine=np.maximum),
                         evaluate(sched.tree(), x, axis=1, combine=np.maximum))


def test_a3_sequential_and_pairwise_differ():
    x = np.random.default_rng(0).standard_normal((200, 64)).astype(np.float32)
    seq = evaluate(sequential(64), x, axis=1)
    pw = evaluate(pairwise(64), x, axis=1)
    assert not fp.bits_equal(seq, pw)


STEPS = [StepInfo(n, r, d) for n, r, d in ((1, 1, 1), (48, 6, 4), (512, 64, 60), (3, 2, 1))]


def test_a4_request_local_policies():
    ctxs = [LocalCtx("matmul.k", 64), LocalCtx("rmsnorm.d", 64), LocalCtx("attn.feature", 16),
            LocalCtx("matmul.k", 3)]
    check_request_local(CanonicalPolicy(), ctxs, STEPS)
    with pytest.raises(NotRequestLocal) as e:
        check_request_local(BatchSizePolicy(), [LocalCtx("matmul.k", 3)], STEPS)
    wit = e.value.witness
    assert [fp.bits(x) for x in wit[:3]] == [0x60AD78EC, 0xE0AD78EC, 0x3F800000]
    assert fp.bits(wit[3]) == 0x3F800000 and fp.bits(wit[4]) == 0
    assert "0x3f800000 vs 0x00000000" in str(e.value)


def test_a5_layout_selftest_passes():
    elementwise_selftest()


def test_fp_helpers():
    x = np.array([1.0, -0.0, 0.0, np.nan], dtype=np.float32)
    assert fp.hex32(np.float32(1.0)) == "0x3f800000"
    assert not fp.bits_equal(x[1:2], x[2:3])            # -0.0 vs +0.0 differ in bits
    assert fp.ulp_diff(np.float32(1.0), np.nextafter(np.float32(1.0), np.float32(2))) == 1
    assert fp.ulp_diff(np.float32(-0.0), np.float32(0.0)) == 0
    r = fp.bf16_round(np.array([1.0, 1.00390625, 1.01171875, np.nan], dtype=np.float32))
    assert list(fp.bits(r[:3])) == [0x3F800000, 0x3F800000, 0x3F820000]  # ties to even
    assert np.isnan(r[3])
    with pytest.raises(fp.DtypeError, match="float64"):
        fp.require_f32("here", np.zeros(2))
