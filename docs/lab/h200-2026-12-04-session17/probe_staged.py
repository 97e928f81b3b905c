"""One-off probe (session 17): variants of kernels/spmv_staged.cu beside the committed kernel and
cuSPARSE, in turns. Each variant's y is compared with cuSPARSE's before it is timed, except
loads_only (a probe of the load phase alone: its y is meaningless and marked so)."""
import sys
from pathlib import Path

import cupy
import numpy as np

sys.path.insert(0, "scripts")
from ab_kernel import compile_variant, variant_launcher  # noqa: E402

from spla import bench  # noqa: E402
from spla.bench import corpus  # noqa: E402
from spla.ops import spmv as ops_spmv  # noqa: E402

# probe_staged.py TRY_FILE VARIANT_SET MATRIX...
PATH = Path(__file__).with_name(sys.argv.pop(1))
SCALAR = ("-DTRY_SCALAR_LOADS",)
VARIANT_SETS = {
    # call 2 (spmv_staged_try.cu against the first staged kernel: 16-byte loads, LONG 32)
    "call2": [("try", ()), ("loads_only", ("-DTRY_LOADS_ONLY",)), ("min8", ("-DTRY_MIN_BLOCKS=8",)),
              ("scalar", SCALAR), ("min5", ("-DTRY_MIN_BLOCKS=5",))],
    # call 4 (spmv_staged_try2.cu against the committed kernel: scalar loads, LONG 32)
    "call4": [("scalar32", SCALAR), ("loads_only", SCALAR + ("-DTRY_LOADS_ONLY",)),
              ("scalar16", SCALAR + ("-DTRY_LONG=16",)), ("scalar8", SCALAR + ("-DTRY_LONG=8",)),
              ("scalar4", SCALAR + ("-DTRY_LONG=4",))],
    # call 5 (spmv_staged_try3.cu against the committed kernel; probe_* are timing probes, y not checked)
    "call5": [("prefetch", ("-DTRY_PREFETCH",)), ("probe_no_arrive", ("-DTRY_NO_ARRIVE",)),
              ("probe_no_arrive_prefetch", ("-DTRY_NO_ARRIVE", "-DTRY_PREFETCH")),
              ("probe_loads_only", ("-DTRY_LOADS_ONLY",))],
}
VARIANTS = VARIANT_SETS[sys.argv.pop(1)]

for source in sys.argv[1:]:
    A64 = corpus.load(source, dtype=np.float64)
    print(f"{source}: {A64.n_rows:,} rows, {A64.nnz:,} nnz", flush=True)
    for dtype, T in (("float64", 8), ("float32", 16), ("float32", 8)):
        A = A64.astype(dtype).to_device()
        x = cupy.asarray(np.random.default_rng(1).uniform(-1, 1, A.n_cols).astype(dtype))
        out = cupy.empty(A.n_rows, dtype)
        ref = ops_spmv.spmv(A, x, kernel="cusparse").get().astype(np.float64)
        kernel = f"staged:{T}"
        ops_spmv.spmv(A, x, kernel=kernel, out=out)
        bound = ops_spmv.bound_launcher(A, kernel)
        one, zero = A.dtype.type(1), A.dtype.type(0)
        runs = {"cusparse": lambda: ops_spmv.spmv(A, x, kernel="cusparse", out=out),
                "committed": lambda: bound.launch(x, out, one, zero)}
        tol = 1e-3 if dtype == "float32" else 1e-10
        for name, options in VARIANTS:
            launcher = variant_launcher(bound, compile_variant("staged", A.dtype, A.index_dtype, T, PATH, options), {})
            out.fill(np.nan)
            got = launcher.launch(x, out, one, zero).get().astype(np.float64)
            err = float(np.max(np.abs(got - ref)) / max(1e-30, float(np.max(np.abs(ref)))))
            if name != "loads_only" and not name.startswith("probe_") and not err < tol:
                print(f"  {dtype} {kernel} {name}: WRONG (error {err:.2e}), not timed", flush=True)
                continue
            runs[name] = lambda launcher=launcher: launcher.launch(x, out, one, zero)
        samples = bench.time_in_turns(runs, rounds=3, budget_s=0.1)
        anchor = float(np.median(samples["cusparse"]))
        for name, ms in samples.items():
            m = float(np.median(ms))
            print(f"  {dtype} {kernel:<10} {name:<24} {m * 1e3:8.1f} us  {anchor / m:.3f}x cuSPARSE", flush=True)
