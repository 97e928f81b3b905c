"""Session 54 (host only): the footprint form of blocked's traffic model, fitted on the fit sets (session 52's
measured.txt: sets 59-63 and powerlaw-16M, H100) and reported on set 64 (fresh for the constants; its misses
suggested the form) and on any further measured file given.

CSR order, one access a nonzero: L2 (C bytes, fitted) holds the last w nonzeros' footprint, F(w) = w (value and
index bytes) + LINE fp(w) (fp: distinct lines of x in w consecutive nonzeros, footprint.py); a line of x misses at
the rate fp'(w*) where F(w*) = C (footprint theory), each miss costing K bytes (fitted). Lines of 32 bytes (a
sector) or 64 (--line 64: Nsight Compute's DRAM bytes in session 54 say H100 reads 64 a random miss). Block order
as in the library: 32 b + P p + SUM / nnz (b: distinct sectors a nonzero, p: row-block pairs a nonzero).

    python3 fit_footprint.py FOOTPRINTS.txt [MEASURED.txt ...] [--line 64] [--reread | --window] [--C MB]
                             [--K BYTES] [--mixed-guard]
"""

from __future__ import annotations

import itertools
import math
import sys
from pathlib import Path

HERE = Path(__file__).parent
S52 = HERE.parent / "h100-2026-12-06-session52"
S53 = HERE.parent / "gpu-2026-12-06-session53"
REREAD_SHARE = 0.1
CUT = 0.95
X_CUT_MB = 36
LINE = 32  # bytes a line of x in FOOTPRINTS.txt (--line 64: footprint.py run with LINE=64)
MIXED_GUARD = False  # --mixed-guard: the guard in bytes, CSR order's lines against block order's sectors
FORM = "all"  # "all": every miss in CSR order costs K; "reread" (--reread): only misses beyond b do; "window"
              # (--window): the library's form, CSR order's misses counted over windows of 1M nonzeros


def read_fields(path):
    out = {}
    for line in open(path):
        f = line.split()
        if len(f) > 3 and f[1] in ("float32", "float64"):
            out[(f[0], f[1])] = {f[i]: float(f[i + 1]) for i in range(2, len(f) - 1, 2)}
    return out


def footprints(path):
    out = {}
    for key, m in read_fields(path).items():
        curve = sorted((int(k[1:]), v) for k, v in m.items() if k.startswith("f"))
        out[key] = dict(m, curve=curve)
    return out


def miss_rate(m, item, c_bytes):
    """Lines of x a nonzero missed in CSR order: fp's slope where the footprint fills c_bytes."""
    curve, per = m["curve"], item + 4
    filled = [(w, per * w + LINE * fp) for w, fp in curve]
    for (w1, fp1), (w2, fp2), (_, f2) in zip(curve, curve[1:], filled[1:]):
        if f2 >= c_bytes or w2 == curve[-1][0]:
            return (fp2 - fp1) / (w2 - w1) if f2 >= c_bytes or m["nnz"] > w2 else m["b_lines"]
    return m["b_lines"]


def gain(m, dtype, c_mb, k, p, s):
    item = 4 if dtype == "float32" else 8
    if FORM == "window":  # the library's: distinct sectors over windows of 1M nonzeros
        miss = m["c1024k"]
    else:
        miss = max(miss_rate(m, item, c_mb * 1e6), m["b_lines"])
    if MIXED_GUARD and FORM != "window":  # (the first guard tried: CSR order's lines against block order's sectors)
        if LINE * miss - 32 * m["b"] < REREAD_SHARE * LINE * miss:
            return None
    elif miss - (m["b"] if FORM == "window" else m["b_lines"]) < REREAD_SHARE * miss:  # (lines in both orders)
        return None
    base = item + 4
    block = base + 32 * m["b"] + p * m["p"] + s * 1e6 / m["nnz"]
    if FORM == "reread":  # the sectors block order reads too (b) cost 32 in both orders; only rereads cost K
        return (base + 32 * m["b"] + k * (miss - m["b_lines"])) / block
    return (base + k * miss) / block


def runs(measured, fps, pairs):
    out = []
    for line in open(measured):
        name, dtype, ratio, *_ = line.split()
        m = fps.get((name, dtype))
        if m is None or (name, dtype) not in pairs or m["xMB"] < X_CUT_MB:
            continue
        out.append((name, dtype, float(ratio), dict(m, p=pairs[(name, dtype)]["p"], b=pairs[(name, dtype)]["b"],
                                                     c1024k=pairs[(name, dtype)]["c1024k"],
                                                     b_lines=m["b"])))
    return out


def score(rs, params):
    err, wrong = [], 0
    for _, d, r, m in rs:
        g = gain(m, d, *params)
        # kept off: predicted no gain, wrong by how much blocked won
        err.append(math.log(g / r) if g is not None else max(0.0, math.log(r)))
        if (g is not None and g >= CUT and r < CUT) or ((g is None or g < CUT) and r > 1.05):
            wrong += 1
    return math.sqrt(sum(e * e for e in err) / max(len(err), 1)), wrong


def regret(rs, params, cut):
    """Geomean of the best of blocked and staged over what a cut on the predicted gain picks."""
    lost = [abs(math.log(r)) for _, d, r, m in rs if ((gain(m, d, *params) or 0.0) >= cut) != (r >= 1.0)]
    return math.exp(sum(lost) / max(len(rs), 1))


def table(title, rs, params):
    rms, wrong = score(rs, params)
    print(f"{title}: {len(rs)} runs, rms log error {rms:.3f}, {wrong} sent the wrong way; best over picked by cut: "
          + ", ".join(f"{cut:.2f}: {regret(rs, params, cut):.3f}" for cut in (0.95, 1.0, 1.05, 1.1, 1.15)))
    for name, d, r, m in sorted(rs, key=lambda x: x[2]):
        g = gain(m, d, *params)
        miss = m["c1024k"] if FORM == "window" else max(miss_rate(m, 4 if d == "float32" else 8, params[0] * 1e6),
                                                        m["b_lines"])
        print(f"  {name:<36} {d}  measured {r:5.2f}  predicted {'kept off' if g is None else f'{g:5.2f}':>8}"
              f"  miss {miss:.3f} b {m['b']:.3f} p {m['p']:.3f}")


def main():
    global FORM, LINE, MIXED_GUARD
    if "--mixed-guard" in sys.argv:
        sys.argv.remove("--mixed-guard")
        MIXED_GUARD = True
    for form in ("reread", "window"):
        if f"--{form}" in sys.argv:
            sys.argv.remove(f"--{form}")
            FORM = form
    if "--line" in sys.argv:
        at = sys.argv.index("--line")
        LINE = int(sys.argv.pop(at + 1))
        sys.argv.pop(at)
    fps = footprints(sys.argv[1])
    pairs = {**read_fields(S52 / "fit-inputs.txt"), **read_fields(S53 / "traffic64.txt"),
             **read_fields(HERE / "gain65.txt")}
    fit = runs(S52 / "measured.txt", fps, pairs)
    axes = [[12, 16, 20, 24, 28, 32, 40, 48, 64], list(range(24, 68, 4)), list(range(4, 44, 4)), [0, 5, 10, 20, 30]]
    for at, name in enumerate(("C", "K")):  # --C 28 / --K 64: a constant measured, not fitted
        if f"--{name}" in sys.argv:
            i = sys.argv.index(f"--{name}")
            axes[at] = [int(sys.argv.pop(i + 1))]
            sys.argv.pop(i)
    grid = itertools.product(*axes)
    best = min(grid, key=lambda params: score(fit, params))
    print(f"fitted: C {best[0]} MB, K {best[1]}, P {best[2]}, SUM {best[3]}M")
    table("fit sets", fit, best)
    table("set 64", runs(S53 / "measured64.txt", fps, pairs), best)
    for extra in sys.argv[2:]:
        table(extra, runs(extra, fps, pairs), best)


if __name__ == "__main__":
    main()
