"""Two held-out matrices no generator makes: scattered short rows plus dense rows (contiguous or scattered)."""
import sys
import numpy as np, scipy.sparse as sp, scipy.io
rng = np.random.default_rng(77)
n = 300000
out = sys.argv[1]
for name, contiguous in (("scattered-short-dense-rows", True), ("scattered-short-hub-rows", False)):
    lengths = rng.integers(1, 16, n)
    hubs = rng.choice(n, 40, replace=False)
    lengths[hubs] = rng.integers(5000, 10000, 40)
    rows = np.repeat(np.arange(n), lengths)
    cols = rng.integers(0, n, lengths.sum())
    if contiguous:
        starts = np.cumsum(lengths) - lengths
        for h in hubs:
            c0 = rng.integers(0, n - lengths[h])
            cols[starts[h]:starts[h] + lengths[h]] = np.arange(c0, c0 + lengths[h])
    A = sp.csr_matrix((rng.uniform(-1, 1, rows.size), (rows, cols)), shape=(n, n))
    A.sum_duplicates()
    scipy.io.mmwrite(f"{out}/{name}.mtx", A)
    print(name, A.nnz, flush=True)
