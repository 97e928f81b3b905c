"""Where a dia refusal's time goes on the GPU (session 32): each step of the sample pass timed alone."""
import time, numpy as np, cupy, spla
from spla import csr_passes
from spla.planning import dia
A = spla.load("shared-matrices/delaunay_n16.mtx.gz").to_device()
def t(name, f, n=20):
    f(); cupy.cuda.Device().synchronize(); ts = []
    for _ in range(n):
        b = time.perf_counter(); f(); cupy.cuda.Device().synchronize(); ts.append((time.perf_counter() - b) * 1e6)
    print(f"{name:28s} {np.median(ts):8.1f} us")
pos = np.random.default_rng(0).integers(0, A.nnz, size=4096)
t("default_rng+integers", lambda: np.random.default_rng(0).integers(0, A.nnz, size=4096))
t("cupy.asarray 32KB", lambda: cupy.asarray(pos))
t("sampled_diagonals", lambda: csr_passes.sampled_diagonals(A, pos))
t("unique", lambda: np.unique(csr_passes.sampled_diagonals(A, pos)))
t("free_device_memory", spla.device.free_device_memory)
t("dia._detect", lambda: dia._detect(cupy, A))
t("row_stats", lambda: __import__("spla.planning.stats", fromlist=["x"]).row_stats(A))
