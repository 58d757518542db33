"""The ready queue (serq/sim/ready.py): first in, first out, whichever queue this build runs
(compiled: ``ReadyQueue``, whose slots are stored and taken with C list macros; interpreted:
``collections.deque``), and a session taken off it is held by nobody else."""
import gc
import sys

import pytest

from serq.sim.ready import new_ready_queue


class Item:
    pass


def drain(q):
    out = []
    while q:
        out.append(q.popleft())
    return out


def test_first_in_first_out_across_refills_and_growth():
    q = new_ready_queue()
    items = [Item() for _ in range(100)]
    for it in items[:3]:
        q.append(it)
    assert len(q) == 3
    assert drain(q) == items[:3]
    assert not q and len(q) == 0
    for it in items:  # past the slots the first round made
        q.append(it)
    assert drain(q) == items


def test_a_queue_that_never_empties_keeps_its_order():
    """Appends and pops interleaved without the queue emptying: the front's spent slots are
    dropped (compiled) and the order holds."""
    q = new_ready_queue()
    items = [Item() for _ in range(1000)]
    q.append(items[0])
    q.append(items[1])
    got = []
    for it in items[2:]:
        got.append(q.popleft())
        q.append(it)
    got += drain(q)
    assert got == items


def test_references_are_handed_over_not_kept():
    """A popped item is the caller's: the queue keeps no reference to it (compiled, the
    recycling of ended sessions counts on an item's reference count)."""
    q = new_ready_queue()
    it = Item()
    base = sys.getrefcount(it)
    q.append(it)
    assert sys.getrefcount(it) == base + 1
    got = q.popleft()
    del got
    assert sys.getrefcount(it) == base
    q.append(it)
    q.append(it)
    q.clear()
    assert not q and sys.getrefcount(it) == base


def test_popleft_of_an_empty_queue_raises_index_error():
    q = new_ready_queue()
    with pytest.raises(IndexError):
        q.popleft()
    q.append(Item())
    q.popleft()
    with pytest.raises(IndexError):
        q.popleft()


def test_a_dropped_queue_releases_its_items():
    q = new_ready_queue()
    it = Item()
    base = sys.getrefcount(it)
    for _ in range(5):
        q.append(it)
    del q
    gc.collect()
    assert sys.getrefcount(it) == base
