"""The CUDA dense core: GEMM kernels along the optimisation path, and GEMV.

``KERNELS`` lists the GEMM kernels in path order (kernels/gemm/01_naive.cu ...
07_tf32.cu), each with its launch configuration, ending with the ``cublas``
anchor (``cupy.matmul``), so every step is measured against the same
reference. ``EXTRA_KERNELS`` holds variants that are not steps of the path:
the bank-conflict demonstration (step 3 without its pad, and step 2 with a
transposed B tile, unpadded and padded), ``dbuf64`` (step 6 with 64 x 64
tiles, for small grids), the split-K kernels for small grids with a long K
(kernels/gemm/08_splitk.cu), ``tf32_trunc`` (step 7 without its cvt) and
``tf32_wgmma``, spla's fast tensor-core path (kernels/gemm/09_tf32_wgmma.cu:
Hopper wgmma, sm_90a only; on any other device it raises KernelError).

All spla kernels compute ``C = alpha * A @ B + beta * C`` on row-major
float32 matrices of any shape; with ``beta == 0`` C is written without being
read. The vectorised kernels (``vec4`` onwards) need K and the leading
dimensions to be multiples of 4 and 16-byte aligned A and B; :func:`gemm`
pads A and B with zeros (exact: the extra products are 0) when they are not.

The ``auto`` policy (:func:`auto_kernel`) picks spla's fastest fp32 kernel
for the shape: :data:`AUTO_FP32` when its 128 x 128 tiles give every SM at
least two blocks, split-K (:data:`AUTO_SPLITK`, :data:`AUTO_SPLITK_NARROW`)
when K is long and even 64 x 64 tiles leave SMs idle (or N <= 8), else
:data:`AUTO_FP32_SMALL`; never a tf32 kernel (lower precision must be asked
for); ``cublas`` for float64, which spla's kernels do not implement.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .. import cuda
from ..cuda import KernelSource, ceil_div
from ..errors import InputError, KernelError

# Launch limits CUDA imposes (compute capability 9.0).
MAX_THREADS_PER_BLOCK = 1024
MAX_GRID_Y = 65535
STATIC_SHARED_LIMIT = 48 * 1024      # more needs dynamic shared memory + cudaFuncSetAttribute
OPT_IN_SHARED_LIMIT = 227 * 1024     # per block on sm_90 after opting in

NAIVE = KernelSource("gemm/01_naive.cu", ["spla_gemm_naive"])
TILED = KernelSource("gemm/02_tiled.cu", ["spla_gemm_tiled<16>", "spla_gemm_tiled<32>"])
PADDED = KernelSource("gemm/03_padded.cu", ["spla_gemm_padded<1>", "spla_gemm_padded<0>",
                                            "spla_gemm_transposed_b<32, 0>", "spla_gemm_transposed_b<32, 1>"])
VEC4 = KernelSource("gemm/04_vec4.cu", ["spla_gemm_vec4<64, 64, 32, 8>"])
REGBLOCK = KernelSource("gemm/05_regblock.cu", ["spla_gemm_regblock<128, 128, 8>"])
DBUF = KernelSource("gemm/06_dbuf.cu", ["spla_gemm_dbuf<128, 128, 16>", "spla_gemm_dbuf64<16, 3>"])
TF32 = KernelSource("gemm/07_tf32.cu", ["spla_gemm_tf32<128, 128, 32, 64, 64, 3>",
                                        "spla_gemm_tf32<128, 128, 32, 64, 64, 3, false>"])
SPLITK = KernelSource("gemm/08_splitk.cu", ["spla_gemm_splitk<128, 32, 32, 8, 4, 3>",
                                            "spla_gemm_splitk<256, 8, 32, 4, 4, 3>"])
# sm_90a only (wgmma). CuPy appends its own -arch for the device after these
# options, so _wgmma_functions runs the file's probe kernel to check which
# target NVRTC really compiled for, and compiles through NVRTC directly when
# it was not sm_90a.
WGMMA_OPTIONS = ("-arch=sm_90a",)
WGMMA = KernelSource("gemm/09_tf32_wgmma.cu", ["spla_gemm_tf32_wgmma", "spla_gemm_tf32_wgmma_probe",
                                               "spla_gemm_transpose_pad"], options=WGMMA_OPTIONS)
# The constants of 09_tf32_wgmma.cu (a CPU test checks they agree).
WGMMA_BM, WGMMA_BN, WGMMA_BK, WGMMA_STAGES, WGMMA_THREADS = 128, 256, 32, 4, 256
WGMMA_SHARED_BYTES = WGMMA_STAGES * (WGMMA_BM + WGMMA_BN) * WGMMA_BK * 4 + 1024  # + 1 KB to align to 1024
WGMMA_TRANSPOSE_TILE = 32
GEMV = KernelSource("gemm/gemv.cu", ["spla_gemm_gemv<float>", "spla_gemm_gemv<double>"])


@dataclass(frozen=True)
class GemmKernel:
    """One GEMM kernel and how to launch it.

    ``tile`` is the (rows, columns) of C one block computes; the grid is
    ``(ceil(N / tile[1]), ceil(M / tile[0]))``. ``vector_loads`` kernels read
    A and B as float4 and need the padding :func:`gemm` applies.
    ``precision`` is ``"fp32"`` or ``"tf32"`` (inputs reduced to 10-bit
    mantissas: relative error ~1e-3 instead of ~1e-6); ``tf32_rounding`` says
    how: ``"nearest"`` (cvt.rna) or ``"truncate"`` (raw fp32 bits, which the
    tensor cores truncate). ``split_k_tile`` is the k-tile (BK) of a split-K
    kernel (0 for the others): its grid has a third dimension of K slices
    (:func:`split_k_slices`), it takes ``tiles_per_slice`` instead of beta
    and adds into C, which the host prepares; ``resident_blocks`` is how many
    of its blocks fit on one SM (shared memory bound), to size that grid.
    ``k_major_b`` kernels (``tf32_wgmma``) take B as a transposed, zero-padded
    N x K copy and a 1-D grid (:func:`_bind_wgmma`).
    """

    name: str
    source: KernelSource | None
    expression: str | None
    block: tuple
    tile: tuple
    vector_loads: bool
    dynamic_shared: int = 0
    precision: str = "fp32"
    description: str = ""
    tf32_rounding: str = "nearest"
    split_k_tile: int = 0
    resident_blocks: int = 1
    k_major_b: bool = False

    @property
    def threads(self) -> int:
        return int(np.prod(self.block))


def _tf32_shared_bytes(bm, bn, bk, stages):
    # STAGES x (A tile with rows padded by 4 floats + B tile with rows padded by 8), see 07_tf32.cu
    return stages * (bm * (bk + 4) + bk * (bn + 8)) * 4


def _pipelined_shared_bytes(bm, bn, bk, stages):
    # STAGES x (A tile, rows padded by 4 floats + B tile, unpadded): dbuf64
    # (06_dbuf.cu) and the split-K kernels (08_splitk.cu)
    return stages * (bm * (bk + 4) + bk * bn) * 4


def _checked(kernel: GemmKernel) -> GemmKernel:
    """Refuse launch configurations CUDA cannot run, at import time."""
    if kernel.source is None:
        return kernel
    if kernel.threads > MAX_THREADS_PER_BLOCK:
        raise KernelError(f"{kernel.name}: {kernel.threads} threads per block, CUDA allows {MAX_THREADS_PER_BLOCK}")
    if kernel.dynamic_shared > OPT_IN_SHARED_LIMIT:
        raise KernelError(f"{kernel.name}: {kernel.dynamic_shared} bytes of shared memory per block, "
                          f"sm_90 allows {OPT_IN_SHARED_LIMIT}")
    if kernel.expression not in kernel.source.names:
        raise KernelError(f"{kernel.name}: {kernel.expression} is not declared in {kernel.source.filename}")
    return kernel


_PATH = [
    GemmKernel("naive", NAIVE, "spla_gemm_naive", (32, 8), (8, 32), False,
               description="one thread per output, operands from global memory"),
    GemmKernel("tiled16", TILED, "spla_gemm_tiled<16>", (16, 16), (16, 16), False,
               description="16x16 shared-memory tiles, zero-filled at the edges"),
    GemmKernel("tiled32", TILED, "spla_gemm_tiled<32>", (32, 32), (32, 32), False,
               description="32x32 shared-memory tiles"),
    GemmKernel("padded", PADDED, "spla_gemm_padded<1>", (32, 8), (32, 32), False,
               description="lanes along M, 4 outputs per thread, A read down a column of [32][33]"),
    GemmKernel("vec4", VEC4, "spla_gemm_vec4<64, 64, 32, 8>", (512, 1), (64, 64), True,
               description="float4 loads, 8 outputs per thread down a column"),
    GemmKernel("regblock", REGBLOCK, "spla_gemm_regblock<128, 128, 8>", (256, 1), (128, 128), True,
               description="8x8 outputs per thread, A transposed in shared memory, warp tiling"),
    GemmKernel("dbuf", DBUF, "spla_gemm_dbuf<128, 128, 16>", (256, 1), (128, 128), True,
               description="regblock + double-buffered cp.async tiles, one barrier per k-tile"),
    GemmKernel("tf32", TF32, "spla_gemm_tf32<128, 128, 32, 64, 64, 3>", (128, 1), (128, 128), True,
               dynamic_shared=_tf32_shared_bytes(128, 128, 32, 3), precision="tf32",
               description="tensor cores (mma.sync m16n8k8 TF32), 3-stage cp.async pipeline; LOWER PRECISION"),
    GemmKernel("cublas", None, None, (), (), False,
               description="cuBLAS SGEMM through cupy.matmul (the anchor)"),
]
KERNELS: dict[str, GemmKernel] = {k.name: _checked(k) for k in _PATH}

EXTRA_KERNELS: dict[str, GemmKernel] = {k.name: _checked(k) for k in [
    # The bank-conflict demonstration (03_padded.cu).
    GemmKernel("padded_nopad", PADDED, "spla_gemm_padded<0>", (32, 8), (32, 32), False,
               description="the padded step with [32][32]: 32-way bank conflicts on the A reads"),
    GemmKernel("transposed_b_nopad", PADDED, "spla_gemm_transposed_b<32, 0>", (32, 32), (32, 32), False,
               description="tiled32 with the B tile stored transposed, [32][32]: 32-way bank conflicts"),
    GemmKernel("transposed_b_padded", PADDED, "spla_gemm_transposed_b<32, 1>", (32, 32), (32, 32), False,
               description="tiled32 with the B tile stored transposed, [32][33]: conflict-free"),
    # Small grids (06_dbuf.cu, 08_splitk.cu); "auto" picks these by shape.
    GemmKernel("dbuf64", DBUF, "spla_gemm_dbuf64<16, 3>", (64, 1), (64, 64), True,
               dynamic_shared=_pipelined_shared_bytes(64, 64, 16, 3),
               description="double-buffered 64x64 tiles, 3-stage cp.async, A untransposed (small grids)"),
    GemmKernel("splitk", SPLITK, "spla_gemm_splitk<128, 32, 32, 8, 4, 3>", (128, 1), (128, 32), True,
               dynamic_shared=_pipelined_shared_bytes(128, 32, 32, 3), split_k_tile=32, resident_blocks=3,
               description="128x32 tiles over K slices, fp32 atomic adds into C (few tiles, long K)"),
    GemmKernel("splitk_n8", SPLITK, "spla_gemm_splitk<256, 8, 32, 4, 4, 3>", (128, 1), (256, 8), True,
               dynamic_shared=_pipelined_shared_bytes(256, 8, 32, 3), split_k_tile=32, resident_blocks=2,
               description="split-K with 256x8 tiles for N <= 8"),
    # Step 7 fed raw fp32 bits (07_tf32.cu).
    GemmKernel("tf32_trunc", TF32, "spla_gemm_tf32<128, 128, 32, 64, 64, 3, false>", (128, 1), (128, 128), True,
               dynamic_shared=_tf32_shared_bytes(128, 128, 32, 3), precision="tf32", tf32_rounding="truncate",
               description="tf32 fed raw fp32 bits (truncated by the tensor cores, no cvt); LOWER PRECISION"),
    # Hopper wgmma (09_tf32_wgmma.cu): sm_90a only; raw fp32 bits, like tf32_trunc.
    GemmKernel("tf32_wgmma", WGMMA, "spla_gemm_tf32_wgmma", (WGMMA_THREADS, 1), (WGMMA_BM, WGMMA_BN), True,
               dynamic_shared=WGMMA_SHARED_BYTES, precision="tf32", tf32_rounding="truncate", k_major_b=True,
               description="wgmma m64n256k8 TF32 from 128B-swizzled shared tiles, 4-stage cp.async, "
                           "B transposed per call; sm_90a; LOWER PRECISION"),
]}

ALL_KERNELS = {**KERNELS, **EXTRA_KERNELS}

# The ``auto`` rule for float32 (never tf32, which is lower precision and
# must be asked for): AUTO_FP32's 128 x 128 tiles when they give every SM at
# least AUTO_MIN_BLOCKS_PER_SM blocks. Below that the 64 x 64 AUTO_FP32_SMALL
# (measured on the H200, 2026-12-02: dbuf64 25.3 TFLOP/s at 1024^3 against
# vec4 19.4 and dbuf 18.1; 28.4 at 16384 x 64 x 4096 against 20.1 and 20.0),
# unless K >= SPLITK_MIN_K and either N <= 8 or the 64 x 64 grid has fewer
# blocks than SMs: then split-K (the SpMM dense panel, 2,000 x 100,000 times
# 100,000 x 8 or 32, took dbuf 10.6 ms in 16 blocks). N <= 8 goes to the
# 8-wide split-K tile even on large grids: a 64-wide tile would spend 7/8 of
# its FMAs on zero padding.
AUTO_FP32 = "dbuf"
AUTO_FP32_SMALL = "dbuf64"
AUTO_SPLITK = "splitk"
AUTO_SPLITK_NARROW = "splitk_n8"
AUTO_MIN_BLOCKS_PER_SM = 2
SPLITK_MIN_K = 1024
SPLITK_NARROW_N = 8
SPLITK_MIN_TILES_PER_SLICE = 4   # keeps each slice's cp.async pipeline busy past its fill
AUTO_FP64 = "cublas"
DEFAULT_MULTIPROCESSORS = 132  # H200; used when the device cannot be asked


@functools.lru_cache(maxsize=None)
def multiprocessor_count() -> int:
    """SMs of the current CUDA device (DEFAULT_MULTIPROCESSORS without one)."""
    try:
        import cupy

        return int(cupy.cuda.Device().attributes["MultiProcessorCount"])
    except Exception:  # no CuPy or no device: the rule still needs a number
        return DEFAULT_MULTIPROCESSORS


def auto_kernel(dtype, shape=None, multiprocessors=None) -> str:
    """The kernel ``"auto"`` means for ``dtype`` and an (M, N, K) product (see AUTO_FP32)."""
    if np.dtype(dtype) != np.float32:
        return AUTO_FP64
    if shape is None:
        return AUTO_FP32
    M, N, K = shape
    sms = multiprocessors or multiprocessor_count()
    if K >= SPLITK_MIN_K and N <= SPLITK_NARROW_N:
        return AUTO_SPLITK_NARROW
    tile = KERNELS[AUTO_FP32].tile
    if ceil_div(M, tile[0]) * ceil_div(N, tile[1]) >= AUTO_MIN_BLOCKS_PER_SM * sms:
        return AUTO_FP32
    small = EXTRA_KERNELS[AUTO_FP32_SMALL].tile
    if K >= SPLITK_MIN_K and ceil_div(M, small[0]) * ceil_div(N, small[1]) < sms:
        return AUTO_SPLITK
    return AUTO_FP32_SMALL


def split_k_slices(kernel: GemmKernel, M: int, N: int, K: int, multiprocessors=None) -> tuple:
    """(slices, k-tiles per slice) for a split-K launch of an M x N x K product.

    Enough slices that the grid fills every SM about once (``resident_blocks``
    per SM, so all blocks run in one wave and finish together), but at least
    SPLITK_MIN_TILES_PER_SLICE k-tiles per slice; then the k-tiles are dealt
    out evenly, so no slice is empty (the last may be shorter).
    """
    k_tiles = max(1, ceil_div(K, kernel.split_k_tile))
    tiles = ceil_div(M, kernel.tile[0]) * ceil_div(N, kernel.tile[1])
    sms = multiprocessors or multiprocessor_count()
    wanted = ceil_div(sms * kernel.resident_blocks, tiles)
    slices = max(1, min(wanted, k_tiles // SPLITK_MIN_TILES_PER_SLICE))
    per_slice = ceil_div(k_tiles, slices)
    return ceil_div(k_tiles, per_slice), per_slice


def resolve_kernel(kernel: str, dtype, shape=None) -> GemmKernel:
    """The registry entry ``kernel`` names for operands of ``dtype``.

    ``"auto"`` applies :func:`auto_kernel` to ``shape`` = (M, N, K) (without
    a shape: AUTO_FP32 for float32).
    """
    dtype = np.dtype(dtype)
    if kernel == "auto":
        kernel = auto_kernel(dtype, shape)
    if kernel not in ALL_KERNELS:
        raise KernelError(f"unknown GEMM kernel {kernel!r}; choose one of {', '.join(ALL_KERNELS)} or 'auto'")
    entry = ALL_KERNELS[kernel]
    if entry.source is not None and dtype != np.float32:
        raise KernelError(f"GEMM kernel {kernel!r} is float32 only; use kernel='cublas' (or 'auto') for {dtype}")
    return entry


def grid_for(kernel: GemmKernel, M: int, N: int) -> tuple:
    """Blocks of the launch for an M x N output (x over columns, y over rows)."""
    grid = (ceil_div(N, kernel.tile[1]), ceil_div(M, kernel.tile[0]))
    if grid[1] > MAX_GRID_Y:
        raise KernelError(f"{kernel.name}: M = {M} needs {grid[1]} row blocks, over CUDA's grid.y limit "
                          f"{MAX_GRID_Y}; split the product")
    return grid


def round_up4(n: int) -> int:
    return -(-n // 4) * 4


def pad_for_vector_loads(A, B, xp):
    """A and B laid out as the float4 kernels need them, and the K they see.

    K is rounded up to a multiple of 4 with zero columns of A and zero rows of
    B (the extra products are exactly 0); B's rows are padded to a multiple of
    4 columns (those columns are loaded, never stored). Arrays that already
    qualify are returned as they are, except that a misaligned one (a view at
    an odd offset) is copied to a fresh, aligned allocation.
    Works for NumPy and CuPy arrays alike.
    """
    M, K = A.shape
    N = B.shape[1]
    K4, N4 = round_up4(K), round_up4(N)
    if K4 != K:
        padded = xp.zeros((M, K4), dtype=A.dtype)
        padded[:, :K] = A
        A = padded
    if K4 != K or N4 != N:
        padded = xp.zeros((K4, N4), dtype=B.dtype)
        padded[:K, :N] = B
        B = padded
    A = _aligned16(A, xp)
    B = _aligned16(B, xp)
    return A, B, K4


def _data_pointer(a) -> int:
    return a.data.ptr if hasattr(a.data, "ptr") else a.ctypes.data


def _aligned16(a, xp):
    if _data_pointer(a) % 16:
        return xp.array(a, copy=True)
    return a


def check_gemv_operands(M, x, y, beta):
    """Shapes and dtypes of y = alpha * M @ x + beta * y; returns M's shape, raises InputError."""
    if getattr(M, "ndim", None) != 2:
        raise InputError(f"M must be a 2-D array, got shape {getattr(M, 'shape', None)}")
    if M.dtype not in (np.float32, np.float64):
        raise InputError(f"GEMV takes float32 or float64 matrices, got {M.dtype}")
    n_rows, n_cols = M.shape
    if getattr(x, "ndim", None) != 1 or x.shape[0] != n_cols:
        raise InputError(f"x must be a vector of length {n_cols}, got shape {getattr(x, 'shape', None)}")
    if y is not None and (getattr(y, "ndim", None) != 1 or y.shape[0] != n_rows or y.dtype != M.dtype):
        raise InputError(f"y must be a {M.dtype} vector of length {n_rows}, got "
                         f"{getattr(y, 'dtype', None)} shape {getattr(y, 'shape', None)}")
    if y is None and beta != 0:
        raise InputError("beta != 0 needs an input y")
    return M.shape


def check_operands(A, B, C):
    """Shapes, dtypes and the result dtype of C = A @ B (+ C); raises InputError."""
    for name, arr in (("A", A), ("B", B)):
        if getattr(arr, "ndim", None) != 2:
            raise InputError(f"{name} must be a 2-D array, got shape {getattr(arr, 'shape', None)}")
    if A.shape[1] != B.shape[0]:
        raise InputError(f"inner dimensions differ: A is {A.shape[0]}x{A.shape[1]}, B is {B.shape[0]}x{B.shape[1]}")
    dtype = np.result_type(A.dtype, B.dtype)
    if dtype not in (np.float32, np.float64):
        raise InputError(f"GEMM takes float32 or float64 operands, got {A.dtype} and {B.dtype}")
    shape = (A.shape[0], B.shape[1])
    if C is not None:
        if getattr(C, "ndim", None) != 2 or tuple(C.shape) != shape:
            raise InputError(f"C must have shape {shape}, got {getattr(C, 'shape', None)}")
        if C.dtype != dtype:
            raise InputError(f"C must be {dtype} (the result type of A and B), got {C.dtype}")
    return shape, dtype


def gemm(A, B, C=None, *, alpha=1.0, beta=0.0, kernel: str = "auto"):
    """``C = alpha * A @ B + beta * C`` on the GPU with one of spla's kernels.

    Parameters
    ----------
    A, B : cupy.ndarray, 2-D, float32 (any kernel) or float64 (``cublas``)
        Non-contiguous inputs are copied to C-contiguous ones first.
    C : cupy.ndarray, optional
        Written in place and returned. Read only when ``beta != 0``, so it may
        hold garbage (or NaN) with ``beta == 0``. A non-contiguous C is
        computed in a contiguous buffer and copied back. Without C a new
        array is returned and ``beta`` must be 0.
    alpha, beta : float
    kernel : str
        A name from :data:`KERNELS` or :data:`EXTRA_KERNELS`, or ``"auto"``
        (:func:`auto_kernel`: by shape, :data:`AUTO_FP32`,
        :data:`AUTO_FP32_SMALL` or a split-K kernel for float32, ``"cublas"``
        for float64; never a tf32 kernel). Split-K kernels add their K
        slices into C with atomics: the last bits can differ between runs.
        ``"tf32_wgmma"`` is the fast tensor-core path (326.7 TFLOP/s at
        4096^3 on the H200, 92% of cuBLAS TF32; relative error ~1e-3): sm_90a
        only, KernelError on any other device.

    Returns
    -------
    C : cupy.ndarray

    See Also
    --------
    cupy.matmul, cupyx.scipy.linalg.blas (gemm), numpy.matmul
    """
    cupy = cuda.require_cupy()
    (M, N), dtype = check_operands(A, B, C)
    entry = resolve_kernel(kernel, dtype, (M, N, A.shape[1]))
    if C is None and beta != 0:
        raise InputError("beta != 0 needs an input C")
    A = cupy.ascontiguousarray(A, dtype=dtype)
    B = cupy.ascontiguousarray(B, dtype=dtype)
    K = A.shape[1]

    out = cupy.empty((M, N), dtype=dtype) if C is None else C
    work = out if out.flags.c_contiguous else cupy.empty((M, N), dtype=dtype)
    if work is not out and beta != 0:
        work[...] = out
    _bind(cupy, entry, A, B, work, alpha, beta)()
    if work is not out:
        out[...] = work
    return out


def bind(A, B, C, *, alpha=1.0, beta=0.0, kernel: str = "auto"):
    """A no-argument callable that runs ``C = alpha * A @ B + beta * C`` with everything prepared.

    The checks, contiguous copies, zero padding and kernel lookup of
    :func:`gemm` happen once here; each call only launches. For timing loops
    (the benchmarks) and for callers that repeat one product. C must be a
    C-contiguous cupy array of the result shape and dtype.
    """
    cupy = cuda.require_cupy()
    (M, N), dtype = check_operands(A, B, C)
    if C is None or not C.flags.c_contiguous:
        raise InputError("bind() needs a C-contiguous output C")
    entry = resolve_kernel(kernel, dtype, (M, N, A.shape[1]))
    return _bind(cupy, entry, cupy.ascontiguousarray(A, dtype=dtype), cupy.ascontiguousarray(B, dtype=dtype),
                 C, alpha, beta)


def _bind(cupy, entry: GemmKernel, A, B, C, alpha, beta):
    M, K = A.shape
    N = B.shape[1]
    if M == 0 or N == 0:
        return lambda: None
    if entry.source is None:
        return lambda: _cublas(cupy, A, B, C, alpha, beta)
    if entry.vector_loads and K == 0:
        # C = beta * C without reading C when beta == 0. The float4 kernels
        # assume K > 0 (06_dbuf.cu issues its first copies unguarded); the
        # scalar ones run the K == 0 case themselves.
        if beta == 0:
            return lambda: C.fill(0)
        return lambda: cupy.multiply(C, C.dtype.type(beta), out=C)
    if entry.k_major_b:
        return _bind_wgmma(cupy, entry, A, B, C, alpha, beta)
    if entry.vector_loads:
        A, B, K = pad_for_vector_loads(A, B, cupy)
    function = entry.source.function(entry.expression)
    if entry.dynamic_shared > STATIC_SHARED_LIMIT:
        # Opting in above 48 KB is a per-function attribute (cudaFuncSetAttribute).
        function.max_dynamic_shared_size_bytes = entry.dynamic_shared
    grid = grid_for(entry, M, N)
    if entry.split_k_tile:
        return _bind_split_k(cupy, entry, function, grid, A, B, C, K, alpha, beta)
    args = (np.int32(M), np.int32(N), np.int32(K), np.float32(alpha), A, np.int32(A.shape[1]),
            B, np.int32(B.shape[1]), np.float32(beta), C, np.int32(C.shape[1]))
    return lambda: function(grid, entry.block, args, shared_mem=entry.dynamic_shared)


def _wgmma_probe_ok(cupy, probe) -> tuple:
    out = cupy.zeros(2, dtype=cupy.int32)
    probe((1,), (1,), (out,))
    flag, arch = (int(v) for v in out.get())
    return flag == 1, arch


def _compile_sm90a_with_nvrtc(cupy, source: KernelSource):
    """The file compiled by NVRTC with only spla's options (no -arch from CuPy), as a RawModule."""
    import os
    import tempfile

    from cupy_backends.cuda.libs import nvrtc

    options = list(source.options) + [f"-I{cuda.kernel_dir()}"]
    program = nvrtc.createProgram(source.path.read_text(), source.path.name, (), ())
    try:
        try:
            nvrtc.compileProgram(program, options)
        except Exception as exc:
            raise KernelError(f"NVRTC could not compile {source.filename} with {options}: {exc}\n"
                              f"{nvrtc.getProgramLog(program)}") from exc
        cubin = nvrtc.getCUBIN(program)
    finally:
        nvrtc.destroyProgram(program)
    handle, path = tempfile.mkstemp(suffix=".cubin", prefix="spla_wgmma_")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(cubin)
        module = cupy.RawModule(path=path)
        module.get_function("spla_gemm_tf32_wgmma_probe")  # loads the module before the file goes
    finally:
        os.unlink(path)
    return module


@functools.lru_cache(maxsize=None)
def _wgmma_functions(device_id: int) -> tuple:
    """(GEMM, transpose) kernels of 09_tf32_wgmma.cu, checked to be sm_90a code on this device.

    The usual path (KernelSource with -arch=sm_90a) first; CuPy adds the
    device's -arch after spla's options, so the file's probe kernel says
    which one NVRTC honoured. When it was not sm_90a, NVRTC is called
    directly with spla's options only. Raises KernelError on non-Hopper
    devices or when neither path yields sm_90a code (the kernel would only
    write NaN).
    """
    cupy = cuda.require_cupy()
    capability = str(cupy.cuda.Device(device_id).compute_capability)
    if capability != "90":
        raise KernelError(f"tf32_wgmma needs a Hopper GPU (sm_90a wgmma); this device is sm_{capability}")
    attempts = []
    try:
        ok, arch = _wgmma_probe_ok(cupy, WGMMA.function("spla_gemm_tf32_wgmma_probe"))
        if ok:
            return WGMMA.function("spla_gemm_tf32_wgmma"), WGMMA.function("spla_gemm_transpose_pad")
        attempts.append(f"CuPy RawModule with {WGMMA.options}: compiled for __CUDA_ARCH__ {arch} without sm_90a")
    except Exception as exc:  # a compile error of the usual path: try the direct one
        attempts.append(f"CuPy RawModule with {WGMMA.options}: {exc}")
    try:
        module = _compile_sm90a_with_nvrtc(cupy, WGMMA)
        ok, arch = _wgmma_probe_ok(cupy, module.get_function("spla_gemm_tf32_wgmma_probe"))
        if ok:
            return module.get_function("spla_gemm_tf32_wgmma"), module.get_function("spla_gemm_transpose_pad")
        attempts.append(f"NVRTC directly: compiled for __CUDA_ARCH__ {arch} without sm_90a")
    except Exception as exc:
        attempts.append(f"NVRTC directly: {type(exc).__name__}: {exc}")
    raise KernelError("tf32_wgmma: no sm_90a build; " + "; ".join(attempts))


def _bind_wgmma(cupy, entry: GemmKernel, A, B, C, alpha, beta):
    # wgmma's tf32 B operand must be K-major, so every call first writes
    # Bt = B^T (N_pad x K_pad, zeros outside B: whole tiles, no bounds checks
    # on B) and then runs the GEMM on A and Bt. A is used as it is when K is
    # a multiple of 4 and A is 16-byte aligned (cp.async copies 16 bytes);
    # else it is copied once, here, with zero columns up to K4.
    M, K = A.shape
    N = B.shape[1]
    gemm_kernel, transpose_kernel = _wgmma_functions(cupy.cuda.Device().id)
    K4 = round_up4(K)
    if K4 != K:
        padded = cupy.zeros((M, K4), dtype=A.dtype)
        padded[:, :K] = A
        A = padded
    A = _aligned16(A, cupy)
    k_pad = ceil_div(K4, WGMMA_BK) * WGMMA_BK
    n_pad = ceil_div(N, WGMMA_BN) * WGMMA_BN
    transpose_grid = (n_pad // WGMMA_TRANSPOSE_TILE, k_pad // WGMMA_TRANSPOSE_TILE)
    if transpose_grid[1] > MAX_GRID_Y:
        raise KernelError(f"tf32_wgmma: K = {K} needs {transpose_grid[1]} transpose block-rows, over CUDA's "
                          f"grid.y limit {MAX_GRID_Y}; split the product")
    Bt = cupy.empty((n_pad, k_pad), dtype=cupy.float32)
    gemm_kernel.max_dynamic_shared_size_bytes = entry.dynamic_shared
    blocks = ceil_div(M, WGMMA_BM) * ceil_div(N, WGMMA_BN)
    transpose_args = (np.int32(K), np.int32(N), B, np.int32(B.shape[1]), Bt, np.int32(k_pad))
    args = (np.int32(M), np.int32(N), np.int32(K4), np.float32(alpha), A, np.int32(A.shape[1]),
            Bt, np.int32(k_pad), np.float32(beta), C, np.int32(C.shape[1]))

    def launch():
        transpose_kernel(transpose_grid, (WGMMA_TRANSPOSE_TILE, 8), transpose_args)
        gemm_kernel((blocks,), entry.block, args, shared_mem=entry.dynamic_shared)

    return launch


def _bind_split_k(cupy, entry: GemmKernel, function, grid, A, B, C, K, alpha, beta):
    # The slices add alpha * (their part of A @ B) into C with atomics, so C
    # holds beta * C first: zeros for beta == 0 (a memset: C is never read),
    # untouched for beta == 1.
    M, N = C.shape
    slices, per_slice = split_k_slices(entry, M, N, K)
    args = (np.int32(M), np.int32(N), np.int32(K), np.float32(alpha), A, np.int32(A.shape[1]),
            B, np.int32(B.shape[1]), C, np.int32(C.shape[1]), np.int32(per_slice))
    scale = C.dtype.type(beta)

    def launch():
        if beta == 0:
            C.fill(0)
        elif beta != 1:
            cupy.multiply(C, scale, out=C)
        function((grid[0], grid[1], slices), entry.block, args, shared_mem=entry.dynamic_shared)

    return launch


def _cublas(cupy, A, B, C, alpha, beta):
    if alpha == 1 and beta == 0:
        cupy.matmul(A, B, out=C)
        return
    product = cupy.matmul(A, B)
    product *= C.dtype.type(alpha)
    if beta != 0:
        product += C.dtype.type(beta) * C
    C[...] = product  # beta == 0 never reads C, so NaN in C cannot leak in


GEMV_WARPS_PER_BLOCK = 8


def gemv(M, x, y=None, *, alpha=1.0, beta=0.0):
    """``y = alpha * M @ x + beta * y`` for a dense matrix on the GPU (one warp per row).

    Parameters
    ----------
    M : cupy.ndarray, 2-D, float32 or float64
        A non-C-contiguous M is copied to a C-contiguous one first.
    x : cupy.ndarray, 1-D, length ``M.shape[1]``; cast to M's dtype if needed.
    y : cupy.ndarray, 1-D, length ``M.shape[0]``, M's dtype, optional
        Written in place and returned; read only when ``beta != 0``. Without
        y a new array is returned and ``beta`` must be 0.
    alpha, beta : float

    Returns
    -------
    y : cupy.ndarray

    See Also
    --------
    cupy.matmul, cupy.cublas.gemv, numpy.dot
    """
    cupy = cuda.require_cupy()
    n_rows, n_cols = check_gemv_operands(M, x, y, beta)
    M = cupy.ascontiguousarray(M)
    x = cupy.ascontiguousarray(x, dtype=M.dtype)
    out = cupy.empty(n_rows, dtype=M.dtype) if y is None else y
    work = out if out.flags.c_contiguous else cupy.empty(n_rows, dtype=M.dtype)
    if work is not out and beta != 0:
        work[...] = out
    if n_rows:
        scalar = M.dtype.type
        name = "spla_gemm_gemv<float>" if M.dtype == np.float32 else "spla_gemm_gemv<double>"
        function = GEMV.function(name)
        blocks = cuda.grid_1d(n_rows * 32, 32 * GEMV_WARPS_PER_BLOCK)
        function((blocks,), (32 * GEMV_WARPS_PER_BLOCK,),
                 (np.int32(n_rows), np.int32(n_cols), scalar(alpha), M, np.int64(n_cols), x, scalar(beta), work))
    if work is not out:
        out[...] = work
    return out
