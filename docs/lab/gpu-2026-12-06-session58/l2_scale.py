"""Session 58: blocked's predicted gain over staged (spla.planning.blocked) with L2_BYTES as measured on an H100
(28 MB of its 50 MB L2) and scaled to an H200's 60 MB (33.6 MB), beside auto's x cut (36 MB, and 43.2 MB scaled
the same way), for each matrix and dtype: whether the scaled rule would pick another kernel than the rule as it is.

    PYTHONPATH=. python3 docs/lab/gpu-2026-12-06-session58/l2_scale.py MATRIX.npz...
"""

from __future__ import annotations

import sys
from pathlib import Path

import spla
from spla.planning import blocked
from spla.planning.spmv import x_bytes_of

SCALE = 60 / 50  # an H200's L2 over an H100's
L2_AS_IS = blocked.L2_BYTES
X_CUT, GAIN = 36_000_000, 1.05  # spla.planning.spmv's blocked_x_bytes and blocked_gain

print(f"{'matrix':<28} {'dtype':<8} {'x MB':>6} {'blocks':>6} {'gain 28MB':>10} {'gain 33.6MB':>12}  rule as is / scaled")
for path in sys.argv[1:]:
    host = spla.load(path, cache=False)
    for dtype in ("float32", "float64"):
        A = host.astype(dtype)
        gains = []
        for l2 in (L2_AS_IS, int(L2_AS_IS * SCALE)):
            blocked.L2_BYTES = l2
            A._cache.pop(blocked.TRAFFIC_KEY, None)
            gains.append(blocked.predicted_gain(A))
        blocked.L2_BYTES = L2_AS_IS
        x = x_bytes_of(A)
        blocks = blocked.n_blocks(A.n_cols)
        picks = ["blocked" if blocks > 1 and x >= cut and gain >= GAIN else "-"
                 for cut, gain in ((X_CUT, gains[0]), (X_CUT * SCALE, gains[1]))]
        print(f"{Path(path).stem:<28} {dtype:<8} {x / 1e6:6.1f} {blocks:6d} {gains[0]:10.3f} {gains[1]:12.3f}  "
              f"{picks[0]} / {picks[1]}", flush=True)
