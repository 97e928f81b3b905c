"""staged in one launch (its last block finishes the cut rows) against staged in two (the finish
kernel), beside adaptive2, segmented and the lean cuSPARSE call, in turns: per call from Python
(out= preallocated) and by device time, each checked against the float64 product first.

The mode is fixed when a matrix's launcher is bound (spla.planning.segmented.STAGED_ONE_LAUNCH_CUT),
so each mode runs on its own device copy of the matrix.

    PYTHONPATH=. python3 ab_one_launch.py SOURCE... [--dtype float32 float64] [--rounds 5] --out FILE
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

MODES = {"two": 0, "one": 10**9}  # STAGED_ONE_LAUNCH_CUT while each copy binds staged
OTHERS = ("cusparse:1", "cusparse:2", "adaptive2", "segmented")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="+", help="files, gen: specs or corpus:FAMILY:NNZ")
    parser.add_argument("--dtype", nargs="+", default=["float32", "float64"])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--budget", type=float, default=0.02, help="seconds a kernel a round and figure")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)

    import cupy

    from spla import bench
    from spla.bench import corpus
    from spla.bench.spmv import _calls_for, device_seconds, per_call_seconds
    from spla.ops import spmv as ops_spmv
    from spla.planning import segmented

    default_cut = segmented.STAGED_ONE_LAUNCH_CUT
    records = []
    for source in args.sources:
        A64 = corpus.load(source, dtype=np.float64)
        check = bench.SpmvCheck.for_matrix(A64)
        for dtype in args.dtype:
            copies, runs, row = {}, {}, {"source": source, "dtype": dtype, "nnz": A64.nnz, "rows": A64.n_rows}
            x = cupy.asarray(check.x.astype(dtype))
            out = cupy.empty(A64.n_rows, dtype=dtype)
            for mode, cut in MODES.items():
                segmented.STAGED_ONE_LAUNCH_CUT = cut
                A = copies[mode] = A64.astype(dtype, copy=True).to_device()  # its own cache
                ops_spmv.spmv(A, x, kernel="staged", out=out)  # binds the launcher in this mode
                runs[f"staged-{mode}"] = lambda A=A, x=x, out=out: ops_spmv.spmv(A, x, kernel="staged", out=out)
            segmented.STAGED_ONE_LAUNCH_CUT = default_cut
            for name in OTHERS:
                runs[name] = lambda name=name, A=copies["two"], x=x, out=out: ops_spmv.spmv(A, x, kernel=name, out=out)
            for name in list(runs):
                out.fill(np.nan)
                if not check.record(row.setdefault(name, {}), lambda run=runs[name]: run().copy(), dtype, name):
                    del runs[name]
            one, two = (ops_spmv.bound_launcher(copies[m], "staged") for m in ("one", "two"))
            assert one is not two and one.one_launch and not two.one_launch
            row["n_cut"] = int(two.finish.slots[0]) if two.finish is not None else 0  # its first argument
            per_call, device = {n: [] for n in runs}, {n: [] for n in runs}
            for _ in range(args.rounds):
                for name, run in runs.items():
                    once = device_seconds(cupy, run, 3)
                    per_call[name].append(per_call_seconds(cupy, run, _calls_for(once + 5e-6, args.budget)) * 1e6)
                    device[name].append(device_seconds(cupy, run, _calls_for(once, args.budget / 2, hi=1000)) * 1e6)
            for name in runs:
                row[name].update(per_call_us=statistics.median(per_call[name]),
                                 device_us=statistics.median(device[name]))
            records.append(row)
            anchor = min((row[a] for a in ("cusparse:1", "cusparse:2") if a in runs), key=lambda r: r["device_us"])
            print(f"{source} {dtype} nnz {A64.nnz:,} cut rows {row['n_cut']:,}: " + "  ".join(
                f"{n} {row[n]['per_call_us']:.1f}/{row[n]['device_us']:.1f} us" for n in runs)
                + f"  | one/two per call {row['staged-two']['per_call_us'] / row['staged-one']['per_call_us']:.3f}"
                f" device {row['staged-two']['device_us'] / row['staged-one']['device_us']:.3f}"
                f"  one vs cuSPARSE per call {anchor['per_call_us'] / row['staged-one']['per_call_us']:.2f}x",
                flush=True)
            args.out.write_text(json.dumps({"environment": bench.environment(), "records": records,  # after each
                                            "written": time.strftime("%Y-%m-%dT%H:%M:%S")}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
