# Session 34, run by hand (PYTHONPATH=. python3 per_thread_timing.py FAMILY DTYPE, or DTYPE FAMILY... for two_thread_quartiles.py).
import time, sys, threading, numpy as np, os
from concurrent.futures import ThreadPoolExecutor
from spla.backends import cpu
from spla.bench import corpus
from spla.csr import CSRMatrix
name = sys.argv[1]; dtype = np.dtype(sys.argv[2])
base = corpus.build(name, int(16e6), seed=0, dtype=np.float64).to_scipy()
S = base.astype(dtype); S.data[:] = 1
u = CSRMatrix.from_scipy(S); v = CSRMatrix.from_scipy(S); v._cache["uniform-values"] = False
x = np.random.default_rng(0).uniform(-1, 1, S.shape[1]).astype(dtype)
cpu.csr_product(u, x); cpu.csr_product(v, x)
pool = ThreadPoolExecutor(1)
y = np.empty(S.shape[0], dtype)
def timed(f, b, e, ptrs):
    s = time.perf_counter(); f(b, e, *ptrs); return s, time.perf_counter(), os.sched_getcpu() if hasattr(os, "sched_getcpu") else -1
import ctypes
libc = ctypes.CDLL(None)
def cpu_now():
    return libc.sched_getcpu()
def timed(f, b, e, ptrs):
    s = time.perf_counter(); c0 = cpu_now(); f(b, e, *ptrs); return s, time.perf_counter(), c0, cpu_now()
for label, A, op in (("uniform", u, "spmv_uniform"), ("values", v, "spmv")) * 2:
    f, arrays, cuts = A._cache[("cpu-product-ranges", op, 2)]
    ptrs = [a.ctypes.data for a in (*arrays, x, y)]
    rows = []
    for r in range(12):
        t0 = time.perf_counter()
        fut = pool.submit(timed, f, cuts[1], cuts[2], ptrs)
        m = timed(f, cuts[0], cuts[1], ptrs)
        w = fut.result()
        rows.append(f"[main {(m[1]-m[0])*1e3:4.1f} cpu{m[2]}{m[3]} | worker start +{(w[0]-t0)*1e3:4.1f} dur {(w[1]-w[0])*1e3:4.1f} cpu{w[2]}{w[3]}]")
    print(label, " ".join(rows[:6])); print("       ", " ".join(rows[6:]))
