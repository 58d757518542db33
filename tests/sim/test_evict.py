"""Eviction of one cache entry at once (serq.sim.evict) against the reference's loop, one
block at a time (interpreter.md §10), on random cases: the same entry size, cached total,
evicted units and verdict, bit for bit; and the clear errors where that loop never ends."""
import math
import os
import random
import resource
import struct
import subprocess
import sys

import pytest

from serq.sim import evict

EPS = 1e-9


def one_block_at_a_time(size, block, cached, units, used, need, cap, eps):
    """The loop as the reference runs it (written out here, independently of serq)."""
    while True:
        piece = min(block, size)
        size -= piece
        cached -= piece
        units += piece
        if size <= eps:
            return size, cached, units, True
        if not used + cached + need > cap:
            return size, cached, units, False


def bits(values):
    return tuple(struct.pack(">d", v).hex() if isinstance(v, float) else v for v in values)


BLOCKS = [1.0, 16.0, 3.0, 0.5, 0.25, 2.0 ** -10, 7.0, 0.1, 1e-3, 1.5, 1e-9, 2e-9, 6.0]


def random_case(rng):
    """Mostly values on the block's grid (as integer and dyadic blocks give), the rest with
    arbitrary fractions (the closed form must then decline, or still agree)."""
    block = rng.choice(BLOCKS)
    grid = rng.random() < 0.7

    def some(x):
        return x * rng.random() if not grid else rng.randint(0, 8) * block

    blocks = rng.choice([rng.randint(1, 70), rng.randint(65, 3000)])
    size = block * blocks + rng.choice([0.0, some(block)])
    cached = size + rng.choice([0.0, rng.randint(0, 500) * block, some(100)])
    units = rng.choice([0.0, rng.randint(0, 10 ** 6) * 1.0, some(1e3)])
    used = rng.choice([0.0, rng.randint(0, 2000) * 1.0, rng.randint(0, 2000) * block])
    need = rng.choice([block, rng.randint(1, 3000) * 1.0, some(size)])
    # a cap the entry's eviction reaches somewhere in the middle, before the end or never
    cap = used + cached + need - rng.choice([some(size), size / 2, size * 2,
                                             rng.randint(1, 3000) * block]) + EPS
    return size, block, cached, units, used, need, cap, EPS


def test_the_closed_form_is_the_loop_on_random_cases():
    rng = random.Random(20261201)
    exact = 0
    for _ in range(4000):
        case = random_case(rng)
        want = one_block_at_a_time(*case)
        got = evict.pieces(*case)
        if got is not None:
            exact += 1
            assert bits(got) == bits(want), case
        assert bits(evict.pieces_one_by_one(*case)) == bits(want), case
    assert exact > 1800  # about half: the grid cases of the integer and dyadic blocks


@pytest.mark.parametrize("case", [
    (10.0, 1.0, 10.0, 0.0, 0.0, 5.0, 7.0 + EPS, EPS),  # room after 8 pieces
    (10.0, 3.0, 10.0, 0.0, 0.0, 1.0, EPS, EPS),  # the whole entry: 3 + 3 + 3 + 1
    (9.0, 3.0, 9.0, 0.0, 0.0, 1.0, EPS, EPS),  # the whole entry, a multiple of the block
    (1e7, 1.0, 2e7, 3.0, 1e7, 1e7, 2e7 + EPS, EPS),  # the issue's case: 10^7 pieces
    (100.0, 0.5, 150.0, 1e6, 0.0, 60.0, 100.0 + EPS, EPS),
])
def test_the_closed_form_on_chosen_cases(case):
    want = one_block_at_a_time(*case) if case[0] / case[1] < 1e6 else None
    got = evict.pieces(*case)
    assert got is not None
    if want is not None:
        assert bits(got) == bits(want)
    else:
        assert got == (0.0, 1e7, 1e7 + 3.0, True)


def test_a_block_too_small_to_change_anything_is_refused():
    with pytest.raises(evict.NoProgress) as info:
        evict.pieces_one_by_one(60.0, 1e-300, 60.0, 0.0, 0.0, 60.0, 100.0 + EPS, EPS)
    assert "changes neither the entry (60 units)" in str(info.value)
    assert "1e-300" in str(info.value)


def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def serq_run(tmp_path, source):
    path = tmp_path / "prog.sq"
    path.write_text(source)
    env = dict(os.environ)
    env.pop("SERQ_DEBUG", None)
    return subprocess.run(["timeout", "120", sys.executable, "-m", "serq", "run", "--json",
                           str(path)], capture_output=True, text=True, env=env,
                          preexec_fn=limit_memory)


def test_the_issue_reproducer_of_a_tiny_block_stops_with_a_clear_error(tmp_path):
    done = serq_run(tmp_path, "stage d : delay;\npool kv { cap 100; block 1e-300; evict lru; }\n"
                              "workload { arrive renewal(1); }\n"
                              "session { hold kv (60) { run d (0.5); } cache (60); }\n"
                              "run { horizon 20; }\n")
    assert done.returncode == 1, done.stderr
    assert "cannot make room in pool `kv` (block 1e-300) at time 2" in done.stderr
    assert "eviction would never end" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("evict_clause", ["evict lru;", "evict by (age);"])
def test_a_tiny_block_under_every_eviction_order(tmp_path, evict_clause):
    done = serq_run(tmp_path, f"stage d : delay;\npool kv {{ cap 100; block 1e-300; "
                              f"{evict_clause} }}\nworkload {{ arrive renewal(1); }}\n"
                              "session { hold kv (60) { run d (0.5); } cache (60); }\n"
                              "run { horizon 20; }\n")
    assert done.returncode == 1, done.stderr
    assert "eviction would never end" in done.stderr, done.stderr
