"""adaptive's and adaptive2's plans side by side (descriptors by kind) for .npz matrices:

    PYTHONPATH=. python3 plans.py /tmp/h26/*.npz /tmp/h32/*.npz
"""

from __future__ import annotations

import sys

import numpy as np
import scipy.sparse as sp

from spla.csr import CSRMatrix
from spla.planning import adaptive


def describe(plan) -> str:
    s, k = plan.summary(), plan.blocks[: plan.n_main_blocks, adaptive.KIND]
    return (f"blocks={s['blocks']} stream={int(((k > 0) & (k != adaptive.KIND_ROWS)).sum())} "
            f"rows={int((k == adaptive.KIND_ROWS).sum())} block={int((k == 0).sum())} split={int((k < 0).sum())} "
            f"dense={s['paths']['dense']['rows']} maxnnz={s['block_nnz_max']} wm={plan.thresholds.warp_max}")


def main(paths) -> int:
    for path in paths:
        M = sp.load_npz(path).tocsr()
        A = CSRMatrix.from_scipy(M, dtype=np.float32)
        lengths = np.diff(M.indptr)
        print(path.split("/")[-1][:26].ljust(26), f"rows={M.shape[0]} nnz={M.nnz} max={lengths.max()} "
              f">256:{(lengths > 256).sum()} >512:{(lengths > 512).sum()} >4096:{(lengths > 4096).sum()}")
        print("   v1", describe(adaptive.plan_for(A)))
        print("   v2", describe(adaptive.plan2_for(A)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
