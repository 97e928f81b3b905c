"""dia's diagonal stride padding (partition camping?) on 27-point stencils, beside a copy of the same bytes."""
import sys
import cupy, numpy as np
from spla import bench
from spla.bench import corpus
from spla.ops import spmv as ops_spmv
from spla.planning import dia
from spla.planning import ceil_div

PADS = (0, 8, 64, 256, 1024, 4096 + 8, 65536 + 24)
orig = dia._stride
for source in sys.argv[1:]:
    A64 = corpus.load(source, dtype=np.float64)
    check = bench.SpmvCheck.for_matrix(A64)
    dtype = "float32"
    x = cupy.asarray(check.x.astype(dtype))
    runs = {}
    for pad in PADS:
        dia._stride = lambda n, pad=pad: ceil_div(n, dia.STRIDE_ROWS) * dia.STRIDE_ROWS + pad
        A = A64.astype(dtype).to_device()
        out = cupy.empty(A.n_rows, dtype=dtype)
        row = {}
        fn = lambda A=A, out=out: ops_spmv.spmv(A, x, kernel="dia:2", out=out)
        if check.record(row, fn, dtype, f"pad {pad}"):
            runs[f"pad{pad}"] = fn
    dia._stride = orig
    nbytes = 27 * ceil_div(A64.n_rows, 8) * 8 * 4 + 2 * A64.n_rows * 4
    src = cupy.random.random(nbytes // 2 // 8); dst = cupy.empty_like(src)
    runs["copy-same-bytes"] = lambda: dst.__setitem__(slice(None), src)
    samples = bench.time_in_turns(runs, rounds=5, budget_s=0.1)
    print(f"{source}: {A64.n_rows:,} rows, {A64.nnz:,} nnz, dia bytes {nbytes/1e6:.1f} MB", flush=True)
    for name, ms in samples.items():
        med = float(np.median(ms))
        print(f"  {name:16s} {med*1e3:8.2f} us  {nbytes/med/1e9:6.0f} GB/s", flush=True)
    del runs, src, dst
    cupy.get_default_memory_pool().free_all_blocks()
