"""``spla gemm``: time the GEMM kernels of the optimisation path against cuBLAS (options and formatting).

The benchmark itself is :mod:`spla.bench.gemm`.
"""

from __future__ import annotations

import json

import click

from .. import bench
from ..bench.gemm import format_table, gemm_names, kernel_choices, roofline_plot, run
from ..device import resolve_device
from ..errors import SplaError
from . import main


@main.command("gemm")
@click.option("--m", "m", type=click.IntRange(min=1), default=1024, show_default=True, help="rows of A and C")
@click.option("--n", "n", type=click.IntRange(min=1), default=1024, show_default=True, help="columns of B and C")
@click.option("--k", "k", type=click.IntRange(min=1), default=1024, show_default=True,
              help="columns of A, rows of B")
@click.option("--kernel", default="all", show_default=True,
              help=f"a GEMM kernel: {', '.join(gemm_names())}; or 'all' (the path naive ... tf32, and cublas); "
                   "without a GPU only numpy runs")
@click.option("--repeat", type=click.IntRange(1), default=10, show_default=True, help="timed runs per kernel")
@click.option("--device", type=click.Choice(["auto", "gpu", "cpu"]), default="auto", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="print the report as JSON")
@click.option("--plot", type=click.Path(dir_okay=False), default=None, help="write a roofline plot (needs matplotlib)")
def gemm_command(m, n, k, kernel, repeat, device, as_json, plot):
    """Time GEMM kernels (by default the path naive ... tf32) against cuBLAS at one M x N x K."""
    if plot:
        try:
            import matplotlib  # noqa: F401  (fail before the benchmark, not after it)
        except ImportError:
            raise SplaError("--plot needs matplotlib (pip install 'spla[plot]')") from None
    device = resolve_device(device)
    kernels = kernel_choices(device, kernel)
    report = run(m, n, k, kernels, repeat=repeat, device=device)
    if plot:
        bandwidth = bench.copy_bandwidth_gbps() if report["device"] == "gpu" else bench.host_copy_bandwidth_gbps()
        roofline_plot(report, plot, bandwidth)
        report["plot"] = plot
    if as_json:
        click.echo(json.dumps(report, indent=2))
        return
    if report.get("note"):
        click.echo(report["note"])
    click.echo(format_table(report))
