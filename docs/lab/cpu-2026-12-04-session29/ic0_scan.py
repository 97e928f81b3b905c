"""Every symmetric shared matrix with a positive diagonal: the shift ic0(shift="auto") takes (or its
refusal), the smallest eigenvalue (dense, these are small), and CG iterations to 1e-8 (b = ones,
maxiter 20,000) with IC(0) beside Jacobi, on the CPU.

    PYTHONPATH=. python3 docs/lab/cpu-2026-12-04-session29/ic0_scan.py shared-matrices
"""

import sys
import time
from pathlib import Path

import numpy as np

import spla
from spla.errors import InputError
from spla.linalg import IterationCounter, cg, ic0, jacobi

for path in sorted(Path(sys.argv[1]).glob("*.mtx.gz")):
    A = spla.load(str(path))
    S = A.to_scipy()
    if A.n_rows != A.n_cols or abs(S - S.T).max() > 1e-12 * abs(S).max() or (S.diagonal() <= 0).any():
        continue
    smallest = np.linalg.eigvalsh(S.toarray())[0]
    b = np.ones(A.n_rows)
    line = f"{path.name:<18} n {A.n_rows:>6,}  min eigenvalue {smallest:>10.3g}  "
    start = time.perf_counter()
    try:
        M = ic0(A)
        line += f"ic0 shift {M.shift:<6g} set-up {time.perf_counter() - start:5.2f} s"
    except InputError as exc:
        line += f"ic0 refused: {str(exc)[:60]}..."
        M = None
    for name, P in (("ic0", M), ("jacobi", jacobi(A))):
        if P is None:
            continue
        counter = IterationCounter()
        start = time.perf_counter()
        x, info = cg(A, b, rtol=1e-8, M=P, callback=counter, maxiter=20000)
        line += f" | {name} {counter.iterations:>6,} it, info {info}, {time.perf_counter() - start:5.2f} s"
    print(line, flush=True)
