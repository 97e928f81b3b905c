import time, numpy as np, cupy, spla
from spla.distributed import DistCSRMatrix
A = spla.load("gen:poisson2d:256")
D = DistCSRMatrix.from_global(A)
x = D.distribute_vector(np.ones(A.n_cols))
P = D.local_product()
print("fast", P.fast is not None, "offsets same", x.offsets is D.col_offsets, type(x.local), x.local.flags.c_contiguous, x.local.dtype, D.dtype)
print("fast returns", None if P.fast is None else type(P.fast(x.local, 1, 0, None)))
Ad = A.to_device(); xs = cupy.ones(A.n_cols)
for f, name in ((lambda: D @ x, "dist"), (lambda: spla.spmv(Ad, xs), "spmv"), (lambda: P.fast(x.local, 1, 0, None), "fast"), (lambda: D.matvec_local(x.local), "local")):
    f(); cupy.cuda.get_current_stream().synchronize(); t=time.perf_counter()
    for _ in range(2000): f()
    cupy.cuda.get_current_stream().synchronize(); print(name, (time.perf_counter()-t)/2000*1e6, "us")
