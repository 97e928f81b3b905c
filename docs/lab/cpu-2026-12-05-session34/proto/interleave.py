import ctypes, sys, time, numpy as np, scipy.sparse as sp
sys.path.insert(0, "/work/main")
from spla.bench import corpus
lib = ctypes.CDLL("/tmp/il/il.so")
V = ctypes.c_void_p
names = ["plain", "pair", "quad"]
for n in names:
    for t in ("f64", "f32"):
        f = getattr(lib, f"{n}_{t}"); f.restype = None; f.argtypes = [ctypes.c_int64, ctypes.c_int64] + [V] * 5
for spec in sys.argv[1:]:
    S = corpus.load(spec).to_scipy()
    for dt, tag in ((np.float64, "f64"), (np.float32, "f32")):
        S2 = S.astype(dt); ip, ix = S2.indptr.astype(np.int32), S2.indices.astype(np.int32); d = S2.data
        x = np.random.default_rng(0).uniform(-1, 1, S.shape[1]).astype(dt)
        want = S2 @ x
        ys = {n: np.empty(S.shape[0], dt) for n in names}
        runs = {n: (lambda f=getattr(lib, f"{n}_{tag}"), y=ys[n]: f(0, S.shape[0], ip.ctypes.data, ix.ctypes.data, d.ctypes.data, x.ctypes.data, y.ctypes.data)) for n in names}
        for n, r in runs.items():
            r(); assert np.array_equal(ys[n], want), n
        t = {n: [] for n in names}
        for k in range(9):
            for n in (names if k % 2 else names[::-1]):
                s = time.perf_counter(); runs[n](); t[n].append(time.perf_counter() - s)
        m = {n: np.median(v) * 1e3 for n, v in t.items()}
        print(f"{spec:<28} {tag} 1 thread  plain {m['plain']:7.2f}  pair {m['pair']:7.2f} ({m['plain']/m['pair']:.2f}x)  quad {m['quad']:7.2f} ({m['plain']/m['quad']:.2f}x)", flush=True)
