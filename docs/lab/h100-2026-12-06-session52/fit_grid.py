"""Session 52: a grid over the traffic model's three free costs, against the measured blocked / staged ratios of the
fit sets (x of at least 36 MB: under it L2 holds x and the x cut decides): the bytes a sector read in CSR
order costs (K, every sector CSR order reads; with --rereads only the sectors it reads again, the first read of
each costing 32 bytes in either order: rms 0.219 against 0.176, and the large uniform x of set 60
underpredicted), the bytes a pair costs (P), and a second launch's fixed cost in bytes (F, MB: the partials'
sum). Prints the rms log error of each and the best one's table.

    python3 fit_grid.py MEASURED NNZ MODEL_OUTPUT... [--rereads]   (NNZ: lines of name, nonzeros)
"""

from __future__ import annotations

import itertools
import math
import sys

from fit_model import read_model

SECTOR = 32
REREADS = "--rereads" in sys.argv


def gain(m, dtype, k, p, f=0.0):
    base = (4 if dtype == "float32" else 8) + 4
    if REREADS:  # the form tried second: a sector's first read 32 bytes in either order, K on CSR order's rereads
        reads = base + SECTOR * m["b"]
        return (reads + k * max(0.0, m["c1024k"] - m["b"])) / (reads + p * m["p"] + f * 1e6 / m["nnz"])
    return (base + k * m["c1024k"]) / (base + SECTOR * m["b"] + p * m["p"] + f * 1e6 / m["nnz"])


if __name__ == "__main__":
    model = read_model([a for a in sys.argv[3:] if a != "--rereads"])
    nnz = dict(line.split() for line in open(sys.argv[2]))
    for (name, _), m in model.items():
        m["nnz"] = float(nnz[name])
    runs = []
    for line in open(sys.argv[1]):
        name, dtype, ratio, _ = line.split()
        m = model.get((name, dtype))
        if m is None:
            continue
        x_mb = m.get("xMB")
        if x_mb is None:  # traffic_model.py's lines: x from b_bound's sectors
            continue
        if x_mb >= 36:
            runs.append((name, dtype, float(ratio), m))
    best = []
    for k, p, f in itertools.product(range(24, 97, 4), range(0, 33, 2), range(0, 41, 5)):
        err = [math.log(gain(m, d, k, p, f) / r) for _, d, r, m in runs]
        best.append((math.sqrt(sum(e * e for e in err) / len(err)), k, p, f))
    best.sort()
    print(f"{len(runs)} runs; best (rms log error, K, P, F): {[(round(e, 3), k, p, f) for e, k, p, f in best[:8]]}")
    e, k, p, f = best[0]
    for g, name, d, r in sorted((gain(m, d, k, p, f), n, d, r) for n, d, r, m in runs):
        print(f"  predicted {g:5.2f}  measured {r:5.2f}  {name:<34} {d}")
