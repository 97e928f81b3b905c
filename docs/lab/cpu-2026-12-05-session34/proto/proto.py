import ctypes, time, sys, numpy as np, scipy.sparse as sp
sys.path.insert(0, "/work/main")
from spla.bench import corpus
from spla import io
lib = ctypes.CDLL("/tmp/pat/proto.so")
V = ctypes.c_void_p
for name, arg in (("data_f64", V), ("uni_f64", ctypes.c_double), ("data_f32", V), ("uni_f32", ctypes.c_float)):
    f = getattr(lib, name); f.restype = None
    f.argtypes = [ctypes.c_int64, ctypes.c_int64, V, V, arg, V, V]

def bench(label, S):
    S = sp.csr_matrix(S); S.sort_indices()
    for dt, tag in ((np.float64, "f64"), (np.float32, "f32")):
        ip, ix = S.indptr.astype(np.int32), S.indices.astype(np.int32)
        d = np.ones(S.nnz, dt); x = np.random.default_rng(0).uniform(-1, 1, S.shape[1]).astype(dt)
        y1 = np.empty(S.shape[0], dt); y2 = np.empty_like(y1)
        fd, fu = getattr(lib, "data_" + tag), getattr(lib, "uni_" + tag)
        run_d = lambda: fd(0, S.shape[0], ip.ctypes.data, ix.ctypes.data, d.ctypes.data, x.ctypes.data, y1.ctypes.data)
        run_u = lambda: fu(0, S.shape[0], ip.ctypes.data, ix.ctypes.data, 1.0, x.ctypes.data, y2.ctypes.data)
        Ssc = sp.csr_matrix((d, ix, ip), shape=S.shape)
        run_s = lambda: Ssc @ x
        run_d(); run_u()
        assert np.array_equal(y1, y2) and np.array_equal(y1, run_s())
        t = {"scipy": [], "data": [], "uniform": []}
        for _ in range(5):
            for k, f in (("scipy", run_s), ("data", run_d), ("uniform", run_u)):
                s = time.perf_counter(); f(); t[k].append(time.perf_counter() - s)
        m = {k: min(v) * 1e3 for k, v in t.items()}
        print(f"{label:<28} {tag} nnz {S.nnz:>11,}  scipy {m['scipy']:8.2f}  data {m['data']:8.2f}  uniform {m['uniform']:8.2f} ms  uniform/data {m['data']/m['uniform']:.2f}x  /scipy {m['scipy']/m['uniform']:.2f}x", flush=True)

for spec in sys.argv[1:]:
    A = corpus.load(spec)
    bench(spec, A.to_scipy())
