import ctypes, sys, time, numpy as np, scipy.sparse as sp
sys.path.insert(0, "/work/main")
import spla
lib = ctypes.CDLL("/tmp/tr/tr.so")
for f in (lib.tr, lib.naive):
    f.restype = ctypes.c_int64
    f.argtypes = [ctypes.c_int64, ctypes.c_int64] + [ctypes.c_void_p] * 6 + [ctypes.c_int]
for spec in sys.argv[1:]:
    S = spla.load(spec).to_scipy().astype(np.float64)
    S.data = np.random.default_rng(0).uniform(size=S.nnz)
    n, m = S.shape
    want = S.T.tocsr()
    def run(f, shift):
        ip = np.zeros(m + 1, np.int32); ix = np.empty(S.nnz, np.int32); d = np.empty(S.nnz)
        f(n, m, S.indptr.ctypes.data, S.indices.ctypes.data, S.data.ctypes.data, ip.ctypes.data, ix.ctypes.data, d.ctypes.data, shift)
        return ip, ix, d
    for shift in (9, 11, 13):
        got = run(lib.tr, shift)
        assert all(np.array_equal(a, b) for a, b in zip(got, (want.indptr, want.indices, want.data)))
    res = {}
    for name, f in (("scipy", lambda: S.T.tocsr()), ("naive C", lambda: run(lib.naive, 0)),
                    ("bucket 9", lambda: run(lib.tr, 9)), ("bucket 11", lambda: run(lib.tr, 11)), ("bucket 13", lambda: run(lib.tr, 13))):
        res[name] = []
    for _ in range(3):
        for name, f in (("scipy", lambda: S.T.tocsr()), ("naive C", lambda: run(lib.naive, 0)),
                        ("bucket 9", lambda: run(lib.tr, 9)), ("bucket 11", lambda: run(lib.tr, 11)), ("bucket 13", lambda: run(lib.tr, 13))):
            s = time.perf_counter(); f(); res[name].append(time.perf_counter() - s)
    print(spec, S.shape, S.nnz, "  ".join(f"{k} {min(v)*1e3:.0f} ms" for k, v in res.items()), flush=True)
