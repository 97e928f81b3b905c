# Session 34, run by hand (PYTHONPATH=. python3 threads_one_two.py FAMILY DTYPE, or DTYPE FAMILY... for two_thread_quartiles.py).
import time, sys, numpy as np
from spla.backends import cpu
from spla.bench import corpus
from spla.csr import CSRMatrix
name = sys.argv[1]; dtype = np.dtype(sys.argv[2])
base = corpus.build(name, int(16e6), seed=0, dtype=np.float64).to_scipy()
S = base.astype(dtype); S.data[:] = 1
u = CSRMatrix.from_scipy(S); v = CSRMatrix.from_scipy(S); v._cache["uniform-values"] = False
x = np.random.default_rng(0).uniform(-1, 1, S.shape[1]).astype(dtype)
cpu.csr_product(u, x); cpu.csr_product(v, x)
fu, au, _ = u._cache[("cpu-product-ranges", "spmv_uniform", 2)]
fv, av, _ = v._cache[("cpu-product-ranges", "spmv", 2)]
y = np.empty(S.shape[0], dtype)
def one(f, arrays):
    f(0, S.shape[0], *[a.ctypes.data for a in (*arrays, x, y)])
t = {"u1": [], "v1": [], "u2": [], "v2": []}
for r in range(41):
    for k in (("u1", "v1", "u2", "v2") if r % 2 else ("v2", "u2", "v1", "u1")):
        s = time.perf_counter()
        if k == "u1": one(fu, au)
        elif k == "v1": one(fv, av)
        elif k == "u2": cpu.csr_product(u, x)
        else: cpu.csr_product(v, x)
        t[k].append((time.perf_counter() - s) * 1e3)
for k, a in t.items():
    a = np.array(a); print(k, f"min {a.min():.2f} p25 {np.percentile(a,25):.2f} med {np.median(a):.2f} p75 {np.percentile(a,75):.2f} max {a.max():.2f}")
