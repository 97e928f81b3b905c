"""What staged's palette detection costs once a matrix is on the GPU (spla.planning.segmented.staged_palette,
the cut set aside): the least of three runs on fresh device copies, after one that compiles and warms.

    PYTHONPATH=. python3 staged_palette_cost.py SOURCE... [--dtype float32 float64] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="+", help="files, gen: specs or corpus:FAMILY:NNZ")
    parser.add_argument("--dtype", nargs="+", default=["float32", "float64"])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)

    import cupy

    from spla.bench import corpus
    from spla.planning import segmented

    segmented.STAGED_PALETTE_MIN_BYTES = 0
    records = []
    print(f"device {cupy.cuda.runtime.getDeviceProperties(0)['name'].decode()}", flush=True)
    for source in args.sources:
        host = corpus.load(source, dtype=np.float64)
        for dtype in args.dtype:
            times = []
            for _ in range(4):
                A = host.astype(dtype, copy=True).to_device()
                segmented.staged_uniform(A)  # (its own pass, which the launcher makes first)
                cupy.cuda.runtime.deviceSynchronize()
                start = time.perf_counter()
                found = segmented.staged_palette(A)
                cupy.cuda.runtime.deviceSynchronize()
                times.append((time.perf_counter() - start) * 1e3)
            ms = min(times[1:])
            print(f"{source} {dtype} nnz {A.nnz:,}: detection {ms:.3f} ms "
                  f"({'none' if found is None else f'{found.n_values} values'})", flush=True)
            records.append({"source": source, "dtype": dtype, "nnz": A.nnz, "detection_ms": ms,
                            "n_values": None if found is None else found.n_values})
            if args.json:
                args.json.write_text(json.dumps(records, indent=1))
            del A, found
    return 0


if __name__ == "__main__":
    sys.exit(main())
