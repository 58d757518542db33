"""The per-iteration lemmas the papers' claims rest on, proved with z3 (formal.md §6.6).

Each lemma's formula is written once, as a Python function over numbers *or* z3 terms
(``formula(..., ops)``), so that the z3 proof and the tests that evaluate it on concrete
states of the simulator (tests/claims/test_lemmas.py, through the simulator hooks) read the
same text. What a "proved" means: z3 found the negation of the encoded formula unsatisfiable.
That is a machine proof of *the encoded formula*, trusting z3 and the encoding; nothing links
it formally to the simulator, which is why the tests check the formula on its states.

* ``dai_staircase``: b·(c + a·bmax/b0) <= bmax·(c + a·ceil(b/b0)) for all naturals with
  bmax = k·b0 and b <= bmax: the cost ``c + a * ceil(tokens / b0)`` of
  examples/papers/dai_sarathi.sq keeps every batch within the rate bmax per
  ``c + a·bmax/b0``, which gives ``token_rate`` (Thm 2(a)) through ``served_rate``.
  Without b <= bmax it is false (z3 finds a counterexample: the sanity check).
* ``bari_tiled_rate``: t·(4000 + 5·128) <= 128·(4000·ceil(t/128) + 5·t) for 1 <= t <= 128,
  examples/papers/bari_rad.sq's cost: Bari's Thm 1 through ``served_rate``.
* ``kong_vol_bound``: (s + o)·o + o <= 2·vol with vol = s·o + (o² + o)/2, over naturals,
  proved separately for o = 2m and o = 2m + 1 (z3 answers "unknown" on the division).
* ``kong_competitive``: the queueing bound, Prop 3.1 (M·TEL(OPT) >= prefix_total(vol)),
  TEL(OPT) >= Σ o and Σ vol >= 0 give (M − P)·TEL(SVF) <= (3M − P)·TEL(OPT).
* ``greedy_fill``: one iteration of the step engine in admission order (serq/sim/step.py,
  ``start_iteration`` without serve keys) gives each resident in turn min(want, budget
  left): for every n <= 10 and any wants and budget >= 0 it is work-conserving (Σ tokens = min(budget,
  Σ wants)), FIFO (a resident short of its want leaves nothing to those after it) and
  never above a want.
"""
from __future__ import annotations

import dataclasses

GREEDY_MAX = 10


class PyOps:
    """The operations the formulas use, on Python numbers."""
    @staticmethod
    def If(c, a, b):
        return a if c else b

    @staticmethod
    def And(*xs):
        return all(xs)

    @staticmethod
    def Or(*xs):
        return any(xs)

    @staticmethod
    def Implies(a, b):
        return (not a) or b

    @staticmethod
    def Min(a, b):
        return a if a <= b else b


class Z3Ops:
    """The same operations on z3 terms."""
    def __init__(self):
        import z3
        self.z3 = z3
        self.If, self.And, self.Or, self.Implies = z3.If, z3.And, z3.Or, z3.Implies

    def Min(self, a, b):
        return self.z3.If(a <= b, a, b)


# ---------------------------------------------------------------------------------------
# the formulas (numbers or z3 terms)


def staircase(b, b0, k, c, a, q, ops):
    """Dai: with q = ceil(b / b0) (the caller's), bmax = k·b0."""
    bmax = k * b0
    return b * (c + a * k) <= bmax * (c + a * q)  # a·bmax/b0 = a·k


def ceil_spec(b, b0, q, ops):
    """q = ceil(b / b0) for naturals b and b0 >= 1."""
    return ops.And(b0 * q >= b, b0 * (q - 1) < b)


def tiled_rate(t, q):
    """Bari, at its constants: q = ceil(t / 128)."""
    return t * (4000 + 5 * 128) <= 128 * (4000 * q + 5 * t)


def vol(s, o):
    """Kong's volume, s·o + (o² + o)/2 (the caller splits o's parity)."""
    return s * o + (o * o + o) / 2


def vol_bound(s, o, twice_vol):
    return (s + o) * o + o <= twice_vol


def competitive(M, P, tel, opt, sum_o, prefix, sum_vol, ops):
    hyp = ops.And(M > P, P >= 0, (M - P) * (tel - sum_o) <= 2 * (prefix - sum_vol),
                  M * opt >= prefix, opt >= sum_o, sum_vol >= 0, sum_o >= 0)
    return ops.Implies(hyp, (M - P) * tel <= (3 * M - P) * opt)


def greedy(wants, budget, ops):
    """The tokens each resident gets, in order: min(want, what the budget has left)."""
    left = budget
    out = []
    for w in wants:
        t = ops.If(left > 0, ops.Min(w, left), 0)
        out.append(t)
        left = left - t
    return out


def greedy_properties(wants, budget, tokens, ops):
    total_w = sum(wants)
    total_t = sum(tokens)
    conserving = total_t == ops.Min(budget, total_w)
    fifo = ops.And(*[ops.Implies(tokens[i] < wants[i], tokens[j] == 0)
                     for i in range(len(wants)) for j in range(i + 1, len(wants))] or [True])
    below = ops.And(*[ops.And(tokens[i] <= wants[i], tokens[i] >= 0)
                      for i in range(len(wants))])
    return ops.And(conserving, fifo, below)


# ---------------------------------------------------------------------------------------
# the proofs


@dataclasses.dataclass(frozen=True)
class Lemma:
    name: str
    statement: str
    build: object  # () -> [(label, z3 formula that must be valid)] (+ sanity: must fail)

    def prove(self):
        """("proved", detail) when every part is valid (and every sanity check fails as it
        should); else ("NOT proved", what)."""
        import z3
        parts, sanity = self.build()
        for label, f in parts:
            s = z3.Solver()
            s.set("timeout", 20000)
            s.add(z3.Not(f))
            r = s.check()
            if r != z3.unsat:
                return "NOT proved", f"{label}: z3 says {r}" + (
                    f" (counterexample {s.model()})" if r == z3.sat else "")
        for label, f in sanity:
            s = z3.Solver()
            s.set("timeout", 20000)
            s.add(z3.Not(f))
            if s.check() != z3.sat:
                return "NOT proved", f"sanity check {label} did not find its counterexample"
        detail = self.statement
        if sanity:
            detail += f"; sanity: {', '.join(label for label, _ in sanity)} has a counterexample"
        return "proved", detail


def _dai():
    import z3
    ops = Z3Ops()
    b, b0, k, c, a, q = z3.Ints("b b0 k c a q")
    base = z3.And(b >= 0, b0 >= 1, k >= 1, c >= 0, a >= 0, ceil_spec(b, b0, q, ops))
    main = z3.Implies(z3.And(base, b <= k * b0), staircase(b, b0, k, c, a, q, ops))
    loose = z3.Implies(base, staircase(b, b0, k, c, a, q, ops))
    return [("all naturals, bmax = k·b0, b <= bmax", main)], [("without b <= bmax", loose)]


def _bari():
    import z3
    ops = Z3Ops()
    t, q = z3.Ints("t q")
    f = z3.Implies(z3.And(t >= 1, t <= 128, ceil_spec(t, 128, q, ops)), tiled_rate(t, q))
    return [("1 <= tokens <= 128", f)], []


def _kong_vol():
    import z3
    s, m = z3.Ints("s m")
    parts = []
    for label, o, twice_vol in (
            ("o = 2m", 2 * m, 2 * (s * 2 * m + m * (2 * m + 1))),
            ("o = 2m + 1", 2 * m + 1, 2 * (s * (2 * m + 1) + (2 * m + 1) * (m + 1)))):
        parts.append((label, z3.Implies(z3.And(s >= 0, m >= 0), vol_bound(s, o, twice_vol))))
    return parts, []


def _kong_competitive():
    import z3
    ops = Z3Ops()
    M, P, tel, opt, so, pre, sv = z3.Reals("M P TEL OPT sum_o prefix sum_vol")
    return [("over the reals", competitive(M, P, tel, opt, so, pre, sv, ops))], []


def _greedy():
    import z3
    ops = Z3Ops()
    parts = []
    for n in range(1, GREEDY_MAX + 1):
        wants = [z3.Real(f"w{i}") for i in range(n)]
        budget = z3.Real("budget")
        tokens = greedy(wants, budget, ops)
        hyp = z3.And(budget >= 0, *[w >= 0 for w in wants])
        parts.append((f"n = {n}", z3.Implies(hyp, greedy_properties(wants, budget, tokens,
                                                                      ops))))
    return parts, []


LEMMAS = (
    Lemma("dai_staircase", "b(c + a·bmax/b0) <= bmax(c + a⌈b/b0⌉) for all naturals, "
          "bmax = k·b0, b <= bmax", _dai),
    Lemma("bari_tiled_rate", "t(4000 + 5·128) <= 128(4000⌈t/128⌉ + 5t) for 1 <= t <= 128",
          _bari),
    Lemma("kong_vol_bound", "(s + o)o + o <= 2·vol for all naturals (o even, o odd)",
          _kong_vol),
    Lemma("kong_competitive", "(M − P)·TEL(SVF) <= (3M − P)·TEL(OPT) from the queueing "
          "bound, Prop 3.1 and Σo <= TEL(OPT)", _kong_competitive),
    Lemma("greedy_fill", f"one iteration is work-conserving, FIFO and within the wants, "
          f"n <= {GREEDY_MAX} residents", _greedy),
)
