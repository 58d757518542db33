"""Placing the view (``view.py``) on a page, as pyserq 0.1.3's ``draw`` does.

The rules were read off the reference's drawings of many small programs (docs/draw.md); the
request flows left to right along the line ``y = CY``:

* the entry arrow starts at the margin under the arrivals label; each top-level item — a
  station slot (84 × 52), a frame (one station and the pools held around it, listed below
  it), an enclosure (several stations and the pools held around them, a queue drawn on its
  left) — follows the previous one after a gap of 74;
* edges: between neighbours a straight arrow; to an earlier station a dashed arrow under the
  row (a loop); to a later one, or to the exit from a station that is not the last, an arrow
  under the row in the next free lane (22 apart); the exit goes 26 past the rightmost item;
* monospace text: 6 units a character at size 10, 4.8 at size 8.
"""
from __future__ import annotations

import math

from serq.draw.scene import Scene
from serq.draw.view import ENTRY, OUT, Group, Node
from serq.ir import types as T
from serq.sim.fmt import display

MARGIN = 28
SLOT_W, SLOT_H = 84, 52
GAP = 74
CY = 103
INSTANCE_DROP = 64      # an instance box above the row moves the row down
LANE0, LANE_STEP = 74, 22
PLAIN_SERVER = 1

# a delay's law: y offsets from CY of the drawn density at 25 points across the slot
_EXP = [5.2 - 22.88 * math.exp(-3.5 * i / 24) for i in range(25)]
_H2 = [y - 103 for y in (85.32, 91.1, 95.17, 98.06, 100.13, 101.64, 102.74, 103.57, 104.21,
                         104.7, 105.09, 105.42, 105.68, 105.91, 106.11, 106.28, 106.43,
                         106.57, 106.7, 106.81, 106.91, 107.01, 107.1, 107.18, 107.25)]


def width(text: str, size: int) -> float:
    return len(text) * (6.0 if size == 10 else 4.8)


class Layout:
    def __init__(self, view):
        self.v = view
        self.p = view.p
        self.shapes = []
        self.station_shapes = []
        self.titles = []
        self.pos = {}          # node index -> (left, cx)
        self.below = {}        # node index -> where edges under the row leave or enter it
        self.label_x = {}      # node index -> where labels of edges leaving it start
        self.bottom = 0.0      # lowest point drawn
        self.cy = CY + (INSTANCE_DROP if view.instance else 0)
        self.memory = {st.kind.memory for st in self.p.stages if type(st.kind) is T.Step}
        self.cached_pools = {b for blk in self.p.blocks for st in blk
                             if type(st) is T.Hold and st.cache is not None
                             for b in self.cached_by([hp.ref.base for hp in st.pools])}

    # -- the whole picture ----------------------------------------------------------------
    def scene(self) -> Scene:
        if not self.v.nodes:  # a request that runs no stage: an empty picture
            return Scene(MARGIN, MARGIN, [])
        label = "new sessions: " + arrival_text(self.v)
        x = MARGIN + width(label, 8) + 14
        if self.v.instance:
            # the exit leaves from the instance's contents, not from its box
            box_right = self.instance(x, self.v.top)
            right = box_right - 12
        else:
            right = box_right = self.row(x, self.v.top)
        # painting order: the containers, then the stations, then the instance's title,
        # then the edges
        self.shapes += self.station_shapes + self.titles
        right_edge = max(self.edges(label, right), box_right)
        return Scene(right_edge + MARGIN, self.bottom + MARGIN, self.shapes)

    def row(self, x, members):
        """Place ``members`` left to right from ``x``; return the right edge."""
        right = x
        rails = {}  # last node index -> (first node index, where its shapes start)
        for k, m in enumerate(members):
            if k:
                x = right + GAP
            if isinstance(m, Node) and m.index in self.v.shared:
                rails[self.v.shared[m.index]] = (m.index, len(self.station_shapes))
            right = self.group(x, m) if isinstance(m, Group) else self.station(x, m)
            if isinstance(m, Node) and m.index in rails:
                first, at = rails.pop(m.index)
                left = self.pos[first][0] - 6
                end = self.pos[m.index][0] + SLOT_W + 6
                self.station_shapes.insert(at, ("box", "rail", left, self.cy - 32, end - left,
                                                64, 4))
        return right

    # -- containers -----------------------------------------------------------------------
    def instance(self, x, members):
        cy = self.cy
        at = len(self.shapes)
        right = self.row(x + 12, members) + 12
        top = cy - 52 - 26
        bottom = self.bottom + 12
        self.shapes.insert(at, ("box", "instance", x, top, right - x, bottom - top, 10))
        self.bottom = bottom
        var, count = self.v.instance
        title = f"instance {self.instance_name()}"
        saved, self.shapes = self.shapes, self.titles
        self.text(x + 10, top - 7, "start", 10, False, title)
        self.text(x + 10 + width(title, 10) + 12, top - 7, "start", 8, True,
                  f"choose {var} of {count}")
        self.shapes = saved
        return right

    def instance_name(self):
        for node in self.v.nodes:
            if node.stage is not None and node.ref.count > 1:
                return self.v.ref_text(node.ref, self.p.stages)
        return self.v.instance[0]

    def group(self, x, g):
        if len(g.members) == 1 and isinstance(g.members[0], Node):
            return self.frame(x, g)
        return self.enclosure(x, g)

    def frame(self, x, g):
        """One station with the pools held around it listed below it."""
        cy = self.cy
        node = g.members[0]
        rows = [(f"pool {pl.name}", self.pool_text(pl)) for pl in g.pools]
        item = self.item_width(node)
        w = max(item + 24, 56 + max(max(width(a, 10), width(b, 8)) for a, b in rows))
        at = len(self.shapes)
        y = cy + 26 + (14 if self.sub_label(node) else 0) + 15
        bottom = y
        cached = self.cached_by([self.p.pools.index(pl) for pl in g.pools]) if g.cache else ()
        for pl, (name, dim) in zip(g.pools, rows):
            self.shapes.append(("cylinder", x + 12, y))
            self.text(x + 44, y + 6, "start", 10, False, name)
            self.text(x + 44, y + 18, "start", 8, True, dim)
            bottom = y + 18 + 13
            if self.p.pools.index(pl) in cached:  # what the hold's `cache` keeps
                self.shapes.append(("box", "cached", x + 12, y + 23, w - 24, 11, 2))
                self.text(x + w / 2, y + 31.5, "middle", 8, True, "prefix cache")
                bottom = y + 34 + 13
                y += 16
            y += 32
        top = cy - 52
        self.shapes.insert(at, ("box", "frame", x, top, w, bottom - top, 8))
        self.station(x + (w - item) / 2, node)
        self.below[node.index] = bottom  # under the frame, not through the pools
        self.label_x[node.index] = x + w + 6
        self.bottom = max(self.bottom, bottom)
        return x + w

    def enclosure(self, x, g):
        """Several stations inside a hold: a dashed box, the pools' queue on its left."""
        cy = self.cy
        at = len(self.shapes)
        pl = g.pools[0]
        self.text(x + 20, cy - 51, "start", 10, False, f"pool {pl.name}")
        self.shapes.append(("rails", x + 20, x + 50, cy - 11, cy + 11))
        for k in range(3):
            self.shapes.append(("box", "cell", x + 20 + 30 / 14 + k * 30 / 3.5, cy - 9, 6, 18, 0))
        self.shapes.append(("cylinder", x + 60, cy - 9))
        dims = self.pool_text(pl).split(" · ")
        for k, part in enumerate(dims):
            self.text(x + 20, cy + 24 + 11 * k, "start", 8, True, part)
        before = self.bottom
        self.bottom = 0.0
        right = self.row(x + 98, g.members) + 20
        inner = max((self.bottom + 6 for m in g.members if isinstance(m, Group)), default=0)
        bottom = max(cy + 46, cy + 24 + 11 * (len(dims) - 1) + 11, inner)
        self.bottom = max(before, self.bottom)
        self.shapes.insert(at, ("box", "enclosure", x, cy - 46, right - x, bottom - cy + 46, 8))
        self.bottom = max(self.bottom, bottom)
        return right

    def cached_by(self, bases):
        """The pools a hold of ``bases`` with `cache` keeps entries in: its pools that are a
        step engine's `memory` when it has one (the others are batch slots), else all."""
        mem = [b for b in bases if b in self.memory]
        return mem or bases

    def pool_text(self, pl) -> str:
        parts = [f"cap {display(pl.cap)}"]
        if pl.block is not None:
            parts.append(f"block {display(pl.block)}")
        base = self.p.pools.index(pl)
        if base in self.cached_pools:
            if type(pl.evict) is T.EvictLru:
                parts.append("evict lru")
            else:
                keys = ", ".join(self.v.text(k) for k in pl.evict.keys)
                parts.append(f"evict by ({keys})")
        if pl.preempt != "None":
            parts.append(f"preempt {pl.preempt.lower()}")
        if pl.admit_via is not None:
            parts.append(f"admit via {self.p.stages[pl.admit_via].name}")
        return " · ".join(parts)

    # -- stations -------------------------------------------------------------------------
    def sub_label(self, node):
        st = node.stage
        if st is None:
            return None
        if self.v.chosen and node.ref.count > 1 and node.ref.index is not None:
            return f"choose {self.v.chosen[0]} of {self.v.chosen[1]}"
        k = st.kind
        t = type(k)
        if t is T.Fifo:
            return f"{k.servers} servers" if k.servers != PLAIN_SERVER else None
        if t is T.Ps:
            return self.v.text(k.capacity)
        if t is T.Delay:
            return "delay"
        return f"budget {self.v.text(k.budget)}"

    def item_width(self, node):
        """A station's slot is 84 wide, or as wide as its name or the label under it."""
        if node.stage is None:
            return SLOT_W
        sub = self.sub_label(node)
        name = self.v.ref_text(node.ref, self.p.stages)
        return max(SLOT_W, width(name, 10) + 8, width(sub, 8) + 8 if sub else 0)

    def station(self, item_left, node):
        """Draw a station centred in its item; return the item's right edge."""
        saved, self.shapes = self.shapes, self.station_shapes
        try:
            return self._station(item_left, node)
        finally:
            self.shapes = saved

    def _station(self, item_left, node):
        cy = self.cy
        w = self.item_width(node)
        left = item_left + (w - SLOT_W) / 2
        cx = left + SLOT_W / 2
        self.pos[node.index] = (left, cx)
        sub = self.sub_label(node)
        if node.stage is None:  # a branch
            self.shapes.append(("diamond", cx, cy, 26))
            self.text(cx, cy - 34, "middle", 10, False, "")
            self.bottom = max(self.bottom, cy + 26)
            return item_left + w
        kind = type(node.stage.kind)
        if kind is T.Fifo or kind is T.Ps:
            self.shapes.append(("circle", "station", cx, cy, 26))
            self.text(cx, cy + 3.5, "center", 10, False, "FIFO" if kind is T.Fifo else "PS", cy)
        elif kind is T.Delay:
            self.shapes.append(("box", "station", left, cy - 26, SLOT_W, SLOT_H, 8))
            self.delay_law(left, cx, node.work)
        else:
            self.shapes.append(("box", "station", left, cy - 26, SLOT_W, SLOT_H, 3))
            self.shapes.append(("box", "cell", left + 8, cy + 13, 68, 6, 0))
            self.shapes.append(("box", "solid", left + 8, cy + 13, 68 * 0.62, 6, 0))
            self.text(cx, cy - 4, "center", 10, False, "step", cy - 8)
        self.text(cx, cy - 34, "middle", 10, False, self.v.ref_text(node.ref, self.p.stages))
        if sub is not None:
            self.text(cx, cy + 39, "middle", 8, True, sub)
        self.bottom = max(self.bottom, cy + 26 if sub is None else cy + 47)
        return item_left + w

    def delay_law(self, left, cx, work):
        cy = self.cy
        law = _law(work)
        xs = [left + 16 + 52 * i / 24 for i in range(25)]
        if law == "const":
            base = cy + 5.2
            pts = [(left + 16, base), (cx, base), (cx, cy - 17.68), (cx, base), (left + 68, base)]
        elif law in ("exp", "h2"):
            pts = [(x, cy + dy) for x, dy in zip(xs, _EXP if law == "exp" else _H2)]
        else:
            for k in range(5):
                self.shapes.append(("circle", "cell", left + 14 + 14 * k, cy, 4))
            return
        self.shapes.append(("curve", pts))
        self.text(cx, cy + 18, "center", 10, False, self.v.text(work), cy + 15)

    # -- edges ----------------------------------------------------------------------------
    def edges(self, label, right):
        cy = self.cy
        lane = max([cy + LANE0] + [b + 36 for b in self.below.values()])
        below = self.below
        last = len(self.v.nodes) - 1
        edge_right = right
        for e in self.v.edges:
            if e.src is ENTRY:
                left = self.pos[e.dst.index][0] if e.dst is not OUT else right + 26
                self.line("flow", [(MARGIN, cy), (left, cy)])
                self.text(MARGIN, cy - 10, "start", 8, True, label)
                continue
            sl, scx = self.pos[e.src.index]
            off = 10.5 if e.src.stage is None else 21
            if e.dst is OUT:
                end = right + 26
                out = "out" if not e.label else f"out ({e.label})"
                if e.src.index == last:
                    self.line("flow", [(sl + SLOT_W, cy), (end, cy)])
                    self.text(end + 4, cy + 3, "start", 8, True, out)
                else:
                    sy = below.get(e.src.index, cy + 26)
                    self.line("flow", [(scx + off, sy), (scx + off, lane), (end, lane)])
                    self.text(end + 4, lane + 3, "start", 8, True, out)
                    self.bottom = max(self.bottom, lane + 11)
                    lane += LANE_STEP
                edge_right = max(edge_right, end + 4 + width(out, 8))
                continue
            dl, dcx = self.pos[e.dst.index]
            if e.dst.index == e.src.index + 1 and self.v.shared.get(e.src.index) != e.dst.index:
                self.line("flow", [(sl + SLOT_W, cy), (dl, cy)])
                if e.label:
                    lx = self.label_x.get(e.src.index, sl + SLOT_W + 6)
                    self.text(lx, cy - 8, "start", 8, True, e.label)
            elif e.dst.index <= e.src.index:
                self.line("back", [(scx - 21, below.get(e.src.index, cy + 26)), (scx - 21, lane),
                                   (dcx - 21, lane), (dcx - 21, below.get(e.dst.index, cy + 26))])
                self.bottom = max(self.bottom, lane)
                if e.label:
                    self.text((scx + dcx) / 2, lane - 5, "middle", 8, True, e.label)
                    self.bottom = max(self.bottom, lane + 3)
                lane += LANE_STEP
            else:
                self.line("flow", [(scx + off, below.get(e.src.index, cy + 26)), (scx + off, lane),
                                   (dcx, lane), (dcx, below.get(e.dst.index, cy + 26))])
                if e.label:
                    self.text((scx + dcx) / 2, lane - 5, "middle", 8, True, e.label)
                self.bottom = max(self.bottom, lane)
                lane += LANE_STEP
        return edge_right

    # -- helpers --------------------------------------------------------------------------
    def line(self, cls, pts):
        self.shapes.append(("line", cls, pts))

    def text(self, x, y, anchor, size, dim, text, y_tikz=None):
        self.shapes.append(("text", x, y, y if y_tikz is None else y_tikz, anchor, size, dim,
                            text))


def _law(e):
    """What a delay's work expression draws: a point mass (a number), an exponential or
    hyperexponential density (an expression drawing ~exp or ~h2), or nothing known."""
    if type(e) is T.Num:
        return "const"
    found = []

    def walk(x):
        t = type(x)
        if t is T.Sample:
            found.append(x.dist)
        for name in ("operand", "left", "right", "cond", "then", "other"):
            sub = getattr(x, name, None)
            if sub is not None:
                walk(sub)
        for a in getattr(x, "args", ()) or ():
            walk(getattr(a, "expr", a))
    walk(e)
    if found and found[0] == "Exp":
        return "exp"
    if found and found[0] == "H2":
        return "h2"
    return None


def arrival_text(view) -> str:
    arr = view.p.arrival
    t = type(arr)
    if t is T.Poisson:
        return f"Poisson {display(arr.rate)}"
    if t is T.Renewal:
        return f"renewal interarrival {view.text(arr.gap)}"
    if t is T.Closed:
        return f"closed, {arr.n} live"
    if t is T.Batch:
        return f"{arr.n} at t=0"
    if t is T.Sessions:
        return f"{len(arr.sessions)} at t=0"
    return "no arrivals"
