# Session 34, run by hand (PYTHONPATH=. python3 two_thread_quartiles.py FAMILY DTYPE, or DTYPE FAMILY... for two_thread_quartiles.py).
import time, sys, numpy as np
from spla.backends import cpu
from spla.bench import corpus
from spla.csr import CSRMatrix
for name in sys.argv[2:]:
    dtype = np.dtype(sys.argv[1])
    base = corpus.build(name, int(16e6), seed=0, dtype=np.float64).to_scipy()
    S = base.astype(dtype); S.data[:] = 1
    u = CSRMatrix.from_scipy(S); v = CSRMatrix.from_scipy(S); v._cache["uniform-values"] = False
    x = np.random.default_rng(0).uniform(-1, 1, S.shape[1]).astype(dtype)
    cpu.csr_product(u, x); cpu.csr_product(v, x)
    t = {"u": [], "v": []}
    for r in range(61):
        for k in (("u", "v") if r % 2 else ("v", "u")):
            s = time.perf_counter(); cpu.csr_product(u if k == "u" else v, x); t[k].append((time.perf_counter() - s) * 1e3)
    q = {k: np.percentile(a, [0, 25, 50, 75]) for k, a in t.items()}
    print(f"{name:<14} {dtype.name} values {' '.join(f'{v:.2f}' for v in q['v'])} | uniform {' '.join(f'{v:.2f}' for v in q['u'])} | median ratio {q['v'][2]/q['u'][2]:.2f}", flush=True)
