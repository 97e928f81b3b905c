"""Shared pytest set-up: the `gpu` marker skips cleanly without CuPy or a device,
and fixtures for fresh random inputs and the optional real-matrix folder."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from spla import cuda

SHARED_MATRICES = Path(os.environ.get("SPLA_SHARED_MATRICES",
                                      Path(__file__).resolve().parents[2] / "shared" / "matrices"))


def pytest_collection_modifyitems(config, items):
    if cuda.gpu_available():
        return
    reason = "needs CuPy and a CUDA GPU" if cuda._import_cupy() is None else "no CUDA device visible"
    skip = pytest.mark.skip(reason=reason)
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def rng():
    """A fresh generator each test; the seed is printed on failure via the test id's repr."""
    seed = int.from_bytes(os.urandom(4), "little")
    print(f"rng seed {seed}")
    return np.random.default_rng(seed)


@pytest.fixture
def shared_matrices():
    """The folder of real SuiteSparse matrices beside the checkout, or skip."""
    if not SHARED_MATRICES.is_dir() or not any(SHARED_MATRICES.glob("*.mtx.gz")):
        pytest.skip(f"real matrices not present at {SHARED_MATRICES}")
    return SHARED_MATRICES
