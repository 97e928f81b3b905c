"""Benchmark sparse-sparse products (SpGEMM): ``A @ A`` through ``spla.CSRMatrix`` against cupyx.

The matrix is the 2-D Poisson 5-point Laplacian on an N x N grid (default
N = 1024, so 1M rows and 5M entries; A @ A has 13 entries a row). Each
product is checked against SciPy's float64 result (same structure, values
within the dtype's tolerance) before it is timed; a wrong result is reported,
not timed. spla and cupyx run interleaved in rounds, timed with CUDA events
around one end-to-end call from Python (what a user pays: spla's part is the
memory estimate and the cuSPARSE call through cupyx).

Without a GPU (or with --cpu) it times spla's host path against SciPy instead;
--quick uses N = 64 and few rounds, to check the script itself.

    PYTHONPATH=. python scripts/bench_spgemm.py --out $OUT
    PYTHONPATH=. python scripts/bench_spgemm.py --quick
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import spla  # noqa: E402
from spla import cuda  # noqa: E402

TOLERANCE = {np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-12}


def check(got, want, dtype) -> str | None:
    """None if ``got`` (a CSRMatrix or cupyx/SciPy matrix) is SciPy's ``want``, else why not."""
    got = got.to_scipy() if isinstance(got, spla.CSRMatrix) else (got.get() if hasattr(got, "get") else got)
    got = got.tocsr()
    got.sum_duplicates()
    if got.shape != want.shape or got.nnz != want.nnz:
        return f"shape/nnz {got.shape}/{got.nnz}, expected {want.shape}/{want.nnz}"
    if not (np.array_equal(got.indptr, want.indptr) and np.array_equal(got.indices, want.indices)):
        return "structure differs from SciPy's"
    scale = float(np.abs(want.data).max(initial=1.0))
    error = float(np.abs(got.data.astype(np.float64) - want.data).max(initial=0.0)) / scale
    if error > TOLERANCE[np.dtype(dtype)] * 10:
        return f"relative error {error:.2e}"
    return None


def time_gpu(fn, rounds: int) -> float:
    """Median seconds of one call, with CUDA events."""
    cupy = cuda.require_cupy()
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    times = []
    for _ in range(rounds):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, stop) / 1e3)
    return float(np.median(times))


def time_cpu(fn, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        begin = time.perf_counter()
        fn()
        times.append(time.perf_counter() - begin)
    return float(np.median(times))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1024, help="grid side N (the matrix is N^2 x N^2)")
    parser.add_argument("--dtype", choices=["float32", "float64"], action="append")
    parser.add_argument("--rounds", type=int, default=10, help="interleaved rounds per contender")
    parser.add_argument("--quick", action="store_true", help="N = 64, 3 rounds")
    parser.add_argument("--cpu", action="store_true", help="time the host path even with a GPU")
    parser.add_argument("--out", type=Path, help="folder for bench_spgemm.json")
    args = parser.parse_args(argv)
    n, rounds = (64, 3) if args.quick else (args.n, args.rounds)
    dtypes = args.dtype or ["float64", "float32"]
    on_gpu = cuda.gpu_available() and not args.cpu
    rows = []
    for dtype in dtypes:
        A = spla.load(f"gen:poisson2d:{n}").astype(dtype)
        reference = A.astype(np.float64).to_scipy() @ A.astype(np.float64).to_scipy()
        reference.sum_duplicates()
        if on_gpu:
            dev = A.to_device()
            theirs = dev.to_cupyx()
            contenders = {"spla": lambda dev=dev: dev @ dev, "cupyx": lambda m=theirs: m @ m}
        else:
            host = A.to_scipy()
            contenders = {"spla (host)": lambda A=A: A @ A, "scipy": lambda m=host: m @ m}
        status = {}
        for name, fn in contenders.items():
            try:
                status[name] = check(fn(), reference, dtype)
            except Exception as exc:  # noqa: BLE001  (a contender that fails is reported; the others run)
                status[name] = f"{type(exc).__name__}: {exc}"
        timer = time_gpu if on_gpu else time_cpu
        seconds: dict[str, list[float]] = {name: [] for name in contenders}
        for _ in range(rounds):  # interleave: lent machines drift between calls
            for name, fn in contenders.items():
                if status[name] is None:
                    seconds[name].append(timer(fn, 1))
        for name in contenders:
            median = float(np.median(seconds[name])) if seconds[name] else None
            rows.append({"dtype": dtype, "contender": name, "n_rows": A.shape[0], "nnz": A.nnz,
                         "nnz_product": int(reference.nnz), "seconds": median, "error": status[name]})
    anchor = {row["dtype"]: row["seconds"] for row in rows if row["contender"] in ("cupyx", "scipy")}
    print(f"| dtype | contender | rows | nnz(A) | nnz(A@A) | ms per call | vs {'cupyx' if on_gpu else 'scipy'} |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        if row["seconds"] is None:
            print(f"| {row['dtype']} | {row['contender']} | {row['n_rows']} | {row['nnz']} | "
                  f"{row['nnz_product']} | failed: {row['error']} | |")
            continue
        base = anchor.get(row["dtype"])
        ratio = f"{row['seconds'] / base:.2f}x" if base else ""
        print(f"| {row['dtype']} | {row['contender']} | {row['n_rows']} | {row['nnz']} | {row['nnz_product']} | "
              f"{row['seconds'] * 1e3:.3f} | {ratio} |")
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        record = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                  "device": cuda.device_name() if on_gpu else platform.processor() or platform.machine(),
                  "grid": n, "rounds": rounds, "rows": rows}
        (args.out / "bench_spgemm.json").write_text(json.dumps(record, indent=2))
    return 1 if any(row["error"] for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
