"""A step engine's timeline: one record per iteration (when, which stage, its decode batch,
prefill tokens, tokens, cost) with every pool's used and cached units at that moment,
recorded through the simulator hooks (:mod:`serq.sim.hooks`) while the program runs.

The report gives time averages (``mean_decode_batch``, a pool's ``mean_used``); plots of
batch size and KV usage *over time* need the per-iteration values, which only a hook sees.
Recording costs one small tuple per iteration; the report is the same as without it.
"""
from __future__ import annotations

from serq.sim.hooks import Hooks

__all__ = ["Timeline", "run_with_timeline"]


class Timeline(Hooks):
    """Per-iteration records of every step stage, as parallel lists: ``start``, ``end``,
    ``stage`` (its name, ``name[i]`` in an array), ``decoders`` (the decode batch),
    ``prefilled`` (prefill tokens), ``tokens``, ``cost``; and ``pools``: ``{label: (used,
    cached)}`` lists sampled at each iteration's start (the KV a batch runs with), and
    ``caps``: ``{label: capacity}``."""

    def __init__(self):
        self.start, self.end, self.stage = [], [], []
        self.decoders, self.prefilled, self.tokens, self.cost = [], [], [], []
        self.pools = {}
        self.caps = {}
        self._labels = None

    def on_start(self, sim):
        self._labels = [p.decl.name if p.decl.index is None else f"{p.decl.name}[{p.decl.index}]"
                        for p in sim.pools]
        self.pools = {label: ([], []) for label in self._labels}
        self.caps = {label: p.cap for label, p in zip(self._labels, sim.pools)}
        self._stage_labels = {st.index: (st.decl.name if getattr(st.decl, "index", None) is None
                                         else f"{st.decl.name}[{st.decl.index}]")
                              for st in sim.stages}

    def on_iteration(self, it, sim):
        self.start.append(it.start)
        self.end.append(it.end)
        self.stage.append(self._stage_labels.get(it.stage, it.stage_name))
        self.decoders.append(it.decoders)
        self.prefilled.append(it.prefilled)
        self.tokens.append(it.tokens)
        self.cost.append(it.cost)
        for label, p in zip(self._labels, sim.pools):
            used, cached = self.pools[label]
            used.append(p.used)
            cached.append(p.cached)

    def __len__(self):
        return len(self.start)

    def stages(self) -> list:
        """The step stages that ran iterations, in order of first iteration."""
        return list(dict.fromkeys(self.stage))

    def to_pandas(self):
        """One row per iteration: ``start``, ``end``, ``stage``, ``decoders``, ``prefilled``,
        ``tokens``, ``cost``, then ``POOL.used`` and ``POOL.cached`` per pool."""
        from serq.extras import need
        need("pandas", "Timeline.to_pandas()", ("pandas",))
        import pandas as pd
        cols = {"start": self.start, "end": self.end, "stage": self.stage,
                "decoders": self.decoders, "prefilled": self.prefilled,
                "tokens": self.tokens, "cost": self.cost}
        for label, (used, cached) in self.pools.items():
            cols[f"{label}.used"] = used
            cols[f"{label}.cached"] = cached
        return pd.DataFrame(cols)


def run_with_timeline(program):
    """Run ``program``; returns ``(report, timeline)``."""
    import serq
    tl = Timeline()
    report = serq.run(program, hooks=tl)
    return report, tl
