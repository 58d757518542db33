"""What the deployment view shows: the path of one request as a graph (``serq draw``).

The program is compiled for the view (``serq.lang.compiler.compile_view``: the session block
is what one request runs). Walking that block gives

* **nodes** in the order the request first reaches them: a *station* per stage (a stage run
  twice is one station, reached again), a *choice* (diamond) per `branch`;
* **edges** in the order they are taken: from the entry, between nodes, to the exit
  (``OUT``); a loop's end goes back to its first node; a `branch` leaves its choice twice;
* **holds**: the pools held around the stations run inside (a frame around one station, a
  dashed enclosure around several), nested as the holds are;
* the **instance** a `choose` selects (a family of replicas drawn once, `engine[r]`).

Nothing here knows coordinates: ``layout.py`` places what this module finds.
"""
from __future__ import annotations

from serq.ir import types as T
from serq.ir.show import show_expr
from serq.sim.fmt import display

OUT = "out"
ENTRY = "entry"


class Node:
    """A station (``stage`` is its IR stage) or a choice (``stage`` None)."""
    def __init__(self, index, stage=None, ref=None):
        self.index = index
        self.stage = stage
        self.ref = ref          # the CRef of the first run (an array member or `s[r]`)
        self.work = None        # the first run's work expression (a delay draws its law)
        self.group = None       # the innermost Group holding it


class Edge:
    def __init__(self, src, dst, label=None):
        self.src = src          # a Node or ENTRY
        self.dst = dst          # a Node or OUT
        self.label = label


class Group:
    """Pools held around ``members`` (nodes and nested groups, in order)."""
    def __init__(self, pools, cache, parent):
        self.pools = pools      # the IR pools held (one per HoldPool, the family's base)
        self.refs = ()
        self.cache = cache
        self.parent = parent
        self.members = []


class View:
    def __init__(self, program):
        self.p = program
        self.nodes = []
        self.edges = []
        self.top = []           # top-level members: nodes and groups, in order
        self.by_stage = {}
        self.shared = {}        # first node index -> last node index of a shared run
        self.instance = None    # (var name, count text) of a `choose`
        self.choose_var = None
        self._group = None
        frontier = self.block(program.session, [(ENTRY, None)])
        for src, label in frontier:
            self.edges.append(Edge(src, OUT, label))
        if self.instance and not any(isinstance(m, Group) for m in self.top):
            # a `choose` of one bare station: said under the station, no instance box
            self.chosen = self.instance
            self.instance = None
        else:
            self.chosen = None

    # -- walking the request's block ------------------------------------------------------
    def block(self, idx, frontier):
        for st in self.p.blocks[idx]:
            if not frontier:
                break  # nothing after an `end` or an endless loop is reached
            frontier = self.stmt(st, frontier)
        return frontier

    def stmt(self, st, frontier):
        t = type(st)
        if t is T.Run:
            node = self.station(st.stage, st.work)
            self.connect(frontier, node)
            if st.also:  # one job on several stages at once: side by side, in a rail
                last = node
                for ref in st.also:
                    last = self.station(ref, st.work)
                self.shared[node.index] = last.index
                return [(last, None)]
            return [(node, None)]
        if t is T.Hold:
            return self.hold(st, frontier)
        if t is T.Loop:
            start = len(self.edges)
            end = self.block(st.body, frontier)
            first = next((e.dst for e in self.edges[start:] if isinstance(e.dst, Node)), None)
            if first is not None:
                self.connect(end, first)
            return []  # a loop runs until an `end` inside it
        if t is T.Branch:
            return self.branch(st, frontier)
        if t is T.End:
            for src, label in frontier:
                self.edges.append(Edge(src, OUT, label))
            return []
        if t is T.Choose:
            attrs = self.p.attrs
            self.choose_var = st.var
            self.instance = (attrs[st.var], self.text(st.count))
        return frontier

    def connect(self, frontier, node):
        for src, label in frontier:
            if src is node:
                continue  # a loop around one station: nothing to draw
            if any(e.src is src and e.dst is node for e in self.edges):
                continue  # drawn once
            self.edges.append(Edge(src, node, label))

    def station(self, ref, work):
        node = self.by_stage.get(ref.base)
        if node is None:
            node = Node(len(self.nodes), self.p.stages[ref.base], ref)
            node.work = work
            self.add(node)
            self.by_stage[ref.base] = node
        return node

    def add(self, node):
        self.nodes.append(node)
        node.group = self._group
        (self._group.members if self._group is not None else self.top).append(node)

    def hold(self, st, frontier):
        pools = [self.p.pools[hp.ref.base] for hp in st.pools]
        group = Group(pools, st.cache is not None, self._group)
        group.refs = tuple(hp.ref for hp in st.pools)
        (self._group.members if self._group is not None else self.top).append(group)
        self._group = group
        try:
            return self.block(st.body, frontier)
        finally:
            self._group = group.parent
            if not group.members:
                (self._group.members if self._group is not None else self.top).remove(group)

    def runs(self, idx, ends=False) -> bool:
        """Whether the block (or a block inside it) runs a stage (or, with ``ends``,
        says `end`): whether it changes the drawn path."""
        for st in self.p.blocks[idx]:
            t = type(st)
            if t is T.Run or (ends and t is T.End):
                return True
            if t is T.Branch and (self.runs(st.then, ends) or self.runs(st.other, ends)):
                return True
            if (t is T.Loop or t is T.Hold) and self.runs(st.body, ends):
                return True
        return False

    def branch(self, st, frontier):
        """A choice between paths: the condition labels the edge into the `then` side and
        "else" the edge into the other (or past it: to the next station, `out (else)`); at
        the entry, where no station carries the labels, the choice is a diamond."""
        then_runs, else_runs = self.runs(st.then, True), self.runs(st.other, True)
        if not (then_runs or else_runs):
            return frontier  # a branch around bookkeeping (`observe`, `set`) draws nothing
        guard = st.guard
        if type(guard) is T.Sample and guard.dist == "Bernoulli":
            then_label = "w.p. " + self.text(guard.args[0])
        else:
            then_label = self.text(guard)
        if any(src is ENTRY for src, _ in frontier):
            # no station before it to carry the labels: the choice gets a node of its own
            node = Node(len(self.nodes))
            self.add(node)
            self.connect(frontier, node)
            frontier = [(node, None)]
        # a side that runs nothing and does not end passes the path on unlabelled
        out = self.block(st.then, [(src, then_label if then_runs else label)
                                   for src, label in frontier])
        out += self.block(st.other, [(src, "else" if else_runs else label)
                                     for src, label in frontier])
        return out

    def text(self, e) -> str:
        """An expression as the view writes it: a constant one by its value."""
        value = _constant(e)
        if value is not None:
            return display(value)
        return show_expr(e, self.p.attrs, self.p.pools, self.p.stages)

    def ref_text(self, ref, table) -> str:
        """``engine``, ``engine[2]`` or ``engine[r]`` (the `choose` variable)."""
        item = table[ref.base]
        name = item.name
        if ref.count == 1 and item.index is None:
            return name
        if ref.index is None:
            return f"{name}[{item.index}]" if item.index is not None else name
        idx = ref.index
        if type(idx) is T.Attr and idx.slot == self.choose_var:
            return f"{name}[{self.p.attrs[idx.slot]}]"
        return f"{name}[{self.text(idx)}]"


_OPS = {"Add": lambda a, b: a + b, "Sub": lambda a, b: a - b, "Mul": lambda a, b: a * b,
        "Div": lambda a, b: a / b}


def _constant(e):
    """The value of an expression of numbers and + - * / only, else ``None``."""
    t = type(e)
    if t is T.Num:
        return e.value
    if t is T.Unary and e.op == "Neg":
        v = _constant(e.operand)
        return None if v is None else -v
    if t is T.Binary and e.op in _OPS:
        a, b = _constant(e.left), _constant(e.right)
        if a is None or b is None:
            return None
        try:
            return float(_OPS[e.op](a, b))
        except (ZeroDivisionError, OverflowError):
            return None
    return None
