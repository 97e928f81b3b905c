#!/usr/bin/env python
"""Run one SpMV kernel on one matrix a few times, for a profiler to watch.

    ncu --clock-control none -k regex:segmented -c 1 --section SpeedOfLight \\
        python3 scripts/profile_spmv.py gen:powerlaw:16000000:8:34000 --kernel segmented

The first call compiles and binds the kernel (and is checked against SciPy);
the profiler's launch filter picks which of the timed calls it reads.
`scripts/gpu_check.sh profile` runs this under ncu (PROFILE_SOURCE, PROFILE_KERNEL).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", help="a matrix file, a gen: spec or corpus:FAMILY:NNZ")
    parser.add_argument("--kernel", default="auto")
    parser.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    parser.add_argument("--calls", type=int, default=3)
    args = parser.parse_args(argv)

    import cupy

    from spla import bench
    from spla.bench import corpus
    from spla.ops import spmv as ops_spmv
    from spla.planning import spmv as rules

    A64 = corpus.load(args.source, dtype=np.float64)
    x_host = np.random.default_rng(1).uniform(-1, 1, A64.n_cols)
    reference = A64.to_scipy() @ x_host
    A = A64.astype(args.dtype).to_device()
    x = cupy.asarray(x_host.astype(args.dtype))
    y = ops_spmv.spmv(A, x, kernel=args.kernel)
    error = bench.relative_error(cupy.asnumpy(y).astype(np.float64), reference)
    for _ in range(args.calls):
        ops_spmv.spmv(A, x, kernel=args.kernel, out=y)
    cupy.cuda.Device().synchronize()
    print(f"{args.source}: {A.n_rows:,} rows, {A.nnz:,} nnz, kernel {args.kernel} "
          f"({rules.choose_kernel(A) if args.kernel == 'auto' else args.kernel}), relative error {error:.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
