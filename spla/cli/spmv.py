"""``spla spmv`` (load-imbalance analysis + throughput table) and ``spla info`` (analysis alone)."""

from __future__ import annotations

import click

from .. import analysis, io
from .. import device as _device
from ..bench import report
from ..bench.spmv import format_report, spmv_report
from ..errors import SplaError
from ..planning.spmv import KERNELS, PARAMETER_HELP
from . import distributed as distributed_cli
from . import main

SOURCE_HELP = """SOURCE is a Matrix Market file (.mtx, .mtx.gz), a SNAP edge list (.txt,
.txt.gz), an .npz saved by spla, a catalogue name (web-Google, after `spla fetch
web-Google`) or a generator spec: gen:weblike (web-Google-sized synthetic graph),
gen:poisson2d:N, gen:random:N:K (see `spla generate --help`). Text files are
cached as SOURCE.spla.npz, so the second load is fast."""


# Options that ``spla spmv`` and ``spla spmm`` (and ``spla info``, for --no-cache) share, so
# their wording and defaults cannot drift apart. Each call gives a fresh decorator.
def device_option():
    return click.option("--device", type=click.Choice(["auto", "cpu", "gpu"]), default="auto", show_default=True,
                        help="Where to run: auto uses the GPU when CuPy sees one, else the CPU (and says which).")


def dtype_option(operands: str):
    """``--dtype``; ``operands`` names what it applies to in the help ("A and x")."""
    return click.option("--dtype", type=click.Choice(["float32", "float64"]), default="float32", show_default=True,
                        help=f"Value type of {operands}; the reference is float64 SciPy either way.")


def repeat_option():
    return click.option("--repeat", type=click.IntRange(min=1), default=None,
                        help="Timed runs per kernel, after warm-up; the median is reported.  "
                             "[default: 20 CPU, 100 GPU]")


def no_cache_option():
    return click.option("--no-cache", is_flag=True, help="Neither read nor write the binary load cache.")


def _echo_device(requested: str, chosen: str) -> None:
    """The ``device`` line: where the report runs, and why when --device auto picked it."""
    why = " (auto: no GPU visible)" if requested == "auto" and chosen == "cpu" else \
        (" (auto: GPU found)" if requested == "auto" else "")
    click.echo(f"device      {chosen}{why}: {report.device_name(chosen)}")


def _fail_if_wrong(measured: dict) -> None:
    """SplaError (exit 1) naming the kernels whose result missed the report's tolerance."""
    wrong = [row["kernel"] for row in measured["rows"] if row.get("ok") is False]
    if wrong:
        raise SplaError(f"results differ from SciPy beyond {measured['tolerance']:g}: "
                        f"{', '.join(wrong)}")


def _load(source: str, no_cache: bool):
    return io.load(source, cache=not no_cache)


def _describe_load(A) -> str:
    info = io.load_info(A)
    parts = [] if info.get("format") == "generated" else [info.get("format", "matrix")]
    if info.get("symmetry") and info["symmetry"] != "general":
        parts.append(f"{info['symmetry']} (expanded)")
    if info.get("duplicates_summed"):
        parts.append(f"{info['duplicates_summed']:,} duplicate entries summed")
    if info.get("duplicates_merged"):
        parts.append(f"{info['duplicates_merged']:,} duplicate edges merged")
    if info.get("note"):
        parts.append(info["note"])
    how = "from cache" if info.get("cache_hit") else ("generated" if info.get("format") == "generated" else "parsed")
    parts.append(f"{how} in {info.get('load_seconds', 0.0):.2f} s")
    return f"source      {info.get('source', '?')}: " + ", ".join(parts)


@main.command("info", epilog=SOURCE_HELP)
@click.argument("source")
@click.option("--json", "as_json", is_flag=True, help="Print the analysis as JSON.")
@click.option("--spy", "spy_path", type=click.Path(dir_okay=False), default=None,
              help="Also draw the sparsity pattern to this PNG (needs matplotlib: pip install 'spla[plot]').")
@no_cache_option()
def info_command(source, as_json, no_cache, spy_path):
    """Print the row-length statistics and load-imbalance figures of SOURCE.

    Shape, nnz, density; row length min/mean/median/max/std, coefficient of
    variation, Gini coefficient, share of nnz in the top 1% rows, empty rows;
    and the imbalance (max/mean work) and SIMD efficiency of each GPU work
    mapping (thread-per-row, warp-per-row, and the plan auto runs: segmented's
    tiles or the adaptive plan). Runs on the CPU; no GPU needed.
    """
    A = _load(source, no_cache)
    result = analysis.analyze(A)
    if spy_path:
        from .. import plots

        click.echo(f"wrote {plots.spy(A, spy_path, title=source)}", err=True)
    if as_json:
        click.echo(report.to_json({"source": source, "load": _json_load_info(A), "analysis": result}))
        return
    click.echo(_describe_load(A))
    click.echo(analysis.format_analysis(result))


def _json_load_info(A) -> dict:
    return {k: v for k, v in io.load_info(A).items() if k != "comments"}


@main.command("spmv", epilog=SOURCE_HELP)
@click.argument("source")
@device_option()
@click.option("--kernel", default="auto", show_default=True,
              help=f"GPU: one of {', '.join(KERNELS)}, or all ({PARAMETER_HELP}; the lean cuSPARSE call is "
                   "always measured as the anchor, the faster of CSR_ALG1/ALG2). CPU: auto or all (spla's CPU "
                   "SpMV, on threads from 1M nnz, beside SciPy's kernel as the anchor) or scipy alone.")
@dtype_option("A and x")
@repeat_option()
@click.option("--json", "as_json", is_flag=True, help="Print analysis and report as one JSON object.")
@no_cache_option()
@distributed_cli.distributed_option()
def spmv_command(source, device, kernel, dtype, repeat, as_json, no_cache, distributed):
    """Measure sparse matrix-vector multiply y = A @ x on SOURCE.

    Loads SOURCE, prints its load-imbalance analysis, then runs each kernel on
    a random x (fixed seed), checks y against SciPy in float64 (error scaled
    by |A||x|) and prints a table of median time, GFLOP/s (2*nnz/t) and
    effective GB/s (bytes of values, indices, row pointer, x and y moved
    once), each beside the anchor (SciPy on the CPU, the lean cuSPARSE call on
    the GPU). On the GPU each kernel gets two times: one call from Python
    (what a loop of calls pays) and the kernel's device time.

    \b
    Examples:
      spla spmv gen:weblike                  # CPU or GPU, whichever is here
      spla spmv matrices/web-Google.mtx.gz --device gpu --kernel all
      spla spmv gen:poisson2d:2048 --dtype float64 --json
    """
    if distributed:
        return distributed_cli.run("spmv", source, device=device, dtype=dtype, repeat=repeat, as_json=as_json)
    chosen = _device.resolve_device(device)
    names = report.kernel_names(chosen, kernel)  # reject a bad --kernel before the (slow) load
    A = _load(source, no_cache)
    result = analysis.analyze(A)
    if not as_json:
        _echo_device(device, chosen)
        click.echo(_describe_load(A))
        click.echo(analysis.format_analysis(result))
        click.echo()
    measured = spmv_report(A, device=chosen, kernel=kernel, dtype=dtype, repeat=repeat, source=source)
    measured["kernels_requested"] = names
    if as_json:
        click.echo(report.to_json({"source": source, "device_requested": device, "load": _json_load_info(A),
                                   "analysis": result, "spmv": measured}))
        return
    click.echo(format_report(measured))
    if "auto" in measured:
        click.echo(auto_line(measured["auto"]))
    _fail_if_wrong(measured)


AUTO_SOURCES = {"rule": "the rule on row statistics", "measured": "measured by spla.tune in this run",
                "cached": "measured earlier on this GPU (tuning cache)"}


def auto_line(choice: dict) -> str:
    """What ``auto`` runs and why: the rule, or a measurement (this run or the tuning cache)."""
    why = AUTO_SOURCES.get(choice.get("source", "rule"), choice.get("source", "rule"))
    rule = "" if choice.get("source", "rule") == "rule" else f"; the rule picks {choice.get('rule')}"
    kernel = choice["kernel"]
    # warp:8, dia:4, staged:16: the configuration that runs
    param = choice.get("lanes", choice.get("rows_a_thread", choice.get("entries")))
    if param is not None and ":" not in kernel:
        kernel += f":{param}"
    if "structure" in choice:
        kernel += f" ({choice['structure']})"
    elif "blocks" in choice:
        kernel += (f" ({choice['blocks']} blocks of {choice['block_columns']:,} columns; predicted "
                   f"{choice['predicted_gain']:.2f}x staged)")
    elif choice.get("scattered"):
        kernel += " (scattered columns: one step a row)"
    near = f", near share {choice['near_share']:.2f}" if "near_share" in choice else ""
    if "tile_span" in choice:  # the rule read it: large packed rows
        near += f", a tile spans {choice['tile_span']:,.0f} columns"
    if "tile_lines" in choice:
        near += f" and reads {choice['tile_lines']:,.0f} lines of x"
    return f"auto runs   {kernel}: {why} (class {choice['class']}{near}{rule})"

