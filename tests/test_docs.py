"""Every program in a ```sq block of docs/language.md compiles, and its IR reads back."""
import pathlib
import re

import pytest

import serq

DOC = pathlib.Path(__file__).resolve().parents[1] / "docs" / "language.md"
BLOCKS = re.findall(r"```sq\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def test_the_guide_has_programs():
    assert len(BLOCKS) >= 5


@pytest.mark.parametrize("source", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_guide_program_compiles(source):
    program = serq.compile(source=source)
    text = program.to_json()
    assert serq.Program.from_json(text).to_json() == text


# ---------------------------------------------------------------------------------------
# docs/cli.md: every `$ serq ...` example prints what the page shows, with the status shown

import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
CLI_DOC = ROOT / "docs" / "cli.md"
SHARED = pathlib.Path(os.environ.get("SERQ_SHARED", ROOT.parent / "shared")).resolve()
# files the examples name that the page shows only through their output
EXAMPLE_FILES = {"bad.sq": "stage s : lifo;\n"}
STATUS = re.compile(r"\s+# status (\d+)$")


def _cli_examples():
    """(command, expected output lines, expected status) for each `$ ` line in a ``` block."""
    examples = []
    for block in re.findall(r"```\n(.*?)```", CLI_DOC.read_text(encoding="utf-8"), re.S):
        current = None
        for line in block.splitlines():
            if line.startswith("$ "):
                current = [line[2:], [], 0]
                examples.append(current)
            elif current is not None:
                m = STATUS.search(line)
                if m:
                    current[2] = int(m.group(1))
                    line = line[:m.start()]
                current[1].append(line.rstrip())
    for ex in examples:
        while ex[1] and not ex[1][-1]:
            ex[1].pop()
    return [tuple(ex) for ex in examples]


CLI_EXAMPLES = _cli_examples()


def test_the_cli_page_has_examples():
    assert len(CLI_EXAMPLES) >= 8


@pytest.fixture
def example_dir(tmp_path):
    """A working directory that looks like the repository's (its folders and files linked,
    what the examples write landing here), with ../shared beside it."""
    work = tmp_path / "repo"
    work.mkdir()
    for entry in ROOT.iterdir():
        if not entry.name.startswith("."):
            (work / entry.name).symlink_to(entry)
    (tmp_path / "shared").symlink_to(SHARED)
    for name, text in EXAMPLE_FILES.items():
        (work / name).write_text(text, encoding="utf-8")
    return work


@pytest.mark.parametrize("command,expected,status", CLI_EXAMPLES,
                         ids=[c for c, _, _ in CLI_EXAMPLES])
def test_cli_example_prints_what_the_page_shows(command, expected, status, example_dir):
    py = f"'{sys.executable}'"
    shell = re.sub(r"^serq\b", f"{py} -m serq", command).replace("| python ", f"| {py} ")
    env = dict(os.environ)
    env.pop("SERQ_DEBUG", None)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    # stderr joins stdout where the page shows it: in the terminal, not in a redirected file
    p = subprocess.run(["bash", "-c", "exec 2>&1; " + shell], stdout=subprocess.PIPE,
                       cwd=example_dir, env=env, timeout=300)
    got = [line.rstrip() for line in p.stdout.decode("utf-8").splitlines()]
    assert (got, p.returncode) == (expected, status), (
        f"docs/cli.md shows for `$ {command}`:\n" + "\n".join(expected) +
        f"\n(status {status}); serq prints:\n" + "\n".join(got) + f"\n(status {p.returncode})")


# Messages docs/cli.md quotes in its text (`...`), with a command that makes serq print each.
# The page must still quote the message, and serq must print exactly it (on stderr, or the
# version on stdout).
QUOTED = [
    ("serq 0.1.2 (IR version 10)", "serq --version"),
    ("cannot write to standard output: No space left on device (os error 28)",
     "serq ir examples/mm1.sq > /dev/full"),
    ("cannot write to standard output: it is closed", "serq ir examples/mm1.sq >&-"),
    ("cannot read /dev/zero: not a regular file (a character device)", "serq check /dev/zero"),
    ("run: need 0 <= warmup < horizon", "serq ir mm1.json --warmup 1e9"),
]


@pytest.mark.parametrize("message,command", QUOTED, ids=[m for m, _ in QUOTED])
def test_cli_page_quotes_what_serq_prints(message, command, example_dir):
    assert f"`{message}`" in " ".join(CLI_DOC.read_text(encoding="utf-8").split()), (
        f"docs/cli.md no longer quotes `{message}`: update this test's QUOTED with what it "
        f"quotes now")
    py = f"'{sys.executable}'"
    env = dict(os.environ)
    env.pop("SERQ_DEBUG", None)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    with open(example_dir / "mm1.json", "wb") as ir:
        subprocess.run([sys.executable, "-m", "serq", "ir", "examples/mm1.sq"], check=True,
                       env=env, cwd=example_dir, stdout=ir, timeout=120)
    p = subprocess.run(["bash", "-c", "exec 2>&1; " + command.replace("serq", f"{py} -m serq", 1)],
                       stdout=subprocess.PIPE, cwd=example_dir, env=env, timeout=120)
    assert message + "\n" in p.stdout.decode("utf-8")
