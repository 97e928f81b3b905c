"""Session 13 call 2: where the hot path's host time goes (not committed)."""
import statistics, sys, time, threading, json
import numpy as np
import cupy
import spla
from spla.io import generators
from spla.ops import spmv as ops_spmv

A = generators.poisson2d(32).astype("float32").to_device()
x = cupy.asarray(np.random.default_rng(0).uniform(-1, 1, A.n_cols).astype(np.float32))
y = cupy.empty(A.n_rows, dtype=np.float32)
one, zero = np.float32(1), np.float32(0)
spla.spmv(A, x, out=y, kernel="scalar")
L = ops_spmv.bound_launcher(A, "scalar")
P = L.packed
drv = cupy.cuda.driver.launchKernel
gcs = cupy.cuda.get_current_stream
sptr = gcs().ptr
f, g, b, params = P.function, P.grid, P.block, P.params
slots, values = P.slots, P.values(np.float32)
lock = threading.Lock()
gd = cupy.cuda.runtime.getDevice

def inline_lock():
    with lock:
        slots[4] = x.data.ptr; slots[5] = y.data.ptr; values[12] = one; values[14] = zero
        drv(f, g, 1, 1, b, 1, 1, 0, gcs().ptr, params, 0)

def inline_nolock():
    slots[4] = x.data.ptr; slots[5] = y.data.ptr; values[12] = one; values[14] = zero
    drv(f, g, 1, 1, b, 1, 1, 0, gcs().ptr, params, 0)

def inline_ptrs_only():
    slots[4] = x.data.ptr; slots[5] = y.data.ptr
    drv(f, g, 1, 1, b, 1, 1, 0, gcs().ptr, params, 0)

launches = {
    "spla.spmv(A,x,out=y,kernel=scalar)": lambda: spla.spmv(A, x, out=y, kernel="scalar"),
    "spla.spmv(A,x,out=y)": lambda: spla.spmv(A, x, out=y),
    "launcher.fast": lambda: L.fast(x, 1.0, 0.0, y),
    "launcher.launch": lambda: L.launch(x, y, one, zero),
    "inline lock+4 writes+driver": inline_lock,
    "inline 4 writes+driver": inline_nolock,
    "inline 2 ptr writes+driver": inline_ptrs_only,
    "driver + get_current_stream().ptr": lambda: drv(f, g, 1, 1, b, 1, 1, 0, gcs().ptr, params, 0),
    "driver only (fixed stream)": lambda: drv(f, g, 1, 1, b, 1, 1, 0, sptr, params, 0),
    "packed.launch()": P.launch,
}
pieces = {
    "get_current_stream().ptr": lambda: gcs().ptr,
    "runtime.getDevice()": gd,
    "x.shape == shape": lambda: x.shape == (1024,),
    "x.dtype == dtype": lambda: x.dtype == np.float32,
    "x._c_contiguous": lambda: x._c_contiguous,
    "x.data.ptr": lambda: x.data.ptr,
    "lock acquire+release": lambda: (lock.acquire(), lock.release()),
    "slots[i] = int": lambda: slots.__setitem__(4, 12345),
    "values[i] = f32": lambda: values.__setitem__(12, one),
    "empty lambda": lambda: None,
    "A._cache.get(...).get(k)": lambda: A._cache.get("spmv-bound", {}).get("scalar"),
}

def per_call(runs, calls, repeat):
    s = cupy.cuda.get_current_stream()
    samples = {k: [] for k in runs}
    for _ in range(repeat):
        for k, fn in runs.items():
            fn(); s.synchronize()
            t = time.perf_counter()
            for _ in range(calls):
                fn()
            s.synchronize()
            samples[k].append((time.perf_counter() - t) / calls * 1e6)
    return {k: statistics.median(v) for k, v in samples.items()}

want = A.to_host().to_scipy() @ x.get()
for k, fn in launches.items():
    y.fill(np.nan); fn(); cupy.cuda.runtime.deviceSynchronize()
    err = float(np.abs(y.get() - want).max()); assert err < 1e-4, (k, err)
res = per_call(launches, 3000, 7)
res.update(per_call(pieces, 10000, 5))
for k, v in res.items():
    print(f"{k:<40} {v:7.3f} us")
if len(sys.argv) > 1:
    json.dump(res, open(sys.argv[1], "w"), indent=1)
