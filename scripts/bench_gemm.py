"""Benchmark every GEMM kernel of the path against cuBLAS (fp32 and TF32) on the GPU.

Sizes: 1024^3, 4096^3, 8192^3 and a skinny M=16384, N=64, K=4096, plus the
SpMM dense-panel shapes 2000 x 8 x 100000 and 2000 x 32 x 100000 (few output
tiles, long K: the split-K kernels; only the kernels that matter there run at
those sizes). Inputs are
random normal float32 (never zeros); every kernel is checked against a
float64 reference before it is timed, and a wrong result is reported, not
timed. Kernels whose estimated time per call (from their rate at the
previous size) exceeds --max-call-s are skipped and listed as such.
cuBLAS TF32 runs in a subprocess with CUPY_TF32=1, because CuPy reads that
variable once, at its first float32 matmul.

Writes bench_gemm.json (GPU, CuPy version, date, anchors measured in the same
run) to --out and prints a markdown table last. Without a GPU it runs NumPy
at 1024^3 only and says so.

    PYTHONPATH=. python scripts/bench_gemm.py --out $OUT
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from spla.bench import gemm as gemm_bench  # noqa: E402
from spla.errors import SplaError  # noqa: E402

MAIN_SIZES = [(1024, 1024, 1024), (4096, 4096, 4096), (8192, 8192, 8192), (16384, 64, 4096)]
PANEL_SIZES = [(2000, 8, 100_000), (2000, 32, 100_000)]
SIZES = MAIN_SIZES + PANEL_SIZES
SKINNY = {(16384, 64, 4096)}
# The bank-conflict demonstration only needs the sizes where the path is compared.
COMPARE_SIZES = {(1024, 1024, 1024), (4096, 4096, 4096)}
EXTRA_AT = {"padded_nopad": {(4096, 4096, 4096)},
            "transposed_b_nopad": COMPARE_SIZES,
            "transposed_b_padded": COMPARE_SIZES,
            "dbuf64": {(1024, 1024, 1024), (4096, 4096, 4096), *SKINNY, *PANEL_SIZES},
            "splitk": {*SKINNY, *PANEL_SIZES},
            "splitk_n8": set(PANEL_SIZES),
            # step 7 without its cvt (raw fp32 bits)
            "tf32_trunc": set(MAIN_SIZES),
            # Hopper wgmma (sm_90a): the square sizes (N = 64 would pad to its 256-wide tile)
            "tf32_wgmma": {(1024, 1024, 1024), (4096, 4096, 4096), (8192, 8192, 8192)}}
# At the panel sizes only the kernels that could serve that shape run (A is
# 800 MB: the scalar steps would take seconds and say nothing new).
ONLY_AT = {size: {"vec4", "regblock", "dbuf", "dbuf64", "splitk", "splitk_n8", "tf32", "cublas", "auto"}
           for size in PANEL_SIZES}
# "auto" is timed too (the row says which kernel the rule picked).
AUTO_ROW = "auto"

TF32_CHILD = r"""
import json, sys
import cupy
from cupyx.profiler import benchmark
sizes = json.loads(sys.argv[1])
rows = []
for m, n, k in sizes:
    state = cupy.random.RandomState(0)
    A = state.standard_normal((m, k), dtype=cupy.float32)
    B = state.standard_normal((k, n), dtype=cupy.float32)
    C = cupy.matmul(A, B)
    ref = cupy.matmul(A.astype(cupy.float64), B.astype(cupy.float64))
    err = float(cupy.linalg.norm(C - ref) / cupy.linalg.norm(ref))
    t = benchmark(lambda: cupy.matmul(A, B, out=C), n_repeat=20, n_warmup=5).gpu_times[0]
    t = sorted(t)[len(t) // 2]
    rows.append({"m": m, "n": n, "k": k, "ms": t * 1e3, "tflops": 2.0 * m * n * k / t / 1e12,
                 "rel_fro_err": err, "tf32_in_effect": err > 1e-5})
    del A, B, C, ref
print(json.dumps(rows))
"""


def size_key(size):
    return "x".join(map(str, size))


def cublas_tf32(sizes, timeout_s=150):
    env = dict(os.environ, CUPY_TF32="1")
    try:
        done = subprocess.run([sys.executable, "-c", TF32_CHILD, json.dumps(sizes)], env=env,
                              capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout_s} s"}
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed"}
    return {size_key((r["m"], r["n"], r["k"])): r for r in json.loads(done.stdout.strip().splitlines()[-1])}


def run_gpu(args):
    import cupy

    # the registry (the path, then the kernels auto chooses), the benchmark variants, then auto
    names = [name for name in gemm_bench.gemm_names() if name != AUTO_ROW] + [AUTO_ROW]
    names = [name for name in names if name not in args.skip]
    results = {"gpu": gemm_bench.device_name(), "cupy": cupy.__version__, "python": platform.python_version(),
               "date": datetime.datetime.now().isoformat(timespec="seconds"), "sizes": {}, "skipped": []}
    rate = {}  # TFLOP/s at the previous size: the estimate for the next one
    for size in SIZES:
        m, n, k = size
        started = time.perf_counter()
        A, B = gemm_bench.random_operands(m, n, k, cupy, seed=0)
        reference = cupy.matmul(A.astype(cupy.float64), B.astype(cupy.float64))
        anchor = gemm_bench.measure_gpu("cublas", A, B, reference, repeat=args.repeat, budget_s=args.budget)
        rows = {}
        for name in names:
            if name in EXTRA_AT and size not in EXTRA_AT[name]:
                continue
            if size in ONLY_AT and name not in ONLY_AT[size]:
                continue
            if name == "cublas":
                row = dict(anchor)
            else:
                estimate = 2.0 * m * n * k / (rate[name] * 1e12) if rate.get(name) else 0.0
                if estimate > args.max_call_s:
                    results["skipped"].append(f"{name} at {size_key(size)}: ~{estimate:.1f} s per call "
                                              f"(from {rate[name]:.2f} TFLOP/s at the previous size)")
                    continue
                try:
                    row = gemm_bench.measure_gpu(name, A, B, reference, repeat=args.repeat, budget_s=args.budget)
                except SplaError as exc:  # e.g. tf32_wgmma without an sm_90a build: a row, not a crash
                    row = {"kernel": name, "error": str(exc), "ms": None, "tflops": None,
                           "rel_fro_err": float("inf")}
            if row.get("tflops"):
                rate[name] = row["tflops"]
                row["fraction_of_cublas"] = row["tflops"] / anchor["tflops"]
            rows[name] = row
            print(f"{size_key(size):>16} {name:>20}: "
                  + (f"{row['tflops']:8.2f} TFLOP/s" if row.get("tflops") else "   WRONG        ")
                  + f"  err {row['rel_fro_err']:.1e}", file=sys.stderr, flush=True)
        results["sizes"][size_key(size)] = {"m": m, "n": n, "k": k, "cublas_tflops": anchor["tflops"],
                                            "rows": rows, "seconds": time.perf_counter() - started}
        del A, B, reference
        cupy.get_default_memory_pool().free_all_blocks()
    results["cublas_tf32"] = cublas_tf32([list(s) for s in MAIN_SIZES])
    return results


def markdown(results) -> str:
    keys = list(results["sizes"])
    header = "| kernel | " + " | ".join(f"{key} TFLOP/s (% cuBLAS)" for key in keys) + " |"
    lines = [f"GEMM on {results.get('gpu') or 'CPU (NumPy)'} ({results['date']}, CuPy {results.get('cupy', '-')})", "",
             header, "|" + " --- |" * (len(keys) + 1)]
    names = []
    for key in keys:
        names += [name for name in results["sizes"][key]["rows"] if name not in names]
    for name in names:
        cells = []
        for key in keys:
            row = results["sizes"][key]["rows"].get(name)
            if row is None:
                cells.append("skipped")
            elif row.get("error"):
                cells.append("FAILED")
            elif not row.get("tflops"):
                cells.append(f"WRONG (err {row['rel_fro_err']:.1e})")
            else:
                frac = row.get("fraction_of_cublas")
                cells.append(f"{row['tflops']:.2f}" + ("" if frac is None else f" ({100 * frac:.0f}%)"))
        if name == AUTO_ROW:
            picked = [results["sizes"][key]["rows"].get(name, {}).get("runs", "-") for key in keys]
            cells = [f"{cell} [{pick}]" for cell, pick in zip(cells, picked)]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    tf32 = results.get("cublas_tf32")
    if tf32 and "error" not in tf32:
        cells = []
        for key in keys:
            row = tf32.get(key)
            cells.append("-" if row is None else f"{row['tflops']:.1f}"
                         + ("" if row["tf32_in_effect"] else " (TF32 NOT in effect)"))
        lines.append("| cuBLAS TF32 (CUPY_TF32=1) | " + " | ".join(cells) + " |")
        for key in keys:
            for name, row in results["sizes"][key]["rows"].items():
                if row.get("precision") == "tf32" and row.get("tflops") and tf32.get(key):
                    lines.append(f"- {key}: spla {name} = {100 * row['tflops'] / tf32[key]['tflops']:.0f}% "
                                 "of cuBLAS TF32")
    elif tf32:
        lines.append(f"- cuBLAS TF32: {tf32['error']}")
    for key in keys:
        for name, row in results["sizes"][key]["rows"].items():
            if row.get("error"):
                lines.append(f"- {name} at {key} failed: {row['error']}")
    for note in results.get("skipped", []):
        lines.append(f"- skipped {note}")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.environ.get("OUT", "bench-out"), help="directory for bench_gemm.json")
    parser.add_argument("--repeat", type=int, default=20, help="timed runs per kernel (fewer for slow kernels)")
    parser.add_argument("--budget", type=float, default=1.0, help="seconds of timing per kernel and size")
    parser.add_argument("--max-call-s", type=float, default=2.0, help="skip kernels estimated slower per call")
    parser.add_argument("--skip", action="append", default=[], metavar="KERNEL",
                        help="leave this kernel out (repeatable), e.g. --skip tf32_wgmma")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    if gemm_bench.gpu_available():
        results = run_gpu(args)
    else:
        report = gemm_bench.run(1024, 1024, 1024, ["numpy"], repeat=3, device="cpu")
        results = {"gpu": None, "date": datetime.datetime.now().isoformat(timespec="seconds"),
                   "note": report["note"], "skipped": [],
                   "sizes": {"1024x1024x1024": {"m": 1024, "n": 1024, "k": 1024, "cublas_tflops": None,
                                                "rows": {"numpy": report["rows"][0]}}}}
        print(report["note"])
    results["total_seconds"] = time.perf_counter() - started
    (out / "bench_gemm.json").write_text(json.dumps(results, indent=2))
    print(markdown(results))


if __name__ == "__main__":
    main()
