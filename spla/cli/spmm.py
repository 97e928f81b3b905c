"""``spla spmm``: throughput of Y = A @ X for a dense block X of k columns.

The report mirrors ``spla spmv`` (spla/report.py): each kernel runs on the same
random X (fixed seed, values in [-1, 1)), is checked against a float64 SciPy
product and timed (median of repeats); rows give ms, GFLOP/s (2*nnz*k/t),
effective GB/s (A once, X and Y once: ``spla.bench.spmv_bytes(..., k=k)``),
the speed-up over the anchor measured in the same run (SciPy on the CPU,
cuSPARSE SpMM on the GPU) and over k separate SpMVs (k times one ``auto``
SpMV on one column of X, timed in the same run).
"""

from __future__ import annotations

import click
import numpy as np

from . import main
from .. import bench, cuda, io
from ..bench import report
from ..errors import InputError, KernelError
from .spmv import (SOURCE_HELP, _describe_load, _echo_device, _fail_if_wrong, _json_load_info, device_option,
                   dtype_option, no_cache_option, repeat_option)

CPU_KERNEL = report.CPU_KERNEL  # one CPU kernel (SciPy) for SpMV and SpMM
GPU_ANCHOR = "cusparse"
X_SEED = 12345
MAX_K = 256


def gpu_kernels() -> list:
    from ..backend import spmm_cuda

    return list(spmm_cuda.KERNELS)


def kernel_names(device: str, kernel: str) -> list:
    """The kernels a report runs for ``--kernel``, anchor first."""
    if device == "cpu":
        return report.cpu_kernel_names(kernel)
    known = gpu_kernels()
    if kernel == "all":
        chosen = known
    elif kernel in known:
        chosen = [kernel]
    else:
        raise KernelError(f"unknown SpMM kernel {kernel!r}; choose one of {', '.join(known)} or all")
    return [GPU_ANCHOR] + [name for name in chosen if name != GPU_ANCHOR]


def spmm_report(A, *, k: int = 8, device: str = "cpu", kernel: str = "auto", dtype="float32",
                order: str = "C", repeat: int | None = None, seed: int = X_SEED, source: str | None = None) -> dict:
    """Measure Y = A @ X for each kernel; return the report as a dict.

    Parameters
    ----------
    A : CSRMatrix or anything :func:`spla.as_csr` accepts
    k : int
        Columns of X (1..256).
    device, kernel, dtype, repeat, seed, source
        As :func:`spla.report.spmv_report`.
    order : 'C' | 'F'
        Memory order of X.

    Returns
    -------
    dict
        The keys of ``spmv_report`` plus ``k``, ``order``, ``spmv_ms`` (one
        ``auto`` SpMV) and per row ``speedup_vs_spmvs`` (k * spmv_ms / ms).

    See Also
    --------
    scipy.sparse.csr_matrix.dot, cupyx.scipy.sparse.csr_matrix.dot
    """
    from ..csr import as_csr
    from ..matmat import spmm
    from ..matvec import spmv

    device = report.resolve_device(device)
    dtype = report.check_dtype(dtype)
    if not 1 <= int(k) <= MAX_K:
        raise InputError(f"k must be in 1..{MAX_K}, got {k}")
    if order not in ("C", "F"):
        raise InputError(f"order must be C or F, got {order!r}")
    k = int(k)
    names = kernel_names(device, kernel)
    repeat = report.check_repeat(device, repeat)

    A = as_csr(A).to_host()
    A_run = A.astype(dtype)
    X = np.random.default_rng(seed).uniform(-1.0, 1.0, (A.n_cols, k)).astype(dtype)
    X = np.asfortranarray(X) if order == "F" else np.ascontiguousarray(X)
    reference = A.astype(np.float64).to_scipy() @ X.astype(np.float64)
    nbytes = bench.spmv_bytes(A.n_rows, A.n_cols, A.nnz, value_bytes=dtype.itemsize,
                              index_bytes=A_run.index_dtype.itemsize, k=k)
    flops = bench.spmv_flops(A.nnz, k)
    out = {
        "device": device, "device_name": report.device_name(device), "dtype": dtype.name,
        "index_dtype": A_run.index_dtype.name, "k": k, "order": order, "repeat": repeat, "anchor": names[0],
        "matrix": {"source": source, "rows": A.n_rows, "cols": A.n_cols, "nnz": A.nnz},
        "bytes": nbytes, "flops": flops, "x_seed": seed, "tolerance": report.TOLERANCE[dtype.name],
    }
    if device == "gpu":
        cupy = cuda.require_cupy()
        A_side, X_side = A_run.to_device(), cupy.asarray(X, order=order)
        out["copy_bandwidth_gbps"] = bench.copy_bandwidth_gbps()
        column = cupy.ascontiguousarray(X_side[:, 0])
    else:
        A_side, X_side = A_run, X
        column = np.ascontiguousarray(X[:, 0])
    out["spmv_ms"] = bench.time_on(device, lambda: spmv(A_side, column, kernel="auto"), repeat=repeat).ms

    def run(name):
        # the CPU row is named "scipy" (the anchor) and runs spla.spmm's default CPU path
        return spmm(A_side, X_side, kernel="auto" if device == "cpu" else name)

    rows = report.measure_kernels(names, run, reference, device=device, repeat=repeat, flops=flops,
                                  nbytes=nbytes, tolerance=report.TOLERANCE[dtype.name],
                                  error=lambda Y: bench.scaled_error(A, X, reference, Y))
    anchor_ms = rows[0]["ms"]
    for row in rows:
        if "ms" in row:
            row["speedup_vs_anchor"] = anchor_ms / row["ms"] if row["ms"] else float("nan")
            row["speedup_vs_spmvs"] = k * out["spmv_ms"] / row["ms"] if row["ms"] else float("nan")
            if device == "gpu":
                row["fraction_of_copy"] = row["gbps"] / out["copy_bandwidth_gbps"]
    out["rows"] = rows
    if device == "gpu":
        out["plan"] = adaptive_summary(A_side, k)
    return out


def adaptive_summary(A_dev, k: int) -> list:
    """What ``adaptive`` (and, for k <= 16, ``fused``) does with this matrix at this k."""
    from ..backend import spmm_cuda

    lines = spmm_cuda.schedule_for(A_dev).summary(k, A_dev.dtype)
    if k <= spmm_cuda.REGK_MAX_K:
        lines += spmm_cuda.fused_for(A_dev).summary(k, A_dev.dtype)
    return lines


def format_spmm_report(r: dict) -> str:
    """The report as an aligned text table (the layout of ``spla spmv``'s, plus "vs k SpMVs")."""
    lines = report.table_lines(r, extra_head=[f"vs {r['k']} SpMVs"],
                               extra_cells=lambda row: [f"{row['speedup_vs_spmvs']:.2f}x"])
    m = r["matrix"]
    title = (f"SpMM Y = A @ X (k={r['k']}, {r['order']}-order X) on {r['device_name']}, {r['dtype']} values / "
             f"{r['index_dtype']} indices, median of {r['repeat']} runs; bytes model {r['bytes'] / 1e6:.1f} MB, "
             f"{m['nnz']:,} nnz; one auto SpMV {r['spmv_ms']:.4f} ms; error vs SciPy float64 "
             f"(tolerance {r['tolerance']:g})")
    text = title + "\n" + "\n".join(lines)
    if r.get("plan"):
        text += "\nadaptive schedule:\n" + "\n".join("  " + line for line in r["plan"])
    return text


@main.command("spmm", epilog=SOURCE_HELP)
@click.argument("source")
@click.option("--k", "k", type=click.IntRange(1, MAX_K), default=8, show_default=True,
              help="Columns of the dense block X.")
@device_option()
@click.option("--kernel", default="auto", show_default=True,
              help="GPU: regk, warp, subwarp, adaptive, adaptive-sparse, fused, fused16, fused-sparse, spmv-loop, "
                   "cusparse, cusparse-cupy, "
                   "auto or all (cuSPARSE SpMM is always measured as the anchor). CPU: scipy (auto and all mean "
                   "scipy).")
@dtype_option("A and X")
@click.option("--order", type=click.Choice(["C", "F"]), default="C", show_default=True,
              help="Memory order of X (F: column-major, as Fortran/cuSPARSE's default).")
@repeat_option()
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@no_cache_option()
def spmm_command(source, k, device, kernel, dtype, order, repeat, as_json, no_cache):
    """Measure sparse matrix times dense block Y = A @ X (k columns) on SOURCE.

    Runs each kernel on a random X (fixed seed), checks Y against SciPy in
    float64 and prints median time, GFLOP/s, effective GB/s, the speed-up
    over the anchor (cuSPARSE SpMM on the GPU, SciPy on the CPU) and over k
    separate SpMVs, and on the GPU the adaptive schedule (row groups, long-row
    segments, dense panels).

    \b
    Examples:
      spla spmm gen:poisson2d:1024 --k 8
      spla spmm gen:blockdense:200000:200:20000:0.5 --k 32 --device gpu --kernel all
      spla spmm matrices/web-Google.mtx.gz --k 16 --order F --json
    """
    chosen = report.resolve_device(device)
    names = kernel_names(chosen, kernel)  # reject a bad --kernel before the (slow) load
    A = io.load(source, cache=not no_cache)
    if not as_json:
        _echo_device(device, chosen)
        click.echo(_describe_load(A))
        click.echo()
    measured = spmm_report(A, k=k, device=chosen, kernel=kernel, dtype=dtype, order=order, repeat=repeat,
                           source=source)
    measured["kernels_requested"] = names
    if as_json:
        click.echo(report.to_json({"source": source, "device_requested": device, "load": _json_load_info(A),
                                   "spmm": measured}))
    else:
        click.echo(format_spmm_report(measured))
    _fail_if_wrong(measured)
