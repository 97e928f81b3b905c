"""O1: adaptive2 against adaptive on small matrices whose two plans hold the same descriptors: is
the gap the descriptors' order or the kernel? (device time and per call, in round-robin rounds,
each result checked against the float64 SciPy product first).

adaptive2's plan moves the heavy descriptors (a block a row, chunks, rows path) that fall in the
launch's last TAIL_BLOCKS slots to the front (spla.planning.adaptive._heavy_out_of_tail). In a plan
of fewer than TAIL_BLOCKS descriptors, that is every heavy descriptor. adaptive keeps row order.
The variants cross the two kernels with the two orders:

  a2            adaptive2's own plan (plan2_for), heavy descriptors first
  a2:inorder    the same descriptors in row order (as build_plan sorts them before the move)
  a2:v1plan     adaptive2's kernel on adaptive's plan (row order; only where that plan has no dense rows)
  a1            adaptive's own plan, row order
  a1:front      adaptive's plan with its heavy descriptors moved as adaptive2's are

    PYTHONPATH=. python3 ab_order.py SOURCE... [--dtype float32 float64] [--rounds 5] --out DIR

SOURCE: a matrix file, a gen: spec or corpus:FAMILY:NNZ. Writes DIR/order.json and prints each
variant's device us and its speed over a2.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

OTHERS = ("cusparse:1", "cusparse:2", "staged", "segmented")


def _with_order(A, plan, order: str):
    """``plan`` with its main descriptors in row order ("row") or heavy first ("front")."""
    from spla.planning import adaptive

    main, rest = plan.blocks[: plan.n_main_blocks], plan.blocks[plan.n_main_blocks:]
    first_row = main[:, adaptive.ROW_BEGIN].copy()
    rows_desc = main[:, adaptive.KIND] == adaptive.KIND_ROWS
    first_row[rows_desc] = plan.row_list[main[rows_desc, adaptive.ROW_BEGIN]]
    main = main[np.argsort(first_row, kind="stable")]
    if order == "front":
        main = adaptive._heavy_out_of_tail(main)
    blocks = np.ascontiguousarray(np.concatenate([main, rest]).astype(np.int64))
    indptr = np.asarray(A.to_host().indptr, dtype=np.int64)
    nnz = adaptive._descriptor_nnz(blocks, indptr, plan.thresholds.chunk, plan.row_list, np.diff(indptr))
    return dataclasses.replace(plan, blocks=blocks, descriptor_nnz=nnz)


def plans(A) -> dict:
    """{variant: (kernel, plan)}; a2:v1plan only where adaptive's plan has no dense rows."""
    from spla.planning import adaptive

    v1, v2 = adaptive.plan_for(A), adaptive.plan2_for(A)
    out = {"a2": ("adaptive2", v2), "a2:inorder": ("adaptive2", _with_order(A, v2, "row")),
           "a1": ("adaptive", v1), "a1:front": ("adaptive", _with_order(A, v1, "front"))}
    if v1.dense_rows.size == 0:
        out["a2:v1plan"] = ("adaptive2", v1)
    return out


def plan_facts(A) -> dict:
    from spla.planning import adaptive

    v1, v2 = adaptive.plan_for(A), adaptive.plan2_for(A)
    kinds = v2.blocks[: v2.n_main_blocks, adaptive.KIND]
    return {"descriptors": int(v2.n_main_blocks), "heavy": int(((kinds <= 0) | (kinds == adaptive.KIND_ROWS)).sum()),
            "same_descriptors": bool(v1.n_main_blocks == v2.n_main_blocks and np.array_equal(
                np.sort(v1.blocks[: v1.n_main_blocks], axis=0), np.sort(v2.blocks[: v2.n_main_blocks], axis=0)))}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("sources", nargs="+")
    parser.add_argument("--dtype", nargs="+", default=["float32", "float64"], choices=["float32", "float64"])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--budget", type=float, default=0.02, help="seconds a timing (default 0.02)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)

    import cupy

    from spla.bench import check, corpus
    from spla.bench.spmv import time_rounds
    from spla.bench.timing import environment
    from spla.ops.spmv import bind

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
            one, zero = A.dtype.type(1), A.dtype.type(0)
            launchers = {name: bind(A, kernel, plan) for name, (kernel, plan) in plans(A).items()}
            launchers.update({name: bind(A, name) for name in OTHERS})
            rows, checked = {}, {}
            for name, launcher in launchers.items():
                def run(launcher=launcher, x=x, out=out, one=one, zero=zero):
                    return launcher.launch(x, out, one, zero)
                rows[name] = {"kernel": name}
                out.fill(np.nan)  # poison: a variant that skips a row fails the check
                if verify.record(rows[name], lambda run=run: run().copy(), dtype, f"{dtype} {name}"):
                    checked[name] = run
            per_call, device = time_rounds(cupy, checked, args.rounds, args.budget)
            for name in checked:
                rows[name].update(device_us=statistics.median(device[name]), device_rounds_us=device[name],
                                  per_call_us=statistics.median(per_call[name]), per_call_rounds_us=per_call[name])
            base = rows["a2"].get("device_us")
            line = " ".join(f"{n} {r['device_us']:.1f}" + (f" ({base / r['device_us']:.2f}x)" if base else "")
                            for n, r in rows.items() if "device_us" in r)
            print(f"  {dtype}: {line}", flush=True)
            results.append({"source": source, "dtype": dtype, "rows": host.n_rows, "nnz": host.nnz, **facts,
                            "kernels": list(rows.values())})
            del A, x, out, launchers
            cupy.get_default_memory_pool().free_all_blocks()
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "order.json").write_text(json.dumps({"environment": environment(), "results": results}, indent=1))
    return 0 if all(k.get("status") == "ok" for r in results for k in r["kernels"]) else 1


if __name__ == "__main__":
    sys.exit(main())
