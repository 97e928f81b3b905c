"""Session 69: how far should regk reach on long diagonal rows? The library's exception (session 68) against one
candidate, scored on every dia run of sets 64-76 (where the candidate was read off) and on fresh set 77 (call 1,
which no fit saw). Predictions and the decision rule in this folder's README, written before the run.

The candidate, read off sets 75-76's misses: in float32 with a mean row of at least 30, regk where the rule says dia
at k <= 4 up to 40,000 rows (the library: 20,000, both dtypes, mean >= 20) and at k = 8 up to 20,000 rows.

    PYTHONPATH=. python3 docs/lab/gpu-2026-12-07-session69/reach.py [runs]   # runs: set 77's moved runs
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "gpu-2026-12-07-session66"))
sys.path.insert(0, str(HERE.parent / "gpu-2026-12-07-session68"))
import dia_floor as DF  # noqa: E402
import fit_short as F  # noqa: E402
import fresh_bands as FB  # noqa: E402

SET77 = (HERE / "results" / "call1" / "c1" / "set77", 43, "77")  # (folder, seed, name)


def candidate(r) -> str:
    pick = FB.exception(r)
    if pick == "dia" and r["dtype"] == "float32" and r["mean"] >= 30 and (
            (r["k"] <= 4 and r["n_rows"] <= 40000) or (r["k"] == 8 and r["n_rows"] <= 20000)):
        return "regk"
    return pick


def report(label: str, rs, show_runs: bool = False) -> None:
    moved = [r for r in rs if candidate(r) != FB.exception(r)]
    lost = [r for r in moved if F.near(r, FB.exception(r)) and not F.near(r, candidate(r))]
    print(f"{label}: {len(rs)} runs")
    print(FB.line("the library (session 68's exception)", rs, FB.exception))
    print(FB.line("the candidate", rs, candidate))
    print(f"moved by the candidate: {len(moved)} runs; runs the library had within 15% and the candidate loses: "
          f"{len(lost)}")
    if moved:
        print(FB.line("regk (the candidate)", moved, candidate))
        print(FB.line("the library's pick", moved, FB.exception))
    if show_runs:
        for r in sorted(moved, key=lambda r: (r["mean"], r["n_rows"], r["k"])):
            print(f"  {r['n_rows']:6d} {r['mean']:5.1f} {r['dtype'][-2:]} k={r['k']:2d}: library "
                  f"{FB.exception(r):5s} best {min(r['times'], key=r['times'].get):7s} dia {FB.share(r, 'dia'):.2f} "
                  f"regk {FB.share(r, 'regk'):.2f}")


def main(show_runs: bool) -> None:
    fit = DF.every_dia_run()
    for folder, seed, name in DF.FRESH + FB.SETS:
        fit += DF.dia_runs(F.corpus_runs(folder, seed, name))
    report("dia runs of sets 64-76 (the candidate was read off these)", fit)
    if SET77[0].exists():
        rs = F.corpus_runs(*SET77)
        report("fresh set 77", rs, show_runs)
        FB.check_library(rs)
        FB.anchor(SET77[0], rs)


if __name__ == "__main__":
    main(sys.argv[1:] == ["runs"])
