"""The stages' edge values that C types could get wrong (issue 10: stages.pxd types a fifo's
server count as a C size, a job's times and a ps stage's virtual time as C doubles)."""
import serq

FIFO = """
stage server : fifo({servers});
workload {{ arrive poisson(1); }}
session {{ set t0 = now; run server (~exp(1)); observe response = now - t0; end; }}
run {{ horizon 200; seed 7; }}
"""


def run(source):
    return serq.run(serq.compile(source=source))


def test_a_fifo_server_count_beyond_any_c_size_is_as_large_as_needed():
    """fifo(1e300) has more servers than a C size can count (interpreted Python counts them
    all): with at most a few jobs present, it serves like any large enough fifo, never
    queueing a job."""
    huge = run(FIFO.format(servers="1e300"))
    large = run(FIFO.format(servers="1000"))
    assert huge.json() == large.json()
    assert huge.stage("server").mean_wait == 0.0
