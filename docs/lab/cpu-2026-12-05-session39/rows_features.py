"""adaptive2's default plan's rows path beside adaptive2 on adaptive's plan (a block for every row over
256), from call 2's ab_order.py records: descriptors, rows-path blocks, rows of 257 to warp_max and the
largest rows-path block, for each matrix (sets 26, 32, 33 and the generators; the corpus ones skipped).

    PYTHONPATH=. python3 docs/lab/cpu-2026-12-05-session39/rows_features.py ORDER_DIR...
"""

from __future__ import annotations

import gzip
import json
import sys

import numpy as np

from spla.bench import corpus
from spla.planning import adaptive


def main(dirs) -> int:
    res: dict = {}
    for folder in dirs:
        for r in json.load(gzip.open(f"{folder}/order.json.gz"))["results"]:
            t = {k["kernel"]: k.get("device_us") for k in r["kernels"]}
            res.setdefault(r["source"], {})[r["dtype"]] = t["a2"] / t["a2:v1plan"] if t.get("a2:v1plan") else 0.0
    lines = []
    for src, g in res.items():
        if src.startswith("corpus:"):
            continue
        A = corpus.load(src)
        p = adaptive.plan2_for(A)
        k = p.blocks[: p.n_main_blocks, adaptive.KIND]
        lengths = np.diff(np.asarray(A.indptr))
        mid = lengths[(lengths > 256) & (lengths <= p.thresholds.warp_max)]
        rows_nnz = p.descriptor_nnz[: p.n_main_blocks][k == adaptive.KIND_ROWS]
        lines.append((g.get("float32", 0.0), f"{src.split('/')[-1][:28]:28s} v1plan/a2 f32 {g.get('float32', 0):.2f} "
                      f"f64 {g.get('float64', 0):.2f}  descriptors={p.n_main_blocks:5d} "
                      f"rows_blocks={int((k == adaptive.KIND_ROWS).sum()):3d} rows_257_wm={mid.size:4d} "
                      f"longest={mid.max() if mid.size else 0:4d} "
                      f"rows_block_nnz_max={rows_nnz.max() if rows_nnz.size else 0:5d} "
                      f"warp_max={p.thresholds.warp_max}"))
    print("\n".join(line for _, line in sorted(lines, reverse=True)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
