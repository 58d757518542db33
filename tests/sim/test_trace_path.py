"""Where a run reads its trace (ir.md §7: the Program remembers the program file's directory).
The messages are pyserq 0.1.2's, recorded by compiling and running the same files with it
(`pyserq.run(pyserq.compile(path))` from the directory holding x.sq and sub/x.sq):

    ./x.sq     -> cannot read trace ./nope.csv: ...
    x.sq       -> cannot read trace nope.csv: ...
    sub/x.sq   -> cannot read trace sub/nope.csv: ...
    ./sub/x.sq -> cannot read trace ./sub/nope.csv: ...
and `compile('sub/x.sq', trace='nope.csv')` -> cannot read trace nope.csv (the argument is read
from the current directory)."""
import pytest

import serq

PROGRAM = """stage e : step { budget 8; cost 1; }
workload { arrive batch(1); trace "%s" ordered; }
session { turn; run e prefill (new); observe got = new; }
run { horizon 10; }
"""
MISSING = ": No such file or directory (os error 2)"


@pytest.fixture
def tree(tmp_path, monkeypatch):
    (tmp_path / "sub").mkdir()
    for d in (tmp_path, tmp_path / "sub"):
        (d / "x.sq").write_text(PROGRAM % "nope.csv")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("path,read", [("./x.sq", "./nope.csv"), ("x.sq", "nope.csv"),
                                       ("sub/x.sq", "sub/nope.csv"),
                                       ("./sub/x.sq", "./sub/nope.csv")])
def test_a_relative_trace_is_read_beside_the_program(tree, path, read):
    with pytest.raises(serq.SimulationError) as e:
        serq.run(serq.compile(path))
    assert str(e.value) == f"cannot read trace {read}{MISSING}"


def test_the_trace_argument_and_source_text_read_from_the_current_directory(tree):
    for program in (serq.compile("sub/x.sq", trace="nope.csv"),
                    serq.compile(source=PROGRAM % "nope.csv")):
        with pytest.raises(serq.SimulationError) as e:
            serq.run(program)
        assert str(e.value) == f"cannot read trace nope.csv{MISSING}"


def test_the_program_runs_from_any_directory(tree, monkeypatch):
    (tree / "sub" / "t.csv").write_text("0,0,7,1,0\n")
    (tree / "sub" / "y.sq").write_text(PROGRAM % "t.csv")
    monkeypatch.chdir("/")
    report = serq.run(serq.compile(str(tree / "sub" / "y.sq")))
    assert report.observe("got").samples == [7.0]
