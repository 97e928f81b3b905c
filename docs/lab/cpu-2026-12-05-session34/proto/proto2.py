import ctypes, time, sys, numpy as np, scipy.sparse as sp
from concurrent.futures import ThreadPoolExecutor
sys.path.insert(0, "/work/main")
from spla.bench import corpus
lib = ctypes.CDLL("/tmp/pat/proto.so")
V = ctypes.c_void_p
for name, arg in (("data_f64", V), ("uni_f64", ctypes.c_double), ("data_f32", V), ("uni_f32", ctypes.c_float)):
    f = getattr(lib, name); f.restype = None
    f.argtypes = [ctypes.c_int64, ctypes.c_int64, V, V, arg, V, V]
pool = ThreadPoolExecutor(1)

def bench(label, S):
    S = sp.csr_matrix(S); S.sort_indices()
    n = S.shape[0]
    cut = int(np.searchsorted(S.indptr, S.nnz // 2))
    for dt, tag in ((np.float64, "f64"), (np.float32, "f32")):
        ip, ix = S.indptr.astype(np.int32), S.indices.astype(np.int32)
        d = np.ones(S.nnz, dt); x = np.random.default_rng(0).uniform(-1, 1, S.shape[1]).astype(dt)
        y1 = np.empty(n, dt); y2 = np.empty_like(y1)
        fd, fu = getattr(lib, "data_" + tag), getattr(lib, "uni_" + tag)
        def two(f, third, y):
            fut = pool.submit(f, cut, n, ip.ctypes.data, ix.ctypes.data, third, x.ctypes.data, y.ctypes.data)
            f(0, cut, ip.ctypes.data, ix.ctypes.data, third, x.ctypes.data, y.ctypes.data); fut.result()
        run_d = lambda: two(fd, d.ctypes.data, y1)
        run_u = lambda: two(fu, 1.0, y2)
        run_d(); run_u(); assert np.array_equal(y1, y2)
        t = {"data": [], "uniform": []}
        for _ in range(7):
            for k, f in (("data", run_d), ("uniform", run_u)):
                s = time.perf_counter(); f(); t[k].append(time.perf_counter() - s)
        m = {k: min(v) * 1e3 for k, v in t.items()}
        print(f"{label:<28} {tag} 2 threads  data {m['data']:8.2f}  uniform {m['uniform']:8.2f} ms  uniform/data {m['data']/m['uniform']:.2f}x", flush=True)

for spec in sys.argv[1:]:
    bench(spec, corpus.load(spec).to_scipy())
