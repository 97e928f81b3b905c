"""Session 68: fresh sets 75 and 76 (long bands, calls 2 and 3) scored against session 67's rule and its regk
exception for long rows, the library's rule since call 2.

Predictions 5-6 and 9 in this folder's README, written before each run. "Within 15%" as in session 66's
fit_short.py: the fastest candidate's device time at least 1/1.15 of the pick's.

    PYTHONPATH=. python3 docs/lab/gpu-2026-12-07-session68/fresh_bands.py [runs]   # runs: every run, one a line
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

from spla.io import generators
from spla.planning import spmm as P

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "gpu-2026-12-07-session66"))
sys.path.insert(0, str(HERE.parent / "gpu-2026-12-07-session67"))
import anchor as AN  # noqa: E402
import dia_floor as DF  # noqa: E402
import fit_short as F  # noqa: E402
import long_bands as LB  # noqa: E402

SETS = [(HERE / "results" / "call2" / "c1" / "set75", 37, "75"),  # (folder, seed, name)
        (HERE / "results" / "call3" / "c3" / "set76", 41, "76")]


def exception(r) -> str:
    """long_bands.py's best line on sets 64-74: regk where the rule says dia, k <= 4, mean >= 20, rows <= 20,000."""
    return LB.with_exception(r, 20, 4, 20000)


def line(label: str, rs, rule) -> str:
    hit, n, g = F.score(rs, rule)
    return f"  {label}: {hit}/{n} within 15% (geomean best/pick {g:.4f})"


def main(show_runs: bool) -> None:
    for folder, seed, name in SETS:
        rs = F.corpus_runs(folder, seed, name)
        score_set(rs, name, show_runs)
        anchor(folder, rs)


def score_set(rs, name: str, show_runs: bool) -> None:
    print(f"set {name}: {len(rs)} runs")
    print(line("session 67's rule", rs, F.library_pick))
    print(line("with the exception (the library since call 2)", rs, exception))
    moved = [r for r in rs if exception(r) != F.library_pick(r)]
    print(f"moved by the exception: {len(moved)} runs")
    print(line("regk", moved, exception))
    print(line("dia (session 67's rule)", moved, F.library_pick))
    lost = [r for r in moved if F.near(r, "dia") and not F.near(r, "regk")]
    print(f"  runs session 67's rule had within 15% and the exception loses: {len(lost)}")
    far = [r for r in DF.dia_runs(rs) if r["k"] <= 4 and r["n_rows"] > 20000 and F.library_pick(r) == "dia"]
    print(line("dia at k <= 4 past 20,000 rows", far, F.library_pick))
    check_library(rs)
    if not show_runs:
        return
    print("every run (rows, mean, dtype, k: session 67's pick, best kernel, best/dia, best/regk, best/warp):")
    for r in sorted(rs, key=lambda r: (r["mean"], r["n_rows"], r["dtype"], r["k"])):
        print(f"  {r['n_rows']:6d} {r['mean']:5.1f} {r['dtype'][-2:]} k={r['k']:2d}: {F.library_pick(r):7s} "
              f"{min(r['times'], key=r['times'].get):7s} dia {share(r, 'dia'):.2f} regk {share(r, 'regk'):.2f} "
              f"warp {share(r, 'warp'):.2f}")


def anchor(folder: Path, rs) -> None:
    """Per (dtype, k): the rule that ran beside cuSPARSE SpMM (re-timed in the same run after tuning, on a fresh X,
    each checked against a float64 product), device time and per call from Python; and the library's rule now
    (the exception) where the run re-timed its pick, as the rule that ran or the tuner's winner."""
    runs = {(r["size"], r["matrix"], r["dtype"], r["k"]): r for r in rs}
    groups = defaultdict(list)
    for (_, dtype, k), _, row in AN.ratios(folder, runs, exception):
        groups[dtype, k].append(row)
    print("dtype k: runs, the rule that ran x cuSPARSE device time (runs under 1.0x), per call; the library now, "
          "device time (runs under 1.0x, runs not re-timed)")
    for (dtype, k), g in sorted(groups.items()):
        dev, call, now = zip(*g)
        timed = [x for x in now if x is not None]
        print(f"  {dtype} k={k:2d}: {len(g)}, {F.geomean(dev):.2f} ({sum(x < 1 for x in dev)}), {F.geomean(call):.2f}; "
              f"{F.geomean(timed):.2f} ({sum(x < 1 for x in timed)}, {len(now) - len(timed)})")


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
    main(sys.argv[1:] == ["runs"])
