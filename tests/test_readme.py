"""The README's Python examples run as written (those that need a GPU or MPI on a machine that has them)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from spla import device

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def _needs(code: str) -> str | None:
    if "mpi4py" in code or "spla.distributed" in code:
        return "MPI (run under mpiexec; covered by tests/distributed)"
    if "cupy" in code and not device.gpu_available():
        return "a GPU"
    return None


def test_the_readme_has_examples():
    assert len(BLOCKS) >= 5


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index, tmp_path, monkeypatch):
    code = BLOCKS[index]
    reason = _needs(code)
    if reason:
        pytest.skip(f"example {index} needs {reason}")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, f"README.md example {index}", "exec"), {"__name__": "__readme__"})
