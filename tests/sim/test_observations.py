"""serq.sim.observations: an observation's records come back bit for bit as they were made,
compiled (C arrays) or interpreted (lists)."""
import struct

from serq.sim.observations import Observations

NAN_PAYLOAD = struct.unpack("<d", struct.pack("<Q", 0x7FF8000000000123))[0]
NEG_NAN = struct.unpack("<d", struct.pack("<Q", 0xFFF8000000000000))[0]


def bits(xs):
    return [struct.pack("<d", x) for x in xs]


def test_columns_keep_every_value_exactly():
    values = [1.5, -0.0, 0.0, float("nan"), NAN_PAYLOAD, NEG_NAN, float("inf"), -float("inf"),
              5e-324, 1.7976931348623157e308]
    rec = Observations()
    for i, v in enumerate(values):
        rec.add(v, -0.0 if i == 1 else i / 3, (1 << 62) + i, 4294967295 - i)
    samples, times, sessions, turns = rec.columns()
    assert bits(samples) == bits(values)
    assert bits(times) == bits([-0.0 if i == 1 else i / 3 for i in range(len(values))])
    assert sessions == [(1 << 62) + i for i in range(len(values))]
    assert turns == [4294967295 - i for i in range(len(values))]
    assert {type(x) for x in samples + times} == {float}
    assert {type(x) for x in sessions + turns} == {int}
    assert bits(rec.samples()) == bits(values)
    assert len(rec) == len(values)


def test_a_value_that_is_not_a_float_is_kept_as_it_is():
    rec = Observations()
    rec.add(1.0, 0.0, 0, 0)
    rec.add(3, 1.0, 1, 1)
    rec.add(-0.0, 2.0, 2, 2)
    samples = rec.columns()[0]
    assert [(type(x), x) for x in samples] == [(float, 1.0), (int, 3), (float, 0.0)]
    assert bits([samples[2]]) == bits([-0.0])


def test_many_rows_then_release():
    rec = Observations()
    n = 5000
    for i in range(n):
        rec.add(i * 0.5, float(i), i, i % 7)
    samples, times, sessions, turns = rec.columns()
    assert samples == [i * 0.5 for i in range(n)] and times == [float(i) for i in range(n)]
    assert sessions == list(range(n)) and turns == [i % 7 for i in range(n)]
    rec.release()
    assert len(rec) == 0 and rec.columns() == ([], [], [], [])
    rec.add(2.0, 1.0, 1, 1)
    assert rec.columns() == ([2.0], [1.0], [1], [1])
