"""Issue 17's stencil target with dia's palette (P2): auto on the 5- and 27-point stencils from 50M
nonzeros, beside dia's values entry (palette off), the lean cuSPARSE call and a device copy, in turns.

The target asks a stencil SpMV to read at 90% of the measured copy bandwidth in float32 (85% in
float64). dia's values entry reads values (padded diagonals), x and y once; its bandwidth is those
bytes over its device time. The palette reads a byte a slot in place of each value, so its figure is
given as the same bytes over its time: the rate of a kernel that read the values, not a traffic
measurement. The copy is CuPy's device copy of half those bytes (read plus write: the same traffic),
timed in the same turns, so size and drift hit it alike.

    PYTHONPATH=. python3 stencil_target.py corpus:stencil5:5e7 ... --out FILE.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import numpy as np


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="+")
    parser.add_argument("--dtype", nargs="+", default=["float32", "float64"])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--budget", type=float, default=0.02)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)

    import cupy

    from spla import bench
    from spla.bench import corpus
    from spla.bench.spmv import time_rounds
    from spla.ops import spmv as ops_spmv
    from spla.planning import dia
    from spla.planning.spmv import choose_kernel

    copy_gbps = bench.copy_bandwidth_gbps()
    records = []
    for source in args.sources:
        A64 = corpus.load(source, dtype=np.float64)
        check = bench.SpmvCheck.for_matrix(A64)
        for dtype in args.dtype:
            x = cupy.asarray(check.x.astype(dtype))
            out = cupy.empty(A64.n_rows, dtype=dtype)
            auto = A64.astype(dtype, copy=True).to_device()
            ops_spmv.spmv(auto, x, kernel="auto", out=out)
            default = dia.PALETTE_MIN_BYTES
            dia.PALETTE_MIN_BYTES = 10**18
            values = A64.astype(dtype, copy=True).to_device()
            ops_spmv.spmv(values, x, kernel="dia", out=out)
            dia.PALETTE_MIN_BYTES = default
            found = dia.structure(values)
            item = np.dtype(dtype).itemsize
            nbytes = int(found.values.size) * item + (A64.n_rows + A64.n_cols) * item  # the values entry's
            src = cupy.zeros(nbytes // 2 // 8, dtype=np.float64)
            dst = cupy.empty_like(src)

            def call(A, kernel, x=x, out=out):
                return lambda: ops_spmv.spmv(A, x, kernel=kernel, out=out)

            runs = {"auto": call(auto, "auto"), "dia-values": call(values, "dia"),
                    "cusparse:1": call(values, "cusparse:1"), "cusparse:2": call(values, "cusparse:2")}
            row: dict = {"source": source, "dtype": dtype, "nnz": A64.nnz, "rows": A64.n_rows,
                         "auto_runs": choose_kernel(auto), "dia_bytes": nbytes, "copy_gbps_1GiB": copy_gbps,
                         "auto_entry": getattr(ops_spmv.bound_launcher(auto, "auto"), "entry", ""),
                         "values_entry": ops_spmv.bound_launcher(values, "dia").entry}
            for label in list(runs):
                out.fill(np.nan)
                if not check.record(row.setdefault(label, {}), lambda run=runs[label]: run().copy(), dtype, label):
                    del runs[label]
            runs["copy"] = lambda src=src, dst=dst: dst.__setitem__(slice(None), src)
            row["copy"] = {}
            per_call, device = time_rounds(cupy, runs, args.rounds, args.budget)
            for label in runs:
                row[label].update(per_call_us=statistics.median(per_call[label]),
                                  device_us=statistics.median(device[label]), device_rounds_us=device[label])
            d = {n: row[n]["device_us"] for n in runs}
            anchor = min(d.get("cusparse:1", np.inf), d.get("cusparse:2", np.inf))
            for label in ("auto", "dia-values", "copy"):
                row[label]["gbps"] = nbytes / d[label] / 1e3
            row["auto_over_copy"] = d["copy"] / d["auto"]
            row["values_over_copy"] = d["copy"] / d["dia-values"]
            records.append(row)
            print(f"{source} {dtype} nnz {A64.nnz:,} auto={row['auto_runs']}{row['auto_entry']} "
                  f"{nbytes / 1e6:.0f} MB: " + " ".join(f"{n} {v:.1f}us" for n, v in d.items())
                  + f" | GB/s auto {row['auto']['gbps']:.0f} values {row['dia-values']['gbps']:.0f} "
                  f"copy {row['copy']['gbps']:.0f} (1 GiB copy {copy_gbps:.0f}) | copy/auto {row['auto_over_copy']:.2f}"
                  f" copy/values {row['values_over_copy']:.2f} | auto vs cuSPARSE {anchor / d['auto']:.2f}x",
                  flush=True)
            for A in (auto, values):
                A._cache.clear()
            del src, dst
            args.out.write_text(json.dumps({"environment": bench.environment(), "records": records}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
