"""The CUDA SpMV backend's host path without a GPU: a stand-in CuPy records
launches, so the cached launchers' argument tuples are checked against the
kernels' signatures in kernels/spmv_*.cu (order and count), and the hot path is
shown to bind once and fall back to the checked path for unusual calls.
"""

from __future__ import annotations

import re
import types

import numpy as np
import pytest
import scipy.sparse as sp

from spla import device
from spla.backends.cuda import runtime
from spla.backends.cuda import spmv as cuda_spmv
from spla.csr import CSRMatrix
from spla.ops import spmv as ops_spmv
from spla.planning import adaptive, segmented


class FakeArray:
    """Just enough of cupy.ndarray for spla's host path (host memory inside)."""

    def __init__(self, a):
        self.a = np.ascontiguousarray(a) if np.ndim(a) else np.asarray(a)
        self.shape, self.dtype, self.ndim, self.size = self.a.shape, self.a.dtype, self.a.ndim, self.a.size
        self.data = types.SimpleNamespace(ptr=self.a.ctypes.data)
        self.flags = types.SimpleNamespace(c_contiguous=True)
        self._c_contiguous = True

    def astype(self, dtype, copy=True):
        return self if (not copy and np.dtype(dtype) == self.dtype) else FakeArray(self.a.astype(dtype))

    def get(self):
        return self.a.copy()

    def ravel(self):
        return self

    def __getitem__(self, key):
        return self.a[key]


def _fake_cupy(launches):
    def kernel_for(source, name):
        def launch(grid, block, args, shared_mem=0):
            launches.append((name, grid, block, args, shared_mem))
        return launch

    fake = types.SimpleNamespace(
        __name__="cupy",
        ndarray=FakeArray,
        asarray=lambda a, dtype=None: a if isinstance(a, FakeArray) else FakeArray(np.asarray(a, dtype)),
        empty=lambda n, dtype=float: FakeArray(np.full(n, np.nan, dtype)),
        zeros=lambda n, dtype=float: FakeArray(np.zeros(n, dtype)),
        ascontiguousarray=lambda a, dtype=None: FakeArray(np.asarray(a.a, dtype)),
        cuda=types.SimpleNamespace(runtime=types.SimpleNamespace(getDevice=lambda: 0),
                                   Device=lambda i=0: types.SimpleNamespace(id=0)))
    return fake, kernel_for


@pytest.fixture
def launches(monkeypatch):
    recorded = []
    fake, kernel_for = _fake_cupy(recorded)
    monkeypatch.setattr(device, "_import_cupy", lambda: fake)
    monkeypatch.setattr(device, "gpu_available", lambda: True)
    monkeypatch.setattr(device, "check_fits", lambda *a, **k: None)
    monkeypatch.setattr(runtime.KernelSource, "function", kernel_for)
    monkeypatch.setattr(cuda_spmv, "_FUNCTIONS", {})
    return recorded


def _signature(filename, kernel):
    """Parameter names of a __global__ kernel, in order, from its source."""
    text = (runtime.kernel_dir() / filename).read_text()
    match = re.search(rf"{kernel}\((.*?)\)\s*{{", text, flags=re.S)
    assert match, f"{kernel} not found in {filename}"
    return [re.findall(r"(\w+)\s*$", p.strip())[0] for p in match.group(1).split(",")]


def _device(host_matrix):
    H = CSRMatrix.from_scipy(host_matrix, dtype=np.float32)
    return CSRMatrix(FakeArray(H.data), FakeArray(H.indices), FakeArray(H.indptr), H.shape, validate=False)


@pytest.mark.parametrize("kernel,filename,function", [
    ("scalar", "spmv_scalar.cu", "spla_spmv_scalar"),
    ("warp", "spmv_warp.cu", "spla_spmv_warp"),
    ("vector", "spmv_vector.cu", "spla_spmv_vector"),
    ("adaptive", "spmv_adaptive.cu", "spla_spmv_adaptive"),
    ("adaptive2", "spmv_adaptive2.cu", "spla_spmv_adaptive2"),
    ("segmented", "spmv_segmented.cu", "spla_spmv_segmented"),
])
def test_launch_arguments_follow_the_kernel_signature(rng, launches, kernel, filename, function):
    lengths = rng.integers(0, 20, 400)
    lengths[3], lengths[50] = 9000, 700  # split and rows paths
    indptr = np.concatenate(([0], np.cumsum(lengths)))
    A = _device(sp.csr_matrix((rng.random(indptr[-1]), rng.integers(0, 100000, indptr[-1]), indptr),
                              shape=(400, 100000)))
    x = FakeArray(rng.random(100000).astype(np.float32))
    params = _signature(filename, function)
    for call in range(3):
        out = ops_spmv.spmv(A, x, kernel=kernel, alpha=2.0 if call == 2 else 1.0)
        name, grid, block, args, shared_mem = launches[-1]
        assert name.startswith(function + "<float, int")
        assert len(args) == len(params), f"{kernel}: {len(args)} arguments for {params}"
        assert args[params.index("x")] is x and args[params.index("y")] is out
        assert args[params.index("indices")] is A.indices and args[params.index("data")] is A.data
        assert args[params.index("alpha")] == (2.0 if call == 2 else 1.0) and args[params.index("beta")] == 0
        assert isinstance(args[params.index("alpha")], np.float32)
        if "row_list" in params:
            state = ops_spmv.bound_launcher(A, kernel).state
            assert args[params.index("row_list")] is state.row_list
            assert args[params.index("n_blocks")] == state.blocks.shape[0]
        if "tile_rows" in params:
            n_tiles = args[params.index("n_tiles")]
            K = segmented.segmented_default(np.float32)
            assert args[params.index("nnz")] == A.nnz and n_tiles == -(-A.nnz // (32 * K))
            assert shared_mem == (segmented.SEGMENTED_WARPS * 32 * K * 4 if (lengths == 0).any() else 0)
            assert args[params.index("tile_rows")].size == n_tiles + 1
            assert grid[0] * segmented.SEGMENTED_WARPS >= n_tiles
        threads = {"adaptive": adaptive.ADAPTIVE_THREADS, "adaptive2": adaptive.ADAPTIVE_THREADS,
                   "segmented": segmented.SEGMENTED_THREADS}
        assert block[0] == threads.get(kernel, cuda_spmv.ROW_BLOCK)
    assert len(launches) == 3
    first = ops_spmv.bound_launcher(A, kernel)
    assert first is not None
    ops_spmv.spmv(A, x, kernel=kernel)
    assert ops_spmv.bound_launcher(A, kernel) is first, "bound once, reused"


def test_fast_path_declines_what_it_does_not_check(rng, launches):
    from spla.errors import InputError

    A = _device(sp.random(300, 200, density=0.05, format="csr", random_state=rng))
    x = FakeArray(rng.random(200).astype(np.float32))
    ops_spmv.spmv(A, x, kernel="scalar")
    bound = ops_spmv.bound_launcher(A, "scalar")
    assert bound.fast(x, 1.0, 0.0, None) is not None
    assert bound.fast(x, 1.0, 0.5, None) is None                       # beta != 0
    assert bound.fast(FakeArray(rng.random(201).astype(np.float32)), 1.0, 0.0, None) is None
    assert bound.fast(FakeArray(rng.random(200)), 1.0, 0.0, None) is None  # float64 x
    assert bound.fast(rng.random(200).astype(np.float32), 1.0, 0.0, None) is None  # NumPy x
    assert bound.fast(x, 1.0, 0.0, FakeArray(np.zeros(299, np.float32))) is None
    with pytest.raises(InputError, match="length 200"):
        ops_spmv.spmv(A, FakeArray(np.ones(201, np.float32)), kernel="scalar")
    with pytest.raises(InputError, match="needs y"):
        ops_spmv.spmv(A, x, beta=1.0, kernel="scalar")


def test_public_spmv_takes_the_cached_launcher(rng, launches, monkeypatch):
    import spla

    A = _device(sp.random(300, 200, density=0.05, format="csr", random_state=rng))
    x = FakeArray(rng.random(200).astype(np.float32))
    first = spla.spmv(A, x, kernel="scalar")
    assert ops_spmv.bound_launcher(A, "scalar") is not None

    def checked_path(*args, **kwargs):
        raise AssertionError("the second call should not reach the checked path")

    monkeypatch.setattr(ops_spmv, "as_csr", checked_path)  # spla.spmv's own checks
    monkeypatch.setattr(ops_spmv, "_spmv_checked", checked_path)
    second = spla.spmv(A, x, kernel="scalar")
    assert len(launches) == 2 and launches[-1][3][0] == launches[0][3][0]
    assert second.shape == first.shape


def test_dia_launch_arguments_follow_the_kernel_signature(launches):
    from spla.io import generators
    from spla.planning import dia

    host = generators.poisson2d(30).astype(np.float32)
    A = _device(host.to_scipy())
    found = dia.structure(host)  # detected on the host, handed to the stand-in device matrix
    A._cache["dia"] = dia.Structure(FakeArray(found.offsets), FakeArray(found.values), found.n_diagonals)
    x = FakeArray(np.ones(A.n_cols, dtype=np.float32))
    out = ops_spmv.spmv(A, x, kernel="dia")
    name, grid, block, args, _ = launches[-1]
    params = _signature("spmv_dia.cu", "spla_spmv_dia")
    assert name == "spla_spmv_dia<float>" and len(args) == len(params)
    assert args[params.index("n_rows")] == 900 and args[params.index("n_cols")] == 900
    assert args[params.index("n_diagonals")] == 5
    assert args[params.index("offsets")] is A._cache["dia"].offsets
    assert args[params.index("values")] is A._cache["dia"].values
    assert args[params.index("x")] is x and args[params.index("y")] is out and block == (cuda_spmv.ROW_BLOCK,)


def test_band_launch_arguments_follow_the_kernel_signature(launches):
    from spla.io import generators
    from spla.planning import band

    host = generators.banded(300, 5).astype(np.float32)
    A = _device(host.to_scipy())
    found = band.structure(host)  # detected on the host, handed to the stand-in device matrix
    A._cache["band"] = band.Structure(FakeArray(found.first))
    x = FakeArray(np.ones(A.n_cols, dtype=np.float32))
    out = ops_spmv.spmv(A, x, kernel="band:4")
    name, grid, block, args, _ = launches[-1]
    params = _signature("spmv_band.cu", "spla_spmv_band")
    assert name == "spla_spmv_band<float, int, 4>" and len(args) == len(params)
    assert args[params.index("n_rows")] == 300 and args[params.index("indptr")] is A.indptr
    assert args[params.index("first")] is A._cache["band"].first and args[params.index("data")] is A.data
    assert args[params.index("x")] is x and args[params.index("y")] is out and block == (cuda_spmv.ROW_BLOCK,)
    assert grid == (cuda_spmv._grid(300, cuda_spmv.ROW_BLOCK // 4),)
