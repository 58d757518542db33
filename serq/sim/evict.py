"""Evicting a cache entry block by block, at the cost of one step per entry (interpreter.md
§10).

The reference evicts the chosen entry one piece at a time — ``piece = min(block, size)``;
``size -= piece; cached -= piece; units += piece`` — until the entry is gone
(``size <= EPS``) or the pool has room (``used + cached + need <= cap``), so a hold of 10^7
blocks takes 10^7 passes, and a block too small to change the floats never ends.

:func:`pieces` computes where that loop ends in closed form whenever every value it goes
through is exact: all are multiples of one power of two ``q`` and below ``2^53 q``, so each
float subtraction and addition is exact and the loop is integer arithmetic on multiples of
``q``. The result is then bit-identical to the loop's (tests/sim/test_evict.py compares them
on random cases). Otherwise the caller runs the loop itself (:func:`pieces_one_by_one`),
which refuses to go on for ever.
"""
from __future__ import annotations

import math

from serq.sim.fmt import display

#: past this many pieces for one room request, serq stops (the reference runs for hours)
PIECES_LIMIT = 100_000_000
_EXACT = 1 << 53


class NoProgress(Exception):
    """The loop would not end (or not in any reasonable time); ``args[0]`` says why."""


def _ratio(x):
    """``(n, k)`` with ``x == n / 2^k`` exactly (a finite float or an int)."""
    n, d = x.as_integer_ratio()
    return n, d.bit_length() - 1


def _low_exponent(n, k):
    """The exponent of the lowest set bit of ``n / 2^k`` (``n`` not zero)."""
    n = abs(n)
    return (n & -n).bit_length() - 1 - k


def _units(n, k, e):
    """``floor(n / 2^k / 2^e)``, an int, exactly (Python's ``>>`` rounds to minus
    infinity)."""
    s = -k - e
    return n << s if s >= 0 else n >> -s


def pieces(size, block, cached, units, used, need, cap, eps):
    """``(size, cached, units, gone)`` after the piece loop for one entry, or None when its
    values are not all exact on one grid (then the caller loops).

    The values are taken as exact ratios ``n / 2^k`` (``as_integer_ratio``) and counted in
    units of ``q = 2^e``, the lowest set bit among them, with Python ints: exact at any
    magnitude, and without ``Fraction``s (which cost more than the rest of an eviction)."""
    values = (size, block, cached, units, used, need)
    for x in values:
        if not (x >= 0 and x != math.inf):
            return None
    if not (block > 0 and cap != math.inf and cap == cap):
        return None
    ratios = [_ratio(x) for x in values]
    e = min(_low_exponent(n, k) for n, k in ratios if n != 0)
    S, B, C, U, P, N = (_units(n, k, e) for n, k in ratios)
    if max(S, B, C, U + S, P + C + N) >= _EXACT:
        return None
    cap_units = _units(*_ratio(cap), e)
    eps_units = _units(*_ratio(eps), e)
    full = S // B
    last = full if S % B == 0 else full + 1  # the piece after which the entry is empty

    def first_k(total):
        """The first piece after which ``total`` units or more have gone (at least one)."""
        k = max(1, -(-total // B))
        return k if k < last else last

    k = min(first_k(S - eps_units), first_k(P + C + N - cap_units))
    gone_units = S if k == last else k * B
    S -= gone_units
    return (math.ldexp(float(S), e), math.ldexp(float(C - gone_units), e),
            math.ldexp(float(U + gone_units), e), S <= eps_units)


def entry(size, block, cached, units, used, need, cap, eps):
    """:func:`pieces`, or where it declines :func:`pieces_one_by_one`."""
    r = pieces(size, block, cached, units, used, need, cap, eps)
    if r is None:
        r = pieces_one_by_one(size, block, cached, units, used, need, cap, eps)
    return r


def pieces_one_by_one(size, block, cached, units, used, need, cap, eps):
    """The piece loop itself, for values :func:`pieces` cannot treat exactly; raises
    ``NoProgress`` when a piece changes nothing (the reference loops for ever) or past
    ``PIECES_LIMIT`` pieces."""
    count = 0
    while True:
        piece = block if block is not None else size
        if piece > size:
            piece = size
        new_size = size - piece
        new_cached = cached - piece
        if new_size == size and new_cached == cached:
            raise NoProgress(no_progress(piece, size, cached))
        size = new_size
        cached = new_cached
        units += piece
        if size <= eps:
            return size, cached, units, True
        if not used + cached + need > cap:
            return size, cached, units, False
        count += 1
        if count >= PIECES_LIMIT:
            raise NoProgress(too_many(piece))


def no_progress(piece, size, cached):
    return (f"a piece of {number_text(piece)} units changes neither the entry ({number_text(size)} units) "
            f"nor the pool's cached total ({number_text(cached)}), so eviction would never end")


def too_many(piece):
    return (f"making room would evict more than {PIECES_LIMIT} pieces of {number_text(piece)} "
            f"units one at a time")


def number_text(x):
    """A number in a message: as the reference displays it, or in exponent form where that
    would be hundreds of digits long."""
    return display(x) if x == 0 or 1e-6 <= abs(x) < 1e16 else repr(x)
