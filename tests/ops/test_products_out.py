"""out= on spla.spmm / spla.gemm / spla.gemv (both sides), one error for mixed sides, and the
layering rule: planning and the CPU path import no CUDA launcher module and no CuPy."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import assert_matches_scipy, to_host

import spla
from spla.errors import InputError


def _matrix(rng, xp, n_rows=40, n_cols=30):
    S = sp.random(n_rows, n_cols, density=0.2, format="csr", random_state=rng, dtype=np.float64)
    return S, spla.CSRMatrix.from_scipy(S)


def test_spmm_out_is_written_and_returned(rng, xp):
    S, A = _matrix(rng, xp)
    X = xp.asarray(rng.standard_normal((30, 5)))
    Y0 = rng.standard_normal((40, 5))
    out = xp.full((40, 5), np.nan)
    assert spla.spmm(A, X, out=out) is out
    assert_matches_scipy(out, S @ to_host(X))
    Y = xp.array(Y0)  # a copy on either side
    assert spla.spmm(A, X, Y, alpha=2.0, beta=-1.0, out=Y) is Y  # in place over Y
    assert_matches_scipy(Y, 2.0 * (S @ to_host(X)) - Y0)
    strided = xp.zeros((40, 10))[:, ::2]
    assert spla.spmm(A, X, out=strided) is strided
    assert_matches_scipy(strided, S @ to_host(X))


def test_spmm_out_is_checked(rng, xp):
    _, A = _matrix(rng, xp)
    X = xp.ones((30, 4))
    with pytest.raises(InputError, match="out must have shape"):
        spla.spmm(A, X, out=xp.zeros((40, 5)))
    with pytest.raises(InputError, match="out must be float64"):
        spla.spmm(A, X, out=xp.zeros((40, 4), dtype=np.float32))


def test_gemm_and_gemv_out(rng, xp):
    A, B = rng.standard_normal((6, 4)), rng.standard_normal((4, 5))
    C0 = rng.standard_normal((6, 5))
    out = xp.full((6, 5), np.nan)
    C = xp.array(C0)
    assert spla.gemm(xp.asarray(A), xp.asarray(B), C, alpha=0.5, beta=2.0, out=out) is out
    assert_matches_scipy(out, 0.5 * A @ B + 2.0 * C0)
    assert_matches_scipy(C, C0)  # C is only read when out is given
    M, x, y0 = rng.standard_normal((7, 3)), rng.standard_normal(3), rng.standard_normal(7)
    y_out = xp.full(7, np.nan)
    assert spla.gemv(xp.asarray(M), xp.asarray(x), xp.asarray(y0), beta=-1.0, out=y_out) is y_out
    assert_matches_scipy(y_out, M @ x - y0)
    with pytest.raises(InputError, match="out must have shape"):
        spla.gemm(xp.asarray(A), xp.asarray(B), out=xp.zeros((5, 6)))
    with pytest.raises(InputError, match="out must be"):
        spla.gemv(xp.asarray(M), xp.asarray(x), out=xp.zeros(7, dtype=np.float32))


@pytest.mark.gpu
def test_mixing_numpy_and_cupy_is_input_error(rng):
    cupy = pytest.importorskip("cupy")
    _, A = _matrix(rng, np)
    with pytest.raises(InputError, match="split between host"):
        spla.spmm(A, cupy.ones((30, 2)), out=np.zeros((40, 2)))
    with pytest.raises(InputError, match="split between host"):
        spla.gemm(np.ones((2, 2)), cupy.ones((2, 2)))
    with pytest.raises(InputError, match="split between host"):
        spla.gemv(cupy.ones((2, 2)), np.ones(2))


BLOCK_CUPY = """
import builtins, sys
real_import = builtins.__import__
def guarded(name, *args, **kwargs):
    if name == "cupy" or name.startswith(("cupy.", "cupyx", "cupy_backends")):
        raise ImportError("cupy blocked by the test")
    return real_import(name, *args, **kwargs)
builtins.__import__ = guarded
import numpy as np, scipy.sparse as sp, spla
from spla.planning import gemm, spmm
A = spla.as_csr(sp.random(50, 40, density=0.2, format="csr", random_state=0))
spmm.plan_spmm(A, 8, "adaptive"); spmm.plan_spmm(A, 8, "fused"); gemm.plan_gemm("auto", np.float32, (9, 9, 9))
spla.spmm(A, np.ones((40, 3))); spla.gemm(np.ones((2, 3)), np.ones((3, 2))); spla.gemv(np.ones((2, 3)), np.ones(3))
launchers = ("spla.backends.cuda.spmm", "spla.backends.cuda.gemm", "spla.backends.cuda.cusparse",
             "spla.backends.cuda.dense_panels", "spla.backend.", "cupy")
loaded = sorted(m for m in sys.modules if m.startswith(launchers))
print(loaded)
"""


def test_planning_and_cpu_path_import_no_cuda_module():
    done = subprocess.run([sys.executable, "-c", BLOCK_CUPY], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]", done.stdout
