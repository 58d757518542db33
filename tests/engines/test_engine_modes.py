"""The two engines (issue 10): the simulator compiled by Cython at install, and the same
``.py`` files interpreted. ``serq/compiled.py`` chooses at import; ``setup.py`` builds.

- an install with no C compiler succeeds, says so, and runs interpreted;
- under ``make test`` on a machine with a compiler (``SERQ_EXPECT_COMPILED=1``, set by the
  Makefile), the compiled engine is the one in use;
- the exactness tests (the conformance corpus, the golden example reports, the DRT findings and
  digests, the edge cases) pass in the other mode too: the suite itself runs them in one mode,
  a subprocess here in the other, so both are byte-identical with the reference's answers;
- the same seed gives byte-identical JSON, run after run and in both modes;
- a compiled module older than its source is not used: a notice, and the source runs.
"""
import importlib
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

import serq
from serq import compiled

ROOT = pathlib.Path(__file__).resolve().parents[2]
# a fifo, a ps, a step engine and a routed program (every example's report is checked against
# the reference's in both modes by tests/test_examples.py, in EXACTNESS_TESTS)
EXAMPLES = [ROOT / "examples" / f"{name}.sq" for name in ("mm1", "mg1_ps", "vllm_engine", "router")]
# the tests that compare reports with the reference's recorded answers, byte for byte
EXACTNESS_TESTS = ["tests/conformance/test_conformance.py", "tests/test_examples.py",
                   "tests/sim/test_drt_findings.py", "tests/sim/test_sim_edges.py",
                   "tests/sim/test_perf_exactness.py", "tests/ref/test_ref_drt_fixed.py"]


def _compiled_available():
    """True when every compiled module is there and current (what runs without SERQ_PURE)."""
    env_pure = os.environ.pop(compiled.PURE_VARIABLE, None)
    try:
        return compiled.describe() == "compiled"
    finally:
        if env_pure is not None:
            os.environ[compiled.PURE_VARIABLE] = env_pure


def _this_mode():
    return "interpreted" if compiled.pure_requested() or not _compiled_available() else "compiled"


def _other_mode_env():
    """The environment of a subprocess that runs the engine this process does not."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("SERQ_DEBUG", None)
    if _this_mode() == "compiled":
        env[compiled.PURE_VARIABLE] = "1"
    else:
        env.pop(compiled.PURE_VARIABLE, None)
    return env


needs_both = pytest.mark.skipif(
    not _compiled_available(),
    reason="no current compiled engine here (built without a C compiler, or not built): "
           "the suite itself is the interpreted engine's test")


def test_the_engine_is_the_one_described():
    for name in compiled.modules():
        importlib.import_module(name)
    st = compiled.status()
    assert set(st) == set(compiled.modules())
    for name, state in st.items():
        assert (state == "compiled") == compiled.is_compiled(sys.modules[name]), name
    if compiled.pure_requested():
        assert compiled.describe() == f"interpreted ({compiled.PURE_VARIABLE}=1)"


@pytest.mark.skipif(os.environ.get("SERQ_EXPECT_COMPILED") != "1",
                    reason="SERQ_EXPECT_COMPILED=1 is set by `make test` where a C compiler works")
def test_make_test_with_a_compiler_uses_the_compiled_engine():
    assert not compiled.pure_requested(), "SERQ_PURE is set under make test"
    assert compiled.describe() == "compiled"
    for name in compiled.modules():
        assert compiled.is_compiled(importlib.import_module(name)), name
    # and a run goes through it
    report = serq.run(serq.compile(str(ROOT / "examples" / "mm1.sq")))
    assert report.events > 0
    # built profile-guided where gcc 10 or later compiled it (setup.py), unless turned off
    if _gcc_here() and os.environ.get("SERQ_PGO") != "0":
        assert (compiled.build_note() or "").startswith("profile-guided"), compiled.build_note()


@needs_both
def test_the_exactness_tests_pass_in_the_other_mode_too():
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                        *EXACTNESS_TESTS], cwd=ROOT, env=_other_mode_env(), text=True,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=1200)
    tail = "\n".join(p.stdout.splitlines()[-15:])
    assert p.returncode == 0, f"the exactness tests fail in the other mode:\n{tail}"
    assert " passed" in tail and " failed" not in tail


REPORTS = """
import json, sys
import serq
from serq import compiled
out = {"engine": compiled.describe()}
for path in sys.argv[1:]:
    program = serq.compile(path)
    out[path] = [serq.run(program).json(), serq.run(program).json()]
print(json.dumps(out))
"""


def _reports(env=None):
    p = subprocess.run([sys.executable, "-c", REPORTS, *map(str, EXAMPLES)], cwd=ROOT, env=env,
                       text=True, capture_output=True, timeout=600)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_the_same_seed_gives_byte_identical_json_in_both_modes():
    here = _reports()
    there = _reports(_other_mode_env()) if _compiled_available() else None
    for path in map(str, EXAMPLES):
        assert here[path][0] == here[path][1], path  # run after run
        if there is not None:
            assert there[path][0] == there[path][1], path
            assert here[path][0] == there[path][0], path  # compiled and interpreted
    if there is not None:
        assert {here["engine"], there["engine"]} == {"compiled", "interpreted (SERQ_PURE=1)"}


def _copy_source(dest):
    """The files an install reads: the package (without build products), setup and metadata."""
    ignore = shutil.ignore_patterns("__pycache__", "*.so", "*.c", compiled.MANIFEST)
    shutil.copytree(ROOT / "serq", dest / "serq", ignore=ignore)
    for name in ("setup.py", "pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, dest / name)


def _can_build_here():
    try:
        import setuptools
    except ImportError:
        return False
    major, minor = (int(x) for x in setuptools.__version__.split(".")[:2])
    return (major, minor) >= (70, 1)  # builds wheels without the `wheel` package


def _pip_install(src, target, env, timeout):
    """``pip install`` the source copy ``src`` into ``target`` (no build isolation: the test
    environment's setuptools and Cython build it); the build's ``serq:`` notices."""
    p = subprocess.run([sys.executable, "-m", "pip", "install", "-v", "--no-deps",
                        "--no-build-isolation", "--disable-pip-version-check", "--target",
                        str(target), str(src)], env=env, text=True, capture_output=True,
                       timeout=timeout)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    return [line.strip() for line in (p.stdout + p.stderr).splitlines()
            if line.strip().startswith("serq: ")]


@pytest.mark.skipif(not _can_build_here(),
                    reason="needs setuptools>=70.1 in the test environment (the test extra)")
def test_an_install_without_a_c_compiler_runs_interpreted(tmp_path):
    src, target = tmp_path / "src", tmp_path / "site"
    _copy_source(src)
    env = dict(os.environ, CC="false", CXX="false", PIP_NO_INDEX="1")
    env.pop(compiled.PURE_VARIABLE, None)
    notices = _pip_install(src, target, env, timeout=600)
    assert notices == ["serq: no working C compiler (CompileError): installing the interpreted "
                       "engine"], notices
    assert not list(target.glob("serq/**/*.so"))
    run_env = dict(env, PYTHONPATH=str(target))
    version = subprocess.run([sys.executable, "-m", "serq", "--version"], env=run_env,
                             cwd=tmp_path, text=True, capture_output=True, timeout=120)
    assert version.stdout.splitlines()[1] == (
        "engine: interpreted (not compiled: no C compiler or Cython when it was installed)")
    run = subprocess.run([sys.executable, "-m", "serq", "run", "--json",
                          str(ROOT / "examples" / "mm1.sq")], env=run_env, cwd=tmp_path,
                         text=True, capture_output=True, timeout=300)
    assert run.returncode == 0 and run.stderr == "", run.stderr
    assert run.stdout == serq.run(serq.compile(str(ROOT / "examples" / "mm1.sq"))).json() + "\n"


def test_every_pxd_is_installed_with_its_module():
    """A wheel (a non-editable install) carries each package's .pxd files: serq/compiled.py
    hashes a module's .pxd, and those it cimports, to tell a current build from a stale one,
    so a .pxd left out makes every module that cimports it run interpreted (it did for
    ``serq/ir/arith.pxd``: half the engine, found by the profile-guided install test)."""
    tomllib = pytest.importorskip("tomllib", reason="Python 3.11's tomllib reads pyproject.toml")
    with open(ROOT / "pyproject.toml", "rb") as f:
        data = tomllib.load(f)["tool"]["setuptools"]["package-data"]
    for pxd in sorted((ROOT / "serq").rglob("*.pxd")):
        package = ".".join(pxd.parent.relative_to(ROOT).parts)
        assert "*.pxd" in data.get(package, []), f"{pxd.relative_to(ROOT)} is not installed"


def _gcc_here():
    """gcc 10 or later is the C compiler (setup.py's profile-guided build needs it)."""
    p = subprocess.run([os.environ.get("CC", "cc"), "-fprofile-partial-training", "-E", "-dM",
                        "-x", "c", "-"], input="", text=True, capture_output=True)
    return p.returncode == 0 and "__GNUC__" in p.stdout and "__clang__" not in p.stdout


def _install_training_on(tmp_path, programs):
    """Install a copy of the source whose training programs are ``programs`` ({relative
    path: text}); its build's ``serq:`` notices, and ``serq --version`` and ``serq run --json
    examples/mm1.sq`` run with the installed package."""
    src, target = tmp_path / "src", tmp_path / "site"
    _copy_source(src)
    for rel, text in programs.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    env = dict(os.environ, PIP_NO_INDEX="1")
    for name in (compiled.PURE_VARIABLE, "SERQ_PGO"):
        env.pop(name, None)
    notices = _pip_install(src, target, env, timeout=1800)
    run_env = dict(env, PYTHONPATH=str(target))
    outputs = [subprocess.run([sys.executable, "-m", "serq", *args], env=run_env, cwd=tmp_path,
                              text=True, capture_output=True, timeout=300).stdout
               for args in (["--version"], ["run", "--json", str(ROOT / "examples" / "mm1.sq")])]
    return notices, outputs[0].splitlines()[1], outputs[1]


PGO_INSTALL = pytest.mark.skipif(not (_can_build_here() and _gcc_here()),
                                 reason="needs gcc 10 or later and setuptools>=70.1")


@pytest.mark.slow
@PGO_INSTALL
def test_an_install_with_gcc_is_profile_guided(tmp_path):
    """Trained on one program (the copy's only one), the build is profile-guided, says so,
    and runs every program as the engine in use here does."""
    notices, engine, report = _install_training_on(
        tmp_path, {"examples/mm1.sq": (ROOT / "examples" / "mm1.sq").read_text()})
    count = len(compiled.modules(str(ROOT)))
    assert notices == [f"serq: compiled engine built ({count} modules, profile-guided)"]
    assert engine.startswith("engine: compiled, profile-guided")
    assert report == serq.run(serq.compile(str(ROOT / "examples" / "mm1.sq"))).json() + "\n"


@pytest.mark.slow
@PGO_INSTALL
def test_a_failed_training_run_gives_the_plain_build(tmp_path):
    """No training program runs (the copy's only one has an error): the plain build, with
    the reason in its notice; the engine is compiled and says nothing of a profile."""
    notices, engine, report = _install_training_on(
        tmp_path, {"benchmarks/programs/broken.sq": "stage s : fifo(;\n"})
    count = len(compiled.modules(str(ROOT)))
    assert notices == [f"serq: compiled engine built ({count} modules; not profile-guided: "
                       "the training run failed (no training program ran))"]
    assert engine == "engine: compiled"
    assert report == serq.run(serq.compile(str(ROOT / "examples" / "mm1.sq"))).json() + "\n"


def run_in_a_copy_changed_after_the_build(tmp_path, module, code):
    """Run ``code`` in a copy of the built package (its extensions and build record) whose
    ``serq/sim/<module>`` changed after the build, compiled engine allowed."""
    copy = tmp_path / "serq"
    shutil.copytree(ROOT / "serq", copy, ignore=shutil.ignore_patterns("__pycache__", "*.c"))
    with open(copy / "sim" / module, "a") as f:
        f.write("\n# changed after the build\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    env.pop(compiled.PURE_VARIABLE, None)
    return subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, text=True,
                          capture_output=True, timeout=120)


@needs_both
def test_the_version_says_how_the_engine_was_built(tmp_path):
    """The build record's note (setup.py writes one for a profile-guided build) is shown
    after the engine, and read as a comment: every module stays compiled with it or without
    it; with SERQ_PURE=1 the note is not shown (the extensions are not in use)."""
    copy = tmp_path / "serq"
    shutil.copytree(ROOT / "serq", copy, ignore=shutil.ignore_patterns("__pycache__", "*.c"))
    record = copy / compiled.MANIFEST
    modules = [line for line in record.read_text().splitlines() if not line.startswith("#")]
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    env.pop(compiled.PURE_VARIABLE, None)

    def version(note, **extra):
        record.write_text("".join(f"{line}\n" for line in ([note] if note else []) + modules))
        p = subprocess.run([sys.executable, "-m", "serq", "--version"], env=dict(env, **extra),
                           cwd=tmp_path, text=True, capture_output=True, timeout=120)
        assert p.returncode == 0 and p.stderr == "", p.stderr
        return p.stdout.splitlines()[1]

    assert version(None) == "engine: compiled"
    assert version(compiled.NOTE_PREFIX + "profile-guided (gcc)") == (
        "engine: compiled, profile-guided (gcc)")
    assert version(compiled.NOTE_PREFIX + "profile-guided (gcc)", SERQ_PURE="1") == (
        "engine: interpreted (SERQ_PURE=1)")


@needs_both
def test_a_stale_compiled_module_is_not_used(tmp_path):
    """A copy of the package whose rng.py changed after the build: rng runs from its source,
    with one notice; the other modules stay compiled."""
    code = ("import serq.sim.rng, serq.sim.stats, serq.compiled as c; "
            "print(c.is_compiled(serq.sim.rng), c.is_compiled(serq.sim.stats)); "
            "print(c.status()['serq.sim.rng'])")
    p = run_in_a_copy_changed_after_the_build(tmp_path, "rng.py", code)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == ["False True",
                                     "stale: its source changed after it was compiled"]
    assert p.stderr == ("serq: serq/sim/rng.py changed since the engine was compiled; running "
                        "the changed modules interpreted (rebuild: pip install -e . or make)\n")


def statuses_after_changing(tmp_path, changed):
    """The engine status of every module, in a copy where ``changed`` (a file of serq/sim)
    changed after the build, and whether a run still works there."""
    code = ("import json, serq, serq.sim.engine, serq.compiled as c; "
            f"p = serq.compile({str(ROOT / 'benchmarks' / 'programs' / 'mm1_run.sq')!r}, "
            "horizon=2000.0); "
            "print(json.dumps([c.status(), serq.run(p).events > 0]))")
    p = run_in_a_copy_changed_after_the_build(tmp_path, changed, code)
    assert p.returncode == 0, p.stderr
    status, ran = json.loads(p.stdout.splitlines()[-1])
    assert ran
    return {name.rsplit(".", 1)[-1]: state for name, state in status.items()}


@needs_both
def test_a_module_whose_cimported_types_changed_is_stale_too(tmp_path):
    """stages.py uses stats.py's C types (cimport of stats.pxd): when stats.py changed after
    the build, stats runs from its source and so do the modules that cimport it (a compiled
    stages would find no C type to import); the others stay compiled and a run still works."""
    st = statuses_after_changing(tmp_path, "stats.py")
    assert st["stats"] == st["stages"] == st["engine"] != "compiled"
    assert st["rng"] == "compiled"


@needs_both
def test_a_change_reached_through_a_pxd_cimport_makes_the_module_stale(tmp_path):
    """stages.pxd cimports state.pxd, which cimports scheduler.pxd (``from serq.sim.state
    cimport RunState`` in a .pxd, not a ``cython.cimports`` line in a .py): when scheduler.py
    changed after the build, the stages use C types no longer there, so they run from their
    source too; rng, which cimports none of them, stays compiled."""
    st = statuses_after_changing(tmp_path, "scheduler.py")
    assert st["scheduler"] == st["stages"] == st["state"] != "compiled"
    assert st["rng"] == "compiled"


def test_a_cimport_of_a_module_through_its_package_is_followed(tmp_path):
    """``from cython.cimports.serq.ir import arith`` names the module after ``import``: the
    source hash must cover arith's sources as it does for ``from cython.cimports.serq.ir.arith
    import add`` (it once looked for a module ``serq/ir.py`` and followed nothing)."""
    import hashlib
    arith = ROOT / "serq" / "ir" / "arith"
    for line in ("from cython.cimports.serq.ir import arith",
                 "    from cython.cimports.serq.ir.arith import (add, div,",
                 "from serq.ir cimport arith as A"):
        src = tmp_path / "m.py"
        src.write_text(line + "\n")
        h = hashlib.sha256(src.read_bytes())
        h.update((arith.with_suffix(".py")).read_bytes())
        h.update((arith.with_suffix(".pxd")).read_bytes())  # it cimports no serq module
        assert compiled.source_hash(str(src)) == h.hexdigest(), line
    assert compiled._cimported("from serq.sim.stats cimport TimeAvg as T, Welford") == (
        "serq.sim.stats", ["TimeAvg", "Welford"])
    assert compiled._cimported("import cython") is None


def test_without_cython_the_engine_runs_on_the_shim_with_the_same_reports():
    """Where Cython is not installed at all (a wheel-less install on a machine without it),
    the typed modules import serq's no-op stand-in (``serq/_cython_shim.py``) for the
    ``cython`` module: every name they use at import time must be there (``cython.int`` in
    a ``@cython.locals`` once was not), and the reports are the same."""
    block = "import sys; sys.modules['cython'] = None\n"  # makes `import cython` fail
    env = dict(os.environ, SERQ_PURE="1")
    p = subprocess.run([sys.executable, "-c", block + REPORTS, *map(str, EXAMPLES)], cwd=ROOT,
                       env=env, text=True, capture_output=True, timeout=600)
    assert p.returncode == 0, p.stderr
    there = json.loads(p.stdout)
    shimmed = subprocess.run(
        [sys.executable, "-c", block + "import serq.sim.engine, serq.sim.sessions as m; "
         "from serq import _cython_shim; print(m.cython is _cython_shim)"],
        cwd=ROOT, env=env, text=True, capture_output=True, timeout=120)
    assert shimmed.stdout.strip() == "True", shimmed.stderr
    here = _reports()
    for path in map(str, EXAMPLES):
        assert there[path][0] == here[path][0], path
