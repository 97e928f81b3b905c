"""Session 52: how traffic_model.py's predicted gain of blocked over staged orders the measured ratios (session
51's sets 59-63 and powerlaw-16M, H100). For each window and bytes a pair: predicted against measured, sorted.

    python3 fit_model.py MEASURED MODEL_OUTPUT... [--window c1024k] [--pair 16]
"""

from __future__ import annotations

import argparse
import math

SECTOR = 32


def read_model(paths):
    out = {}
    for path in paths:
        for line in open(path):
            f = line.split()
            if len(f) < 4 or f[1] not in ("float32", "float64"):
                continue
            out[(f[0], f[1])] = {f[i]: float(f[i + 1]) for i in range(2, len(f) - 1, 2)}
    return out


def predicted(m, dtype, window, pair):
    base = (4 if dtype == "float32" else 8) + 4  # a value and an int32 index
    return (base + SECTOR * m[window]) / (base + SECTOR * m["b"] + pair * m["p"])


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("measured")
    ap.add_argument("models", nargs="+")
    ap.add_argument("--window", default="c1024k")
    ap.add_argument("--pair", type=float, default=16.0)
    a = ap.parse_args()
    model = read_model(a.models)
    rows = []
    for line in open(a.measured):
        name, dtype, ratio, src = line.split()
        if (name, dtype) in model:
            rows.append((predicted(model[(name, dtype)], dtype, a.window, a.pair), float(ratio), name, dtype, src))
    rows.sort()
    err = [math.log(p / r) for p, r, *_ in rows]
    print(f"window {a.window} pair {a.pair}: {len(rows)} runs, log error mean {sum(err) / len(err):+.3f} "
          f"rms {math.sqrt(sum(e * e for e in err) / len(err)):.3f}")
    for p, r, name, dtype, src in rows:
        print(f"  predicted {p:5.2f}  measured {r:5.2f}  {'LOSS' if r < 0.97 else 'win ' if r >= 1.03 else 'even'}"
              f"  {name:<34} {dtype}  {src}")
