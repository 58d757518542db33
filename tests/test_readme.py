"""README.md stays true: its Layout section lists every package under serq/ and every top-level
folder, and its conformance and benchmark lines name what `make conformance` / `make bench` run.

When a test here fails, its message says the exact line to add to README.md.
"""
import pathlib
import re
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
MAKEFILE = (ROOT / "Makefile").read_text(encoding="utf-8")
V012_FAMILIES = ["compile", "errors", "load", "run", "oracle"]


def _section(title):
    start = README.index(f"## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start:end if end >= 0 else len(README)]


def _layout_block():
    blocks = re.findall(r"```\n(.*?)```", _section("Layout"), re.S)
    assert blocks, "README.md: the '## Layout' section has no ``` block"
    return blocks[0]


def _layout_tree():
    """{top-level name: [names indented two spaces under it]} from the Layout block."""
    tree, current = {}, None
    for line in _layout_block().splitlines():
        if line and not line[0].isspace():
            current = line.split()[0]
            tree[current] = []
        elif line.startswith("  ") and not line[2].isspace() and current is not None:
            tree[current].append(line.split()[0])
    return tree


def _packages():
    return sorted(d.name for d in (ROOT / "serq").iterdir()
                  if d.is_dir() and (d / "__init__.py").exists())


def _tracked_top_folders():
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    folders = {line.split("/")[0] for line in out.splitlines() if "/" in line}
    return sorted(f for f in folders if not f.startswith("."))


def test_layout_lists_every_package_under_serq():
    listed = _layout_tree().get("serq/", [])
    missing = [name for name in _packages() if f"{name}/" not in listed]
    assert not missing, "README.md's Layout section omits " + ", ".join(
        f"serq/{n}/" for n in missing) + ". Add, inside the ``` block under '## Layout' and below " \
        "'serq/            the package', one line per package, indented two spaces, e.g.\n" + \
        "\n".join(f"  {n + '/':<15}what serq/{n}/ holds" for n in missing)


def test_layout_lists_only_packages_that_exist():
    listed = [n[:-1] for n in _layout_tree().get("serq/", []) if n.endswith("/")]
    stale = [n for n in listed if n not in _packages()]
    assert not stale, f"README.md's Layout section lists serq/{stale[0]}/, which does not exist"


def test_layout_lists_every_top_level_folder():
    listed = _layout_tree()
    missing = [name for name in _tracked_top_folders() if f"{name}/" not in listed]
    assert not missing, "README.md's Layout section omits the folder(s) " + ", ".join(
        missing) + ". Add, inside the ``` block under '## Layout', a line at column 0 such as\n" + \
        "\n".join(f"{n + '/':<17}what {n}/ holds" for n in missing)


def test_conformance_lines_name_every_family():
    text = _section("Conformance and benchmarks")
    missing = [f for f in V012_FAMILIES if f not in text]
    assert not missing, (f"README.md's 'Conformance and benchmarks' section does not name the "
                         f"family {missing}; `make conformance` runs {V012_FAMILIES}")


def test_bench_lines_name_every_benchmark_make_runs():
    target = re.search(r"^bench:.*\n((?:\t.*\n)+)", MAKEFILE, re.M).group(1)
    scripts = re.findall(r"benchmarks/(bench_\w+\.py)", target)
    assert scripts, "the Makefile's bench target runs no benchmarks/bench_*.py"
    text = _section("Conformance and benchmarks")
    missing = [s for s in scripts if s not in text]
    assert not missing, (f"`make bench` runs {missing} but README.md's 'Conformance and "
                         f"benchmarks' section does not say so: name it on the `make bench` line")
