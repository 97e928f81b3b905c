#!/usr/bin/env python
"""SpMV kernels beside the floors of their work, and beside a plan with columns relabelled by degree.

For each matrix and dtype, in turns (device time, ``bench.time_in_turns``), every result checked
first against float64 SciPy (a floor's against its float64 sum):

  * cuSPARSE ALG1 and ALG2 (the lean call), ``auto`` and the ``--kernels`` given;
  * the floors (kernels/bench_floor.cu): streaming values and indices, gathering x at the
    indices, and both (an SpMV without rows), over the nonzeros in CSR order in staged's tiles;
    with ``--floor-shared``, the product floor again with L1 given up to shared memory;
  * with ``--relabel``, the same matrix with its columns renumbered by falling degree (hubs
    first, so they share cache lines): cuSPARSE, the ``--kernels`` and the product floor on it,
    and the gather of x into the new order a call would pay (``permute``); ``KERNEL+permute``
    is the two launches a user would run.

    PYTHONPATH=. python3 scripts/spmv_floor.py corpus:rmat-skewed:4e7 corpus:random-uniform:4e7 \\
        --dtype float32 float64 --relabel --out DIR

It asks whether a kernel that trails a target on a matrix can still gain by doing the same work
better (its time well above the product floor) or only by reading the matrix in another order (its
time at the floor: no kernel reading the nonzeros in staged's order is faster; another order may
be, as segmented's was on Kronecker products, BENCHMARKS.md session 21). ``floor.md`` gives the
floor also with the rows' own bytes (indptr read, y written) added at the stream floor's rate.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

FLOORS = ("stream", "gather", "product")
# a floor's float64 total against the total it computed, scaled by the sum of |terms|
FLOOR_TOLERANCE = {"float32": 1e-5, "float64": 1e-12}


def floor_sums(S, x: np.ndarray) -> dict:
    """Each floor's exact total and its scale (the sum of |terms|), in float64."""
    gathered = x[S.indices]
    terms = {"stream": S.data + S.indices.astype(np.float64), "gather": gathered, "product": S.data * gathered}
    return {mode: (float(t.sum()), float(np.abs(t).sum()) or 1.0) for mode, t in terms.items()}


def degree_order(S) -> np.ndarray:
    """Columns by falling number of nonzeros (ties by index): new column j is old column order[j]."""
    counts = np.bincount(S.indices, minlength=S.shape[1])
    return np.argsort(-counts, kind="stable")


def _us(record, name) -> float:
    return record["kernels"].get(name, {}).get("us", float("nan"))


def product_floor(record) -> float:
    """The product floor's time: the faster of its two launch orders that the run timed."""
    return min((v for v in (_us(record, "floor-product"), _us(record, "floor-product/per-tile")) if v == v),
               default=float("nan"))


def floor_with_rows(record) -> float:
    """The product floor plus what it leaves out, the rows' own bytes (indptr read, y written) at
    the stream floor's rate: on rows of a few entries they add a quarter or more."""
    value = np.dtype(record["dtype"]).itemsize
    index = np.dtype(record.get("index_dtype", "int32")).itemsize
    stream_rate = record["nnz"] * (value + index) / _us(record, "floor-stream")  # bytes a microsecond
    return product_floor(record) + (record["rows"] + 1) * index / stream_rate + record["rows"] * value / stream_rate


def markdown(records) -> str:
    """One row a matrix and dtype: cuSPARSE (the faster algorithm), auto and the kernel it ran, the
    product floor (the faster of its two launch orders) with and without the rows' bytes, and with
    --relabel the best relabelled run and its floor."""
    lines = ["| matrix | dtype | nnz | cuSPARSE (us) | auto (us) | product floor (us) | floor + rows (us) "
             "| floor + rows / cuSPARSE | auto / (floor + rows) | relabelled: best + permute (us) | its floor (us) |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in records:
        relabelled = [row["us"] for name, row in r["kernels"].items() if name.endswith("@degree+permute") and "us" in row]
        best = f"{min(relabelled):.1f}" if relabelled else "-"
        auto = f"{_us(r, 'auto'):.1f}" + (f" ({r['auto_runs']})" if "auto_runs" in r else "")
        bound = floor_with_rows(r)
        lines.append(f"| {Path(r['source']).stem} | {r['dtype']} | {r['nnz']:,} | {r['cusparse_us']:.1f} | {auto} "
                     f"| {product_floor(r):.1f} | {bound:.1f} | {r['cusparse_us'] / bound:.2f}x "
                     f"| {bound / _us(r, 'auto'):.2f} | {best} | {_us(r, 'floor-product@degree'):.1f} |"
                     .replace("| nan |", "| - |"))
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("sources", nargs="+", help="matrix files, gen: specs or corpus:FAMILY:NNZ")
    parser.add_argument("--kernels", nargs="+", default=["staged"], help="spla kernels beside auto (default staged)")
    parser.add_argument("--dtype", nargs="+", default=["float32"], choices=["float32", "float64"])
    parser.add_argument("--relabel", action="store_true", help="also time the matrix with columns ordered by degree")
    parser.add_argument("--floor-shared", nargs="*", type=int, default=[], metavar="BYTES",
                        help="also time the product floor with this much unused shared memory a block "
                             "(L1 taken away as by a kernel that stages its work there)")
    parser.add_argument("--floor-per-tile", action="store_true",
                        help="also time the product floor launched a block a tile (as staged), not looping")
    parser.add_argument("--save-relabelled", type=Path, metavar="DIR",
                        help="with --relabel, write each relabelled matrix to DIR/NAME-degree.npz")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--budget", type=float, default=0.05, help="seconds per timing (default 0.05)")
    parser.add_argument("--out", type=Path, help="folder for floor.json and its table, floor.md")
    args = parser.parse_args(argv)
    if args.save_relabelled and not args.relabel:
        parser.error("--save-relabelled writes the relabelled matrices: it needs --relabel")

    import cupy

    from spla import CSRMatrix, bench
    from spla.backends.cuda import floor
    from spla.bench import corpus
    from spla.ops import spmv as ops_spmv
    from spla.planning.spmv import choose_kernel

    records = []
    for source in args.sources:
        began = time.perf_counter()
        A64 = corpus.load(source, dtype=np.float64)
        S = A64.to_scipy().tocsr()
        check = bench.SpmvCheck.for_matrix(A64)
        sums = floor_sums(S, check.x)
        order = degree_order(S) if args.relabel else None
        R64 = CSRMatrix.from_scipy(S[:, order]) if args.relabel else None
        if R64 is not None and args.save_relabelled:
            import scipy.sparse as sp

            args.save_relabelled.mkdir(parents=True, exist_ok=True)
            sp.save_npz(args.save_relabelled / f"{Path(source).stem.replace(':', '-')}-degree.npz", R64.to_scipy())
        print(f"{source}: {A64.n_rows:,} x {A64.n_cols:,}, {A64.nnz:,} nnz "
              f"(loaded in {time.perf_counter() - began:.1f} s)", flush=True)
        for dtype in args.dtype:
            record = {"source": source, "dtype": dtype, "rows": A64.n_rows, "cols": A64.n_cols, "nnz": A64.nnz,
                      "kernels": {}}
            records.append(record)
            runs = {}

            def add(name, fn, error_of=None, tolerance=None):
                """Check ``fn`` (an SpMV, or a result judged by ``error_of`` against ``tolerance``)
                and time it if right."""
                row = record["kernels"][name] = {}
                if check.record(row, fn, dtype, f"{dtype} {name}", error_of, tolerance):
                    runs[name] = fn

            def matrix_runs(M, x, tag, kernels):
                out = cupy.empty(M.n_rows, dtype=dtype)
                for kernel in kernels:
                    def product(kernel=kernel):
                        return ops_spmv.spmv(M, x, kernel=kernel, out=out)
                    add(f"{kernel}{tag}", product)

            def add_floor(name, mode, M, xv, shared_bytes=0, per_tile=False):
                f = floor.Floor(mode, M.indices, M.data, xv, shared_bytes, per_tile)
                total, scale = sums[mode]

                def run_floor():
                    f.run()
                    return f.partial
                add(name, run_floor, lambda partial: abs(float(partial.sum(dtype=np.float64)) - total) / scale,
                    FLOOR_TOLERANCE[dtype])

            A = A64.astype(dtype).to_device()
            x = cupy.asarray(check.x.astype(dtype))
            matrix_runs(A, x, "", ["cusparse:1", "cusparse:2", "auto", *args.kernels])
            record["auto_runs"] = choose_kernel(A)  # what the auto run above ran (bound on A by then)
            record["index_dtype"] = str(A.index_dtype)
            for mode in FLOORS:
                add_floor(f"floor-{mode}", mode, A, x)
            for shared in args.floor_shared:
                add_floor(f"floor-product/shared={shared}", "product", A, x, shared)
            if args.floor_per_tile:
                add_floor("floor-product/per-tile", "product", A, x, per_tile=True)
            if args.relabel:
                R = R64.astype(dtype).to_device()
                perm = cupy.asarray(order.astype(A.index_dtype))
                xp = cupy.empty_like(x)
                permute = floor.permuter(perm, x, xp)

                def run_permute():
                    permute()
                    return xp
                add("permute", run_permute, lambda got: float(abs(got.get() - check.x[order].astype(dtype)).max()))
                matrix_runs(R, xp, "@degree", ["cusparse:1", "cusparse:2", *args.kernels])
                out = cupy.empty(A.n_rows, dtype=dtype)
                for kernel in args.kernels:
                    def permuted_product(kernel=kernel):
                        permute()
                        return ops_spmv.spmv(R, xp, kernel=kernel, out=out)
                    add(f"{kernel}@degree+permute", permuted_product)
                add_floor("floor-product@degree", "product", R, xp)
                for shared in args.floor_shared:
                    add_floor(f"floor-product@degree/shared={shared}", "product", R, xp, shared)

            samples = bench.time_in_turns(runs, rounds=args.rounds, budget_s=args.budget)
            anchor = min(float(np.median(samples[k])) for k in ("cusparse:1", "cusparse:2") if k in samples)
            record["cusparse_us"] = anchor * 1e3
            for name, ms in samples.items():
                us = float(np.median(ms)) * 1e3
                record["kernels"][name].update(us=us, rounds_us=[v * 1e3 for v in ms], vs_cusparse=anchor * 1e3 / us)
                print(f"  {dtype} {name:<28} {us:9.1f} us  {anchor * 1e3 / us:5.2f}x cuSPARSE  "
                      f"{A64.nnz / us / 1e3:6.1f} G nnz/s", flush=True)
        if args.out:  # after every matrix, so a run cut short keeps what it measured
            args.out.mkdir(parents=True, exist_ok=True)
            (args.out / "floor.json").write_text(json.dumps({"environment": bench.environment(),
                                                              "arguments": vars(args), "records": records},
                                                             indent=1, default=str))
            (args.out / "floor.md").write_text(markdown(records))
    return 0


if __name__ == "__main__":
    sys.exit(main())
