"""The wheel ships the CUDA sources and the matrix catalogue (spla finds them at run time)."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _can_build_wheels() -> str | None:
    if importlib.util.find_spec("setuptools") is None:
        return "setuptools is not installed"
    import setuptools

    major_minor = tuple(int(p) for p in setuptools.__version__.split(".")[:2])
    if major_minor < (70, 1) and importlib.util.find_spec("wheel") is None:
        return f"setuptools {setuptools.__version__} needs the 'wheel' package to build wheels"
    return None


@pytest.mark.slow
def test_wheel_contains_kernels_and_catalog(tmp_path):
    reason = _can_build_wheels()
    if reason:
        pytest.skip(reason)
    source = tmp_path / "src"
    # build from a copy: the build must not leave build/ or *.egg-info in the checkout
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info",
                                                                "__pycache__", "*.spla.npz", "*.mtx", "*.mtx.gz",
                                                                "bench-out", "report"))
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                           "-w", str(tmp_path / "dist"), str(source)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    wheel = next((tmp_path / "dist").glob("spla-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "spla/kernels/common.cuh" in names
    for c_source in (ROOT / "spla").rglob("*.c"):  # the host helpers spla.io.native compiles on first use
        assert c_source.relative_to(ROOT).as_posix() in names
    shipped_cu = {n for n in names if n.startswith("spla/kernels/") and n.endswith(".cu")}
    for cu in (ROOT / "kernels").rglob("*.cu"):
        assert f"spla/kernels/{cu.relative_to(ROOT / 'kernels').as_posix()}" in shipped_cu
    if (ROOT / "matrices" / "catalog.json").is_file():
        assert "spla/matrices/catalog.json" in names
    # every module of the source tree ships: a subpackage missing from pyproject.toml fails here
    modules = {p.relative_to(ROOT).as_posix() for p in (ROOT / "spla").rglob("*.py")}
    assert not modules - names, sorted(modules - names)
    assert any(n.endswith("entry_points.txt") for n in names)
