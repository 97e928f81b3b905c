"""CUDA GEMM and GEMV: declare the kernels of kernels/gemm/ and launch a :class:`~spla.planning.gemm.GemmPlan`.

Which kernel runs, its grid and its split-K slices are decided by
:mod:`spla.planning.gemm`; :func:`bind` only prepares the operands (contiguous,
zero-padded for float4 loads, B transposed for wgmma) and returns a launcher.
"""

from __future__ import annotations

import functools
import os
import tempfile

import numpy as np

from ...device import require_cupy
from ...errors import InputError, KernelError
from ...planning import gemm as planning
from ...planning.gemm import GemmPlan, round_up4
from .runtime import KernelSource, ceil_div, grid_1d, kernel_dir, template

# Instantiations each file provides: the registry's kernels plus the
# benchmark-side variants of spla.bench.variants (padded<0>, transposed_b,
# tf32 without its cvt), so that one compile covers every name that can run.
_OTHER_INSTANTIATIONS: dict[str, list[tuple[str, tuple]]] = {
    "gemm/03_padded.cu": [("spla_gemm_padded", (0,)), ("spla_gemm_transposed_b", (32, 0)),
                          ("spla_gemm_transposed_b", (32, 1))],
    "gemm/07_tf32.cu": [("spla_gemm_tf32", (128, 128, 32, 64, 64, 3, False))],
    "gemm/09_tf32_wgmma.cu": [("spla_gemm_tf32_wgmma_probe", ()), ("spla_gemm_transpose_pad", ())],
}
# sm_90a only (wgmma). CuPy appends its own -arch for the device after these
# options, so _wgmma_functions runs the file's probe kernel to check which
# target NVRTC really compiled for, and compiles through NVRTC directly when
# it was not sm_90a.
WGMMA_OPTIONS = ("-arch=sm_90a",)


def _declare() -> dict:
    names: dict[str, list[str]] = {}
    for entry in planning.ALL_KERNELS.values():
        if entry.file is not None and entry.function is not None:
            names.setdefault(entry.file, []).append(template(entry.function, *entry.targs))
    for file, extra in _OTHER_INSTANTIATIONS.items():
        names.setdefault(file, []).extend(template(function, *targs) for function, targs in extra)
    return {file: KernelSource(file, list(dict.fromkeys(exprs)),
                               options=WGMMA_OPTIONS if "wgmma" in file else ())
            for file, exprs in names.items()}


SOURCES = _declare()
WGMMA = SOURCES["gemm/09_tf32_wgmma.cu"]
GEMV = KernelSource("gemm/gemv.cu", [template("spla_gemm_gemv", np.float32), template("spla_gemm_gemv", np.float64)])
GEMV_WARPS_PER_BLOCK = 8


def expression(entry: planning.GemmKernel) -> str:
    """The NVRTC name expression of a registry entry."""
    if entry.function is None:
        raise KernelError(f"{entry.name} is not one of spla's kernels")
    return template(entry.function, *entry.targs)


def source_of(entry: planning.GemmKernel) -> KernelSource:
    """The declared source of an entry; KernelError when its instantiation is not declared."""
    source = SOURCES.get(entry.file)
    if source is None or expression(entry) not in source.names:
        raise KernelError(f"{entry.name}: {expression(entry)} is not declared in {entry.file}")
    return source


@functools.cache
def multiprocessor_count() -> int:
    """SMs of the current CUDA device (planning's default without one)."""
    try:
        cupy = require_cupy()
        return int(cupy.cuda.Device().attributes["MultiProcessorCount"])
    except Exception:  # noqa: BLE001  (no CuPy or no device: the rule still needs a number)
        return planning.DEFAULT_MULTIPROCESSORS


def plan(kernel, dtype, shape) -> GemmPlan:
    """``planning.gemm.plan_gemm`` with this device's SM count."""
    return planning.plan_gemm(kernel, dtype, shape, multiprocessor_count())


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


def bind(A, B, C, plan: GemmPlan, *, alpha=1.0, beta=0.0):
    """A no-argument callable that runs ``C = alpha * A @ B + beta * C`` as ``plan`` says.

    A, B and C are cupy arrays of the plan's shape and dtype; C must be
    C-contiguous. Contiguous copies, zero padding and kernel lookup happen
    once here; each call only launches. Read C only when ``beta != 0``.
    """
    cupy = require_cupy()
    if not C.flags.c_contiguous:
        raise InputError("bind() needs a C-contiguous output C")
    A = cupy.ascontiguousarray(A, dtype=plan.dtype)
    B = cupy.ascontiguousarray(B, dtype=plan.dtype)
    entry = plan.kernel
    M, K = A.shape
    N = B.shape[1]
    if M == 0 or N == 0:
        return lambda: None
    if not entry.is_spla:
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
    function = source_of(entry).function(expression(entry))
    if entry.dynamic_shared > planning.STATIC_SHARED_LIMIT:
        # Opting in above 48 KB is a per-function attribute (cudaFuncSetAttribute).
        function.max_dynamic_shared_size_bytes = entry.dynamic_shared
    grid = plan.grid
    if entry.split_k_tile:
        return _bind_split_k(cupy, plan, function, A, B, C, K, alpha, beta)
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
    from cupy_backends.cuda.libs import nvrtc

    options = list(source.options) + [f"-I{kernel_dir()}"]
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


@functools.cache
def wgmma_functions(device_id: int) -> tuple:
    """(GEMM, transpose) kernels of 09_tf32_wgmma.cu, checked to be sm_90a code on this device.

    The usual path (KernelSource with -arch=sm_90a) first; CuPy adds the
    device's -arch after spla's options, so the file's probe kernel says
    which one NVRTC honoured. When it was not sm_90a, NVRTC is called
    directly with spla's options only. Raises KernelError on non-Hopper
    devices or when neither path yields sm_90a code (the kernel would only
    write NaN).
    """
    cupy = require_cupy()
    capability = str(cupy.cuda.Device(device_id).compute_capability)
    if capability != "90":
        raise KernelError(f"tf32_wgmma needs a Hopper GPU (sm_90a wgmma); this device is sm_{capability}")
    attempts = []
    try:
        ok, arch = _wgmma_probe_ok(cupy, WGMMA.function("spla_gemm_tf32_wgmma_probe"))
        if ok:
            return WGMMA.function("spla_gemm_tf32_wgmma"), WGMMA.function("spla_gemm_transpose_pad")
        attempts.append(f"CuPy RawModule with {WGMMA.options}: compiled for __CUDA_ARCH__ {arch} without sm_90a")
    except Exception as exc:  # noqa: BLE001  (a compile error of the usual path: try the direct one)
        attempts.append(f"CuPy RawModule with {WGMMA.options}: {exc}")
    try:
        module = _compile_sm90a_with_nvrtc(cupy, WGMMA)
        ok, arch = _wgmma_probe_ok(cupy, module.get_function("spla_gemm_tf32_wgmma_probe"))
        if ok:
            return module.get_function("spla_gemm_tf32_wgmma"), module.get_function("spla_gemm_transpose_pad")
        attempts.append(f"NVRTC directly: compiled for __CUDA_ARCH__ {arch} without sm_90a")
    except Exception as exc:  # noqa: BLE001  (reported in the KernelError below)
        attempts.append(f"NVRTC directly: {type(exc).__name__}: {exc}")
    raise KernelError("tf32_wgmma: no sm_90a build; " + "; ".join(attempts))


def _bind_wgmma(cupy, entry, A, B, C, alpha, beta):
    # wgmma's tf32 B operand must be K-major, so every call first writes
    # Bt = B^T (N_pad x K_pad, zeros outside B: whole tiles, no bounds checks
    # on B) and then runs the GEMM on A and Bt. A is used as it is when K is
    # a multiple of 4 and A is 16-byte aligned (cp.async copies 16 bytes);
    # else it is copied once, here, with zero columns up to K4.
    M, K = A.shape
    N = B.shape[1]
    gemm_kernel, transpose_kernel = wgmma_functions(cupy.cuda.Device().id)
    K4 = round_up4(K)
    if K4 != K:
        padded = cupy.zeros((M, K4), dtype=A.dtype)
        padded[:, :K] = A
        A = padded
    A = _aligned16(A, cupy)
    k_pad = ceil_div(K4, planning.WGMMA_BK) * planning.WGMMA_BK
    n_pad = ceil_div(N, planning.WGMMA_BN) * planning.WGMMA_BN
    tile = planning.WGMMA_TRANSPOSE_TILE
    transpose_grid = (n_pad // tile, k_pad // tile)
    if transpose_grid[1] > planning.MAX_GRID_Y:
        raise KernelError(f"tf32_wgmma: K = {K} needs {transpose_grid[1]} transpose block-rows, over CUDA's "
                          f"grid.y limit {planning.MAX_GRID_Y}; split the product")
    Bt = cupy.empty((n_pad, k_pad), dtype=cupy.float32)
    gemm_kernel.max_dynamic_shared_size_bytes = entry.dynamic_shared
    blocks = ceil_div(M, planning.WGMMA_BM) * ceil_div(N, planning.WGMMA_BN)
    transpose_args = (np.int32(K), np.int32(N), B, np.int32(B.shape[1]), Bt, np.int32(k_pad))
    args = (np.int32(M), np.int32(N), np.int32(K4), np.float32(alpha), A, np.int32(A.shape[1]),
            Bt, np.int32(k_pad), np.float32(beta), C, np.int32(C.shape[1]))

    def launch():
        transpose_kernel(transpose_grid, (tile, 8), transpose_args)
        gemm_kernel((blocks,), entry.block, args, shared_mem=entry.dynamic_shared)

    return launch


def _bind_split_k(cupy, plan: GemmPlan, function, A, B, C, K, alpha, beta):
    # The slices add alpha * (their part of A @ B) into C with atomics, so C
    # holds beta * C first: zeros for beta == 0 (a memset: C is never read),
    # untouched for beta == 1.
    entry = plan.kernel
    M, N = C.shape
    args = (np.int32(M), np.int32(N), np.int32(K), np.float32(alpha), A, np.int32(A.shape[1]),
            B, np.int32(B.shape[1]), C, np.int32(C.shape[1]), np.int32(plan.per_slice))
    scale = C.dtype.type(beta)
    grid = (plan.grid[0], plan.grid[1], plan.slices)

    def launch():
        if beta == 0:
            C.fill(0)
        elif beta != 1:
            cupy.multiply(C, scale, out=C)
        function(grid, entry.block, args, shared_mem=entry.dynamic_shared)

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


def gemm(A, B, C, plan: GemmPlan, *, alpha=1.0, beta=0.0):
    """Run ``plan`` once: ``C = alpha * A @ B + beta * C`` (C any layout; returned).

    A C that is not C-contiguous is computed in a contiguous buffer and copied back.
    """
    cupy = require_cupy()
    work = C if C.flags.c_contiguous else cupy.empty(C.shape, dtype=C.dtype)
    if work is not C and beta != 0:
        work[...] = C
    bind(A, B, work, plan, alpha=alpha, beta=beta)()
    if work is not C:
        C[...] = work
    return C


def gemv(M, x, y, *, alpha=1.0, beta=0.0):
    """``y = alpha * M @ x + beta * y`` for a dense cupy matrix (one warp per row); y is written and returned.

    M is made C-contiguous and x cast to M's dtype; y (M's dtype, length
    ``M.shape[0]``) is read only when ``beta != 0``.
    """
    cupy = require_cupy()
    n_rows, n_cols = M.shape
    M = cupy.ascontiguousarray(M)
    x = cupy.ascontiguousarray(x, dtype=M.dtype)
    work = y if y.flags.c_contiguous else cupy.empty(n_rows, dtype=M.dtype)
    if work is not y and beta != 0:
        work[...] = y
    if n_rows:
        scalar = M.dtype.type
        function = GEMV.function(template("spla_gemm_gemv", M.dtype))
        blocks = grid_1d(n_rows * 32, 32 * GEMV_WARPS_PER_BLOCK)
        function((blocks,), (32 * GEMV_WARPS_PER_BLOCK,),
                 (np.int32(n_rows), np.int32(n_cols), scalar(alpha), M, np.int64(n_cols), x, scalar(beta), work))
    if work is not y:
        y[...] = work
    return y
