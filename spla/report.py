"""The SpMV throughput report behind ``spla spmv`` (also usable from scripts).

For one matrix, device and value dtype it runs each requested kernel on the
same random vector x (fixed seed, values in [-1, 1), never zeros), checks the
result against a float64 SciPy product on the host, times it with
:func:`spla.bench.time_on` (warm-up, repeats, median) and converts the median
to GFLOP/s and effective GB/s with the byte model of :mod:`spla.bench`, using
the matrix's real value and index widths.

Every row is set beside an anchor measured in the same run: SciPy on the CPU,
cuSPARSE (the ``cusparse`` entry of ``spla.backend.spmv_cuda.KERNELS``) on
the GPU, where rows also get the fraction of the measured device-to-device
copy bandwidth.
"""

from __future__ import annotations

import json
import platform

import numpy as np

from . import bench, cuda
from .errors import InputError, KernelError, SplaError

CPU_KERNEL = "scipy"
GPU_ANCHOR = "cusparse"
DEFAULT_REPEAT = {"cpu": 20, "gpu": 100}
X_SEED = 12345
# a result further than this from the float64 reference is flagged as wrong
TOLERANCE = {"float32": 1e-4, "float64": 1e-10}


def resolve_device(device: str) -> str:
    """'cpu' or 'gpu' from 'auto' | 'cpu' | 'gpu' (auto: the GPU when CuPy sees one)."""
    if device == "auto":
        return "gpu" if cuda.gpu_available() else "cpu"
    if device not in ("cpu", "gpu"):
        raise InputError(f"unknown device {device!r}; use auto, cpu or gpu")
    if device == "gpu":
        cuda.require_cupy()
    return device


def gpu_kernels() -> tuple:
    """Every name ``spla.spmv`` accepts on the GPU (``spla.backend.spmv_cuda.KERNELS``)."""
    from .backend import spmv_cuda

    return tuple(spmv_cuda.KERNELS)


def _check_gpu_kernel(kernel: str) -> None:
    from .backend import spmv_cuda

    spmv_cuda.parse_kernel(kernel)  # raises KernelError naming the choices; accepts "warp:8"


def cpu_kernel_names(kernel: str) -> list:
    """``[CPU_KERNEL]`` for a ``--kernel`` the CPU accepts (auto, all, scipy); KernelError otherwise.

    The CPU has one kernel for SpMV and SpMM alike, so both reports share this.
    """
    if kernel not in ("auto", "all", CPU_KERNEL):
        raise KernelError(f"kernel {kernel!r} runs on the GPU; on the CPU the kernel is "
                          f"{CPU_KERNEL!r} (or auto/all)")
    return [CPU_KERNEL]


def kernel_names(device: str, kernel: str) -> list:
    """The kernels a report runs for ``--kernel``, anchor first."""
    if device == "cpu":
        return cpu_kernel_names(kernel)
    if kernel == "all":
        chosen = list(gpu_kernels())
    else:
        _check_gpu_kernel(kernel)
        chosen = [kernel]
    return [GPU_ANCHOR] + [name for name in chosen if name != GPU_ANCHOR]


def device_name(device: str) -> str:
    if device == "gpu":
        return cuda.device_name()
    return f"{platform.processor() or platform.machine()} CPU (SciPy)"


def check_dtype(dtype) -> np.dtype:
    """``dtype`` as a NumPy dtype, or InputError unless it is float32 or float64."""
    dtype = np.dtype(dtype)
    if dtype.name not in TOLERANCE:
        raise InputError(f"dtype must be float32 or float64, got {dtype}")
    return dtype


def check_repeat(device: str, repeat: int | None) -> int:
    """Timed runs per kernel: ``repeat``, or the device's default when None; InputError below 1."""
    repeat = DEFAULT_REPEAT[device] if repeat is None else int(repeat)
    if repeat < 1:
        raise InputError(f"repeat must be at least 1, got {repeat}")
    return repeat


def measure_kernels(names, run, reference, *, device: str, repeat: int, flops: int, nbytes: int,
                    tolerance: float) -> list:
    """Check then time ``run(name)`` for each kernel name; one row dict per kernel.

    ``run(name)`` computes the product with that kernel. Its result is compared
    with ``reference`` (relative error, ``ok`` when within ``tolerance``), then
    it is timed with :func:`spla.bench.time_on`. A kernel that raises SplaError
    gets a row with ``error`` instead, unless it is the anchor (``names[0]``) or
    the only kernel asked for: without those there is no report to give.
    Shared by the SpMV and SpMM reports, whose rows have the same layout.
    """
    rows = []
    for name in names:
        try:
            result = run(name)
            error = bench.relative_error(result, reference)
            timing = bench.time_on(device, lambda: run(name), repeat=repeat)
        except SplaError as exc:
            if name == names[0] or len(names) == 1:
                raise
            rows.append({"kernel": name, "error": str(exc)})
            continue
        rate = bench.throughput(timing.median, flops, nbytes)
        rows.append({
            "kernel": name, "ms": timing.ms, "min_ms": timing.min * 1e3, "max_ms": timing.max * 1e3,
            "gflops": rate["gflops"], "gbps": rate["gbps"], "rel_error": error,
            "ok": bool(error <= tolerance),
        })
    return rows


def spmv_report(A, *, device: str = "cpu", kernel: str = "auto", dtype="float32", repeat: int | None = None,
                seed: int = X_SEED, source: str | None = None) -> dict:
    """Measure y = A @ x for each kernel; return the report as a dict.

    Parameters
    ----------
    A : CSRMatrix or anything :func:`spla.as_csr` accepts
    device : 'cpu' | 'gpu' | 'auto'
    kernel : a kernel name, 'auto' or 'all' (see :func:`kernel_names`)
    dtype : 'float32' | 'float64'
        Value type of the matrix and x; the reference is always float64.
    repeat : int, optional
        Timed runs per kernel (default 20 on the CPU, 100 on the GPU).
    seed : int
        Seed of x.

    Returns
    -------
    dict
        ``device``, ``device_name``, ``dtype``, ``index_dtype``, ``repeat``,
        ``anchor``, ``matrix`` (rows, cols, nnz, source), ``bytes``,
        ``flops``, ``copy_bandwidth_gbps`` (GPU) and ``rows``: one dict per
        kernel with ``kernel``, ``ms``, ``min_ms``, ``max_ms``, ``gflops``,
        ``gbps``, ``rel_error``, ``ok``, ``speedup_vs_anchor`` and on the
        GPU ``fraction_of_copy``, or ``error`` when the kernel failed.

    See Also
    --------
    scipy.sparse.csr_matrix.dot, cupyx.profiler.benchmark
    """
    from .csr import as_csr
    from .matvec import spmv

    device = resolve_device(device)
    dtype = check_dtype(dtype)
    names = kernel_names(device, kernel)
    repeat = check_repeat(device, repeat)

    A = as_csr(A).to_host()
    A_run = A.astype(dtype)
    x = np.random.default_rng(seed).uniform(-1.0, 1.0, A.n_cols).astype(dtype)
    reference = A.astype(np.float64).to_scipy() @ x.astype(np.float64)
    nbytes = bench.spmv_bytes(A.n_rows, A.n_cols, A.nnz, value_bytes=dtype.itemsize,
                              index_bytes=A_run.index_dtype.itemsize)
    flops = bench.spmv_flops(A.nnz)
    report = {
        "device": device,
        "device_name": device_name(device),
        "dtype": dtype.name,
        "index_dtype": A_run.index_dtype.name,
        "repeat": repeat,
        "anchor": names[0],
        "matrix": {"source": source, "rows": A.n_rows, "cols": A.n_cols, "nnz": A.nnz},
        "bytes": nbytes,
        "flops": flops,
        "x_seed": seed,
        "tolerance": TOLERANCE[dtype.name],
    }
    if device == "gpu":
        cupy = cuda.require_cupy()
        A_side, x_side = A_run.to_device(), cupy.asarray(x)
        report["copy_bandwidth_gbps"] = bench.copy_bandwidth_gbps()
    else:
        A_side, x_side = A_run, x

    rows = measure_kernels(names, lambda name: spmv(A_side, x_side, kernel=name), reference, device=device,
                           repeat=repeat, flops=flops, nbytes=nbytes, tolerance=TOLERANCE[dtype.name])
    anchor_ms = rows[0]["ms"]
    for row in rows:
        if "ms" in row:
            row["speedup_vs_anchor"] = anchor_ms / row["ms"] if row["ms"] else float("nan")
            if device == "gpu":
                row["fraction_of_copy"] = row["gbps"] / report["copy_bandwidth_gbps"]
    report["rows"] = rows
    return report


def table_lines(report: dict, extra_head=(), extra_cells=None) -> list:
    """The rows of a report as aligned text lines: header, rule, one line per kernel.

    Columns: kernel, ms, GFLOP/s, GB/s, vs anchor, then ``extra_head`` (filled
    per row by ``extra_cells(row)``), then on the GPU % of copy bandwidth, then
    relative error and check. A failed kernel gets one unaligned line with its
    error. Shared by ``spla spmv`` and ``spla spmm``.
    """
    gpu = report["device"] == "gpu"
    head = ["kernel", "ms", "GFLOP/s", "GB/s", f"vs {report['anchor']}", *extra_head] \
        + (["% copy BW"] if gpu else []) + ["rel. error", "check"]
    table = [head]
    for row in report["rows"]:
        if "error" in row:
            table.append([row["kernel"], "failed: " + row["error"]])
            continue
        cells = [row["kernel"], f"{row['ms']:.4f}", f"{row['gflops']:.2f}", f"{row['gbps']:.1f}",
                 f"{row['speedup_vs_anchor']:.2f}x"]
        if extra_cells is not None:
            cells += extra_cells(row)
        if gpu:
            cells.append(f"{100 * row['fraction_of_copy']:.1f}%")
        cells += [f"{row['rel_error']:.2e}", "ok" if row["ok"] else "WRONG"]
        table.append(cells)
    widths = [max(len(r[i]) for r in table if len(r) == len(head)) for i in range(len(head))]
    lines = []
    for r in table:
        if len(r) != len(head):
            lines.append(f"{r[0]:<{widths[0]}}  {r[1]}")
            continue
        lines.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))))
    lines.insert(1, "  ".join("-" * w for w in widths))
    return lines


def format_report(report: dict) -> str:
    """The report as an aligned text table."""
    lines = table_lines(report)
    m = report["matrix"]
    title = (f"SpMV y = A @ x on {report['device_name']}, {report['dtype']} values / {report['index_dtype']} "
             f"indices, median of {report['repeat']} runs; bytes model {report['bytes'] / 1e6:.1f} MB, "
             f"{m['nnz']:,} nnz; error vs SciPy float64 (tolerance {report['tolerance']:g})")
    return title + "\n" + "\n".join(lines)


def to_json(report: dict) -> str:
    """JSON text; non-finite floats become null so any parser reads it."""
    def clean(value):
        if isinstance(value, float) and not np.isfinite(value):
            return None
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [clean(v) for v in value]
        if isinstance(value, np.generic):
            return clean(value.item())
        return value

    return json.dumps(clean(report), indent=2)
