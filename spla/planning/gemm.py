"""GEMM planning: the kernel registry, the ``auto`` shape rule and split-K slices.

Host-only: nothing here imports CuPy or a backend. The registry lists what
``auto`` may choose plus the teaching path of the optimisation steps
(kernels/gemm/01_naive.cu ... 09_tf32_wgmma.cu), each selectable by name, and
``cublas`` (the anchor). Baseline variants kept only for comparison live in
:mod:`spla.bench.variants`; they are :class:`GemmKernel` entries too and go
through the same :func:`plan_gemm`.

All spla kernels compute ``C = alpha * A @ B + beta * C`` on row-major
float32 matrices of any shape. The vectorised kernels (``vec4`` onwards) read
float4: K and the leading dimensions are padded to multiples of 4 by the
backend (zero padding is exact).

The ``auto`` rule (:func:`auto_kernel`) picks spla's fastest fp32 kernel for
the shape: :data:`AUTO_FP32` when its 128 x 128 tiles give every SM at least
:data:`AUTO_MIN_BLOCKS_PER_SM` blocks; split-K when K is long and either N is
narrow (an 8-wide tile instead of spending most FMAs on zero padding) or even
64 x 64 tiles leave SMs idle; else :data:`AUTO_FP32_SMALL`. Never a tf32
kernel (lower precision must be asked for); ``cublas`` for float64, which
spla's kernels do not implement. See BENCHMARKS.md for the measurements.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import KernelError
from . import ceil_div

# Launch limits CUDA imposes (compute capability 9.0).
MAX_THREADS_PER_BLOCK = 1024
MAX_GRID_Y = 65535
STATIC_SHARED_LIMIT = 48 * 1024      # more needs dynamic shared memory + cudaFuncSetAttribute
OPT_IN_SHARED_LIMIT = 227 * 1024     # per block on sm_90 after opting in

# The constants of 09_tf32_wgmma.cu (a CPU test checks they agree).
WGMMA_BM, WGMMA_BN, WGMMA_BK, WGMMA_STAGES, WGMMA_THREADS = 128, 256, 32, 4, 256
WGMMA_SHARED_BYTES = WGMMA_STAGES * (WGMMA_BM + WGMMA_BN) * WGMMA_BK * 4 + 1024  # + 1 KB to align to 1024
WGMMA_TRANSPOSE_TILE = 32


def round_up4(n: int) -> int:
    return ceil_div(n, 4) * 4


@dataclass(frozen=True)
class GemmKernel:
    """One GEMM kernel and how to launch it.

    ``file`` is the source under kernels/ and ``function``/``targs`` the
    template it instantiates (``None`` for ``cublas``); the backend turns them
    into an NVRTC name with ``runtime.template``. ``tile`` is the (rows,
    columns) of C one block computes; the grid is ``(ceil(N / tile[1]),
    ceil(M / tile[0]))``. ``vector_loads`` kernels read A and B as float4.
    ``precision`` is ``"fp32"`` or ``"tf32"`` (inputs reduced to 10-bit
    mantissas: relative error ~1e-3 instead of ~1e-6); ``tf32_rounding`` says
    how: ``"nearest"`` (cvt.rna) or ``"truncate"`` (raw fp32 bits).
    ``split_k_tile`` is the k-tile of a split-K kernel (0 for the others): its
    grid has a third dimension of K slices (:func:`split_k_slices`) and it
    adds into C; ``resident_blocks`` is how many of its blocks fit on one SM.
    ``k_major_b`` kernels (``tf32_wgmma``) take B as a transposed, zero-padded
    N x K copy and a 1-D grid.
    """

    name: str
    file: str | None
    function: str | None
    targs: tuple
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
        return int(np.prod(self.block)) if self.block else 0

    @property
    def is_spla(self) -> bool:
        """True for spla's own kernels, False for the cuBLAS anchor."""
        return self.file is not None


def tf32_shared_bytes(bm, bn, bk, stages):
    # STAGES x (A tile with rows padded by 4 floats + B tile with rows padded by 8), see 07_tf32.cu
    return stages * (bm * (bk + 4) + bk * (bn + 8)) * 4


def pipelined_shared_bytes(bm, bn, bk, stages):
    # STAGES x (A tile, rows padded by 4 floats + B tile, unpadded): dbuf64
    # (06_dbuf.cu) and the split-K kernels (08_splitk.cu)
    return stages * (bm * (bk + 4) + bk * bn) * 4


def checked(kernel: GemmKernel) -> GemmKernel:
    """Refuse launch configurations CUDA cannot run, at import time."""
    if not kernel.is_spla:
        return kernel
    if kernel.threads > MAX_THREADS_PER_BLOCK:
        raise KernelError(f"{kernel.name}: {kernel.threads} threads per block, CUDA allows {MAX_THREADS_PER_BLOCK}")
    if kernel.dynamic_shared > OPT_IN_SHARED_LIMIT:
        raise KernelError(f"{kernel.name}: {kernel.dynamic_shared} bytes of shared memory per block, "
                          f"sm_90 allows {OPT_IN_SHARED_LIMIT}")
    return kernel


_PATH = [
    GemmKernel("naive", "gemm/01_naive.cu", "spla_gemm_naive", (), (32, 8), (8, 32), False,
               description="one thread per output, operands from global memory"),
    GemmKernel("tiled16", "gemm/02_tiled.cu", "spla_gemm_tiled", (16,), (16, 16), (16, 16), False,
               description="16x16 shared-memory tiles, zero-filled at the edges"),
    GemmKernel("tiled32", "gemm/02_tiled.cu", "spla_gemm_tiled", (32,), (32, 32), (32, 32), False,
               description="32x32 shared-memory tiles"),
    GemmKernel("padded", "gemm/03_padded.cu", "spla_gemm_padded", (1,), (32, 8), (32, 32), False,
               description="lanes along M, 4 outputs per thread, A read down a column of [32][33]"),
    GemmKernel("vec4", "gemm/04_vec4.cu", "spla_gemm_vec4", (64, 64, 32, 8), (512, 1), (64, 64), True,
               description="float4 loads, 8 outputs per thread down a column"),
    GemmKernel("regblock", "gemm/05_regblock.cu", "spla_gemm_regblock", (128, 128, 8), (256, 1), (128, 128), True,
               description="8x8 outputs per thread, A transposed in shared memory, warp tiling"),
    GemmKernel("dbuf", "gemm/06_dbuf.cu", "spla_gemm_dbuf", (128, 128, 16), (256, 1), (128, 128), True,
               description="regblock + double-buffered cp.async tiles, one barrier per k-tile"),
    GemmKernel("tf32", "gemm/07_tf32.cu", "spla_gemm_tf32", (128, 128, 32, 64, 64, 3), (128, 1), (128, 128), True,
               dynamic_shared=tf32_shared_bytes(128, 128, 32, 3), precision="tf32",
               description="tensor cores (mma.sync m16n8k8 TF32), 3-stage cp.async pipeline; LOWER PRECISION"),
    GemmKernel("cublas", None, None, (), (), (), False,
               description="cuBLAS SGEMM through cupy.matmul (the anchor)"),
]
# The path in order: `spla gemm --kernel all` runs these.
KERNELS: dict[str, GemmKernel] = {k.name: checked(k) for k in _PATH}

# Kernels off the main path that `auto` chooses (small grids, long K) and
# Hopper's fast tensor-core path.
EXTRA_KERNELS: dict[str, GemmKernel] = {k.name: checked(k) for k in [
    GemmKernel("dbuf64", "gemm/06_dbuf.cu", "spla_gemm_dbuf64", (16, 3), (64, 1), (64, 64), True,
               dynamic_shared=pipelined_shared_bytes(64, 64, 16, 3),
               description="double-buffered 64x64 tiles, 3-stage cp.async, A untransposed (small grids)"),
    GemmKernel("splitk", "gemm/08_splitk.cu", "spla_gemm_splitk", (128, 32, 32, 8, 4, 3), (128, 1), (128, 32), True,
               dynamic_shared=pipelined_shared_bytes(128, 32, 32, 3), split_k_tile=32, resident_blocks=3,
               description="128x32 tiles over K slices, fp32 atomic adds into C (few tiles, long K)"),
    GemmKernel("splitk_n8", "gemm/08_splitk.cu", "spla_gemm_splitk", (256, 8, 32, 4, 4, 3), (128, 1), (256, 8), True,
               dynamic_shared=pipelined_shared_bytes(256, 8, 32, 3), split_k_tile=32, resident_blocks=2,
               description="split-K with 256x8 tiles for N <= 8"),
    # sm_90a only; raw fp32 bits (truncated by the tensor cores).
    GemmKernel("tf32_wgmma", "gemm/09_tf32_wgmma.cu", "spla_gemm_tf32_wgmma", (), (WGMMA_THREADS, 1),
               (WGMMA_BM, WGMMA_BN), True, dynamic_shared=WGMMA_SHARED_BYTES, precision="tf32",
               tf32_rounding="truncate", k_major_b=True,
               description="wgmma m64n256k8 TF32 from 128B-swizzled shared tiles, 4-stage cp.async, "
                           "B transposed per call; sm_90a; LOWER PRECISION"),
]}

ALL_KERNELS: dict[str, GemmKernel] = {**KERNELS, **EXTRA_KERNELS}
KERNEL_NAMES = (*ALL_KERNELS, "auto")
CPU_KERNELS = ("auto", "numpy")

AUTO_FP32 = "dbuf"
AUTO_FP32_SMALL = "dbuf64"
AUTO_SPLITK = "splitk"
AUTO_SPLITK_NARROW = "splitk_n8"
AUTO_MIN_BLOCKS_PER_SM = 2
SPLITK_MIN_K = 1024
SPLITK_NARROW_N = 8
SPLITK_MIN_TILES_PER_SLICE = 4   # keeps each slice's cp.async pipeline busy past its fill
AUTO_FP64 = "cublas"
DEFAULT_MULTIPROCESSORS = 132  # H200; the rule's SM count when the caller has no device to ask


def auto_kernel(dtype, shape=None, multiprocessors=None) -> str:
    """The kernel ``"auto"`` means for ``dtype`` and an (M, N, K) product (see the module docstring)."""
    if np.dtype(dtype) != np.float32:
        return AUTO_FP64
    if shape is None:
        return AUTO_FP32
    M, N, K = shape
    sms = multiprocessors or DEFAULT_MULTIPROCESSORS
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
    sms = multiprocessors or DEFAULT_MULTIPROCESSORS
    wanted = ceil_div(sms * kernel.resident_blocks, tiles)
    slices = max(1, min(wanted, k_tiles // SPLITK_MIN_TILES_PER_SLICE))
    per_slice = ceil_div(k_tiles, slices)
    return ceil_div(k_tiles, per_slice), per_slice


def resolve_kernel(kernel, dtype, shape=None, multiprocessors=None) -> GemmKernel:
    """The registry entry ``kernel`` names for operands of ``dtype``.

    ``kernel`` is a name of :data:`ALL_KERNELS`, ``"auto"`` (:func:`auto_kernel`
    on ``shape`` = (M, N, K)) or a :class:`GemmKernel` (a benchmark variant).
    """
    dtype = np.dtype(dtype)
    if isinstance(kernel, GemmKernel):
        entry = checked(kernel)
    else:
        if kernel == "auto":
            kernel = auto_kernel(dtype, shape, multiprocessors)
        if kernel not in ALL_KERNELS:
            raise KernelError(f"unknown GEMM kernel {kernel!r}; choose one of {', '.join(KERNEL_NAMES)}")
        entry = ALL_KERNELS[kernel]
    if entry.is_spla and dtype != np.float32:
        raise KernelError(f"GEMM kernel {entry.name!r} is float32 only; use kernel='cublas' (or 'auto') for {dtype}")
    return entry


def grid_for(kernel: GemmKernel, M: int, N: int) -> tuple:
    """Blocks of the launch for an M x N output (x over columns, y over rows)."""
    grid = (ceil_div(N, kernel.tile[1]), ceil_div(M, kernel.tile[0]))
    if grid[1] > MAX_GRID_Y:
        raise KernelError(f"{kernel.name}: M = {M} needs {grid[1]} row blocks, over CUDA's grid.y limit "
                          f"{MAX_GRID_Y}; split the product")
    return grid


@dataclass(frozen=True)
class GemmPlan:
    """How one (M, N, K) product of ``dtype`` runs: the kernel, its grid and split-K slices.

    ``K`` is the reduction length the kernel sees (rounded up to a multiple of
    4 for float4 kernels); ``grid`` is empty for cuBLAS, the wgmma kernel and
    empty products; ``slices``/``per_slice`` are 0 unless the kernel is split-K.
    """

    kernel: GemmKernel
    dtype: np.dtype
    M: int
    N: int
    K: int
    grid: tuple = ()
    slices: int = 0
    per_slice: int = 0

    @property
    def name(self) -> str:
        return self.kernel.name


def plan_gemm(kernel, dtype, shape, multiprocessors=None) -> GemmPlan:
    """The plan of ``C = A @ B`` for A (M x K), B (K x N) of ``dtype``.

    ``multiprocessors`` is the SM count of the device that will run it (the
    CUDA backend's ``multiprocessor_count()``); None uses
    :data:`DEFAULT_MULTIPROCESSORS`.
    """
    M, N, K = (int(v) for v in shape)
    entry = resolve_kernel(kernel, dtype, (M, N, K), multiprocessors)
    dtype = np.dtype(dtype)
    if not entry.is_spla or M == 0 or N == 0 or entry.k_major_b:
        return GemmPlan(entry, dtype, M, N, K)
    K_run = round_up4(K) if entry.vector_loads else K
    grid = grid_for(entry, M, N)
    if entry.split_k_tile and K_run:
        slices, per_slice = split_k_slices(entry, M, N, K_run, multiprocessors)
        return GemmPlan(entry, dtype, M, N, K_run, grid, slices, per_slice)
    return GemmPlan(entry, dtype, M, N, K_run, grid)

