# Session 34, run by hand: PYTHONPATH=. python3 slow_rounds.py (40 s of two-thread uniform float64 products on banded-fixed@16M)
import time, sys, ctypes, numpy as np
from concurrent.futures import ThreadPoolExecutor
from spla.backends import cpu
from spla.bench import corpus
from spla.csr import CSRMatrix
cpu.UNIFORM_DTYPES = ("float32", "float64")
S = corpus.build("banded-fixed", int(16e6), seed=0, dtype=np.float64).to_scipy(); S.data[:] = 1
u = CSRMatrix.from_scipy(S)
x = np.random.default_rng(0).uniform(-1, 1, S.shape[1]); out = np.empty(S.shape[0])
cpu.csr_product(u, x, out)
f, arrays, cuts = u._cache[("cpu-product-ranges", "spmv_uniform", 2)]
ptrs = [a.ctypes.data for a in (*arrays, x, out)]
libc = ctypes.CDLL(None)
pool = ThreadPoolExecutor(1)
def timed(b, e):
    c0 = libc.sched_getcpu(); s = time.perf_counter(); f(b, e, *ptrs); t = time.perf_counter(); return s, t, c0, libc.sched_getcpu()
slow = fast = 0; examples = []
t_end = time.time() + 40
while time.time() < t_end:
    t0 = time.perf_counter()
    fut = pool.submit(timed, cuts[1], cuts[2])
    m = timed(cuts[0], cuts[1]); w = fut.result(); total = time.perf_counter() - t0
    if total > 0.009:
        slow += 1
        if len(examples) < 8:
            examples.append(f"total {total*1e3:.1f}: main {(m[1]-m[0])*1e3:.1f} [{m[0]-t0:.4f}..{m[1]-t0:.4f}] cpu{m[2]}{m[3]} | worker {(w[1]-w[0])*1e3:.1f} [{w[0]-t0:.4f}..{w[1]-t0:.4f}] cpu{w[2]}{w[3]}")
    else:
        fast += 1
print("slow", slow, "fast", fast); print("\n".join(examples))
