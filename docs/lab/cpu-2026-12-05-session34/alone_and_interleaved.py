# Session 34, run by hand: PYTHONPATH=. python3 alone_and_interleaved.py FAMILY DTYPE
import time, sys, numpy as np
from spla.backends import cpu
from spla.bench import corpus
from spla.csr import CSRMatrix
cpu.UNIFORM_DTYPES = ("float32", "float64")
name = sys.argv[1]; dtype = np.dtype(sys.argv[2])
S = corpus.build(name, int(16e6), seed=0, dtype=np.float64).to_scipy().astype(dtype); S.data[:] = 1
u = CSRMatrix.from_scipy(S); v = CSRMatrix.from_scipy(S); v._cache["uniform-values"] = False
x = np.random.default_rng(0).uniform(-1, 1, S.shape[1]).astype(dtype)
out = np.empty(S.shape[0], dtype)
def q(a): a = np.array(a) * 1e3; return " ".join(f"{v:.2f}" for v in np.percentile(a, [0, 25, 50, 75, 100]))
for label, A in (("uniform alone", u), ("values alone", v), ("uniform alone", u)):
    t = []
    for _ in range(40):
        s = time.perf_counter(); cpu.csr_product(A, x, out); t.append(time.perf_counter() - s)
    print(f"{label:<14} {q(t)}", flush=True)
t = {"u": [], "v": []}
for r in range(40):
    for k in ("uv" if r % 2 else "vu"):
        s = time.perf_counter(); cpu.csr_product(u if k == "u" else v, x, out); t[k].append(time.perf_counter() - s)
print(f"interleaved u  {q(t['u'])}\ninterleaved v  {q(t['v'])}")
