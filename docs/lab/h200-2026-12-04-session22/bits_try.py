"""Session 22 try: segmented's tiles with row ends from a bitmap (spmv_bits_try.cu), beside
segmented, auto, the product floor and the lean cuSPARSE call, each checked before it is timed.

    PYTHONPATH=. python docs/lab/h200-2026-12-04-session22/bits_try.py SOURCE ... --dtype float32 float64

Prints one line a kernel and writes --out JSON. Sources: files, gen: specs or corpus:FAMILY:NNZ.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
# (K entries a lane, blocks an SM the compiler must fit): segmented's K and a smaller tile
VARIANTS = {"float32": [(16, 4), (8, 8)], "float64": [(8, 4), (4, 8)]}


def bitmap_plan(indptr: np.ndarray, nnz: int, tile: int):
    """End bits padded to whole tiles (uint32 words) and the ends before each tile; None where the
    try does not apply (an empty row, or a row longer than a tile)."""
    lengths = np.diff(indptr)
    if lengths.size == 0 or lengths.min() == 0 or lengths.max() > tile:
        return None
    n_tiles = -(-nnz // tile)
    flags = np.zeros(n_tiles * tile, dtype=bool)
    flags[indptr[1:] - 1] = True
    words = np.packbits(flags, bitorder="little").view(np.uint32)
    first_end = np.searchsorted(indptr[1:] - 1, np.arange(n_tiles + 1, dtype=np.int64) * tile).astype(np.int64)
    return n_tiles, words, first_end


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="+")
    parser.add_argument("--dtype", nargs="+", default=["float32", "float64"])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--budget", type=float, default=0.05)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    import sys

    import cupy

    sys.path.insert(0, str(ROOT / "scripts"))
    import spmv_floor

    from spla import bench
    from spla.backends.cuda import floor
    from spla.bench import corpus
    from spla.ops import spmv as ops_spmv
    from spla.planning.spmv import choose_kernel

    names = [f"spla_try_bits<{v}, {k}, {b}>" for dt, v in (("float32", "float"), ("float64", "double"))
             for k, b in VARIANTS[dt]]
    module = cupy.RawModule(code=(HERE / "spmv_bits_try.cu").read_text(), name_expressions=names,
                            options=("-std=c++17", f"-I{ROOT / 'kernels'}"))
    records = []
    for source in args.sources:
        A64 = corpus.load(source, dtype=np.float64)
        check = bench.SpmvCheck.for_matrix(A64)
        indptr = np.asarray(A64.indptr, dtype=np.int64)
        print(f"{source}: {A64.n_rows:,} x {A64.n_cols:,}, {A64.nnz:,} nnz, rows {indptr[-1] / max(A64.n_rows, 1):.1f} "
              "on average", flush=True)
        for dtype in args.dtype:
            A = A64.astype(dtype).to_device()
            assert A.index_dtype == np.int32, "the try reads int32 indices"
            x = cupy.asarray(check.x.astype(dtype))
            y = cupy.empty(A.n_rows, dtype=dtype)
            record = {"source": source, "dtype": dtype, "rows": A.n_rows, "cols": A.n_cols, "nnz": A.nnz,
                      "kernels": {}}
            runs = {}

            def add(name, fn, error_of=None, tolerance=None):
                row = record["kernels"][name] = {}
                if check.record(row, fn, dtype, f"{dtype} {name}", error_of, tolerance):
                    runs[name] = fn

            for kernel in ("cusparse:1", "cusparse:2", "auto", "segmented"):
                add(kernel, lambda kernel=kernel: ops_spmv.spmv(A, x, kernel=kernel, out=y))
            record["auto_runs"] = choose_kernel(A)
            f = floor.Floor("product", A.indices, A.data, x, per_tile=True)
            total, scale = spmv_floor.floor_sums(A64.to_scipy().tocsr(), check.x)["product"]

            def run_floor():
                f.run()
                return f.partial
            add("floor-product/per-tile", run_floor, lambda p: abs(float(p.sum(dtype=np.float64)) - total) / scale,
                spmv_floor.FLOOR_TOLERANCE[dtype])
            for k, blocks in VARIANTS[dtype]:
                tile = 32 * k
                plan = bitmap_plan(indptr, A.nnz, tile)
                if plan is None:
                    print(f"  bits K={k}: not applicable (an empty row or a row over {tile})")
                    continue
                n_tiles, words, first_end = plan
                ends, first = cupy.asarray(words), cupy.asarray(first_end)
                value = "float" if dtype == "float32" else "double"
                kernel = module.get_function(f"spla_try_bits<{value}, {k}, {blocks}>")
                grid = -(-n_tiles // 8)
                kargs = (np.int64(n_tiles), np.int64(A.nnz), first, ends, A.indptr, A.indices, A.data, x, y)

                def run(kernel=kernel, grid=grid, kargs=kargs):
                    kernel((grid,), (256,), kargs)
                    return y
                add(f"bits:{k}@{blocks}", run)
            samples = bench.time_in_turns(runs, rounds=args.rounds, budget_s=args.budget)
            anchor = min(float(np.median(samples[k])) for k in ("cusparse:1", "cusparse:2") if k in samples)
            for name, ms in samples.items():
                us = float(np.median(ms)) * 1e3
                record["kernels"][name].update(us=us, rounds_us=[v * 1e3 for v in ms], vs_cusparse=anchor * 1e3 / us)
                print(f"  {dtype} {name:24s} {us:8.1f} us  {anchor * 1e3 / us:5.2f}x cuSPARSE", flush=True)
            records.append(record)
    if args.out:
        args.out.write_text(json.dumps({"records": records, "when": time.strftime("%Y-%m-%dT%H:%M:%S")}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
