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


def test_a_long_fifo_queue_is_freed_without_deep_recursion():
    """A fifo stage links its jobs (stages.FifoStage): an overloaded one ends a run with a
    long chain of them, which is freed job by job, not by a C recursion as deep as the
    chain (Job's trashcan; a recursion of 200k frames would overflow the C stack)."""
    heavy = FIFO.format(servers=1).replace("poisson(1)", "poisson(1000)")
    r = run(heavy)
    assert r.stage("server").mean_number > 50000  # about 200k jobs at the end
    del r
