"""Session 64: does CuPy's cuSPARSE binding point the handle at CuPy's current stream on every call itself?

Session 63 left a question: every anchor remembers the stream it last set on the shared cuSPARSE handle,
and skips ``setStream`` when the current stream's pointer is unchanged; if something else pointed the
handle elsewhere in between, the anchor would launch on that stream unless the binding resets it.

1. The anchor runs on stream s1; then the handle is pointed at the null stream behind its back; the anchor
   runs on s1 again (its own check sees no change and skips setStream). Which stream does the handle
   name afterwards? s1 means the binding set it; 0 means the anchor's call ran on the wrong stream.
2. The same with the raw binding ``spMV`` alone (no spla code between).
3. Per-call host cost of the lean call as it is, and with ``setStream`` forced on every call, interleaved
   in rounds on a 1,024-row Poisson matrix (the hot path's matrix).
"""
import json
import statistics
import sys
import time

import cupy
from cupy_backends.cuda.libs import cusparse as lib

import spla
from spla.backends.cuda.cusparse import CusparseSpmv

A = spla.load("gen:poisson2d:32", dtype="float32").to_device()
x = cupy.ones(A.n_cols, dtype=cupy.float32)
out = cupy.empty(A.n_rows, dtype=cupy.float32)
anchor = CusparseSpmv(A, "csr_alg1")
s1 = cupy.cuda.Stream(non_blocking=True)
result = {"s1": s1.ptr}
with s1:
    anchor(x, out)
result["after_first_call"] = lib.getStream(anchor.handle)
lib.setStream(anchor.handle, 0)
with s1:
    anchor(x, out)
result["after_call_behind_back"] = lib.getStream(anchor.handle)
lib.setStream(anchor.handle, 0)
with s1:
    lib.spMV(anchor.handle, anchor.op, anchor.alpha.ctypes.data, anchor.mat.desc, anchor.vec_x.desc,
             anchor.beta.ctypes.data, anchor.vec_y.desc, anchor.compute_type, anchor.alg, anchor.buffer.data.ptr)
result["after_raw_binding"] = lib.getStream(anchor.handle)
s1.synchronize()
result["binding_sets_stream"] = result["after_raw_binding"] == s1.ptr
result["anchor_ran_on_s1"] = result["after_call_behind_back"] == s1.ptr

forced = CusparseSpmv(A, "csr_alg1")
current = cupy.cuda.get_current_stream


def forced_call():
    lib.setStream(forced.handle, current().ptr)
    forced(x, out)


runs = {"as is": lambda: anchor(x, out), "setStream every call": forced_call}
calls, samples = 20000, {k: [] for k in runs}
stream = cupy.cuda.get_current_stream()
for _ in range(7):
    for label, fn in runs.items():
        fn()
        stream.synchronize()
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        stream.synchronize()
        samples[label].append((time.perf_counter() - t) / calls * 1e6)
result["per_call_us"] = {k: statistics.median(v) for k, v in samples.items()}
result["rounds_us"] = samples
json.dump(result, sys.stdout, indent=1)
print()
