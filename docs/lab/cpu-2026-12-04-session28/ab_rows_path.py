"""A1: adaptive2's rows path against a block a row for its longest rows, beside adaptive, staged
and the lean cuSPARSE call (device time and per call, in round-robin rounds, each result checked
against the float64 SciPy product first).

adaptive2's plan (spla.planning.adaptive.ADAPTIVE2_THRESHOLDS) gives rows of 257-1024 entries a
lane group each (the rows path: 32 lanes for rows over 128), where adaptive gives each a block of
256 threads. A row of 1,000 on 32 lanes is 8 rounds of four dependent gathers; on a block, one.
On small matrices whose kernel runs 5-10 us that chain can be the critical path. The variants are
adaptive2's own kernel with other plans (spla.ops.spmv.bind with a row plan):

  adaptive2        the default plan (warp_max 1024)
  adaptive2:wm512  warp_max 512: rows of 513-1024 take a block each
  adaptive2:wm0    no rows path: every row over 256 takes a block (adaptive's layout)

    PYTHONPATH=. python3 ab_rows_path.py SOURCE... [--dtype float32 float64] [--rounds 5] --out DIR

SOURCE: a matrix file, a gen: spec or corpus:FAMILY:NNZ. Writes DIR/rows_path.json and prints a
table: device us of each variant, and each over the default plan.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

VARIANTS = {"adaptive2": None, "adaptive2:wm512": 512, "adaptive2:wm0": 0}
OTHERS = ("cusparse:1", "cusparse:2", "adaptive", "staged")


def plan_facts(A) -> dict:
    """The default adaptive2 plan's size and the rows its rows path takes."""
    from spla.planning import adaptive

    plan = adaptive.plan2_for(A)
    lengths = np.diff(np.asarray(A.to_host().indptr, dtype=np.int64))
    return {"descriptors": int(plan.blocks.shape[0]),
            "rows_path_rows": int(((lengths > 256) & (lengths <= 1024)).sum()),
            "rows_513_1024": int(((lengths > 512) & (lengths <= 1024)).sum())}


def runs_for(A, x, out):
    """{name: call} for the variants and the other kernels, each bound once."""
    from spla.ops.spmv import bind
    from spla.planning import adaptive

    one, zero = A.dtype.type(1), A.dtype.type(0)
    runs = {}
    for name, warp_max in VARIANTS.items():
        plan = None if warp_max is None else adaptive.plan_for(A, **{**adaptive.ADAPTIVE2_THRESHOLDS,
                                                                    "warp_max": warp_max})
        launcher = bind(A, "adaptive2", plan)
        runs[name] = lambda launcher=launcher: launcher.launch(x, out, one, zero)
    for name in OTHERS:
        launcher = bind(A, name)
        runs[name] = lambda launcher=launcher: launcher.launch(x, out, one, zero)
    return runs


def parse(argv, doc: str):
    """The A/B scripts' arguments: sources, dtypes, rounds, budget a timing, output folder."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=doc)
    parser.add_argument("sources", nargs="+")
    parser.add_argument("--dtype", nargs="+", default=["float32", "float64"], choices=["float32", "float64"])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--budget", type=float, default=0.02, help="seconds a timing (default 0.02)")
    parser.add_argument("--out", type=Path, required=True)
    return parser.parse_args(argv)


def measure(args, runs_for, plan_facts, base: str, filename: str) -> int:
    """Each source in each dtype: ``runs_for(A, x, out)``'s calls checked against the float64 SciPy
    product, then timed in round-robin rounds (device time and per call); a line a run with each
    call's speed over ``base``'s; every record, with ``plan_facts(host)``, in args.out/filename."""
    import cupy

    from spla.bench import check, corpus
    from spla.bench.spmv import time_rounds
    from spla.bench.timing import environment

    results = []
    for source in args.sources:
        began = time.perf_counter()
        host = corpus.load(source, dtype=np.float64)
        verify = check.SpmvCheck.for_matrix(host)
        facts = plan_facts(host)
        print(f"{source}: {host.n_rows:,} rows, {host.nnz:,} nnz, {facts} ({time.perf_counter() - began:.1f} s)",
              flush=True)
        for dtype in args.dtype:
            A = host.astype(dtype).to_device()
            x = cupy.asarray(np.asarray(verify.x).astype(dtype))
            out = cupy.empty(A.n_rows, dtype=dtype)
            rows, checked = {}, {}
            for name, run in runs_for(A, x, out).items():
                rows[name] = {"kernel": name}
                out.fill(np.nan)  # poison: a variant that skips a row fails the check
                if verify.record(rows[name], lambda run=run: run().copy(), dtype, f"{dtype} {name}"):
                    checked[name] = run
            per_call, device = time_rounds(cupy, checked, args.rounds, args.budget)
            for name in checked:
                rows[name].update(device_us=statistics.median(device[name]), device_rounds_us=device[name],
                                  per_call_us=statistics.median(per_call[name]), per_call_rounds_us=per_call[name])
            base_us = rows[base].get("device_us")
            line = " ".join(f"{n} {r['device_us']:.1f}" + (f" ({base_us / r['device_us']:.2f}x)" if base_us else "")
                            for n, r in rows.items() if "device_us" in r)
            print(f"  {dtype}: {line}", flush=True)
            results.append({"source": source, "dtype": dtype, "rows": host.n_rows, "nnz": host.nnz, **facts,
                            "kernels": list(rows.values())})
            del A, x, out, rows, checked
            cupy.get_default_memory_pool().free_all_blocks()
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / filename).write_text(json.dumps({"environment": environment(), "results": results}, indent=1))
    return 0 if all(k.get("status") == "ok" for r in results for k in r["kernels"]) else 1


def main(argv=None) -> int:
    return measure(parse(argv, __doc__), runs_for, plan_facts, "adaptive2", "rows_path.json")


if __name__ == "__main__":
    sys.exit(main())
