"""Session 65, call 4: a designed grid for SpMM's short-rows cut, fit data for a later session.

Square random matrices of exactly m nonzeros a row (gen:random:n:m) over a grid of rows n and lengths m, both
dtypes, k = 2, 4 and 8: ``spla.tune(A, k=k, persist=False)`` on each (every candidate checked against the rule's
product, then raced by device time) and its candidates' timings written to OUT/grid_short.json after every run.
Stops starting new runs DEADLINE seconds after it began. ROWS, LENGTHS, KS and SEED (added to each matrix's
seed) override the grid, for a second grid of other points kept apart from the fit (session 66).

    [ROWS="4096 8192"] [LENGTHS="2 4"] [KS="2 4"] [SEED=0] DEADLINE=90 PYTHONPATH=. \
        python3 docs/lab/gpu-2026-12-07-session65/grid_short.py OUT
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import spla
from spla.io import generators

ROWS = tuple(int(n) for n in os.environ.get("ROWS", "4096 8192 16384 32768 65536 131072").split())
LENGTHS = tuple(int(m) for m in os.environ.get("LENGTHS", "2 4 8 16 32 48").split())
KS = tuple(int(k) for k in os.environ.get("KS", "2 4 8").split())
SEED = int(os.environ.get("SEED", "0"))


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    began, deadline = time.perf_counter(), float(os.environ.get("DEADLINE", "90"))
    records = []
    for n in ROWS:
        for m in LENGTHS:
            host = generators.random(n, m, seed=SEED + n + m)
            for dtype in ("float32", "float64"):
                A = host.astype(dtype).to_device()
                for k in KS:
                    if time.perf_counter() - began > deadline:
                        print("deadline: stopped", flush=True)
                        return
                    result = spla.tune(A, k=k, persist=False)
                    times = {row["kernel"]: row.get("us") for row in result["candidates"]}
                    status = {row["kernel"]: row["status"] for row in result["candidates"]}
                    records.append({"n_rows": n, "length": m, "dtype": dtype, "k": k, "rule": result["rule"],
                                    "winner": result["kernel"], "us": times, "status": status})
                    print(n, m, dtype, k, result["rule"], result["kernel"], flush=True)
                    (out / "grid_short.json").write_text(json.dumps({"records": records}, indent=1))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
