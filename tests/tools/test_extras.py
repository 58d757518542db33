"""The core needs numpy only: importing serq, running a program and `serq run` import none of
the optional packages; a missing extra is one clear message naming what to install."""
import subprocess
import sys
import pathlib

from serq import cli as serq_cli

ROOT = pathlib.Path(__file__).resolve().parents[2]
HEAVY = ("pandas", "pyarrow", "matplotlib", "scipy", "tqdm", "dask", "distributed", "ray",
         "nbclient")

PROBE = f"""
import sys
import serq
from serq import cli
serq.run(serq.compile({str(ROOT / 'examples' / 'mm1.sq')!r}, horizon=200, warmup=1))
cli.main(['run', {str(ROOT / 'examples' / 'mm1.sq')!r}, '--horizon', '200', '--warmup', '1',
          '--json'])
cli.main(['check', {str(ROOT / 'examples' / 'flagship.sq')!r}])
print(' '.join(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)
"""


def test_the_core_imports_no_optional_package():
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip() == ""


def test_a_missing_extra_is_one_message(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "scipy", None)  # import scipy now raises ImportError
    code = serq_cli.main(["sweep", str(ROOT / "examples" / "mm1.sq"), "--set", "lam=0.5"])
    err = capsys.readouterr().err
    assert code == 1
    assert err == "serq sweep needs scipy (pip install 'serq[sweep]')\n"


def test_pyproject_extras_match_what_the_code_asks_for():
    import tomllib
    from serq.extras import EXTRAS
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = deps["optional-dependencies"]
    assert deps["dependencies"] == ["numpy"]
    base = {name: [d.split("[")[0] for d in reqs] for name, reqs in extras.items()}
    assert set(EXTRAS) <= set(base), "serq.extras names an extra pyproject.toml lacks"
    test = set(base["test"])
    for extra in base:
        assert set(base[extra]) <= test, f"the test extra misses {extra}'s packages"
    assert {"nbclient", "nbformat", "ipykernel"} <= test
