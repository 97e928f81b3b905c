"""The packed launch's parameter block without a GPU: each argument's bytes sit where
cuLaunchKernel reads them, a call rewrites only x, y, alpha and beta, and without a
driver function the launch goes through the kernel's own (CuPy) call with the same arguments."""

from __future__ import annotations

import ctypes
import types

import numpy as np
import pytest

from spla.backends.cuda.launch import PackedLaunch, pack


def _array(ptr: int):
    return types.SimpleNamespace(data=types.SimpleNamespace(ptr=ptr))


def _read(params, index: int, ctype):
    return ctype.from_address(params[index]).value


def test_block_holds_each_argument_as_the_kernel_reads_it():
    calls = []
    kernel = lambda grid, block, args, shared_mem=0: calls.append((grid, block, args, shared_mem))  # noqa: E731
    head = (np.int64(7), _array(0x1000), _array(0x2000), np.int32(-3))
    tail = (np.uint32(5), np.float64(0.25))
    packed = PackedLaunch(kernel, (4,), (256,), (*head, None, None, np.float32(1), np.float32(0), *tail),
                          len(head), shared_mem=64)
    assert packed.driver is None  # a plain function has no CUfunction: CuPy's call
    x, y = _array(0xA000), _array(0xB000)
    packed(x, y, np.float32(2.5), np.float32(0))
    p = packed.params
    assert [_read(p, 0, ctypes.c_int64), _read(p, 1, ctypes.c_uint64), _read(p, 2, ctypes.c_uint64),
            _read(p, 3, ctypes.c_int32)] == [7, 0x1000, 0x2000, -3]
    assert [_read(p, 4, ctypes.c_uint64), _read(p, 5, ctypes.c_uint64)] == [0xA000, 0xB000]
    assert [_read(p, 6, ctypes.c_float), _read(p, 7, ctypes.c_float)] == [2.5, 0.0]
    assert [_read(p, 8, ctypes.c_uint32), _read(p, 9, ctypes.c_double)] == [5, 0.25]
    # the fallback launches the same arguments, x and y in their slots
    (grid, block, args, shared_mem), = calls
    assert (grid, block, shared_mem) == ((4,), (256,), 64)
    assert args[:4] == head and args[4] is x and args[5] is y and args[8:] == tail
    packed(_array(0xC000), y, np.float32(1), np.float32(0))
    assert _read(p, 4, ctypes.c_uint64) == 0xC000 and _read(p, 6, ctypes.c_float) == 1.0


@pytest.mark.parametrize("value", [3, 2.0, np.float16(1), "x"])
def test_pack_refuses_what_has_no_exact_kernel_type(value):
    with pytest.raises(TypeError, match="packed launch"):
        pack(value)


# ---------------------------------------------------------------------- on the GPU
@pytest.mark.gpu
@pytest.mark.parametrize("kernel", ["scalar", "warp:8", "vector", "adaptive2", "segmented:4"])
def test_launchers_take_the_driver_path_and_match_scipy(kernel, rng):
    cupy = pytest.importorskip("cupy")
    from conftest import assert_matches_scipy

    import spla
    from spla.bench import corpus
    from spla.ops.spmv import BOUND

    A = corpus.build("mixed-lengths", 60_000)
    x = cupy.asarray(rng.uniform(-1, 1, A.n_cols))
    y = cupy.empty(A.n_rows)
    for alpha in (1.0, -0.5):
        spla.spmv(A, x, kernel=kernel, out=y, alpha=alpha)
        assert_matches_scipy(y, alpha * (A.to_scipy() @ x.get()), dtype=np.float64)
    assert A._cache[BOUND][kernel].packed.driver is not None  # the ctypes launch, not CuPy's call


@pytest.mark.gpu
def test_a_thread_without_the_context_current_still_gets_the_product(rng):
    """The driver refuses a launch where no context is current; the call falls back to CuPy's."""
    cupy = pytest.importorskip("cupy")
    import threading

    import spla
    from spla.io import generators

    A = generators.poisson2d(40)
    x = cupy.asarray(rng.uniform(-1, 1, A.n_cols))
    spla.spmv(A, x, kernel="scalar")  # bound on this thread
    results = []
    thread = threading.Thread(target=lambda: results.append(spla.spmv(A, x, kernel="scalar").get()))
    thread.start()
    thread.join()
    np.testing.assert_allclose(results[0], A.to_scipy() @ x.get(), rtol=1e-12)
