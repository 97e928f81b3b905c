"""Session 67: a regk exception for long diagonal rows at small k, replayed over every dia run of sets 64-74.

The library's rule (dia from 250 x mean rows) misses only on bands of 22-33 nonzeros a row at k = 2-4, where
regk's few lanes a row beat dia's thread a row walking every diagonal. Replays "regk where the rule says dia,
k <= K, mean >= M, rows <= R and no row over 64" for a small grid. Fitted on every set there is, so a rule taken
from here needs a fresh set of its own (README, Next).

    PYTHONPATH=. python3 docs/lab/gpu-2026-12-07-session67/long_bands.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "gpu-2026-12-07-session66"))
import dia_floor as DF  # noqa: E402
import fit_short as F  # noqa: E402


def with_exception(r, mean: float, k: int, rows: float) -> str:
    pick = F.library_pick(r)
    if pick == "dia" and r["k"] <= k and r["mean"] >= mean and r["n_rows"] <= rows and r["longest"] <= 64:
        return "regk"
    return pick


def main() -> None:
    rs = DF.every_dia_run()
    for folder, seed, name in DF.FRESH:
        rs += DF.dia_runs(F.corpus_runs(folder, seed, name))
    hit, n, g = F.score(rs, F.library_pick)
    print(f"{n} dia runs of sets 64-74; within 15% of the best (geomean best/pick):")
    print(f"  the library: {hit} ({g:.4f})")
    for mean in (20, 24, 30):
        for k in (2, 4):
            for rows in (20000, float("inf")):
                hit, _, g = F.score(rs, lambda r, m=mean, kk=k, n=rows: with_exception(r, m, kk, n))
                print(f"  regk for mean >= {mean}, k <= {k}, rows <= {rows:g}: {hit} ({g:.4f})")


if __name__ == "__main__":
    main()
