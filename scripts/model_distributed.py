"""Predict strong and weak scaling of spla.distributed SpMV and CG on 2-64 GPUs.

The model (one SpMV on P GPUs, GPUS_PER_NODE to a node):

    t_spmv = t_launch + t_pack + max(t_diag, t_exchange) + t_offdiag
    t_diag + t_offdiag = bytes moved by the local CSR SpMV / (HBM bandwidth * efficiency)
    t_exchange = max(intra-node: messages * NVLink latency + bytes / NVLink bandwidth,
                     inter-node: messages * IB latency + bytes / IB bandwidth)
    t_cg_iteration = t_spmv + 2 allreduces (latency * log2 of GPUs and nodes) + vector work (10 passes)

The exchange volume is not guessed: a small instance of each matrix is
generated, split by spla.distributed's own nnz-balanced partition
(``balanced_partition``) and every rank's ghost columns, neighbours and
off-diagonal nnz are counted; those counts are then scaled analytically to
the large problem: ghost planes grow as N^(d-1) for a d-dimensional stencil,
and for an RMAT graph the expected number of distinct columns a rank's edges
touch is summed over RMAT's column-probability classes, calibrated by the
ratio of measured to predicted ghosts on the small instance.

Bandwidths, latencies and SpMV efficiencies are parameters: measure the
per-GPU figure with ``spla spmv gen:poisson3d:N --device gpu`` (effective
GB/s over the copy bandwidth) and pass it as ``--stencil-efficiency`` /
``--graph-efficiency``.

Run: ``python scripts/model_distributed.py`` (tables), ``--markdown`` (a
BENCHMARKS.md section), ``--json``, ``--quick`` (small instances, P <= 8, for tests).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from math import comb
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from spla.distributed.matrix import balanced_partition  # noqa: E402
from spla.io.generators import rmat  # noqa: E402

RMAT_ABCD = (0.57, 0.19, 0.19, 0.05)


@dataclass
class Machine:
    hbm_gbs: float = 4200.0          # device copy bandwidth (DESIGN.md: 4.13-4.28 TB/s on the H200)
    stencil_efficiency: float = 0.80  # fraction of it a stencil CSR SpMV reaches
    graph_efficiency: float = 0.40    # power-law graphs: scattered x reads
    nvlink_gbs: float = 900.0         # per GPU, within a node
    nvlink_latency_us: float = 3.0
    ib_gbs: float = 50.0              # per GPU across nodes (one 400 Gb/s NDR port per GPU)
    ib_latency_us: float = 5.0
    gpus_per_node: int = 8
    launch_us: float = 8.0            # host cost of one distributed SpMV's launches (pack, diag, offdiag)
    allreduce_latency_us: float = 10.0  # one small NCCL allreduce step (per log2 level)
    value_bytes: int = 8
    index_bytes: int = 4


@dataclass
class Layout:
    """Per-rank figures of the slowest (most ghosts) rank for one P."""

    rows: float
    nnz: float
    ghosts: float
    offdiag_nnz: float
    neighbours: int
    off_node_share: float  # share of the ghost volume that crosses nodes


def measure(A, parts: int, gpus_per_node: int):
    """Ghosts, neighbours and off-diagonal nnz of every rank under the nnz-balanced split (the library's)."""
    A = A.tocsr()
    offsets = balanced_partition(A.indptr, parts)
    out = []
    for r in range(parts):
        lo, hi = offsets[r], offsets[r + 1]
        cols = A.indices[A.indptr[lo]:A.indptr[hi]]
        off = (cols < lo) | (cols >= hi)  # square: x is split like the rows
        ghosts = np.unique(cols[off])
        owners = np.searchsorted(offsets, ghosts, side="right") - 1
        per_owner = np.bincount(owners, minlength=parts)
        node = r // gpus_per_node
        off_node = per_owner[np.arange(parts) // gpus_per_node != node].sum()
        out.append({"rows": int(hi - lo), "nnz": int(A.indptr[hi] - A.indptr[lo]), "ghosts": int(ghosts.size),
                    "offdiag_nnz": int(off.sum()), "neighbours": int((per_owner > 0).sum()),
                    "off_node_share": float(off_node / max(ghosts.size, 1))})
    return out


def stencil(n: int, dims: int, points: int):
    """The pattern of a 5-point (2D) or 27-point (3D) stencil on an n^dims grid (values 1)."""
    one = sp.diags([1.0, 1.0, 1.0], [-1, 0, 1], shape=(n, n), format="csr", dtype=np.float64)
    if dims == 2 and points == 5:
        eye = sp.eye(n, format="csr")
        return (sp.kron(one, eye) + sp.kron(eye, one)).tocsr()
    if dims == 3 and points == 27:
        return sp.kron(sp.kron(one, one), one).tocsr()
    raise ValueError(f"no {points}-point stencil in {dims}D here")


def stencil_layouts(small: list, n_small: int, n_large: int, dims: int, points: int, parts: int) -> list:
    """Every rank's layout: ghosts and off-diagonal nnz scaled by (n_large / n_small)^(dims - 1), rows by volume."""
    surface = (n_large / n_small) ** (dims - 1)
    rows = n_large ** dims / parts
    return [Layout(rows, rows * points, s["ghosts"] * surface, s["offdiag_nnz"] * surface, s["neighbours"],
                   s["off_node_share"]) for s in small]


def rmat_column_classes(scale: int):
    """(count, probability) of RMAT's column classes: a column with k one-bits is drawn with (b+d)^k (a+c)^(s-k)."""
    a, b, c, d = RMAT_ABCD
    k = np.arange(scale + 1)
    counts = np.array([comb(scale, int(i)) for i in k], dtype=np.float64)
    return counts, (b + d) ** k * (a + c) ** (scale - k)


def expected_ghosts(scale: int, edges: float, parts: int) -> float:
    """Distinct columns among a rank's edges/P column draws, less the 1/P it owns."""
    counts, prob = rmat_column_classes(scale)
    draws = edges / parts
    distinct = float((counts * -np.expm1(-draws * prob)).sum())
    return distinct * (1 - 1 / parts)


def rmat_layout(small_graph, small_scale: int, scale: int, edge_factor: int, parts: int,
                gpus_per_node: int) -> Layout:
    small = measure(small_graph, parts, gpus_per_node)
    worst = max(small, key=lambda s: s["ghosts"])
    small_edges = small_graph.nnz
    calibration = worst["ghosts"] / max(expected_ghosts(small_scale, small_edges, parts), 1.0) if parts > 1 else 1.0
    kept = small_edges / (edge_factor * 2 ** small_scale)  # duplicates merged, as at the small scale
    edges = kept * edge_factor * 2.0 ** scale
    ghosts = expected_ghosts(scale, edges, parts) * calibration
    off_share = worst["offdiag_nnz"] / max(worst["nnz"], 1)
    nnz = edges / parts
    nodes = math.ceil(parts / gpus_per_node)
    off_node_share = 0.0 if nodes == 1 else (parts - gpus_per_node) / (parts - 1)
    return Layout(2.0 ** scale / parts, nnz, ghosts, nnz * off_share, parts - 1, off_node_share)


def spmv_seconds(layout: Layout, parts: int, m: Machine, efficiency: float) -> dict:
    v, i = m.value_bytes, m.index_bytes
    local_bytes = (v + i) * layout.nnz + i * (layout.rows + 1) + v * (layout.rows + layout.ghosts) + v * layout.rows
    bandwidth = m.hbm_gbs * 1e9 * efficiency
    compute = local_bytes / bandwidth
    offdiag = compute * layout.offdiag_nnz / max(layout.nnz, 1)
    diag = compute - offdiag
    pack = layout.ghosts * (i + 2 * v) / (m.hbm_gbs * 1e9)
    volume = layout.ghosts * v
    if parts == 1:
        exchange = 0.0
    else:
        intra = volume * (1 - layout.off_node_share)
        inter = volume * layout.off_node_share
        peers_off = round(layout.neighbours * layout.off_node_share)
        peers_on = layout.neighbours - peers_off
        t_intra = peers_on * m.nvlink_latency_us * 1e-6 + intra / (m.nvlink_gbs * 1e9)
        t_inter = peers_off * m.ib_latency_us * 1e-6 + inter / (m.ib_gbs * 1e9)
        exchange = max(t_intra, t_inter)
    total = m.launch_us * 1e-6 + pack + max(diag, exchange) + offdiag
    return {"compute": compute, "exchange": exchange, "pack": pack, "spmv": total, "volume_bytes": volume}


def cg_seconds(layout: Layout, parts: int, m: Machine, spmv: float) -> float:
    nodes = math.ceil(parts / m.gpus_per_node)
    levels = math.log2(min(parts, m.gpus_per_node)) + math.log2(nodes) if parts > 1 else 0.0
    allreduce = m.allreduce_latency_us * 1e-6 * (1 + levels)
    vectors = 10 * layout.rows * m.value_bytes / (m.hbm_gbs * 1e9) + 6 * 5e-6  # axpys, dots, and their launches
    return spmv + 2 * allreduce + vectors


CASES: dict[str, dict[str, Any]] = {
    "stencil27-3d": {"dims": 3, "points": 27, "small": 64, "strong": 800, "weak_rows": 64 * 2 ** 20,
                     "label": "3D 27-point stencil"},
    "stencil5-2d": {"dims": 2, "points": 5, "small": 1024, "strong": 23170, "weak_rows": 64 * 2 ** 20,
                    "label": "2D 5-point stencil"},
    # Graph500's RMAT with edge factor 17 rather than 16: 2^27 vertices then hold over 2B distinct edges
    "rmat": {"small_scale": 16, "edge_factor": 17, "strong_scale": 27, "weak_scale": 24,
             "label": "power-law graph (RMAT, Graph500 a,b,c,d)"},
}
QUICK: dict[str, dict[str, Any]] = {"stencil27-3d": {"small": 24}, "stencil5-2d": {"small": 128},
                                    "rmat": {"small_scale": 12}}


def model(machine: Machine, gpu_counts, quick: bool = False) -> dict:
    results: dict = {}
    for name, case in CASES.items():
        case = {**case, **(QUICK[name] if quick else {})}
        rows_strong: list[dict] = []
        rows_weak: list[dict] = []
        graph = None
        layouts: list = []
        if name == "rmat":
            graph = rmat(case["small_scale"], case["edge_factor"], seed=1).to_scipy()
            efficiency = machine.graph_efficiency
        else:
            small_matrix = stencil(case["small"], case["dims"], case["points"])
            efficiency = machine.stencil_efficiency
        for weak in (False, True):
            base = None
            for parts in [1, *gpu_counts]:
                if name == "rmat":
                    scale = case["weak_scale"] + int(math.log2(parts)) if weak else case["strong_scale"]
                    layout = rmat_layout(graph, case["small_scale"], scale, case["edge_factor"], parts,
                                         machine.gpus_per_node)
                    size = {"vertices": 2 ** scale, "edges": layout.nnz * parts}
                else:
                    n_large = round((case["weak_rows"] * parts) ** (1 / case["dims"])) if weak else case["strong"]
                    small = measure(small_matrix, parts, machine.gpus_per_node)
                    layouts = stencil_layouts(small, case["small"], n_large, case["dims"], case["points"], parts)
                    # the slowest rank sets the pace: often one whose neighbour sits on another node
                    layout = max(layouts, key=lambda lay: spmv_seconds(lay, parts, machine, efficiency)["spmv"])
                    size = {"rows": n_large ** case["dims"], "nnz": layout.nnz * parts}
                times = spmv_seconds(layout, parts, machine, efficiency)
                if name != "rmat":  # report the worst exchange too, even where the diagonal block hides it
                    every = [spmv_seconds(lay, parts, machine, efficiency) for lay in layouts]
                    times["exchange"] = max(t["exchange"] for t in every)
                    times["volume_bytes"] = max(t["volume_bytes"] for t in every)
                cg = cg_seconds(layout, parts, machine, times["spmv"])
                if base is None:
                    base = (times["spmv"], cg)
                scale_by = 1 if weak else parts
                row = {"gpus": parts, **size, "rows_per_gpu": layout.rows, "nnz_per_gpu": layout.nnz,
                       "ghosts_per_gpu": layout.ghosts, "neighbours": layout.neighbours, **times, "cg_iteration": cg,
                       "spmv_efficiency": base[0] / (scale_by * times["spmv"]),
                       "cg_efficiency": base[1] / (scale_by * cg)}
                (rows_weak if weak else rows_strong).append(row)
        results[name] = {"label": case["label"], "strong": rows_strong, "weak": rows_weak}
    return results


def _fmt_size(row) -> str:
    if "edges" in row:
        return f"{row['vertices'] / 1e6:,.0f}M vertices, {row['edges'] / 1e9:.2f}B edges"
    return f"{row['rows'] / 1e6:,.0f}M rows, {row['nnz'] / 1e9:.2f}B nnz"


def markdown(results: dict, machine: Machine) -> str:
    lines = ["## Distributed scaling model (predicted, not measured)", "",
             "`python scripts/model_distributed.py --markdown`: per-GPU SpMV time from the HBM bandwidth "
             f"({machine.hbm_gbs:.0f} GB/s) times an efficiency ({machine.stencil_efficiency:.2f} stencils, "
             f"{machine.graph_efficiency:.2f} graphs), ghost exchange from spla.distributed's own nnz-balanced "
             f"partition of a small generated instance scaled to the large one, NVLink {machine.nvlink_gbs:.0f} GB/s "
             f"+ {machine.nvlink_latency_us:g} us within a node of {machine.gpus_per_node} GPUs, InfiniBand "
             f"{machine.ib_gbs:.0f} GB/s + {machine.ib_latency_us:g} us between nodes; diagonal block overlapped "
             "with the exchange. Efficiency = T(1) / (P T(P)) (strong; T(1) is the modelled one-GPU time even where "
             "the matrix would not fit) and T(1) / T(P) (weak). fp64 values, int32 indices.", ""]
    for result in results.values():
        for kind in ("strong", "weak"):
            rows = result[kind]
            title = f"**{result['label']}, {kind} scaling**"
            title += f" ({_fmt_size(rows[0])})" if kind == "strong" else " (fixed size per GPU)"
            lines += [title, "", "| GPUs | problem | ghosts/GPU | exchange MB/GPU | compute ms | exchange ms | "
                      "SpMV ms | SpMV eff. | CG iter ms | CG eff. |",
                      "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
            for r in rows:
                lines.append(f"| {r['gpus']} | {_fmt_size(r)} | {r['ghosts_per_gpu']:,.0f} | "
                             f"{r['volume_bytes'] / 1e6:,.1f} | {r['compute'] * 1e3:.3f} | {r['exchange'] * 1e3:.3f} | "
                             f"{r['spmv'] * 1e3:.3f} | {r['spmv_efficiency']:.0%} | {r['cg_iteration'] * 1e3:.3f} | "
                             f"{r['cg_efficiency']:.0%} |")
            lines.append("")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    defaults = Machine()
    for field, value in vars(defaults).items():
        parser.add_argument("--" + field.replace("_", "-"), type=type(value), default=value)
    parser.add_argument("--gpus", default="2,4,8,16,32,64", help="GPU counts, comma-separated")
    parser.add_argument("--quick", action="store_true", help="small instances and P <= 8 (seconds; for tests)")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    machine = Machine(**{f: getattr(args, f) for f in vars(defaults)})
    counts = [int(p) for p in args.gpus.split(",")]
    if args.quick:
        counts = [p for p in counts if p <= 8]
    results = model(machine, counts, quick=args.quick)
    if args.json:
        print(json.dumps({"machine": vars(machine), "results": results}, indent=2))
    else:
        print(markdown(results, machine))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
