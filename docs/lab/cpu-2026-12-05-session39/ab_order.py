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

import dataclasses
import functools
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "cpu-2026-12-04-session28"))
import ab_rows_path  # noqa: E402  (its check-and-time loop, measure)

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


def runs_for(A, x, out) -> dict:
    """{variant or kernel: call}, each bound once."""
    from spla.ops.spmv import bind

    one, zero = A.dtype.type(1), A.dtype.type(0)
    launchers = {name: bind(A, kernel, plan) for name, (kernel, plan) in plans(A).items()}
    launchers.update({name: bind(A, name) for name in OTHERS})
    return {name: functools.partial(launcher.launch, x, out, one, zero) for name, launcher in launchers.items()}


def main(argv=None) -> int:
    return ab_rows_path.measure(ab_rows_path.parse(argv, __doc__), runs_for, plan_facts, "a2", "order.json")


if __name__ == "__main__":
    sys.exit(main())
