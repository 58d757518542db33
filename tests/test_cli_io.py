"""The command line's input and output at their edges (issue 8): every write checked and named
as a write error, only regular files read, `--dump` checked before the run and never written
through a link, Ctrl-C from the very start.

The child processes run under `timeout` (the `timeout=` of subprocess) and an address-space
limit, so a regression to a hang or an unbounded read fails the test instead of the machine.
"""
import errno
import io
import os
import pathlib
import resource
import signal
import subprocess
import sys

import pytest

import serq
from serq import cli as serq_cli
from serq import output

ROOT = pathlib.Path(__file__).resolve().parents[1]
MM1 = str(ROOT / "examples" / "mm1.sq")
SHORT = ("--horizon", "2000", "--warmup", "100")
MEMORY_LIMIT = 4 << 30  # bytes of address space for a child: a read of /dev/zero would hit it
FULL = "cannot write to standard output: No space left on device (os error 28)\n"
CLOSED = "cannot write to standard output: it is closed\n"


def _limits():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _env():
    env = dict(os.environ)
    env.pop("SERQ_DEBUG", None)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def child(*args, stdout=subprocess.PIPE, cwd=None, code=None, timeout=60):
    """`python -m serq ARGS` (or `python -c CODE ARGS`) with a memory limit and a timeout."""
    cmd = [sys.executable, "-c", code, *args] if code else [sys.executable, "-m", "serq", *args]
    return subprocess.run(cmd, stdout=stdout, stderr=subprocess.PIPE, env=_env(),
                          cwd=cwd or ROOT, timeout=timeout, preexec_fn=_limits)


# ---------------------------------------------------------------------------------------
# writes


@pytest.mark.parametrize("args", [("ir", MM1), ("check", MM1), ("run", MM1, *SHORT, "--json"),
                                  ("run", MM1, *SHORT), ("--version",), ("--help",),
                                  ("run", "--help")])
def test_a_full_disk_is_a_write_error(args):
    with open("/dev/full", "wb") as full:
        p = child(*args, stdout=full)
    assert (p.returncode, p.stderr.decode()) == (1, FULL)


@pytest.mark.parametrize("args", [("ir", MM1), ("check", MM1), ("--version",), ("--help",)])
def test_a_closed_stdout_is_a_write_error(args):
    # the child starts with descriptor 1 closed, as `serq ir x.sq >&-` does
    code = ("import os, sys; os.close(1); "
            "os.execv(sys.executable, [sys.executable, '-m', 'serq'] + sys.argv[1:])")
    p = child(*args, code=code, stdout=subprocess.DEVNULL)
    assert (p.returncode, p.stderr.decode()) == (1, CLOSED)


def test_a_broken_pipe_is_quiet():
    p = subprocess.Popen([sys.executable, "-m", "serq", "ir", MM1], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=_env(), cwd=ROOT)
    p.stdout.read(10)
    p.stdout.close()
    err = p.stderr.read()
    assert p.wait(timeout=60) == 0
    assert err == b""


class ShortWrites:
    """os.write that moves at most `cap` bytes a call (as write(2) moves at most 2,147,479,552)."""

    def __init__(self, cap):
        self.cap, self.calls = cap, 0
        self.real = os.write

    def __call__(self, fd, data):
        self.calls += 1
        return self.real(fd, bytes(data[:self.cap]))


def test_write_all_continues_after_short_writes(tmp_path, monkeypatch):
    fake = ShortWrites(cap=1000)
    monkeypatch.setattr(output.os, "write", fake)
    data = bytes(range(256)) * 97
    with open(tmp_path / "out", "wb") as f:
        output.write_all(f.fileno(), data, "the file")
    assert (tmp_path / "out").read_bytes() == data
    assert fake.calls == -(-len(data) // 1000)


def test_write_all_hands_the_kernel_at_most_a_chunk(tmp_path, monkeypatch):
    sizes = []
    real_write = os.write

    def recording(fd, data):
        sizes.append(len(data))
        return real_write(fd, data)
    monkeypatch.setattr(output, "CHUNK", 4096)
    monkeypatch.setattr(output.os, "write", recording)
    with open(tmp_path / "out", "wb") as f:
        output.write_all(f.fileno(), b"x" * 10_000, "the file")
    assert sizes == [4096, 4096, 1808]
    assert (tmp_path / "out").read_bytes() == b"x" * 10_000


def test_write_all_without_progress_is_a_write_error(tmp_path, monkeypatch):
    monkeypatch.setattr(output.os, "write", lambda fd, data: 0)
    with open(tmp_path / "out", "wb") as f, pytest.raises(output.WriteError) as e:
        output.write_all(f.fileno(), b"abc", "the file")
    assert str(e.value) == "cannot write to the file: no progress writing (os error 5)"


def _main_with_stdout(path, args, monkeypatch):
    """serq.cli.main(ARGS) in this process with stdout a real file (descriptor writes)."""
    monkeypatch.delenv("SERQ_DEBUG", raising=False)
    with open(path, "w", encoding="utf-8") as f:
        monkeypatch.setattr(sys, "stdout", f)
        return serq_cli.main(list(args))


def test_serq_ir_writes_every_byte_through_short_writes(tmp_path, monkeypatch):
    fake = ShortWrites(cap=333)
    monkeypatch.setattr(output.os, "write", fake)
    out = tmp_path / "ir.json"
    assert _main_with_stdout(out, ["ir", MM1], monkeypatch) == 0
    assert out.read_text(encoding="utf-8") == serq.compile(MM1).to_json() + "\n"
    assert fake.calls > 1


def test_serq_ir_reports_a_write_that_stops(tmp_path, monkeypatch, capsys):
    def stops(fd, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(output.os, "write", stops)
    assert _main_with_stdout(tmp_path / "ir.json", ["ir", MM1], monkeypatch) == 1
    assert capsys.readouterr().err == FULL


def test_in_memory_stdout_still_works(monkeypatch):
    buf = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    monkeypatch.setattr(sys, "stdout", buf)
    output.write_stdout("é\n")
    buf.flush()
    assert buf.buffer.getvalue() == "é\n".encode()


# ---------------------------------------------------------------------------------------
# reading: regular files only


def _mkfifo(path):
    os.mkfifo(path)
    return str(path)


def test_check_of_dev_zero_is_refused():
    p = child("check", "/dev/zero", timeout=60)
    assert p.returncode == 1
    assert p.stderr.decode() == "cannot read /dev/zero: not a regular file (a character device)\n"


def test_a_use_of_dev_zero_is_refused(tmp_path):
    (tmp_path / "p.sq").write_text('use "/dev/zero";\nstage s : fifo(1);\n')
    p = child("check", "p.sq", cwd=tmp_path)
    assert p.returncode == 1
    assert p.stderr.decode() == ("1:1: cannot read `/dev/zero`: not a regular file (a character "
                                 "device)\n1 | use \"/dev/zero\";\n  | ^\n")


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = _mkfifo(tmp_path / "f.sq")
    p = child("check", fifo)
    assert (p.returncode, p.stderr.decode()) == (1, f"cannot read {fifo}: not a regular file "
                                                    f"(a FIFO)\n")


def test_a_fifo_as_ir_is_refused(tmp_path):
    fifo = _mkfifo(tmp_path / "f.json")
    p = child("check", fifo)
    assert (p.returncode, p.stderr.decode()) == (1, f"cannot read {fifo}: not a regular file "
                                                    f"(a FIFO)\n")


def test_a_use_of_a_fifo_is_refused(tmp_path):
    _mkfifo(tmp_path / "lib.sq")
    (tmp_path / "p.sq").write_text('use "lib.sq";\n')
    p = child("check", "p.sq", cwd=tmp_path)
    assert p.returncode == 1
    assert p.stderr.decode().startswith("1:1: cannot read `lib.sq`: not a regular file (a FIFO)\n")


def test_a_fifo_as_trace_is_refused(tmp_path):
    fifo = _mkfifo(tmp_path / "t.csv")
    p = child("run", MM1, "--trace", fifo)
    assert (p.returncode, p.stderr.decode()) == (1, f"cannot read trace {fifo}: not a regular "
                                                    f"file (a FIFO)\n")


def test_the_api_refuses_a_fifo(tmp_path):
    fifo = _mkfifo(tmp_path / "f.sq")
    with pytest.raises(serq.CompileError, match="not a regular file"):
        serq.compile(fifo)
    with pytest.raises(serq.IRError, match="not a regular file"):
        serq.read_trace(fifo)


# Texts of pyserq 0.1.2 (`pyserq.compile(PATH)`, probed 2026-12-01):
#   a directory  -> 'cannot read fdir: Is a directory (os error 21)'
#   a missing file -> 'cannot read nonexist.sq: No such file or directory (os error 2)'
#   bad UTF-8    -> 'cannot read bad8.sq: stream did not contain valid UTF-8'
def test_compile_of_a_directory_says_what_the_reference_says(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "fdir").mkdir()
    with pytest.raises(serq.CompileError) as e:
        serq.compile("fdir")
    assert str(e.value) == f"cannot read fdir: {os.strerror(errno.EISDIR)} (os error 21)"


def test_compile_of_a_missing_file_says_what_the_reference_says(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(serq.CompileError) as e:
        serq.compile("nonexist.sq")
    assert str(e.value) == f"cannot read nonexist.sq: {os.strerror(errno.ENOENT)} (os error 2)"


def test_compile_of_bad_utf8_says_what_the_reference_says(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad8.sq").write_bytes(b"stage s : fifo(1); // \xff\n")
    with pytest.raises(serq.CompileError) as e:
        serq.compile("bad8.sq")
    assert str(e.value) == "cannot read bad8.sq: stream did not contain valid UTF-8"


# ---------------------------------------------------------------------------------------
# --dump


def test_dump_to_an_empty_name_is_a_usage_error():
    p = child("run", MM1, *SHORT, "--dump", "")
    assert p.returncode == 2
    assert p.stderr.decode().endswith(
        "serq run: error: argument --dump: expected a directory, got an empty name\n")


def test_dump_under_a_file_fails_before_the_run(tmp_path):
    (tmp_path / "f").write_text("x")
    p = child("run", MM1, *SHORT, "--dump", str(tmp_path / "f" / "sub"))
    assert p.returncode == 1
    assert p.stdout == b""  # the report is printed after the run: there was no run
    assert p.stderr.decode() == (f"cannot write to {tmp_path / 'f' / 'sub'}: "
                                 f"{os.strerror(errno.ENOTDIR)} (os error 20)\n")


def test_an_unwritable_dump_directory_fails_before_the_run(tmp_path, monkeypatch, capsys):
    """Permission bits do not stop root, so the refusal is the file system's answer, faked."""
    import tempfile

    def refused(*args, **kwargs):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))

    def no_run(program):
        raise AssertionError("the run started before the --dump directory was checked")
    monkeypatch.setattr(tempfile, "mkstemp", refused)
    monkeypatch.setattr(serq, "run", no_run)
    monkeypatch.delenv("SERQ_DEBUG", raising=False)
    assert serq_cli.main(["run", MM1, *SHORT, "--dump", str(tmp_path)]) == 1
    out, err = capsys.readouterr()
    assert (out, err) == ("", f"cannot write to {tmp_path}: {os.strerror(errno.EACCES)} "
                              f"(os error 13)\n")


def test_dump_replaces_a_symlink_instead_of_writing_through_it(tmp_path):
    target = tmp_path / "precious.txt"
    target.write_text("keep me\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / "response.csv").symlink_to(target)
    p = child("run", MM1, *SHORT, "--json", "--dump", str(out))
    assert p.returncode == 0, p.stderr
    assert target.read_text() == "keep me\n"
    link = out / "response.csv"
    assert not link.is_symlink()
    assert link.read_text().startswith("time,session,turn,value\n")
    assert sorted(x.name for x in out.iterdir()) == ["response.csv"]  # no temporary left


def test_dump_files_get_the_usual_permissions(tmp_path):
    mask = os.umask(0o022)
    os.umask(mask)
    p = child("run", MM1, *SHORT, "--json", "--dump", str(tmp_path))
    assert p.returncode == 0
    assert (tmp_path / "response.csv").stat().st_mode & 0o777 == 0o666 & ~mask


# ---------------------------------------------------------------------------------------
# Ctrl-C from the start

# The child does what the console script does — import serq.entry, call main() — and says
# "R" on stderr once main's first step, the SIGINT handler, is in place (called here ahead of
# main, so the "R" comes after it); the test interrupts it that long after the "R". The
# command line's imports (the compiler, the interpreter, numpy: ~0.2 s) are inside the span.
STARTER = ("import os, sys\n"
           "from serq import entry\n"
           "entry._install()\n"
           "os.write(2, b'R')\n"
           "sys.exit(entry.main(sys.argv[1:]))\n")


@pytest.mark.parametrize("delay", [0.0, 0.01, 0.03, 0.06, 0.1, 0.15, 0.25, 0.5])
def test_ctrl_c_early_is_interrupted_not_a_traceback(delay):
    import time
    p = subprocess.Popen([sys.executable, "-c", STARTER, "run", MM1, "--horizon", "1e9"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(), cwd=ROOT,
                         preexec_fn=_limits)
    try:
        assert p.stderr.read(1) == b"R"
        time.sleep(delay)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    assert (p.returncode, err.decode()) == (130, "serq: interrupted\n")
    assert out == b""


# The child interrupts itself exactly when a given module starts importing; the hook is in
# place before `serq` itself is imported (`import serq` must stay light, else the compiler's
# imports run before the command line can handle Ctrl-C).
AT_IMPORT = ("import os, signal, sys\n"
             "class Hook:\n"
             "    def find_spec(self, name, path=None, target=None):\n"
             "        if name == sys.argv[1]:\n"
             "            os.kill(os.getpid(), signal.SIGINT)\n"
             "        return None\n"
             "sys.meta_path.insert(0, Hook())\n"
             "from serq.entry import main\n"
             "sys.exit(main(sys.argv[2:]))\n")


@pytest.mark.parametrize("module", ["serq.cli", "argparse", "serq.lang.compiler", "numpy",
                                    "serq.sim.engine"])
def test_ctrl_c_during_an_import_is_interrupted(module):
    env = _env()
    if module == "numpy":  # the interpreted engine's random streams import it, a compiled
        env["SERQ_PURE"] = "1"  # run does not (test_a_compiled_run_does_not_import_numpy)
    p = subprocess.run([sys.executable, "-c", AT_IMPORT, module, "run", MM1, *SHORT],
                       capture_output=True, env=env, cwd=ROOT, timeout=60,
                       preexec_fn=_limits)
    assert (p.returncode, p.stderr.decode()) == (130, "serq: interrupted\n")


def test_a_compiled_run_does_not_import_numpy():
    """numpy takes about 0.15 s to import and OpenBLAS starts threads that spin a while: a
    run whose random streams are compiled never needs it (serq.sim.rng)."""
    code = ("import sys, serq\n"
            "from serq import compiled\n"
            "serq.run(serq.compile(sys.argv[1], horizon=2000, warmup=100))\n"
            "print(compiled.chosen.get('serq.sim.rng') == 'compiled', 'numpy' in sys.modules)\n")
    p = child(MM1, code=code)
    rng_compiled, imported = p.stdout.decode().split()
    assert imported == ("False" if rng_compiled == "True" else "True"), p.stderr.decode()


def test_import_serq_loads_nothing_heavy():
    code = ("import sys, serq\n"
            "heavy = [m for m in ('numpy', 'serq.lang', 'serq.sim', 'serq.ir', 'serq.cli') "
            "if m in sys.modules]\n"
            "print(heavy)\n"
            "serq.compile\n"  # and the public names still load on first use
            "print('serq.lang' in sys.modules, callable(serq.run), serq.IR_VERSION)\n")
    p = child(code=code)
    assert p.stdout.decode() == "[]\nTrue True 10\n"
