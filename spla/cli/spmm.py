"""``spla spmm``: throughput of Y = A @ X for a dense block X of k columns (options and formatting).

The report itself is :func:`spla.bench.spmm.spmm_report`.
"""

from __future__ import annotations

import click

from .. import io
from ..bench import report
from ..bench.spmm import MAX_K, format_spmm_report, gpu_kernels, kernel_names, spmm_report
from . import main
from .spmv import (
    SOURCE_HELP,
    _describe_load,
    _echo_device,
    _fail_if_wrong,
    _json_load_info,
    auto_line,
    device_option,
    dtype_option,
    no_cache_option,
    repeat_option,
)


@main.command("spmm", epilog=SOURCE_HELP)
@click.argument("source")
@click.option("--k", "k", type=click.IntRange(1, MAX_K), default=8, show_default=True,
              help="Columns of the dense block X.")
@device_option()
@click.option("--kernel", default="auto", show_default=True,
              help=f"GPU: {', '.join(gpu_kernels())}, fused:N (segments of N nonzeros), tune (time the "
                   "candidates on this matrix and k first, then run the winner) or all (the public kernels; "
                   "cuSPARSE SpMM is always measured as the anchor). CPU: auto or all (spla's CPU SpMM, on "
                   "threads from 1M nnz x k, beside SciPy's kernel as the anchor) or scipy alone.")
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
        if "auto" in measured:
            click.echo(auto_line(measured["auto"]))
    _fail_if_wrong(measured)
