"""The context variables of the moment being evaluated (interpreter.md §13).

Each moment (a queue key, an eviction key, a step stage's cost, a ps capacity …) sets the
variables it defines on ``sim.ctx`` before it evaluates its expression; the others keep their
last value. The expressions read them through one small node class per variable
(``exprnodes.CTX``: a C field read, compiled); ``now`` is the clock's (``sim.now``), not a
field here.

A module of its own, and a ``cclass`` (``context.pxd``), for the compiled engine (issue 10):
its fields are C doubles, so the typed code that sets them before every evaluation (the step
engine sets the iteration's tokens, decodes, residents, kv totals and attention for each cost)
stores C numbers, with no float object made per store. They are ``public``: the expressions and
the interpreted observers (the claims, the hooks) read and write them as attributes, floats in
both modes (every writer stores a float). Interpreted, it is a plain class with ``__slots__``.
"""
from __future__ import annotations

try:
    import cython
except ImportError:  # Cython not installed: the no-op stand-in, the module runs interpreted
    from serq import _cython_shim as cython

#: the fields, each a float, 0.0 until a moment sets it
FIELDS = ("waited", "size", "age", "last", "queued", "n", "ntok", "ndec", "npre", "nres",
          "kvb", "kvp", "attn", "decoding", "admission", "remaining",
          # a claim over iterations (IR 11), set by the claims observer before it reads
          "demand", "served", "arrived")


@cython.cclass
class Context:
    """The context variables (see the module's docstring); all 0.0 at the start of a run."""
    __slots__ = FIELDS

    def __init__(self):
        for name in FIELDS:
            setattr(self, name, 0.0)
