"""What auto picks on each matrix (the host's rule: no dia palette, which only a GPU matrix reads) and blocked's
predicted gain over staged where x has more than one column block, both dtypes.

    PYTHONPATH=. python3 picks.py DIR/*.npz
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import spla
from spla.planning import blocked
from spla.planning import spmv as planning

for path in sys.argv[1:]:
    S = sp.load_npz(path).tocsr()
    for dtype in (np.float32, np.float64):
        A = spla.CSRMatrix.from_scipy(S.astype(dtype))
        info = planning.describe_choice(A)
        gain = f"{blocked.predicted_gain(A):.2f}" if blocked.n_blocks(A.n_cols) > 1 else "-"
        print(f"{Path(path).stem:<28} {np.dtype(dtype).name:<8} {info['kernel']:<14} {info['class']:<22} "
              f"x {A.n_cols * np.dtype(dtype).itemsize / 1e6:6.1f} MB  blocked predicted {gain}", flush=True)
