"""Session 22: segmented as committed (the plan's end bits where no row is empty) beside its walk
path on the same tree and beside b726fb7's kernel (walk only), with auto and the lean cuSPARSE
call, each checked before it is timed, in turns.

    git show b726fb7:kernels/spmv_segmented.cu > /tmp/seg_b726.cu
    PYTHONPATH=.:scripts python docs/lab/h200-2026-12-04-session22/bits_ab.py /tmp/seg_b726.cu SOURCE ... \\
        [--bits-variant NAME=FILE ...] --out ab.json

--bits-variant: another file of segmented's kernels, built for the bitmap entry point and run with
the committed launcher's arguments where the matrix has no empty row (call 5: call 4's kernel).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

import numpy as np


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path, help="b726fb7's kernels/spmv_segmented.cu")
    parser.add_argument("sources", nargs="+")
    parser.add_argument("--dtype", nargs="+", default=["float32", "float64"])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--budget", type=float, default=0.05)
    parser.add_argument("--bits-variant", action="append", default=[], metavar="NAME=FILE")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    import cupy
    from ab_kernel import compile_variant

    from spla import bench
    from spla.backends.cuda import spmv as cuda_spmv
    from spla.bench import corpus
    from spla.ops import spmv as ops_spmv
    from spla.planning.spmv import choose_kernel, plan_spmv

    records = []
    for source in args.sources:
        A64 = corpus.load(source, dtype=np.float64)
        check = bench.SpmvCheck.for_matrix(A64)
        print(f"{source}: {A64.n_rows:,} x {A64.n_cols:,}, {A64.nnz:,} nnz", flush=True)
        for dtype in args.dtype:
            A = A64.astype(dtype).to_device()
            x = cupy.asarray(check.x.astype(dtype))
            y = cupy.empty(A.n_rows, dtype=dtype)
            one, zero = A.dtype.type(1), A.dtype.type(0)
            plan = plan_spmv(A, "segmented")
            walk = cuda_spmv.bind(cupy, A, dataclasses.replace(plan, end_bits=None))
            before = walk.variant(compile_variant("segmented", A.dtype, A.index_dtype, plan.param, args.before, (), 1))
            record = {"source": source, "dtype": dtype, "nnz": A.nnz, "end_bits": plan.end_bits is not None,
                      "kernels": {}}
            runs = {}
            candidates = {name: (lambda name=name: ops_spmv.spmv(A, x, kernel=name, out=y))
                          for name in ("cusparse:1", "cusparse:2", "auto", "segmented")}
            candidates["segmented/walk"] = lambda: walk.launch(x, y, one, zero)
            candidates["segmented@b726fb7"] = lambda: before.launch(x, y, one, zero)
            if plan.end_bits is not None:
                bits = cuda_spmv.bind(cupy, A, plan)
                for tag, spec in enumerate(args.bits_variant, start=2):
                    name, _, path = spec.partition("=")
                    variant = bits.variant(compile_variant("segmented", A.dtype, A.index_dtype, plan.param,
                                                           Path(path), (), tag, "_bits"))
                    candidates[f"segmented@{name}"] = lambda variant=variant: variant.launch(x, y, one, zero)
            for name, fn in candidates.items():
                row = record["kernels"][name] = {}
                if check.record(row, fn, dtype, f"{dtype} {name}"):
                    runs[name] = fn
            record["auto_runs"] = choose_kernel(A)
            samples = bench.time_in_turns(runs, rounds=args.rounds, budget_s=args.budget)
            anchor = min(float(np.median(samples[k])) for k in ("cusparse:1", "cusparse:2") if k in samples)
            for name, ms in samples.items():
                us = float(np.median(ms)) * 1e3
                record["kernels"][name].update(us=us, rounds_us=[v * 1e3 for v in ms], vs_cusparse=anchor * 1e3 / us)
                print(f"  {dtype} {name:20s} {us:8.1f} us  {anchor * 1e3 / us:5.2f}x cuSPARSE", flush=True)
            records.append(record)
    if args.out:
        args.out.write_text(json.dumps({"records": records}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
