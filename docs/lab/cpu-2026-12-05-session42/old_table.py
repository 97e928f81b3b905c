"""staged's palette entries before and after session 42's table change, in one process (P1).

Before (a2ea70a, `spmv_staged_a2ea70a.cu` here): the kernel took a table padded to 256 values on the
host and staged's body copied it to shared memory. After: the entry takes the palette's table and its
length and copies it with spla::copy_palette, as dia's does. Both are launched over the same bound
launcher's plan (tiles, partials, counters, codes): the committed one through spla.spmv, the old one
from its own module with the padded table in place of (table, length). The values' entry (palette
off) and the lean cuSPARSE call run beside them; each is checked against the float64 product first,
then all are timed in turns (device time and per call, spla.bench.spmv.time_rounds).

    PYTHONPATH=. python3 old_table.py SOURCE... [--dtype float64] --out FILE.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


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
    from spla.backends.cuda import runtime
    from spla.backends.cuda import spmv as cuda_spmv
    from spla.bench import corpus
    from spla.bench.spmv import time_rounds
    from spla.ops import spmv as ops_spmv
    from spla.planning import segmented

    records = []
    for source in args.sources:
        A64 = corpus.load(source, dtype=np.float64)
        check = bench.SpmvCheck.for_matrix(A64)
        for dtype in args.dtype:
            x = cupy.asarray(check.x.astype(dtype))
            out = cupy.empty(A64.n_rows, dtype=dtype)
            one, zero = np.dtype(dtype).type(1), np.dtype(dtype).type(0)
            segmented.STAGED_PALETTE, segmented.STAGED_PALETTE_MIN_BYTES = ("float32", "float64"), 0
            coded = A64.astype(dtype, copy=True).to_device()
            ops_spmv.spmv(coded, x, kernel="staged", out=out)
            bound = ops_spmv.bound_launcher(coded, "staged")
            segmented.STAGED_PALETTE_MIN_BYTES = 10**18
            plain = A64.astype(dtype, copy=True).to_device()
            ops_spmv.spmv(plain, x, kernel="staged", out=out)
            row: dict = {"source": source, "dtype": dtype, "nnz": A64.nnz, "entry": bound.entry,
                         "values_entry": ops_spmv.bound_launcher(plain, "staged").entry}
            if not bound.entry.endswith("_palette"):
                print(f"{source} {dtype}: no palette ({bound.entry!r}), skipped", flush=True)
                continue
            # the old kernel: the same plan, the table padded to 256 on the host
            source_of = cuda_spmv.SOURCES["staged_palette"]
            name = cuda_spmv.kernel_name(f"staged{bound.entry}", np.dtype(dtype), coded.index_dtype, _tile_param(bound, dtype))
            module = cupy.RawModule(code=(HERE / "spmv_staged_a2ea70a.cu").read_text(),
                                    options=(*source_of.options, f"-I{runtime.kernel_dir()}"),
                                    name_expressions=(name,))
            module.compile()
            old_kernel = module.get_function(name)
            head = list(bound.head)
            at = next(i for i, a in enumerate(head) if isinstance(a, np.int32))  # (table, length) -> padded
            padded = cupy.zeros(256, dtype=dtype)
            padded[:int(head[at])] = head[at - 1]
            old_head = (*head[:at - 1], padded, *head[at + 1:])

            def old(bound=bound, old_head=old_head, old_kernel=old_kernel, x=x, out=out, one=one, zero=zero):
                old_kernel(bound.grid, bound.block, (*old_head, x, out, one, zero, *bound.tail))
                if bound.finish is not None:
                    bound.finish.slots[4] = out.data.ptr
                    bound._finish_values[bound._finish_alpha] = one
                    bound._finish_values[bound._finish_beta] = zero
                    bound.finish.launch()
                return out

            def call(A, kernel, x=x, out=out):
                return lambda: ops_spmv.spmv(A, x, kernel=kernel, out=out)

            runs = {"values": call(plain, "staged"), "palette-new": call(coded, "staged"), "palette-old": old,
                    "cusparse:1": call(plain, "cusparse:1"), "cusparse:2": call(plain, "cusparse:2")}
            for label in list(runs):
                out.fill(np.nan)
                if not check.record(row.setdefault(label, {}), lambda run=runs[label]: run().copy(), dtype, label):
                    del runs[label]
            per_call, device = time_rounds(cupy, runs, args.rounds, args.budget)
            for label in runs:
                row[label].update(per_call_us=statistics.median(per_call[label]),
                                  device_us=statistics.median(device[label]), device_rounds_us=device[label])
            records.append(row)
            d = {n: row[n]["device_us"] for n in runs}
            print(f"{source} {dtype} {bound.entry}: " + " ".join(f"{n} {v:.1f}" for n, v in d.items())
                  + f" | new/old speed {d['palette-old'] / d['palette-new']:.3f}"
                  + f" palette/values {d['values'] / d['palette-new']:.3f}", flush=True)
            for A in (coded, plain):
                A._cache.clear()
            args.out.write_text(json.dumps({"environment": bench.environment(), "records": records}, indent=1))
    return 0


def _tile_param(bound, dtype) -> int:
    """staged's T (nonzeros a thread a tile) of the bound plan, from its tile count."""
    from spla.planning import segmented

    n_tiles, nnz = int(bound.head[0]), int(bound.head[1])
    return next(t for t in segmented.staged_entries(dtype) if -(-nnz // (segmented.STAGED_THREADS * t)) == n_tiles)


if __name__ == "__main__":
    sys.exit(main())
