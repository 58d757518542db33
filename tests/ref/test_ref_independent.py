"""serq.ref is an independent definition: it never imports serq.sim (formal.md §6.1), it stays
small enough to review line by line, and it refuses what is outside the fragment."""
import ast
import pathlib

import pytest

import serq
import serq.ref
from serq.ref import OutsideFragment

REF = pathlib.Path(serq.ref.__file__).resolve().parent
SEMANTICS = ["__init__.py", "fragment.py", "expr.py", "pools.py", "machine.py", "engine.py",
             "report.py"]


def imported_modules(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            yield node.module or ""
            if node.module == "serq":
                yield from (f"serq.{a.name}" for a in node.names)


def test_no_module_of_serq_ref_imports_serq_sim():
    files = sorted(REF.glob("*.py"))
    assert len(files) >= len(SEMANTICS)
    for path in files:
        for name in imported_modules(path):
            assert not (name == "serq.sim" or name.startswith("serq.sim.")), (path.name, name)
            # the product under test is reached only through serq.run, by the DRT tooling
            if path.name in SEMANTICS:
                assert name != "serq.run" and not name.startswith("serq.lang"), (path.name, name)


def test_the_scan_sees_a_sim_import(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("from serq.sim.engine import Sim\nimport serq.sim\nfrom serq import sim\n")
    assert [n for n in imported_modules(bad) if n.startswith("serq.sim")] == [
        "serq.sim.engine", "serq.sim", "serq.sim"]


def test_the_semantics_stays_under_1000_lines():
    lines = sum(len((REF / f).read_text(encoding="utf-8").splitlines()) for f in SEMANTICS)
    assert lines < 1000, lines


@pytest.mark.parametrize("source,construct", [
    ("stage s : fifo(1); workload { arrive poisson(1); } session { run s (1); }",
     "the arrival process `poisson`"),
    ("stage e : step { budget 8; cost 1; } stage s : ps(1); workload { arrive batch(1); } "
     "session { run s (1); }", "the ps stage `s`"),
    ("stage e : step { budget 8; cost 1; } stage d : delay; workload { arrive batch(1); } "
     "session { run d (~exp(1)); }", "a random draw (`exp`)"),
    ("stage e : step { budget 8; cost 1; } stage d : delay; workload { arrive batch(1); } "
     "session { run d (sqrt(4)); }", "the function `sqrt`"),
    ("stage d : delay; workload { arrive batch(1); } session { run d (1); }",
     "a deployment with 0 step stages"),
    ("stage e : step { budget 8; cost 1; serve only (decoding); } workload { arrive batch(1); } "
     "session { run e prefill (1); }", "an IR-11 program"),
])
def test_outside_the_fragment_is_refused_by_name(source, construct):
    program = serq.compile(source=source + " run { horizon 10; }")
    with pytest.raises(OutsideFragment) as e:
        serq.ref.run(program)
    assert construct in str(e.value)
    assert "outside the IR-10 fragment (formal.md §1.6)" in str(e.value)
    assert isinstance(e.value, ValueError)
