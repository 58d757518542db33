"""The gauges' change points (interpreter.md §11; ``engine.read_gauges``, kept by
``gauges.Gauge``): a reading is kept when it differs from the last point in IEEE total order
(-0.0 differs from 0.0, NaN equals NaN), the points outgrow their first room (64), and the
two engines keep the same points bit for bit."""
import json
import math
import os
import subprocess
import sys

import serq

PROGRAM = """
let lam = 0.8;
stage server : fifo(1);
workload { arrive poisson(lam); }
session {
  run server (~exp(1));
  end;
}
gauge q = queue(server);
gauge z = 0 * (busy(server) * 2 - 1);
gauge n = (queue(server) - queue(server)) / 0;
run { horizon 300; warmup 0; seed 3; }
"""

POINTS = ("import json, sys, serq\n"
          "r = serq.run(serq.compile(source=sys.stdin.read()))\n"
          "print(json.dumps({k: [[t.hex() for t in g.times], [v.hex() for v in g.values]]"
          " for k, g in r.gauges.items()}))\n")


def same(x, y):
    """The test's own statement of total-order equality (bits, but one NaN for all)."""
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    return x == y and math.copysign(1.0, x) == math.copysign(1.0, y)


def gauges():
    return serq.run(serq.compile(source=PROGRAM)).gauges


def test_points_are_changes_in_total_order():
    g = gauges()
    for name, gauge in g.items():
        times, values = gauge.times, gauge.values
        assert len(times) == len(values) >= 1, name
        assert all(a < b for a, b in zip(times, times[1:])), name
        assert not any(same(a, b) for a, b in zip(values, values[1:])), name
    assert len(g["q"].values) > 64  # the points outgrew their first room
    z = g["z"].values  # 0 * (+1) and 0 * (-1): the signed zeros alternate, each one kept
    assert len(z) > 64 and all(v == 0.0 for v in z)
    assert [math.copysign(1.0, v) for v in z[:4]] == [1.0, -1.0, 1.0, -1.0]
    assert len(g["n"].values) == 1 and math.isnan(g["n"].values[0])  # NaN equals NaN


def test_both_engines_keep_the_same_points():
    here = {k: [[t.hex() for t in g.times], [v.hex() for v in g.values]]
            for k, g in gauges().items()}
    env = dict(os.environ, SERQ_PURE="1")
    p = subprocess.run([sys.executable, "-c", POINTS], input=PROGRAM, env=env, text=True,
                       capture_output=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == here
