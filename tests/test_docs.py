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
