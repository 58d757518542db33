"""Little's law, L = X W, on every stage of every example (examples/*.sq): the time-average
number of jobs present (a gauge `queue(S)` added to the program, with the report's 95 % CI)
against the throughput times the mean time a job spends there (wait + service, from the
report's stage row). Little's law is a sample-path identity; on a finite run it holds up to
the jobs present at the warm-up and at the end (and, on a step stage, the jobs a preemption
took away), so the check is within 2 CIs of L and within 5 % of L.
"""
import pathlib

import pytest

import serq

EXAMPLES = sorted((pathlib.Path(__file__).resolve().parents[2] / "examples").glob("*.sq"))


def with_stage_gauges(path):
    """The example's source with one gauge `queue(S)` per stage (gauges read, never change,
    the run: the report is otherwise the example's own) and the gauge names."""
    src = path.read_text(encoding="utf-8")
    program = serq.compile(str(path))
    names, lines = [], []
    for k, st in enumerate(program.stages):
        ref = st.name if st.index is None else f"{st.name}[{st.index}]"
        names.append(f"little_{k}")
        lines.append(f"gauge little_{k} = queue({ref});")
    at = src.rindex("run {")
    return src[:at] + "\n".join(lines) + "\n" + src[at:], names


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_littles_law_on_every_stage(path, monkeypatch):
    source, names = with_stage_gauges(path)
    monkeypatch.chdir(path.parent)  # a program's trace is read beside it; source text: the cwd
    report = serq.run(serq.compile(source=source))
    assert report.events == serq.run(serq.compile(str(path))).events  # the same run
    for name, stage in zip(names, report.stages):
        gauge = report.gauge(name)
        assert gauge.mean == pytest.approx(stage.mean_number, rel=1e-12)
        xw = stage.throughput * (stage.mean_wait + stage.mean_service)
        where = f"{path.name} stage {stage.name}"
        assert stage.completed > 1000, where
        assert abs(gauge.mean - xw) <= 2 * gauge.ci, (where, gauge.mean, gauge.ci, xw)
        assert abs(gauge.mean - xw) <= 0.05 * gauge.mean, (where, gauge.mean, xw)
