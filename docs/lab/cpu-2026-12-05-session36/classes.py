"""Each matrix file's auto class and pick in float32 (spla.planning.spmv on the CPU), near share,
and the staged tile span P4 reads (row_spans.py): run on a set before its device call, to check
that each matrix lands where the set means it to.

    PYTHONPATH=. python3 classes.py FILE.npz ...
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
import row_spans  # noqa: E402

import spla  # noqa: E402
from spla.planning import spmv  # noqa: E402

for path in sys.argv[1:]:
    S = sp.load_npz(path)
    A = spla.CSRMatrix.from_scipy(S.astype(np.float32))
    choice = spmv.describe_choice(A)
    s = row_spans.spans(S)
    print(f"{Path(path).stem:30s} {S.nnz / 1e6:5.1f}M {choice.get('class')} {spmv.choose_kernel(A)} "
          f"near={choice.get('near_share', float('nan')):.3f} tile span={s['tile_span_median']:.0f} "
          f"lines={s['tile_lines_median']:.0f}", flush=True)
