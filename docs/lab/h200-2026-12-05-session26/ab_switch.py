"""One SpMV kernel bound under each value of a planning switch (a module constant its launcher
reads when a matrix binds, e.g. segmented.STAGED_NARROW), beside other kernels and the lean
cuSPARSE call (ALG1 and ALG2), in turns: per call from Python (out= preallocated) and by device
time, each run checked against the float64 product first.

The switch is read when the launcher binds, so each value runs on its own device copy of the
matrix (the others run on the first copy).

    PYTHONPATH=. python3 ab_switch.py SOURCE... --switch segmented.STAGED_NARROW \\
        --modes plain=False narrow=True [--kernel staged] [--others adaptive2 vector] --out FILE
"""

from __future__ import annotations

import argparse
import ast
import importlib
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ANCHORS = ("cusparse:1", "cusparse:2")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="+", help="files, gen: specs or corpus:FAMILY:NNZ")
    parser.add_argument("--switch", required=True, help="MODULE.NAME under spla.planning")
    parser.add_argument("--modes", nargs="+", required=True, help="LABEL=VALUE (a Python literal), two or more")
    parser.add_argument("--kernel", default="staged")
    parser.add_argument("--others", nargs="*", default=["adaptive2", "segmented", "vector"])
    parser.add_argument("--auto", action="store_true", help="also time auto (what it runs is recorded)")
    parser.add_argument("--dtype", nargs="+", default=["float32", "float64"])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--budget", type=float, default=0.02, help="seconds a kernel a round and figure")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)

    import cupy

    from spla import bench
    from spla.bench import corpus
    from spla.bench.spmv import _calls_for, device_seconds, per_call_seconds
    from spla.ops import spmv as ops_spmv

    module_name, name = args.switch.rsplit(".", 1)
    module = importlib.import_module(f"spla.planning.{module_name}")
    default = getattr(module, name)
    modes = {label: ast.literal_eval(value) for label, value in (m.split("=", 1) for m in args.modes)}
    records = []
    for source in args.sources:
        A64 = corpus.load(source, dtype=np.float64)
        check = bench.SpmvCheck.for_matrix(A64)
        for dtype in args.dtype:
            copies, runs = {}, {}
            row: dict = {"source": source, "dtype": dtype, "nnz": A64.nnz, "rows": A64.n_rows, "cols": A64.n_cols}
            x = cupy.asarray(check.x.astype(dtype))
            out = cupy.empty(A64.n_rows, dtype=dtype)
            for label, value in modes.items():
                setattr(module, name, value)
                A = copies[label] = A64.astype(dtype, copy=True).to_device()  # its own cache
                ops_spmv.spmv(A, x, kernel=args.kernel, out=out)  # binds the launcher under this value
                bound = ops_spmv.bound_launcher(A, args.kernel)
                row.setdefault("entries", {})[label] = getattr(bound, "entry", "")
                runs[f"{args.kernel}-{label}"] = (lambda A=A, x=x, out=out:
                                                   ops_spmv.spmv(A, x, kernel=args.kernel, out=out))
            setattr(module, name, default)
            first = next(iter(copies.values()))
            for other in (*ANCHORS, *args.others, *(("auto",) if args.auto else ())):
                runs[other] = lambda other=other, A=first, x=x, out=out: ops_spmv.spmv(A, x, kernel=other, out=out)
            if args.auto:
                from spla.planning.spmv import choose_kernel

                row["auto_runs"] = choose_kernel(first)
            for label in list(runs):
                out.fill(np.nan)
                if not check.record(row.setdefault(label, {}), lambda run=runs[label]: run().copy(), dtype, label):
                    del runs[label]
            per_call, device = {n: [] for n in runs}, {n: [] for n in runs}
            for _ in range(args.rounds):
                for label, run in runs.items():
                    once = device_seconds(cupy, run, 3)
                    per_call[label].append(per_call_seconds(cupy, run, _calls_for(once + 5e-6, args.budget)) * 1e6)
                    device[label].append(device_seconds(cupy, run, _calls_for(once, args.budget / 2, hi=1000)) * 1e6)
            for label in runs:
                row[label].update(per_call_us=statistics.median(per_call[label]),
                                  device_us=statistics.median(device[label]),
                                  device_rounds_us=device[label])
            records.append(row)
            anchor = min((row[a]["device_us"] for a in ANCHORS if a in runs), default=float("nan"))
            print(f"{source} {dtype} nnz {A64.nnz:,} entries {row['entries']}: " + "  ".join(
                f"{n} {row[n]['per_call_us']:.1f}/{row[n]['device_us']:.1f}" for n in runs)
                + "  | device vs cuSPARSE: " + " ".join(f"{n} {anchor / row[n]['device_us']:.3f}" for n in runs
                                                          if n not in ANCHORS), flush=True)
            for A in copies.values():
                A._cache.clear()  # free the device copies' plans before the next dtype
            args.out.write_text(json.dumps({"environment": bench.environment(), "switch": args.switch,
                                            "modes": args.modes, "kernel": args.kernel, "records": records,
                                            "written": time.strftime("%Y-%m-%dT%H:%M:%S")}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
