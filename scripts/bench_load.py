#!/usr/bin/env python3
"""Loading a Matrix Market file: spla (first load and cached) beside SciPy and fast_matrix_market.

Writes a random ~5M-nnz .mtx (web-Google-like size: 916,428 rows), then
times, each in a fresh process (so neither page-cache warm-up order nor
memory freed by an earlier run colours the next), ``--repeat`` times:

- ``scipy.io.mmread(path).tocsr()``
- ``fast_matrix_market.mmread(path).tocsr()`` (when installed)
- ``spla.load(path)`` with no cache present (parse, check and write the cache)
- ``spla.load(path)`` again (the memory-mapped cache)
- with ``--numpy-check``, also the first load with the C body check off
  (``SPLA_NATIVE=off``: the NumPy check a machine without a C compiler gets)

The C body check is built before the first run (once per machine; its build
time is not in any figure).

and reports the median seconds and the peak resident memory the load added
(``ru_maxrss`` after minus before), as a markdown table and JSON in --out
(default $OUT or ./bench-out).

    python scripts/bench_load.py [--nnz 5000000] [--gz] [--repeat 3] [--numpy-check] [--keep DIR] [--out DIR]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import scipy
import scipy.sparse as sp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from spla.io import cache as spla_cache  # noqa: E402
from spla.io import mmio, native  # noqa: E402

CHILD = r"""
import json, sys, time
sys.path.insert(0, {root!r})


def high_water():
    # VmHWM, not ru_maxrss: after fork + exec, ru_maxrss starts at the parent's peak
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM:"))


import numpy, scipy.io, scipy.sparse, spla
method, path = {method!r}, {path!r}
if method == "fast_matrix_market":
    import fast_matrix_market
before = high_water()
start = time.perf_counter()
if method == "scipy":
    A = scipy.io.mmread(path).tocsr()
elif method == "fast_matrix_market":
    A = fast_matrix_market.mmread(path).tocsr()
else:
    A = spla.load(path, progress=False)
    info = spla.io.load_info(A)
    assert info["cache_hit"] == (method == "spla cached"), info
    if method.startswith("spla first"):
        assert info["body_check"] == ("numpy" if "numpy" in method else "compiled"), info
seconds = time.perf_counter() - start
added = high_water() - before
print(json.dumps({{"seconds": seconds, "peak_added_bytes": added, "nnz": int(A.nnz)}}))
"""

METHODS = ("scipy", "fast_matrix_market", "spla first", "spla cached", "spla first, numpy check")


def run(method: str, path: Path) -> dict:
    code = CHILD.format(root=str(ROOT), method=method, path=str(path))
    env = dict(os.environ, **({native.NATIVE_ENV: "off"} if "numpy check" in method else {}))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    return json.loads(done.stdout.strip().splitlines()[-1])


def remove_cache(path: Path) -> None:
    for entry in spla_cache.candidate_paths(path):
        entry.unlink(missing_ok=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nnz", type=int, default=5_000_000)
    parser.add_argument("--rows", type=int, default=916_428)
    parser.add_argument("--gz", action="store_true", help="measure a .mtx.gz instead of a plain .mtx")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--numpy-check", action="store_true",
                        help="also time the first load with the C body check off (SPLA_NATIVE=off)")
    parser.add_argument("--keep", type=Path, help="write the .mtx here (default: a temporary folder, removed)")
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "bench-out")))
    args = parser.parse_args()
    methods = METHODS if args.numpy_check else METHODS[:-1]
    try:
        import fast_matrix_market  # noqa: F401
    except ImportError:
        methods = tuple(m for m in methods if m != "fast_matrix_market")
        print("fast_matrix_market is not installed (pip install fast_matrix_market): left out", flush=True)
    native.mtx_checker()  # built once, before any timed run
    print(f"C body check: {native.status()}", flush=True)

    rng = np.random.default_rng(0)
    A = sp.coo_matrix((rng.standard_normal(args.nnz), (rng.integers(0, args.rows, args.nnz),
                                                       rng.integers(0, args.rows, args.nnz))),
                      shape=(args.rows, args.rows))
    results: dict = {m: [] for m in methods}
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / ("bench_load.mtx.gz" if args.gz else "bench_load.mtx")
        mmio.write_mtx(path, A)
        del A
        file_bytes = path.stat().st_size
        path.read_bytes()  # every method starts from a warm page cache
        for _ in range(args.repeat):
            for method in methods:  # in turns, so drifting machine load hits every method alike
                if method.startswith("spla first"):
                    remove_cache(path)
                results[method].append(run(method, path))
        remove_cache(path)

    summary = {m: {"seconds": statistics.median(r["seconds"] for r in runs),
                   "peak_added_mb": statistics.median(r["peak_added_bytes"] for r in runs) / 2**20,
                   "runs": runs} for m, runs in results.items()}
    anchor = summary["scipy"]
    result = {
        "benchmark": "load",
        "command": "python " + " ".join([f"scripts/{Path(__file__).name}", *sys.argv[1:]]),
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "machine": platform.node(), "cpu": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(), "load_average": os.getloadavg(), "python": platform.python_version(),
        "numpy": np.__version__, "scipy": scipy.__version__, "body_check": native.status(),
        "file": path.name, "file_bytes": file_bytes, "rows": args.rows, "nnz_written": args.nnz,
        "repeat": args.repeat, "methods": summary,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    out_file = args.out / "bench_load.json"
    out_file.write_text(json.dumps(result, indent=2))
    print(f"{path.name}: {file_bytes / 1e6:.0f} MB, {args.nnz:,} entries written, median of {args.repeat}, "
          f"each load in a fresh process")
    print("| method | seconds | vs scipy | peak memory added | vs scipy |")
    print("| --- | --- | --- | --- | --- |")
    for method, s in summary.items():
        print(f"| {method} | {s['seconds']:.3f} | {s['seconds'] / anchor['seconds']:.2f}x "
              f"| {s['peak_added_mb']:.0f} MB | {s['peak_added_mb'] / max(anchor['peak_added_mb'], 1e-9):.2f}x |")
    print(f"wrote {out_file}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
