"""Session 66: dia's row floor by the row length, fitted over every dia run of sessions 64-66, host only.

dia runs a thread a row, which walks every diagonal, so the rows it needs to beat warp should grow with the row
length. Replays, over every timed run where A's entries lie on a few diagonals (2 <= k <= 16), the library's floor
(6,000 rows as session 66 left it) against floors of c x mean rows, and prints the runs below 12,000 rows for
reading. Fitted on all of sets 64-72, so a floor chosen here needs a fresh set of its own: call4.sh's set 73,
scored here where its results are (results/call4/c4/set73).

    PYTHONPATH=. python3 docs/lab/gpu-2026-12-07-session66/dia_floor.py
"""

from __future__ import annotations

import fit_short as F

SET73 = F.HERE / "results" / "call4" / "c4" / "set73"
SET74 = F.HERE.parent / "gpu-2026-12-07-session67" / "results" / "call3" / "c3" / "set74"  # session 67's check
FRESH = [(SET73, 29, "73"), (SET74, 31, "74")]  # (folder, seed, name): the sets no fit here saw
PROPOSED = 250  # dia from PROPOSED x mean rows (fitted here; the library's DIA_ROWS_PER_MEAN from session 67)


def dia_runs(rs) -> list[dict]:
    return [r for r in rs if 1 < r["k"] <= 16 and r["dia_applies"] and "dia" in r["times"]]


def every_dia_run() -> list[dict]:
    rs = F.session64_runs() + F.corpus_runs(F.S65 / "results" / "call2" / "c2", 11, "69")
    rs += F.corpus_runs(F.CALL1 / "set70", 17, "70") + F.corpus_runs(F.CALL1 / "set71", 19, "71")
    rs += F.corpus_runs(F.SET72, 23, "72")
    return dia_runs(rs)


def score(rs, floor) -> str:
    hit, n, _ = F.score(rs, lambda r: F.pick(r, dia_min_rows=floor(r)))
    return f"{hit}/{n}"


def main() -> None:
    rs = every_dia_run()
    print(f"{len(rs)} dia runs; within 15% of the best:")
    print(f"  session 66's floor ({F.DIA_MIN_ROWS} rows): {score(rs, lambda r: F.DIA_MIN_ROWS)}")
    print(f"  session 65's (4,500 rows): {score(rs, lambda r: 4500)}")
    for c in (100, 150, 200, 250, 300, 400):
        print(f"  {c} x mean rows: {score(rs, lambda r, c=c: c * r['mean'])}")
    print("runs under 12,000 rows (set, matrix, dtype, k, rows, mean, dia / warp / best's kernel):")
    for r in sorted((r for r in rs if r["n_rows"] < 12000), key=lambda r: (r["n_rows"] / r["mean"], r["k"])):
        best = min(r["times"].values())
        print(f"  {r['set']:6s} {r['matrix'][:13]:13s} {r['dtype'][-2:]} k={r['k']:2d} {r['n_rows']:6d} "
              f"{r['mean']:5.1f} rows/mean {r['n_rows'] / r['mean']:5.0f}: dia {best / r['times']['dia']:.2f}, "
              f"warp {best / r['times']['warp']:.2f}, best {min(r['times'], key=r['times'].get)}")
    for folder, seed, name in FRESH:
        if folder.exists():
            fresh = dia_runs(F.corpus_runs(folder, seed, name))
            print(f"fresh set {name}: {len(fresh)} dia runs; 6,000 rows {score(fresh, lambda r: F.DIA_MIN_ROWS)}, "
                  f"{PROPOSED} x mean rows {score(fresh, lambda r: PROPOSED * r['mean'])}, "
                  f"4,500 rows {score(fresh, lambda r: 4500)}")
            disagreements(fresh, name)


def disagreements(rs, name: str) -> None:
    """Prediction 11: where session 66's floor and PROPOSED x mean disagree, how the proposed pick does, by matrix."""
    groups: dict[tuple, list] = {}
    for r in rs:
        old, new = F.pick(r), F.pick(r, dia_min_rows=PROPOSED * r["mean"])
        if old != new:
            groups.setdefault((r["matrix"], r["n_rows"], round(r["mean"], 1), f"{old}->{new}"), []).append(r)
    print(f"set {name} where the floors disagree (matrix, rows, mean, 6,000 rows->proposed: "
          "proposed / 6,000 rows within 15%):")
    for key, g in sorted(groups.items(), key=lambda kv: kv[0][1] / kv[0][2]):
        old, new = key[3].split("->")
        print(f"  {key[0][:22]:22s} {key[1]:6d} {key[2]:5.1f} {key[3]:12s}: "
              f"{sum(F.near(r, new) for r in g)}/{len(g)} / {sum(F.near(r, old) for r in g)}/{len(g)}")


if __name__ == "__main__":
    main()
