"""GEMM's cp.async steps before and after session 42's shared tile copy (P3), in one process.

`spla::gemm::copy_tile` (kernels/gemm/gemm_common.cuh) now issues the 16-byte copies that 06_dbuf.cu
(both kernels), 07_tf32.cu and 08_splitk.cu each wrote out. This times each kernel as committed against
its file before the change (`gemm_NN_*_before.cu` here, copied into kernels/gemm/ for the run, since
they include gemm_common.cuh), with cuBLAS beside them, in turns; each result is checked against the
float64 product first (spla.bench.gemm's scaled error).

    PYTHONPATH=. python3 gemm_ab.py --out FILE.json
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
KERNELS = ("dbuf", "dbuf64", "tf32", "splitk", "splitk_n8")
SHAPES = ((4096, 4096, 4096), (16384, 64, 4096), (2000, 32, 100_000), (2000, 8, 100_000))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--budget", type=float, default=0.2)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)

    import cupy

    from spla import bench
    from spla.backends.cuda import gemm as cuda_gemm
    from spla.backends.cuda.runtime import NVRTC_OPTIONS, KernelSource, kernel_dir
    from spla.bench.gemm import errors_against, random_operands, tolerance
    from spla.bench.spmv import time_rounds
    from spla.bench.variants import gemm_kernel

    before = {}
    for path in HERE.glob("gemm_*_before.cu"):
        file = f"gemm/{path.name.removeprefix('gemm_')}"  # gemm/06_dbuf_before.cu
        shutil.copy(path, kernel_dir() / file)
        declared = cuda_gemm.SOURCES[file.replace("_before", "")]
        before[declared.filename] = KernelSource(file, declared.names, declared.options[len(NVRTC_OPTIONS):])
    records = []
    try:
        for shape in SHAPES:
            m, n, k = shape
            A, B = random_operands(m, n, k, cupy)
            reference = A.astype(cupy.float64) @ B.astype(cupy.float64)
            runs, row = {}, {"shape": shape}
            for name in KERNELS:
                plan = cuda_gemm.plan(gemm_kernel(name), np.float32, shape)
                entry = plan.kernel
                if entry.name != name:
                    continue
                for label, sources in (("new", {}), ("old", before)):
                    original = dict(cuda_gemm.SOURCES)
                    cuda_gemm.SOURCES.update(sources)
                    try:
                        C = cupy.full((m, n), cupy.nan, dtype=cupy.float32)
                        launch = cuda_gemm.bind(A, B, C, plan)
                        launch()
                    finally:
                        cuda_gemm.SOURCES.clear()
                        cuda_gemm.SOURCES.update(original)
                    errors = errors_against(C, reference, A, B)
                    ok = errors["scaled_err"] <= tolerance(entry.precision)
                    row[f"{name}-{label}"] = {**errors, "correct": bool(ok)}
                    if ok:
                        runs[f"{name}-{label}"] = launch
            Cb = cupy.empty((m, n), dtype=cupy.float32)
            runs["cublas"] = lambda A=A, B=B, Cb=Cb: cupy.matmul(A, B, out=Cb)
            runs["cublas"]()  # checked, and its first call (handle, workspace) kept out of the timed rounds
            row["cublas"] = errors_against(Cb, reference, A, B)
            _, device = time_rounds(cupy, runs, args.rounds, args.budget)
            for label in runs:
                row[label].update(device_us=statistics.median(device[label]), device_rounds_us=device[label])
            records.append(row)
            pairs = " ".join(f"{name} {row[f'{name}-new']['device_us']:.1f}/{row[f'{name}-old']['device_us']:.1f}us"
                             f" ({row[f'{name}-old']['device_us'] / row[f'{name}-new']['device_us']:.3f})"
                             for name in KERNELS if f"{name}-new" in runs and f"{name}-old" in runs)
            print(f"{m}x{n}x{k}: new/old {pairs} | cublas {row['cublas']['device_us']:.1f}us", flush=True)
            args.out.write_text(json.dumps({"environment": bench.environment(), "records": records}, indent=1))
    finally:
        for source in before.values():
            source.path.unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
