"""One pool of the fragment: units, holders, the FIFO queue and the LRU prefix cache
(formal.md §1.1–§1.2 ``PoolSt``; interpreter.md §9–§10). All amounts are exact."""
from __future__ import annotations

from fractions import Fraction


class Entry:
    """A cache entry (formal.md §1.2): ``size`` units released at ``last``, release number
    ``seq`` (the LRU order is ``(last, seq)``)."""

    __slots__ = ("size", "last", "seq")

    def __init__(self, size, last, seq):
        self.size, self.last, self.seq = size, last, seq


class PoolState:
    """``PoolSt{used, entries, holders, queue}`` plus the report's counters."""

    def __init__(self, decl):
        self.decl = decl
        self.cap = Fraction(decl.cap)
        self.block = None if decl.block is None else Fraction(decl.block)
        self.used = Fraction(0)
        self.entries = {}      # key (owner serial, or a dead key) -> Entry
        self.holders = []      # sessions, in admission order (duplicates kept, §14.7)
        self.queue = []        # waiting holds: [session, resumed]
        self.admissions = self.evicted_entries = self.evicted_units = 0
        self.preemptions = self.rejected = self.stuck = 0

    @property
    def cached(self):
        """Units held by cache entries (formal.md §1.1: ``allocated + cached <= cap``)."""
        return sum((e.size for e in self.entries.values()), Fraction(0))

    def up(self, x):
        """``roundUp(block, x)``: a whole number of blocks (identity without a block)."""
        b = self.block
        return x if b is None else -((-x) // b) * b

    def down(self, x):
        """``roundDown(block, x)``."""
        b = self.block
        return x if b is None else (x // b) * b

    def fits(self, need):
        """The admission test of one pool (``fitsAll``, formal.md §1.2): cached units never
        count against it."""
        return self.used + self.up(need) <= self.cap

    def make_room(self, need):
        """``makeRoom`` (formal.md §1.2, interpreter.md §10): evict one block at a time from the
        least-recently released entry (least ``(last, seq)``) until ``used + cached + need <=
        cap`` or the cache is empty. Never touches ``used``."""
        cached = self.cached
        while self.used + cached + need > self.cap and self.entries:
            key = min(self.entries, key=lambda k: (self.entries[k].last, self.entries[k].seq))
            ent = self.entries[key]
            while ent.size > 0 and self.used + cached + need > self.cap:  # it stays the LRU
                piece = ent.size if self.block is None else min(max(self.block, 1), ent.size)
                ent.size -= piece
                cached -= piece
                self.evicted_units += piece
            if ent.size <= 0:
                del self.entries[key]
                self.evicted_entries += 1

    def allocate(self, sess, alloc):
        """Make room for ``alloc`` units, take them, and add the session to the holders."""
        self.make_room(alloc)
        self.used += alloc
        self.holders.append(sess)

    def free(self, sess, alloc):
        """``used -= alloc`` and remove every occurrence of the session from the holders."""
        self.used -= alloc
        self.holders = [h for h in self.holders if h is not sess]
