"""docs/tutorial.ipynb runs from start to end (nbclient on an ipykernel, from the repository
root) and reaches a capacity answer."""
import pathlib

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("matplotlib")
pytest.importorskip("pandas")
pytest.importorskip("scipy")

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_the_tutorial_runs_to_a_capacity_answer():
    nb = nbformat.read(ROOT / "docs" / "tutorial.ipynb", as_version=4)
    client = nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                                     resources={"metadata": {"path": str(ROOT)}})
    client.execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) == 3  # the CDFs, the engine, the load curve
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    last = text.strip().splitlines()[-1]
    assert last.startswith("capacity: lam = ")
    assert 8 <= float(last.split("=")[1]) < 20
