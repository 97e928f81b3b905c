"""Benchmark sparse-sparse products (SpGEMM): ``A @ A`` through ``spla.CSRMatrix`` against cupyx.

The matrix is the 2-D Poisson 5-point Laplacian on an N x N grid (default
N = 1024, so 1M rows and 5M entries; A @ A has 13 entries a row). Both sides
return a new sparse matrix (the same output policy) and are timed with CUDA
events around one end-to-end call from Python (what a user pays), interleaved
in rounds. Every contender is checked against SciPy's float64 product (same
structure, values within the dtype's tolerance) before it is timed; a wrong
result is reported, not timed.

Two ways to call, each against its own cupyx anchor:

- ``same matrix``: one matrix multiplied again and again (a solver's or a
  graph code's loop). Whatever either side learns once about the matrix
  (cupyx: its canonical flag; spla: that flag, its longest row and the cupyx
  view it lends) is reused, as in a user's loop.
- ``new matrix``: a new matrix object for every call, built before the clock
  starts from the same device arrays, so first-call checks are timed on both
  sides.

cupyx gets its own copies of the arrays: what it does in place cannot reach
spla's matrix. The host cost of spla's free-memory query
(``spla.device.free_device_memory``, one driver call per product) is printed
too, since it is part of every product.

On the GPU a second table breaks the new-matrix call into stages, interleaved in
rounds like the first: spla's through the ``stage`` hook of
``spla.csr_ops.sparse_matmul`` (check: the structure pass, the free-memory query
and the one host read; bound: the product bound; operands: the cupyx views;
cuSPARSE: cupyx's SpGEMM call; wrap: the result as a CSRMatrix), cupyx's as its
canonical check (``has_canonical_format``: a kernel and a host read) and its
product. Each stage has two figures: device time between CUDA events recorded
as it ends (the GPU timeline it spans, host gaps included; they add up to the
call) and host time.

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
from spla import device  # noqa: E402

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


def time_gpu(operand, call) -> float:
    """Seconds of one ``call(operand)``, between CUDA events (host work inside included)."""
    cupy = device.require_cupy()
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    start.record()
    call(operand)
    stop.record()
    stop.synchronize()
    return cupy.cuda.get_elapsed_time(start, stop) / 1e3


def time_cpu(operand, call) -> float:
    begin = time.perf_counter()
    call(operand)
    return time.perf_counter() - begin


def square(M):
    return M @ M


def contenders(A, on_gpu: bool) -> dict[tuple[str, str], object]:
    """(way, contender) -> a function giving the operand of one call."""
    if on_gpu:
        import cupyx.scipy.sparse as csp

        dev = A.to_device()
        own = tuple(a.copy() for a in (dev.data, dev.indices, dev.indptr))  # cupyx's own arrays
        theirs = csp.csr_matrix(own, shape=A.shape)
        library, fresh_library = "cupyx", (lambda: csp.csr_matrix(own, shape=A.shape))
    else:
        import scipy.sparse as sp

        dev = A
        own = tuple(a.copy() for a in (A.data, A.indices, A.indptr))
        theirs = sp.csr_array(own, shape=A.shape)
        library, fresh_library = "scipy", (lambda: sp.csr_array(own, shape=A.shape))
    arrays = (dev.data, dev.indices, dev.indptr)
    return {
        ("same matrix", "spla"): lambda: dev,
        ("same matrix", library): lambda: theirs,
        ("new matrix", "spla"): lambda: spla.CSRMatrix(*arrays, A.shape, validate=False),
        ("new matrix", library): fresh_library,
    }


SPLA_STAGES = ("check", "bound", "operands", "cuSPARSE", "wrap")
CUPYX_STAGES = ("check", "product")


def staged_call(run, names):
    """(result, {stage: (device seconds, host seconds)}) of one ``run(stage)`` call that calls
    ``stage(name)`` as each of ``names`` ends, in order."""
    cupy = device.require_cupy()
    events = [cupy.cuda.Event() for _ in range(len(names) + 1)]
    host = [0.0]
    seen: list[str] = []

    def stage(name):
        events[len(seen) + 1].record()
        host.append(time.perf_counter())
        seen.append(name)

    events[0].record()
    host[0] = time.perf_counter()
    result = run(stage)
    events[-1].synchronize()
    if tuple(seen) != tuple(names):
        raise RuntimeError(f"stages {seen}, expected {list(names)}")
    return result, {name: (cupy.cuda.get_elapsed_time(events[k], events[k + 1]) / 1e3, host[k + 1] - host[k])
                    for k, name in enumerate(names)}


def spla_staged(M, stage):
    from spla import csr_ops

    return csr_ops.sparse_matmul(M, M, stage=stage)


def cupyx_staged(S, stage):
    if not S.has_canonical_format:  # cupyx's own check: a kernel and a host read on a new matrix
        raise RuntimeError("cupyx finds the 2-D Poisson matrix non-canonical")
    stage("check")
    C = S @ S
    stage("product")
    return C


def stage_breakdown(operands, reference, dtype, rounds) -> list[dict]:
    """Median device and host time of each stage of a new-matrix call, spla and cupyx in turns;
    each side's staged call is checked against SciPy first."""
    sides = {"spla": (operands[("new matrix", "spla")], spla_staged, SPLA_STAGES),
             "cupyx": (operands[("new matrix", "cupyx")], cupyx_staged, CUPYX_STAGES)}
    times: dict = {name: {stage: [] for stage in names} for name, (_, _, names) in sides.items()}
    for name, (operand, run, names) in sides.items():
        result, _ = staged_call(lambda stage: run(operand(), stage), names)
        error = check(result, reference, dtype)
        if error:
            raise RuntimeError(f"{name}'s staged product is wrong: {error}")
    for _ in range(rounds):
        for name, (operand, run, names) in sides.items():
            M = operand()
            _, split = staged_call(lambda stage: run(M, stage), names)
            for stage, seconds in split.items():
                times[name][stage].append(seconds)
    return [{"dtype": dtype, "contender": name, "stage": stage,
             "device_seconds": float(np.median([d for d, _ in samples])),
             "host_seconds": float(np.median([h for _, h in samples]))}
            for name, stages in times.items() for stage, samples in stages.items()]


def host_cost_of_free_memory_query(repeat: int = 50) -> float:
    """Median seconds of one ``spla.device.free_device_memory()`` call."""
    times = []
    for _ in range(repeat):
        begin = time.perf_counter()
        device.free_device_memory()
        times.append(time.perf_counter() - begin)
    return float(np.median(times))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1024, help="grid side N (the matrix is N^2 x N^2)")
    parser.add_argument("--dtype", choices=["float32", "float64"], action="append")
    parser.add_argument("--rounds", type=int, default=15, help="interleaved rounds per contender")
    parser.add_argument("--quick", action="store_true", help="N = 64, 3 rounds")
    parser.add_argument("--cpu", action="store_true", help="time the host path even with a GPU")
    parser.add_argument("--out", type=Path, help="folder for bench_spgemm.json")
    args = parser.parse_args(argv)
    n, rounds = (64, 3) if args.quick else (args.n, args.rounds)
    dtypes = args.dtype or ["float64", "float32"]
    on_gpu = device.gpu_available() and not args.cpu
    timer = time_gpu if on_gpu else time_cpu
    rows: list[dict] = []
    stages: list[dict] = []
    for dtype in dtypes:
        A = spla.load(f"gen:poisson2d:{n}").astype(dtype)
        reference = A.astype(np.float64).to_scipy() @ A.astype(np.float64).to_scipy()
        reference.sum_duplicates()
        operands = contenders(A, on_gpu)
        status = {}
        for key, operand in operands.items():  # checked first; the check is also the warm-up call
            try:
                status[key] = check(square(operand()), reference, dtype)
            except Exception as exc:  # noqa: BLE001  (a contender that fails is reported; the others run)
                status[key] = f"{type(exc).__name__}: {exc}"
        seconds: dict[tuple[str, str], list[float]] = {key: [] for key in operands}
        for _ in range(rounds):  # interleave: lent machines drift between calls
            for key, operand in operands.items():
                if status[key] is None:
                    seconds[key].append(timer(operand(), square))
        for (way, name) in operands:
            times = seconds[(way, name)]
            rows.append({"dtype": dtype, "way": way, "contender": name, "n_rows": A.shape[0], "nnz": A.nnz,
                         "nnz_product": int(reference.nnz), "seconds": float(np.median(times)) if times else None,
                         "error": status[(way, name)]})
        if on_gpu:
            stages += stage_breakdown(operands, reference, dtype, rounds)
    library = "cupyx" if on_gpu else "scipy"
    anchor = {(row["dtype"], row["way"]): row["seconds"] for row in rows if row["contender"] == library}
    print(f"| dtype | call | contender | rows | nnz(A) | nnz(A@A) | ms per call | vs {library} |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        lead = (f"| {row['dtype']} | {row['way']} | {row['contender']} | {row['n_rows']} | {row['nnz']} | "
                f"{row['nnz_product']} |")
        if row["seconds"] is None:
            print(f"{lead} failed: {row['error']} | |")
            continue
        base = anchor.get((row["dtype"], row["way"]))
        ratio = f"{row['seconds'] / base:.2f}x" if base else ""
        print(f"{lead} {row['seconds'] * 1e3:.3f} | {ratio} |")
    if stages:
        print("\nA new matrix each call, by stage (device: CUDA events as each stage ends; host: wall clock)")
        print("| dtype | contender | stage | device ms | host ms |")
        print("|---|---|---|---|---|")
        for row in stages:
            print(f"| {row['dtype']} | {row['contender']} | {row['stage']} | {row['device_seconds'] * 1e3:.3f} | "
                  f"{row['host_seconds'] * 1e3:.3f} |")
    query = host_cost_of_free_memory_query() if on_gpu else None
    if query is not None:
        print(f"host cost of one free-memory query (cudaMemGetInfo + pool): {query * 1e6:.1f} us")
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        record = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                  "device": device.device_name() if on_gpu else platform.processor() or platform.machine(),
                  "grid": n, "rounds": rounds, "free_memory_query_seconds": query, "rows": rows,
                  "stages": stages}
        (args.out / "bench_spgemm.json").write_text(json.dumps(record, indent=2))
    return 1 if any(row["error"] for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
