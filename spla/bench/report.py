"""What the SpMV and SpMM reports share: kernel lists, the check-then-time loop,
the text table and JSON output.

Every row is set beside an anchor measured in the same run: SciPy on the CPU,
the lean cuSPARSE call on the GPU, where rows also get the fraction of the
measured device-to-device copy bandwidth. Results are checked with the one
correctness model of :mod:`spla.bench.check` before they are timed.
"""

from __future__ import annotations

import json
import platform

import numpy as np

from .. import device as _device
from ..errors import InputError, KernelError, SplaError
from ..planning.spmv import KERNELS, parse_kernel
from . import check, timing

CPU_KERNEL = "scipy"
GPU_ANCHOR = "cusparse"
DEFAULT_REPEAT = {"cpu": 20, "gpu": 100}
X_SEED = 12345
TOLERANCE = check.TOLERANCE


resolve_device = _device.resolve_device


def gpu_kernels() -> tuple:
    """Every name ``spla.spmv`` accepts on the GPU (``spla.planning.spmv.KERNELS``)."""
    return tuple(KERNELS)


def cpu_kernel_names(kernel: str) -> list:
    """The CPU kernels a report runs for a ``--kernel`` the CPU accepts, anchor first: SciPy's
    kernel, then spla's (``auto``, :mod:`spla.backends.cpu`) unless ``--kernel scipy``;
    KernelError for any other name. The SpMV and SpMM reports share this."""
    if kernel not in ("auto", "all", CPU_KERNEL):
        raise KernelError(f"kernel {kernel!r} runs on the GPU; on the CPU the kernels are auto and "
                          f"{CPU_KERNEL!r} (or all)")
    return [CPU_KERNEL] if kernel == CPU_KERNEL else [CPU_KERNEL, "auto"]


def kernel_names(device: str, kernel: str) -> list:
    """The kernels a report runs for ``--kernel``, anchor first."""
    if device == "cpu":
        return cpu_kernel_names(kernel)
    if kernel == "all":
        chosen = list(gpu_kernels())
    else:
        parse_kernel(kernel)  # raises KernelError naming the choices; accepts "warp:8"
        chosen = [kernel]
    return [GPU_ANCHOR] + [name for name in chosen if name != GPU_ANCHOR]


def device_name(device: str) -> str:
    if device == "gpu":
        return _device.device_name()
    from ..backends.cpu import threads

    return f"{platform.processor() or platform.machine()} CPU ({threads()} threads)"


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
                    tolerance: float, error) -> list:
    """Check then time ``run(name)`` for each kernel name; one row dict per kernel.

    ``run(name)`` computes the product with that kernel; ``error(result)``
    measures it against ``reference`` (the scaled error of
    :mod:`spla.bench.check`), ``ok`` when within ``tolerance``; then
    it is timed with :func:`spla.bench.time_on`. A kernel that raises SplaError
    gets a row with ``error`` instead, unless it is the anchor (``names[0]``) or
    the only kernel asked for: without those there is no report to give.
    Shared by the SpMV and SpMM reports, whose rows have the same layout.
    """
    rows = []
    for name in names:
        try:
            result = run(name)
            err = error(result)
            timed = timing.time_on(device, lambda name=name: run(name), repeat=repeat)
        except SplaError as exc:
            if name == names[0] or len(names) == 1:
                raise
            rows.append({"kernel": name, "failed": str(exc)})
            continue
        rate = timing.throughput(timed.median, flops, nbytes)
        rows.append({
            "kernel": name, "ms": timed.ms, "min_ms": timed.min * 1e3, "max_ms": timed.max * 1e3,
            "gflops": rate["gflops"], "gbps": rate["gbps"], "error": err,
            "ok": bool(err <= tolerance),
        })
    return rows


def table_lines(report: dict, extra_head=(), extra_cells=None) -> list:
    """The rows of a report as aligned text lines: header, rule, one line per kernel.

    Columns: kernel, ms, GFLOP/s, GB/s, vs anchor, then ``extra_head`` (filled
    per row by ``extra_cells(row)``), then on the GPU % of copy bandwidth, then
    the scaled error and check. A failed kernel gets one unaligned line with its
    error. Shared by ``spla spmv`` and ``spla spmm``.
    """
    gpu = report["device"] == "gpu"
    head = ["kernel", "ms", "GFLOP/s", "GB/s", f"vs {report['anchor']}", *extra_head] \
        + (["% copy BW"] if gpu else []) + ["error/|A||x|", "check"]
    table = [head]
    for row in report["rows"]:
        if "failed" in row:
            table.append([row["kernel"], "failed: " + row["failed"]])
            continue
        cells = [row["kernel"], f"{row['ms']:.4f}", f"{row['gflops']:.2f}", f"{row['gbps']:.1f}",
                 f"{row['speedup_vs_anchor']:.2f}x"]
        if extra_cells is not None:
            cells += extra_cells(row)
        if gpu:
            cells.append(f"{100 * row['fraction_of_copy']:.1f}%")
        cells += [f"{row['error']:.2e}", "ok" if row["ok"] else "WRONG"]
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
