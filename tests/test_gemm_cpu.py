"""CPU: spla.gemm / spla.gemv through NumPy, the GEMM kernel registry's static
checks and padding rule, and the `spla gemm` command (CliRunner)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

import spla
from spla import dense
from spla.backend import gemm_cuda
from spla.cli import main


def test_gemm_matches_numpy_and_keeps_float32(rng):
    A = rng.standard_normal((17, 33)).astype(np.float32)
    B = rng.standard_normal((33, 65)).astype(np.float32)
    C = spla.gemm(A, B)
    assert C.dtype == np.float32 and C.shape == (17, 65)
    np.testing.assert_allclose(C, A.astype(np.float64) @ B, rtol=1e-5, atol=1e-5)


def test_gemm_alpha_beta_in_place(rng):
    A, B = rng.standard_normal((6, 4)), rng.standard_normal((4, 5))
    C0 = rng.standard_normal((6, 5))
    C = C0.copy()
    returned = spla.gemm(A, B, C, alpha=2.0, beta=-1.0)
    assert returned is C
    np.testing.assert_allclose(C, 2.0 * A @ B - C0, rtol=1e-12)


def test_gemm_beta_zero_overwrites_nan_and_k_zero(rng):
    C = np.full((3, 4), np.nan)
    spla.gemm(rng.standard_normal((3, 2)), rng.standard_normal((2, 4)), C)
    assert np.all(np.isfinite(C))
    C = np.full((3, 4), np.nan, dtype=np.float32)
    spla.gemm(np.zeros((3, 0), np.float32), np.zeros((0, 4), np.float32), C)
    np.testing.assert_array_equal(C, 0)
    C0 = rng.standard_normal((3, 4))
    C = C0.copy()
    spla.gemm(np.zeros((3, 0)), np.zeros((0, 4)), C, beta=3.0)
    np.testing.assert_allclose(C, 3.0 * C0)


def test_gemm_mixed_precision_promotes(rng):
    C = spla.gemm(np.ones((2, 3), np.float32), np.ones((3, 2), np.float64))
    assert C.dtype == np.float64
    np.testing.assert_array_equal(C, 3.0)


@pytest.mark.parametrize("A, B, C, kwargs", [
    (np.ones(3), np.ones((3, 3)), None, {}),                           # 1-D A
    (np.ones((2, 3)), np.ones((4, 2)), None, {}),                      # inner dimensions
    (np.ones((2, 3), np.int64), np.ones((3, 2), np.int64), None, {}),  # integer dtype
    (np.ones((2, 3)), np.ones((3, 2)), np.ones((3, 2)), {}),           # C shape
    (np.ones((2, 3)), np.ones((3, 2)), np.ones((2, 2), np.float32), {}),  # C dtype
    (np.ones((2, 3)), np.ones((3, 2)), None, {"beta": 1.0}),           # beta without C
], ids=["1d", "inner", "int", "c-shape", "c-dtype", "beta-no-c"])
def test_gemm_bad_input(A, B, C, kwargs):
    with pytest.raises(spla.InputError):
        spla.gemm(A, B, C, **kwargs)


def test_gpu_kernel_on_numpy_is_refused():
    with pytest.raises(spla.KernelError, match="GPU"):
        spla.gemm(np.ones((2, 2)), np.ones((2, 2)), kernel="dbuf")
    assert spla.gemm(np.ones((2, 2)), np.ones((2, 2)), kernel="numpy")[0, 0] == 2.0


def test_gemv_numpy(rng):
    M = rng.standard_normal((7, 5)).astype(np.float32)
    x = rng.standard_normal(5)
    y0 = rng.standard_normal(7).astype(np.float32)
    y = y0.copy()
    returned = dense.gemv(M, x, y, alpha=0.5, beta=2.0)
    assert returned is y and y.dtype == np.float32
    np.testing.assert_allclose(y, 0.5 * M.astype(np.float64) @ x + 2.0 * y0, rtol=1e-5)
    y = np.full(7, np.nan, dtype=np.float32)
    dense.gemv(M, x, y)
    assert np.all(np.isfinite(y))
    with pytest.raises(spla.InputError):
        dense.gemv(M, np.ones(4))
    with pytest.raises(spla.InputError):
        dense.gemv(M, np.ones(5), np.ones(7))  # float64 y for a float32 M


def test_registry_is_the_path_in_order():
    assert list(gemm_cuda.KERNELS) == ["naive", "tiled16", "tiled32", "padded", "vec4", "regblock", "dbuf",
                                       "tf32", "cublas"]
    for entry in gemm_cuda.ALL_KERNELS.values():
        if entry.source is None:
            continue
        assert entry.expression.startswith("spla_gemm_")
        assert entry.expression in entry.source.names
        assert entry.source.path.is_file()
        assert entry.threads <= gemm_cuda.MAX_THREADS_PER_BLOCK
    tf32 = gemm_cuda.KERNELS["tf32"]
    assert gemm_cuda.STATIC_SHARED_LIMIT < tf32.dynamic_shared <= gemm_cuda.OPT_IN_SHARED_LIMIT


def test_auto_policy_never_picks_tf32():
    assert gemm_cuda.resolve_kernel("auto", np.float32).precision == "fp32"
    assert gemm_cuda.resolve_kernel("auto", np.float64).name == "cublas"
    with pytest.raises(spla.KernelError, match="unknown"):
        gemm_cuda.resolve_kernel("fastest", np.float32)
    with pytest.raises(spla.KernelError, match="float32 only"):
        gemm_cuda.resolve_kernel("regblock", np.float64)


def test_auto_rule_picks_small_tiles_for_small_grids():
    # 132 SMs (H200): 128 x 128 tiles need >= 264 blocks, else the small-tile kernel.
    small, large = gemm_cuda.AUTO_FP32_SMALL, gemm_cuda.AUTO_FP32
    assert small == "dbuf64"
    assert gemm_cuda.auto_kernel(np.float32, (1024, 1024, 1024), 132) == small     # 64 blocks (256 of 64 x 64)
    assert gemm_cuda.auto_kernel(np.float32, (16384, 64, 4096), 132) == small      # 128 blocks (256 of 64 x 64)
    assert gemm_cuda.auto_kernel(np.float32, (4096, 4096, 4096), 132) == large     # 1024 blocks
    assert gemm_cuda.auto_kernel(np.float32, (2048, 2112, 64), 132) == large       # 16 x 17 = 272 blocks
    assert gemm_cuda.auto_kernel(np.float32, (2048, 2048, 64), 132) == small       # 256 blocks
    assert gemm_cuda.auto_kernel(np.float64, (4096, 4096, 4096), 132) == "cublas"
    for name in (small, large):
        assert gemm_cuda.ALL_KERNELS[name].precision == "fp32"
    assert gemm_cuda.resolve_kernel("auto", np.float32, (8, 8, 8)).precision == "fp32"


def test_auto_rule_splits_k_for_few_tiles_and_long_k():
    # The SpMM dense panel: 2,000 rows x 100,000 columns times X with 8 or 32 columns.
    assert gemm_cuda.auto_kernel(np.float32, (2000, 8, 100_000), 132) == "splitk_n8"
    assert gemm_cuda.auto_kernel(np.float32, (2000, 32, 100_000), 132) == "splitk"   # 32 blocks of 64 x 64
    assert gemm_cuda.auto_kernel(np.float32, (2000, 64, 100_000), 132) == "splitk"
    assert gemm_cuda.auto_kernel(np.float32, (100_000, 4, 4096), 132) == "splitk_n8"  # N <= 8: narrow tile
    assert gemm_cuda.auto_kernel(np.float32, (4096, 44, 100), 132) == "dbuf64"       # short K: no split
    assert gemm_cuda.auto_kernel(np.float32, (2000, 8, 1000), 132) == "dbuf64"
    assert gemm_cuda.auto_kernel(np.float32, (16384, 64, 100_000), 132) == "dbuf64"  # 256 blocks of 64 x 64
    for name in ("splitk", "splitk_n8"):
        entry = gemm_cuda.ALL_KERNELS[name]
        assert entry.precision == "fp32" and entry.split_k_tile and entry.vector_loads


@pytest.mark.parametrize("shape", [(2000, 8, 100_000), (2000, 32, 100_000), (300, 8, 20_003), (5, 5, 4),
                                   (1, 1, 1_000_000), (4096, 4096, 4096)])
@pytest.mark.parametrize("name", ["splitk", "splitk_n8"])
def test_split_k_slices_cover_k_once(name, shape):
    entry = gemm_cuda.ALL_KERNELS[name]
    M, N, K = shape
    slices, per_slice = gemm_cuda.split_k_slices(entry, M, N, K, multiprocessors=132)
    k_tiles = -(-K // entry.split_k_tile)
    assert 1 <= slices <= 65535
    assert (slices - 1) * per_slice < k_tiles <= slices * per_slice   # every slice non-empty, K covered
    assert slices == 1 or per_slice >= gemm_cuda.SPLITK_MIN_TILES_PER_SLICE
    tiles = -(-M // entry.tile[0]) * -(-N // entry.tile[1])
    assert slices * tiles <= 2 * 132 * entry.resident_blocks or slices == 1   # about one wave


def test_dynamic_shared_sizes_match_the_kernel_layouts():
    # The host's byte counts must equal what the kernels index (see the headers).
    entries = gemm_cuda.ALL_KERNELS
    assert entries["dbuf64"].dynamic_shared == 3 * (64 * 20 + 16 * 64) * 4
    assert entries["splitk"].dynamic_shared == 3 * (128 * 36 + 32 * 32) * 4
    assert entries["splitk_n8"].dynamic_shared == 3 * (256 * 36 + 32 * 8) * 4
    for name in ("tf32", "tf32_trunc"):
        assert entries[name].dynamic_shared == 3 * (128 * 36 + 32 * 136) * 4, name
    # resident_blocks (sizes the split-K grid) must fit the SM's 228 KB, 1 KB reserved per block.
    for name in ("splitk", "splitk_n8"):
        entry = entries[name]
        assert entry.resident_blocks * (entry.dynamic_shared + 1024) <= 228 * 1024, name
        assert (entry.resident_blocks + 1) * (entry.dynamic_shared + 1024) > 228 * 1024, name
    for entry in entries.values():
        assert entry.dynamic_shared <= gemm_cuda.OPT_IN_SHARED_LIMIT, entry.name


def test_registry_has_no_dropped_candidates():
    dropped = {"dbuf_v2", "dbuf_v2_s4", "dbuf_v2_64", "padded_v2", "padded_v2_nopad", "tf32_w64x32",
               "tf32_v2", "tf32_v2_trunc", "tf32_v2_256x128", "tf32_v2_bk16s4", "transposed_b"}
    assert not dropped & set(gemm_cuda.ALL_KERNELS)
    truncating = {name for name, e in gemm_cuda.ALL_KERNELS.items() if e.tf32_rounding == "truncate"}
    assert truncating == {"tf32_trunc", "tf32_wgmma"}
    assert all(gemm_cuda.ALL_KERNELS[name].precision == "tf32" for name in truncating)


def test_impossible_configurations_fail_loudly():
    big = gemm_cuda.GemmKernel("too_big", gemm_cuda.TILED, "spla_gemm_tiled<32>", (64, 32), (64, 32), False)
    with pytest.raises(spla.KernelError, match="threads"):
        gemm_cuda._checked(big)
    shared = gemm_cuda.GemmKernel("shared", gemm_cuda.TF32, "spla_gemm_tf32<128, 128, 32, 64, 64, 3>", (128, 1),
                                  (128, 128), True, dynamic_shared=300 * 1024)
    with pytest.raises(spla.KernelError, match="shared memory"):
        gemm_cuda._checked(shared)
    with pytest.raises(spla.KernelError, match="grid.y"):
        gemm_cuda.grid_for(gemm_cuda.KERNELS["naive"], 8 * 70000, 10)
    assert gemm_cuda.grid_for(gemm_cuda.KERNELS["regblock"], 257, 129) == (2, 3)


@pytest.mark.parametrize("shape", [(5, 7, 3), (8, 8, 8), (4, 6, 9), (1, 1, 1), (3, 4, 0)])
def test_padding_for_vector_loads_is_exact(shape, rng):
    M, N, K = shape
    A, B = rng.standard_normal((M, K)).astype(np.float32), rng.standard_normal((K, N)).astype(np.float32)
    A4, B4, K4 = gemm_cuda.pad_for_vector_loads(A, B, np)
    assert K4 % 4 == 0 and A4.shape == (M, K4) and B4.shape[0] == K4 and B4.shape[1] % 4 == 0
    assert A4.ctypes.data % 16 == 0 and B4.ctypes.data % 16 == 0
    np.testing.assert_allclose((A4 @ B4)[:, :N], A @ B, rtol=1e-6, atol=1e-6)
    if K % 4 == 0 and N % 4 == 0 and A.ctypes.data % 16 == 0:
        assert A4 is A


def test_every_gemm_file_says_what_changed():
    for entry in gemm_cuda.KERNELS.values():
        if entry.source is not None and entry.name != "naive":
            assert "Changed from" in entry.source.path.read_text(), entry.source.filename


def run_cli(*args):
    return CliRunner().invoke(main, ["gemm", *args], catch_exceptions=False)


def test_cli_cpu_table():
    result = run_cli("--m", "8", "--n", "9", "--k", "10", "--device", "cpu", "--repeat", "2")
    assert result.exit_code == 0, result.output
    assert "NumPy only" in result.output
    assert "numpy" in result.output and "ok" in result.output


def test_cli_cpu_json():
    result = run_cli("--m", "12", "--n", "5", "--k", "7", "--device", "cpu", "--json", "--repeat", "2")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["device"] == "cpu" and (report["m"], report["n"], report["k"]) == (12, 5, 7)
    (row,) = report["rows"]
    assert row["kernel"] == "numpy" and row["correct"] and row["max_rel_err"] < 1e-5 and row["ms"] > 0


def test_cli_gpu_kernel_without_gpu_is_a_usage_error():
    result = run_cli("--device", "cpu", "--kernel", "dbuf")
    assert result.exit_code == 2
    assert "spla: error:" in result.output and "dbuf" in result.output


def test_cli_negative_size():
    result = run_cli("--device", "cpu", "--m", "-1")
    assert result.exit_code == 2 and "--m" in result.output


def test_cli_plot(tmp_path):
    out = tmp_path / "roofline.png"
    result = run_cli("--m", "16", "--n", "16", "--k", "16", "--device", "cpu", "--repeat", "2", "--plot", str(out))
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert result.exit_code == 1 and "matplotlib" in result.output
        assert not out.exists()
    else:
        assert result.exit_code == 0, result.output
        assert out.stat().st_size > 0
