#!/usr/bin/env python3
"""Measure how much the binary cache speeds up the second load of a Matrix Market file.

Writes a random ~5M-nnz .mtx (web-Google-like size: 916,428 rows), loads it
with spla.load twice (first: parse + write the cache; second: from the
cache), also times scipy.io.mmread + tocsr as the anchor, prints a markdown
table and writes JSON to --out (default $OUT or ./bench-out).

    python scripts/bench_load.py [--nnz 5000000] [--keep DIR] [--out DIR]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy
import scipy.io
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import spla  # noqa: E402
from spla import io as spla_io  # noqa: E402
from spla.io import mmio  # noqa: E402


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nnz", type=int, default=5_000_000)
    parser.add_argument("--rows", type=int, default=916_428)
    parser.add_argument("--gz", action="store_true", help="measure a .mtx.gz instead of a plain .mtx")
    parser.add_argument("--keep", type=Path, help="write the .mtx here (default: a temporary folder, removed)")
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "bench-out")))
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    rows = rng.integers(0, args.rows, args.nnz)
    cols = rng.integers(0, args.rows, args.nnz)
    values = rng.standard_normal(args.nnz)
    A = sp.coo_matrix((values, (rows, cols)), shape=(args.rows, args.rows))

    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / ("bench_load.mtx.gz" if args.gz else "bench_load.mtx")
        write_s, _ = timed(lambda: mmio.write_mtx(path, A))
        for stale in folder.glob(path.name + "*.spla.npz"):
            stale.unlink()
        scipy_s, _ = timed(lambda: scipy.io.mmread(path).tocsr())
        first_s, first = timed(lambda: spla.load(path, progress=False))
        second_s, second = timed(lambda: spla.load(path, progress=False))
        third_s, _ = timed(lambda: spla.load(path, progress=False))
        assert not spla_io.load_info(first)["cache_hit"] and spla_io.load_info(second)["cache_hit"]
        assert first.nnz == second.nnz and np.array_equal(first.data, second.data)
        cache_bytes = Path(spla_io.load_info(second)["cache"]).stat().st_size
        file_bytes = path.stat().st_size

    result = {
        "benchmark": "load cache",
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "machine": platform.node(), "cpu": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(), "python": platform.python_version(),
        "numpy": np.__version__, "scipy": scipy.__version__,
        "file": path.name, "file_bytes": file_bytes, "cache_bytes": cache_bytes,
        "rows": args.rows, "nnz_written": args.nnz, "nnz": first.nnz,
        "write_s": write_s, "scipy_mmread_tocsr_s": scipy_s,
        "first_load_s": first_s, "second_load_s": second_s, "third_load_s": third_s,
        "speedup": first_s / second_s,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    out_file = args.out / "bench_load.json"
    out_file.write_text(json.dumps(result, indent=2))
    print("| file | size | scipy mmread+tocsr | spla first load | second load (cache) | third load | speedup |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    print(f"| {path.name}, {first.nnz:,} nnz | {file_bytes / 1e6:.0f} MB | {scipy_s:.2f} s | {first_s:.2f} s "
          f"| {second_s:.3f} s | {third_s:.3f} s | {first_s / second_s:.1f}x |")
    print(f"wrote {out_file}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
