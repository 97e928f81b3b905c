"""Session 21's offline probe (no GPU): for matrices of the rule's regular-large class, the
new-line share (distinct 128-byte lines of x that a run of W consecutive nonzeros touches, over
W; the median of 16 runs from random rows) beside segmented's speed over staged's, read from the
recorded bench_corpus runs. Run from the repository root:

    PYTHONPATH=. python3 docs/lab/h200-2026-12-04-session21/line_share_probe.py kron-600x5000 \\
        kron-300x10000 knn-7 knn-15 knn-12-narrow corpus:knn-window:1e7 corpus:zipf-columns:1e7 \\
        corpus:random-uniform:1e7 road-permuted-3000 powerlaw-transposed road-like-4000 tiny-local-20M

Names are session 19's held-out generators (other draws of the same shapes) or corpus:FAMILY:NNZ.
"""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

import numpy as np

from spla.bench import corpus
from spla.planning.spmv import AUTO

LAB = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(LAB / "h200-2026-12-04-session19"))
import make_held_out_large as gen  # noqa: E402

RECORDS = [*(LAB / "h200-2026-12-04-session18/fit_auto_files.txt").read_text().split(),
           "docs/lab/h200-2026-12-04-session19/corpus-regular.json.gz",
           "docs/lab/h200-2026-12-04-session20/corpus-unaligned.json.gz",
           *(LAB / "h200-2026-12-04-session20/held_out_files.txt").read_text().split(),
           "docs/lab/h200-2026-12-04-session20/held-out-10.json.gz"]
TABLES = ("SECOND", "THIRD", "FOURTH", "FIFTH", "SIXTH", "SEVENTH", "EIGHTH", "NINTH", "MATRICES")


def fit_auto():
    spec = importlib.util.spec_from_file_location("fit_auto", "scripts/fit_auto.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def staged_over_segmented() -> dict:
    """(name, dtype) -> staged's time over segmented's, for the recorded regular-large runs."""
    fa = fit_auto()
    items = fa.load(RECORDS, None, Path("docs/lab/h200-2026-12-03-session8/corpus-stats.json"))
    ratios = {}
    for item in items:
        times = item["times"]
        if fa._class(item, AUTO) == "regular-large" and "staged" in times and "segmented" in times:
            ratios[Path(item["name"]).stem, item["dtype"]] = times["staged"] / times["segmented"]
    return ratios


def new_line_share(S, value_bytes: int, width: int, runs: int = 16) -> float:
    rng = np.random.default_rng(0)
    shares = []
    for row in rng.integers(0, S.shape[0], runs):
        lo = S.indptr[row]
        hi = min(lo + width, S.indptr[-1])
        if hi - lo >= width // 2:
            lines = S.indices[lo:hi].astype(np.int64) * value_bytes // 128
            shares.append(len(np.unique(lines)) / (hi - lo))
    return float(np.median(shares))


def main(names) -> None:
    ratios = staged_over_segmented()
    generators = {name: make for table in TABLES for name, make in getattr(gen, table, {}).items()}
    generators["kron-300x10000"] = lambda: gen.kron_random(300, 4, 10000, 3)
    generators["knn-window"] = gen.knn_window
    for name in names:
        began = time.time()
        if name.startswith("corpus:"):
            S = corpus.load(name, dtype=np.float64).to_scipy().tocsr()
        else:
            S = generators[name]().tocsr()
        S.sort_indices()
        key = name.replace("corpus:", "").replace(":1e7", "@10M").replace(":4e7", "@40M")
        cells = []
        for dtype, value_bytes in (("float32", 4), ("float64", 8)):
            ratio = ratios.get((key, dtype))
            cells.append(f"{dtype}: segmented/staged speed {'-' if ratio is None else f'{ratio:.2f}'}, new-line "
                         f"share 4k {new_line_share(S, value_bytes, 4096):.2f}, "
                         f"64k {new_line_share(S, value_bytes, 65536):.2f}")
        print(f"{key:24} {S.nnz / 1e6:5.1f}M nnz, {S.shape[1]:,} columns | {' | '.join(cells)} "
              f"({time.time() - began:.0f} s)", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
