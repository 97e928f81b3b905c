"""Session 68: fresh set 75 (long bands, call 2) scored against session 67's rule and its regk exception for long rows.

Predictions 5-6 in this folder's README, written before the run. "Within 15%" as in session 66's fit_short.py: the
fastest candidate's device time at least 1/1.15 of the pick's.

    PYTHONPATH=. python3 docs/lab/gpu-2026-12-07-session68/set75.py
"""

from __future__ import annotations

import sys
from pathlib import Path

from spla.io import generators
from spla.planning import spmm as P

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "gpu-2026-12-07-session66"))
sys.path.insert(0, str(HERE.parent / "gpu-2026-12-07-session67"))
import dia_floor as DF  # noqa: E402
import fit_short as F  # noqa: E402
import long_bands as LB  # noqa: E402

SET75 = HERE / "results" / "call2" / "c1" / "set75"


def exception(r) -> str:
    """long_bands.py's best line on sets 64-74: regk where the rule says dia, k <= 4, mean >= 20, rows <= 20,000."""
    return LB.with_exception(r, 20, 4, 20000)


def line(label: str, rs, rule) -> str:
    hit, n, g = F.score(rs, rule)
    return f"  {label}: {hit}/{n} within 15% (geomean best/pick {g:.4f})"


def main() -> None:
    rs = F.corpus_runs(SET75, 37, "75")
    print(f"set 75: {len(rs)} runs")
    print(line("session 67's rule (prediction 5)", rs, F.library_pick))
    print(line("with the exception (the library since)", rs, exception))
    moved = [r for r in rs if exception(r) != F.library_pick(r)]
    print(f"moved by the exception (prediction 6): {len(moved)} runs")
    print(line("regk", moved, exception))
    print(line("dia (session 67's rule)", moved, F.library_pick))
    lost = [r for r in moved if F.near(r, "dia") and not F.near(r, "regk")]
    print(f"  runs the library had within 15% and the exception loses: {len(lost)}")
    far = [r for r in DF.dia_runs(rs) if r["k"] <= 4 and r["n_rows"] > 20000 and F.library_pick(r) == "dia"]
    print(line("dia at k <= 4 past 20,000 rows", far, F.library_pick))
    check_library(rs)
    print("every run (rows, mean, dtype, k: session 67's pick, best kernel, best/dia, best/regk, best/warp):")
    for r in sorted(rs, key=lambda r: (r["mean"], r["n_rows"], r["dtype"], r["k"])):
        print(f"  {r['n_rows']:6d} {r['mean']:5.1f} {r['dtype'][-2:]} k={r['k']:2d}: {F.library_pick(r):7s} "
              f"{min(r['times'], key=r['times'].get):7s} dia {share(r, 'dia'):.2f} regk {share(r, 'regk'):.2f} "
              f"warp {share(r, 'warp'):.2f}")


def share(r, kernel: str) -> float:
    """The best candidate's device time over this kernel's (1.00: the kernel is the best)."""
    return min(r["times"].values()) / r["times"][kernel] if kernel in r["times"] else float("nan")


def check_library(rs) -> None:
    """The exception as scored here is the library's rule now: rebuild each matrix and ask rule_kernel."""
    built = {m: generators.from_spec(m) for m in {r["matrix"] for r in rs}}
    matrices = {(m, dtype): A.astype(dtype) for m, A in built.items() for dtype in ("float32", "float64")}
    wrong = [r for r in rs if P.rule_kernel(matrices[r["matrix"], r["dtype"]], r["k"]) != exception(r)]
    print(f"the library's rule_kernel agrees with the exception on {len(rs) - len(wrong)} of {len(rs)} runs")

if __name__ == "__main__":
    main()
