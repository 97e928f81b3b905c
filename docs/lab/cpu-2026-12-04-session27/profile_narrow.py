"""Run staged on one corpus matrix with its narrow columns forced on or off, for Nsight Compute
(session 26's open question: why float64 narrow ran 6% slower than plain on kNN windows).

    ncu --clock-control none -k regex:spla_spmv_staged -s 2 -c 1 --section SpeedOfLight \\
        --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy \\
        python3 profile_narrow.py --narrow on --dtype float64

The first call binds staged and is checked against the float64 SciPy product; the entry it bound
(spla_spmv_staged or spla_spmv_staged_narrow) is checked against --narrow, so a profile never
reads the wrong one.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--narrow", choices=("on", "off"), required=True)
    parser.add_argument("--dtype", choices=("float32", "float64"), default="float64")
    parser.add_argument("--family", default="knn-window")
    parser.add_argument("--nnz", type=float, default=4e7)
    parser.add_argument("--calls", type=int, default=4)
    args = parser.parse_args(argv)

    import cupy

    from spla import bench
    from spla.bench import corpus
    from spla.ops import spmv as ops_spmv
    from spla.planning import segmented

    segmented.STAGED_NARROW = (args.dtype,) if args.narrow == "on" else ()
    A64 = corpus.build(args.family, int(args.nnz))
    x_host = np.random.default_rng(1).uniform(-1, 1, A64.n_cols)
    reference = A64.to_scipy() @ x_host
    A = A64.astype(args.dtype).to_device()
    x = cupy.asarray(x_host.astype(args.dtype))
    y = ops_spmv.spmv(A, x, kernel="staged")
    entry = ops_spmv.bound_launcher(A, "staged").entry
    if (entry == "_narrow") != (args.narrow == "on"):
        print(f"staged bound entry {entry!r}, not what --narrow {args.narrow} asks (do its tiles span "
              f"under {segmented.NARROW_SPAN} columns?)", file=sys.stderr)
        return 1
    error = bench.relative_error(cupy.asnumpy(y).astype(np.float64), reference)
    for _ in range(args.calls):
        ops_spmv.spmv(A, x, kernel="staged", out=y)
    cupy.cuda.Device().synchronize()
    print(f"{args.family}@{args.nnz:.0e} {args.dtype}: staged{entry or ' (plain)'}, {A.nnz:,} nnz, "
          f"relative error {error:.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
