"""Session 66: the counts behind call 1's outcomes in this folder's README, host only.

Predictions 2, 4 and 5 (the grids, set 71's dia floor, candidates checked); where call 1's regk rule (k <= 4
under subwarp's thread cut, no row floor) won and lost, by rows: the data behind REGK_MIN_ROWS; and predictions
7-9 (fresh set 72, call 3: that floor checked).

    PYTHONPATH=. python3 docs/lab/gpu-2026-12-07-session66/outcomes.py
"""

from __future__ import annotations

import json

import fit_short as F
from fit_short import near


def main() -> None:
    grid = F.grid_runs(F.CALL1 / "grid" / "grid_short.json", "grid")
    grids = grid + F.grid_runs(F.CALL1 / "held" / "grid_short.json", "grid 2")
    moved = [r for r in grids if F.pick(r, regk_min_rows=0) == "regk" and F.pick(r, 0) == "warp"]
    print(f"2. grids, k <= 4 under the cut: {len(moved)} runs, regk {sum(near(r, 'regk') for r in moved)}, "
          f"warp {sum(near(r, 'warp') for r in moved)} within 15%")
    t = lambda r, c: r["times"][c]  # noqa: E731
    a = [r for r in grid if r["k"] <= 4 and r["mean"] <= 16 and r["n_rows"] >= 16384]
    print(f"   m <= 16 from 16K rows: subwarp or regk >= 1.3x warp on "
          f"{sum(1.3 * min(t(r, 'subwarp'), t(r, 'regk')) <= t(r, 'warp') for r in a)} of {len(a)}")
    b = [r for r in grid if r["k"] <= 4 and r["mean"] >= 32]
    three = ("subwarp", "warp", "regk")
    print(f"   m = 32-48: regk the fastest of three on {sum(min(three, key=lambda c: t(r, c)) == 'regk' for r in b)}"
          f", subwarp the slowest on {sum(max(three, key=lambda c: t(r, c)) == 'subwarp' for r in b)} of {len(b)}")
    w = [r for r in grid if min(r["times"], key=r["times"].get) == "warp"]
    print(f"   warp the fastest candidate on {len(w)} runs, rows {sorted({r['n_rows'] for r in w})}")
    s71 = F.corpus_runs(F.CALL1 / "set71", 19, "71")
    moved = [r for r in s71 if 1 < r["k"] <= 16 and r["dia_applies"] and 4500 <= r["n_rows"] < 6000]
    print(f"4. set 71, 4,500-5,999 rows: {len(moved)} runs, the library's pick {sum(near(r, F.pick(r)) for r in moved)}"
          f", dia {sum(near(r, 'dia') for r in moved)} within 15%")
    up = [r for r in s71 if 2 <= r["k"] <= 8 and r["dia_applies"] and r["n_rows"] >= 6000]
    print(f"   from 6,000 rows, k = 2-8: dia within 15% on {sum(near(r, 'dia') for r in up)} of {len(up)}")
    runs = bad = 0
    for folder in ("set70", "set71"):
        for path in (F.CALL1 / folder).glob("*/tuned_spmm.json"):
            for r in json.loads(path.read_text())["records"]:
                runs, bad = runs + 1, bad + sum(v in ("wrong", "failed") for v in r["tuner_status"].values())
    for name in ("grid", "held"):
        for r in json.loads((F.CALL1 / name / "grid_short.json").read_text())["records"]:
            runs, bad = runs + 1, bad + sum(v in ("wrong", "failed") for v in r["status"].values())
    print(f"5. {runs} runs, {bad} candidates wrong or failed")
    every = grids + F.corpus_runs(F.CALL1 / "set70", 17, "70") + s71
    regk = [r for r in every if r["k"] <= 4 and F.pick(r, regk_min_rows=0) == "regk" and F.pick(r, 0) == "warp"]
    for label, rs in (("under 6,000 rows", [r for r in regk if r["n_rows"] < 6000]),
                      ("from 6,000 rows", [r for r in regk if r["n_rows"] >= 6000])):
        print(f"call 1's regk runs {label}: {len(rs)}, regk {sum(near(r, 'regk') for r in rs)}, "
              f"warp {sum(near(r, 'warp') for r in rs)} within 15%")
    if not F.SET72.exists():
        return
    s72 = F.corpus_runs(F.SET72, 23, "72")
    call1 = [r for r in s72 if F.pick(r, regk_min_rows=0) == "regk"]
    under = [r for r in call1 if F.pick(r) == "warp"]
    both = [r for r in call1 if F.pick(r) == "regk"]
    print(f"7. set 72, call 1's regk now warp (under 6,000 rows): {len(under)} runs, warp "
          f"{sum(near(r, 'warp') for r in under)}, regk {sum(near(r, 'regk') for r in under)} within 15%")
    print(f"8. set 72, regk from 6,000 rows: {len(both)} runs, regk {sum(near(r, 'regk') for r in both)} within 15%")
    rules = {"library": F.pick, "call 1's rule": lambda r: F.pick(r, regk_min_rows=0),
             "session 65's": lambda r: F.pick(r, 0, 4500)}
    print("9. set 72, " + "; ".join(f"{label} {sum(near(r, rule(r)) for r in s72)}" for label, rule in rules.items())
          + f" of {len(s72)} runs within 15%")


if __name__ == "__main__":
    main()
