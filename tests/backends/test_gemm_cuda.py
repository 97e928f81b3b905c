"""GPU: every GEMM kernel of the path (and the extra variants) against NumPy
in float64 on fresh random inputs at awkward sizes; GEMV likewise.

Outputs are poisoned with NaN so that an unwritten element, or a kernel that
reads C although beta == 0, fails loudly. Tolerances are relative Frobenius
errors: fp32 kernels ~1e-6 * sqrt(K), tf32 ~5e-3 against float64 and fp32
level against a float64 product of TF32-rounded inputs (which checks the
kernel's indexing exactly, not just its precision class). For the truncating
tf32 variants either emulation (round to nearest or truncate) is accepted:
the check is about indexing, and which one the tensor cores apply to raw
fp32 bits is theirs to define.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import spla

cupy = pytest.importorskip("cupy")
from spla.backends.cuda import gemm as cuda_gemm  # noqa: E402  (needs the importorskip above first)
from spla.bench import variants as V  # noqa: E402
from spla.planning import gemm as G  # noqa: E402

pytestmark = pytest.mark.gpu

ENTRIES = {**G.ALL_KERNELS, **V.GEMM_VARIANTS}  # the registry and the benchmark variants: every kernel that runs
ALL_NAMES = list(ENTRIES)
SPLA_NAMES = [name for name in ALL_NAMES if ENTRIES[name].is_spla]
VECTOR_NAMES = [name for name in SPLA_NAMES if ENTRIES[name].vector_loads]


def _plan(A, B, kernel):
    return cuda_gemm.plan(V.gemm_kernel(kernel), np.result_type(A.dtype, B.dtype), (A.shape[0], B.shape[1], A.shape[1]))


def run_gemm(A, B, C, *, kernel, alpha=1.0, beta=0.0):
    """spla.gemm for registry names; the planning/backend hook for benchmark variants."""
    if kernel not in V.GEMM_VARIANTS:
        return spla.gemm(A, B, C, alpha=alpha, beta=beta, kernel=kernel)
    return cuda_gemm.gemm(A, B, C, _plan(A, B, kernel), alpha=alpha, beta=beta)


def bind(A, B, C, *, kernel):
    return cuda_gemm.bind(A, B, C, _plan(A, B, kernel))

# (M, N, K): 1x1x1, a row vector result, odd everything, skinny, tile tails and
# non-multiples of 4, K = 0, exact tiles, several k-tiles with tails.
SHAPES = [(1, 1, 1), (1, 37, 1), (17, 33, 65), (1000, 1, 1000), (130, 129, 31), (64, 64, 0),
          (128, 128, 128), (257, 129, 300), (3, 300, 7), (200, 260, 133), (384, 640, 520)]


def shape_id(shape):
    return "x".join(map(str, shape))


def relative_error(result, reference):
    result = cupy.asnumpy(result).astype(np.float64)
    if not np.all(np.isfinite(result)):
        return math.inf
    scale = np.linalg.norm(reference)
    diff = np.linalg.norm(result - reference)
    return diff / scale if scale else diff


def round_to_tf32(a):
    """Round float32 values to TF32 as cvt.rna.tf32.f32 does (nearest, ties away from zero)."""
    bits = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    rounded = ((bits + np.uint32(0x1000)) & np.uint32(0xFFFFE000)).astype(np.uint32)
    return rounded.view(np.float32)


def truncate_to_tf32(a):
    """Drop the low 13 mantissa bits (what the tensor cores do with raw fp32 bits)."""
    bits = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    return (bits & np.uint32(0xFFFFE000)).astype(np.uint32).view(np.float32)


def fp32_tolerance(k):
    return 2e-6 * math.sqrt(max(k, 1)) + 1e-6


def check_product(name, result, A, B, *, alpha=1.0, beta=0.0, C0=None):
    """Assert result == alpha * A @ B + beta * C0 within the kernel's tolerance."""
    A64, B64 = A.astype(np.float64), B.astype(np.float64)
    reference = alpha * (A64 @ B64)
    if beta != 0:
        reference = reference + beta * C0.astype(np.float64)
    k = A.shape[1]
    entry = ENTRIES[name]
    if entry.precision == "tf32":
        error = relative_error(result, reference)
        assert error < 5e-3, f"{name}: relative error {error:.2e} against float64"
        reductions = [round_to_tf32] + ([truncate_to_tf32] if entry.tf32_rounding == "truncate" else [])
        errors = []
        for reduce in reductions:
            emulated = alpha * (reduce(A).astype(np.float64) @ reduce(B).astype(np.float64))
            if beta != 0:
                emulated = emulated + beta * C0.astype(np.float64)
            errors.append(relative_error(result, emulated))
        assert min(errors) < 1e-4, f"{name}: relative errors {errors} against TF32-reduced inputs"
    else:
        error = relative_error(result, reference)
        assert error < fp32_tolerance(k), f"{name}: relative error {error:.2e} (K = {k})"


def random(rng, shape):
    return rng.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
@pytest.mark.parametrize("name", ALL_NAMES)
def test_kernel_matches_float64_reference(name, shape, rng):
    M, N, K = shape
    A, B = random(rng, (M, K)), random(rng, (K, N))
    C = cupy.full((M, N), cupy.nan, dtype=cupy.float32)  # beta = 0: must be overwritten, never read
    returned = run_gemm(cupy.asarray(A), cupy.asarray(B), C, kernel=name)
    assert returned is C
    check_product(name, C, A, B)


@pytest.mark.parametrize("name", ALL_NAMES)
def test_alpha_and_beta(name, rng):
    M, N, K = 67, 45, 38
    A, B, C0 = random(rng, (M, K)), random(rng, (K, N)), random(rng, (M, N))
    C = cupy.asarray(C0)
    run_gemm(cupy.asarray(A), cupy.asarray(B), C, alpha=1.5, beta=-0.75, kernel=name)
    check_product(name, C, A, B, alpha=1.5, beta=-0.75, C0=C0)


@pytest.mark.parametrize("name", ALL_NAMES)
def test_k_zero_scales_c(name, rng):
    C0 = random(rng, (9, 10))
    C = cupy.asarray(C0)
    A, B = cupy.zeros((9, 0), cupy.float32), cupy.zeros((0, 10), cupy.float32)
    run_gemm(A, B, C, beta=2.0, kernel=name)
    np.testing.assert_allclose(cupy.asnumpy(C), 2.0 * C0, rtol=1e-6)
    C = cupy.full((9, 10), cupy.nan, dtype=cupy.float32)
    run_gemm(A, B, C, beta=0.0, kernel=name)
    assert not cupy.any(C != 0), f"{name}: K = 0, beta = 0 must give zeros"


@pytest.mark.parametrize("name", ALL_NAMES)
def test_non_contiguous_operands_and_output(name, rng):
    M, N, K = 70, 50, 45
    A_big = random(rng, (2 * M, 3 * K))
    B_t = random(rng, (N, K))                 # B = B_t.T: a Fortran-ordered view
    C_big = random(rng, (M, 2 * N))
    A_view = cupy.asarray(A_big)[::2, 1::3]
    B_view = cupy.asarray(B_t).T
    C_dev = cupy.asarray(C_big)
    C_view = C_dev[:, ::2]
    run_gemm(A_view, B_view, C_view, alpha=0.5, beta=2.0, kernel=name)
    check_product(name, C_view, A_big[::2, 1::3], B_t.T, alpha=0.5, beta=2.0, C0=C_big[:, ::2])
    np.testing.assert_array_equal(cupy.asnumpy(C_dev[:, 1::2]), C_big[:, 1::2])  # untouched columns


@pytest.mark.parametrize("name", VECTOR_NAMES)
def test_misaligned_views(name, rng):
    # Contiguous views that start 4 bytes into an allocation: the float4 paths
    # must copy A/B to aligned memory and fall back to element stores for C.
    M, N, K = 33, 36, 40
    A, B = random(rng, (M, K)), random(rng, (K, N))
    a_buffer = cupy.empty(M * K + 1, dtype=cupy.float32)
    a_view = a_buffer[1:].reshape(M, K)
    a_view[...] = cupy.asarray(A)
    c_buffer = cupy.full(M * N + 1, cupy.nan, dtype=cupy.float32)
    c_view = c_buffer[1:].reshape(M, N)
    assert a_view.flags.c_contiguous and a_view.data.ptr % 16 != 0
    run_gemm(a_view, cupy.asarray(B), c_view, kernel=name)
    check_product(name, c_view, A, B)
    assert cupy.isnan(c_buffer[0]), "wrote outside C"


def test_auto_is_a_float32_kernel_and_float64_goes_to_cublas(rng):
    assert G.resolve_kernel("auto", np.float32).precision == "fp32"
    A, B = rng.standard_normal((40, 30)), rng.standard_normal((30, 20))
    C = spla.gemm(cupy.asarray(A), cupy.asarray(B))
    assert isinstance(C, cupy.ndarray) and C.dtype == np.float64
    np.testing.assert_allclose(cupy.asnumpy(C), A @ B, rtol=1e-12, atol=1e-12)


def test_spla_kernels_refuse_float64():
    A = cupy.ones((4, 4), dtype=cupy.float64)
    with pytest.raises(spla.KernelError):
        spla.gemm(A, A, kernel="dbuf")


@pytest.mark.parametrize("shape", [(50, 70, 60), (4096, 44, 100), (2048, 2304, 40)], ids=shape_id)
def test_public_gemm_runs_on_the_gpu(shape, rng):
    # Small and large grids (288 blocks of 128 x 128 for the last): auto
    # picks AUTO_FP32_SMALL or AUTO_FP32.
    M, N, K = shape
    A, B = random(rng, (M, K)), random(rng, (K, N))
    C = spla.gemm(cupy.asarray(A), cupy.asarray(B), kernel="auto")
    assert isinstance(C, cupy.ndarray)
    check_product(G.auto_kernel(np.float32, (M, N, K), cuda_gemm.multiprocessor_count()), C, A, B)


@pytest.mark.parametrize("name", SPLA_NAMES)
def test_every_tile_of_a_tall_grid_is_written(name, rng):
    # 1157 rows: 10 block-rows of 128, so the tf32_wgmma L2-grouped block
    # order (groups of 8 block-rows) has a full group and a partial one;
    # 3 block-columns of 128 (2 of 256) with a ragged last one. NaN-poisoned
    # C catches any tile the block order skips or visits twice with the
    # wrong offsets.
    M, N, K = 1157, 300, 40
    A, B = random(rng, (M, K)), random(rng, (K, N))
    C = cupy.full((M, N), cupy.nan, dtype=cupy.float32)
    run_gemm(cupy.asarray(A), cupy.asarray(B), C, kernel=name)
    check_product(name, C, A, B)


@pytest.mark.parametrize("shape, beta", [((300, 8, 20000), 0.0), ((300, 5, 20003), -0.5),
                                         ((300, 40, 20003), 0.0), ((130, 70, 9000), 1.0), ((257, 33, 5000), 2.5)],
                         ids=["n8", "n5-beta", "n40", "beta1", "ragged"])
def test_split_k_through_auto(shape, beta, rng):
    # Shapes that auto sends to split-K with many slices (up to ~130), a
    # ragged last slice, K not a multiple of 4, and each beta case of the
    # host's C preparation (memset, untouched, scaled). NaN-poisoned C for
    # beta == 0 checks that the memset happens and C is never read.
    M, N, K = shape
    name = G.auto_kernel(np.float32, shape, cuda_gemm.multiprocessor_count())
    assert name in ("splitk", "splitk_n8"), name
    slices, _ = G.split_k_slices(ENTRIES[name], M, N, G.round_up4(K), cuda_gemm.multiprocessor_count())
    assert slices > 8
    A, B = random(rng, (M, K)), random(rng, (K, N))
    C0 = random(rng, (M, N))
    C = cupy.full((M, N), cupy.nan, dtype=cupy.float32) if beta == 0 else cupy.asarray(C0)
    spla.gemm(cupy.asarray(A), cupy.asarray(B), C, alpha=0.75, beta=beta, kernel="auto")
    check_product(name, C, A, B, alpha=0.75, beta=beta, C0=C0)


def test_split_k_bind_repeats_without_accumulating(rng):
    # Each call must prepare C again (beta = 0: zeros) before the slices add into it.
    A, B = random(rng, (200, 6000)), random(rng, (6000, 16))
    C = cupy.full((200, 16), cupy.nan, dtype=cupy.float32)
    launch = bind(cupy.asarray(A), cupy.asarray(B), C, kernel="splitk")
    launch()
    launch()
    check_product("splitk", C, A, B)


def test_bind_repeats_the_same_product(rng):
    A, B = random(rng, (130, 70)), random(rng, (70, 90))
    C = cupy.full((130, 90), cupy.nan, dtype=cupy.float32)
    launch = bind(cupy.asarray(A), cupy.asarray(B), C, kernel="regblock")
    launch()
    launch()
    check_product("regblock", C, A, B)


def wgmma_device_or_skip():
    if str(cupy.cuda.Device().compute_capability) != "90":
        pytest.skip("tf32_wgmma needs a Hopper GPU (sm_90a)")


def test_wgmma_is_built_for_sm90a():
    # The probe kernel of 09_tf32_wgmma.cu says whether NVRTC really produced
    # sm_90a code (else the GEMM kernel only writes NaN).
    wgmma_device_or_skip()
    gemm_kernel, transpose_kernel = cuda_gemm.wgmma_functions(cupy.cuda.Device().id)
    assert gemm_kernel is not None and transpose_kernel is not None


def describe_mismatch(result, expected):
    wrong = np.argwhere(result != expected)
    rows, cols = wrong[:, 0], wrong[:, 1]
    return (f"{len(wrong)} of {expected.size} wrong; first at {wrong[:5].tolist()}; "
            f"wrong rows mod 8: {np.bincount(rows % 8, minlength=8).tolist()}, "
            f"cols mod 8: {np.bincount(cols % 8, minlength=8).tolist()}, "
            f"rows mod 128 span {rows.min() % 128}..{rows.max() % 128}, cols mod 256 span "
            f"{cols.min() % 256}..{cols.max() % 256}")


@pytest.mark.parametrize("shape", [(128, 256, 32), (256, 512, 64), (130, 300, 100), (640, 520, 200)], ids=shape_id)
def test_wgmma_is_exact_on_small_integers(shape, rng):
    # Small integers are exact in TF32 and every partial sum is exact in fp32,
    # so any layout, swizzle, descriptor or fragment-mapping error shows up as
    # wrong integers, not as a tolerance question; the message locates them.
    wgmma_device_or_skip()
    M, N, K = shape
    A = rng.integers(-4, 5, (M, K)).astype(np.float32)
    B = rng.integers(-4, 5, (K, N)).astype(np.float32)
    C = cupy.full((M, N), cupy.nan, dtype=cupy.float32)
    run_gemm(cupy.asarray(A), cupy.asarray(B), C, kernel="tf32_wgmma")
    result, expected = cupy.asnumpy(C), A @ B
    assert np.array_equal(result, expected), describe_mismatch(result, expected)


@pytest.mark.parametrize("shape, beta", [((1300, 700, 1000), 1.5), ((2048, 1024, 512), 0.0), ((129, 257, 4100), -1.0)],
                         ids=["groups-ragged", "whole-tiles", "long-k"])
def test_wgmma_large_grids_alpha_beta(shape, beta, rng):
    # Several GROUP_M groups (the last partial), ragged tiles, many k-tiles.
    wgmma_device_or_skip()
    M, N, K = shape
    A, B, C0 = random(rng, (M, K)), random(rng, (K, N)), random(rng, (M, N))
    C = cupy.full((M, N), cupy.nan, dtype=cupy.float32) if beta == 0 else cupy.asarray(C0)
    run_gemm(cupy.asarray(A), cupy.asarray(B), C, alpha=0.5, beta=beta, kernel="tf32_wgmma")
    check_product("tf32_wgmma", C, A, B, alpha=0.5, beta=beta, C0=C0)


def test_wgmma_bind_sees_a_changed_b(rng):
    # B is transposed inside every call, so an in-place change of B between calls counts.
    wgmma_device_or_skip()
    A, B = random(rng, (256, 96)), random(rng, (96, 300))
    A_dev, B_dev = cupy.asarray(A), cupy.asarray(B)
    C = cupy.full((256, 300), cupy.nan, dtype=cupy.float32)
    launch = bind(A_dev, B_dev, C, kernel="tf32_wgmma")
    launch()
    check_product("tf32_wgmma", C, A, B)
    B_dev *= -2.0
    launch()
    check_product("tf32_wgmma", C, A, -2.0 * B)


GEMV_SHAPES = [(1, 1), (7, 5), (33, 1000), (1000, 3), (5, 0), (0, 5), (100, 4099), (64, 4096)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("shape", GEMV_SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_gemv_matches_numpy(shape, dtype, rng):
    M = rng.standard_normal(shape).astype(dtype)
    x = rng.standard_normal(shape[1]).astype(dtype)
    y = cupy.full(shape[0], cupy.nan, dtype=dtype)
    returned = spla.gemv(cupy.asarray(M), cupy.asarray(x), y)
    assert returned is y
    reference = M.astype(np.float64) @ x.astype(np.float64)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(cupy.asnumpy(y), reference, rtol=rtol, atol=rtol * math.sqrt(max(shape[1], 1)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_gemv_alpha_beta_and_views(dtype, rng):
    M_big = rng.standard_normal((60, 2 * 301)).astype(dtype)
    x_big = rng.standard_normal(302).astype(dtype)
    y0 = rng.standard_normal(60).astype(dtype)
    M_view = cupy.asarray(M_big)[:, ::2]          # non-contiguous: copied
    x_view = cupy.asarray(x_big)[1:]              # contiguous but 4/8 bytes off alignment: scalar path
    y = cupy.asarray(y0)
    spla.gemv(M_view, x_view, y, alpha=2.0, beta=-0.5)
    reference = 2.0 * (M_big[:, ::2].astype(np.float64) @ x_big[1:]) - 0.5 * y0
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(cupy.asnumpy(y), reference, rtol=rtol, atol=rtol * 20)


def test_gemv_bad_shapes():
    M = cupy.ones((4, 3), dtype=cupy.float32)
    with pytest.raises(spla.InputError):
        spla.gemv(M, cupy.ones(4, dtype=cupy.float32))
    with pytest.raises(spla.InputError):
        spla.gemv(M, cupy.ones(3, dtype=cupy.float32), cupy.ones(3, dtype=cupy.float32))
