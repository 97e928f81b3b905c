"""The GEMM benchmark: spla's kernels along the optimisation path against cuBLAS at one M x N x K.

One row per kernel: median milliseconds, TFLOP/s, the fraction of cuBLAS
SGEMM measured in the same run, and the error against a float64 reference:
judged by ``||C - ref|| / || |A| |B| ||`` per precision
(:data:`spla.bench.check.TOLERANCE`), with the plain relative errors
reported beside it. Without a GPU only NumPy runs (and the report says so).
Used by ``spla gemm`` and scripts/bench_gemm.py.
"""

from __future__ import annotations

import math

import numpy as np

from .. import bench
from ..device import array_module, device_name, gpu_available, require_cupy
from ..errors import InputError, KernelError, SplaError
from .check import TOLERANCE as SCALED_TOLERANCE
from .check import scaled_error
from .variants import gemm_kernel, gemm_names


def tolerance(precision: str, dtype="float32") -> float:
    """The scaled error a correct kernel stays under: per precision (tf32) or dtype."""
    return SCALED_TOLERANCE["tf32" if precision == "tf32" else np.dtype(dtype).name]


def errors_against(C, reference, A=None, B=None) -> dict:
    """Max-norm and Frobenius relative errors of C against a float64 reference (same module),
    and with the operands the scaled error ``||C - ref|| / || |A| |B| ||`` that judges it."""
    xp = array_module(C, reference)
    scaled = {} if A is None else {"scaled_err": scaled_error(A, B, reference, C)}
    diff = C.astype(xp.float64) - reference
    ref_max = float(xp.abs(reference).max()) if reference.size else 0.0
    ref_fro = float(xp.linalg.norm(reference)) if reference.size else 0.0
    max_err = float(xp.abs(diff).max()) if diff.size else 0.0
    fro_err = float(xp.linalg.norm(diff)) if diff.size else 0.0
    if not (math.isfinite(max_err) and math.isfinite(fro_err)):
        return {"max_rel_err": math.inf, "rel_fro_err": math.inf, "scaled_err": math.inf}
    return {"max_rel_err": max_err / ref_max if ref_max else max_err,
            "rel_fro_err": fro_err / ref_fro if ref_fro else fro_err, **scaled}


def random_operands(m: int, n: int, k: int, xp, seed: int = 0):
    """Normal float32 A (m x k) and B (k x n), generated where they will be used."""
    if xp is np:
        rng = np.random.default_rng(seed)
        return (rng.standard_normal((m, k), dtype=np.float32), rng.standard_normal((k, n), dtype=np.float32))
    state = xp.random.RandomState(seed)
    return (state.standard_normal((m, k), dtype=xp.float32), state.standard_normal((k, n), dtype=xp.float32))


def _repeat_for(seconds_per_call: float, repeat: int, budget_s: float) -> int:
    """Fewer repetitions for slow kernels so one row stays within ~budget_s."""
    if seconds_per_call <= 0:
        return repeat
    return int(max(3, min(repeat, budget_s / seconds_per_call)))


def measure_gpu(name: str, A, B, reference, *, repeat: int, budget_s: float = 2.0) -> dict:
    """Check one kernel against the reference, then time it; a row of the report."""
    cupy = require_cupy()
    from ..backends.cuda import gemm as cuda_gemm

    m, k = A.shape
    n = B.shape[1]
    plan = cuda_gemm.plan(gemm_kernel(name), np.float32, (m, n, k))
    entry = plan.kernel
    C = cupy.full((m, n), cupy.nan, dtype=cupy.float32)  # poisoned: beta = 0 must overwrite it
    launch = cuda_gemm.bind(A, B, C, plan)  # copies and padding once, outside the timing
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    start.record()
    launch()
    stop.record()
    stop.synchronize()
    first_call_s = cupy.cuda.get_elapsed_time(start, stop) / 1e3
    errors = errors_against(C, reference, A, B)
    row = {"kernel": name, "runs": entry.name, "precision": entry.precision, **errors,
           "tolerance": tolerance(entry.precision)}
    row["correct"] = bool(errors["scaled_err"] <= row["tolerance"])
    if not row["correct"]:
        row.update(ms=None, tflops=None)
        return row
    runs = _repeat_for(first_call_s, repeat, budget_s)
    timing = bench.time_gpu(launch, repeat=runs,
                            warmup=1 if runs < repeat else 3)
    row.update(ms=timing.ms, tflops=2.0 * m * n * k / timing.median / 1e12, repeat=timing.repeat)
    return row


def run(m: int, n: int, k: int, kernels, *, repeat: int = 10, device: str = "auto", seed: int = 0) -> dict:
    """Benchmark ``kernels`` at one size; returns the report dict (rows + context)."""
    for label, value in (("m", m), ("n", n), ("k", k)):
        if value < 0:
            raise InputError(f"--{label} must be >= 0, got {value}")
    if device == "auto":
        device = "gpu" if gpu_available() else "cpu"
    rows: list = []
    report = {"m": m, "n": n, "k": k, "device": device, "rows": rows}
    if device == "cpu":
        A, B = random_operands(m, n, k, np, seed)
        reference = A.astype(np.float64) @ B.astype(np.float64)
        C = np.matmul(A, B)
        timing = bench.time_cpu(lambda: np.matmul(A, B, out=C), repeat=repeat)
        row = {"kernel": "numpy", "precision": "fp32", **errors_against(C, reference, A, B),
               "tolerance": tolerance("fp32"), "ms": timing.ms,
               "tflops": 2.0 * m * n * k / timing.median / 1e12 if timing.median else None,
               "fraction_of_cublas": None}
        row["correct"] = bool(row["scaled_err"] <= row["tolerance"])
        rows.append(row)
        report["note"] = "no GPU: ran NumPy only (spla's GEMM kernels and cuBLAS need CuPy and a CUDA device)"
        return report

    cupy = require_cupy()
    for name in kernels:
        gemm_kernel(name)  # unknown names fail before any work
    A, B = random_operands(m, n, k, cupy, seed)
    reference = cupy.matmul(A.astype(cupy.float64), B.astype(cupy.float64))
    anchor = measure_gpu("cublas", A, B, reference, repeat=repeat)
    report.update(gpu=device_name(), cupy=cupy.__version__, cublas_tflops=anchor["tflops"])
    for name in kernels:
        row = anchor if name == "cublas" else measure_gpu(name, A, B, reference, repeat=repeat)
        row = dict(row)
        row["fraction_of_cublas"] = (row["tflops"] / anchor["tflops"]
                                     if row.get("tflops") and anchor.get("tflops") else None)
        rows.append(row)
    return report


def format_table(report: dict) -> str:
    header = ["kernel", "ms", "TFLOP/s", "of cuBLAS", "max rel err", "scaled err", "status"]
    lines = []
    for row in report["rows"]:
        frac = row.get("fraction_of_cublas")
        lines.append([
            row["kernel"],
            "-" if row.get("ms") is None else f"{row['ms']:.3f}",
            "-" if row.get("tflops") is None else f"{row['tflops']:.2f}",
            "-" if frac is None else f"{100 * frac:.1f}%",
            f"{row['max_rel_err']:.1e}",
            f"{row.get('scaled_err', math.nan):.1e}",
            ("ok" if row["correct"] else "WRONG") + (" (tf32)" if row.get("precision") == "tf32" else ""),
        ])
    widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(header)]
    out = [f"GEMM {report['m']}x{report['n']}x{report['k']} on {report.get('gpu', 'CPU (NumPy)')}"]
    out.append("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    out.extend("  ".join(c.ljust(w) for c, w in zip(line, widths)) for line in lines)
    return "\n".join(out)


def roofline_plot(report: dict, path: str, bandwidth_gbps: float | None) -> None:
    """Kernels' TFLOP/s against the memory roof (measured copy bandwidth) and the compute roof:
    the cuBLAS rate on the GPU, NumPy's BLAS rate on the CPU."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise SplaError("--plot needs matplotlib (pip install 'spla[plot]')") from None
    m, n, k = report["m"], report["n"], report["k"]
    intensity = 2.0 * m * n * k / (4.0 * (m * k + k * n + m * n))  # flops per compulsory byte
    fig, ax = plt.subplots(figsize=(7, 4.5))
    xs = np.logspace(-1, max(3.0, math.log10(intensity) + 1), 200)
    peak = report.get("cublas_tflops") or max((row.get("tflops") or 0.0 for row in report["rows"]
                                               if row["kernel"] == "numpy"), default=0.0)
    peak_name = "cuBLAS" if report.get("cublas_tflops") else "NumPy BLAS"
    if bandwidth_gbps:
        roof = xs * bandwidth_gbps / 1e3
        if peak:
            roof = np.minimum(roof, peak)
        ax.plot(xs, roof, "k-", label=f"roof: {bandwidth_gbps / 1e3:.3g} TB/s copy, {peak_name} rate")
    if peak:
        ax.axhline(peak, color="grey", ls=":", lw=1)
    for row in report["rows"]:
        if row.get("tflops"):
            ax.plot([intensity], [row["tflops"]], "o")
            ax.annotate(row["kernel"], (intensity, row["tflops"]), textcoords="offset points", xytext=(6, 0),
                        fontsize=8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (flop / compulsory byte)")
    ax.set_ylabel("TFLOP/s")
    ax.set_title(f"GEMM {m}x{n}x{k} on {report.get('gpu', 'CPU')}")
    if bandwidth_gbps:
        ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)




def kernel_choices(device: str, kernel: str) -> list:
    """The kernels ``--kernel`` names on ``device``: the path for "all", NumPy on the CPU."""
    if device == "gpu":
        from ..planning.gemm import KERNELS

        if kernel == "all":
            return list(KERNELS)
        gemm_kernel(kernel)
        return [kernel]
    if kernel not in ("all", "auto", "numpy"):
        raise KernelError(f"kernel {kernel!r} needs a GPU; without one only NumPy runs (--kernel all or numpy)")
    return ["numpy"]


__all__ = ["errors_against", "format_table", "gemm_names", "kernel_choices", "measure_gpu", "random_operands",
           "roofline_plot", "run", "tolerance", "InputError"]
