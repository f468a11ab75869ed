"""The exploration notebooks run top to bottom from the repository root, and
are stored without outputs (and in step with notebooks/build_notebooks.py)."""
from __future__ import annotations

import importlib.util

import nbformat
import pytest

from conftest import REPO

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))


def test_notebooks_exist():
    names = [p.name for p in NOTEBOOKS]
    assert "01-failure-corpus-tour.ipynb" in names and "02-early-warnings.ipynb" in names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_stored_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, path.name


def test_in_step_with_builder():
    spec = importlib.util.spec_from_file_location("build_notebooks", REPO / "notebooks" / "build_notebooks.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    built = {"01-failure-corpus-tour.ipynb": mod.tour(), "02-early-warnings.ipynb": mod.early_warnings()}
    for name, nb in built.items():
        stored = nbformat.read(REPO / "notebooks" / name, as_version=4)
        assert [c.source for c in stored.cells] == [c.source for c in nb.cells], \
            f"{name} is stale: run python notebooks/build_notebooks.py"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_executes(path):
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(REPO)}})
    client.execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors
    images = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if o.output_type == "display_data" and "image/png" in o.get("data", {})]
    assert images, "expected matplotlib figures"
