"""The CG loop's thread cut refitted on time_direction_pass.txt's one- and two-thread times with the
direction pass: fitted on the systems at even positions, reported on the odd ones. Needs each
system's nonzeros, which the table lacks, so it reloads the systems (no timing).
Run from the repository root: python docs/lab/cpu-2026-12-05-session30/fit_threads.py shared-matrices
"""
import importlib.util
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("time_direction_pass_systems", HERE / "time_cg_heldout.py")
heldout = importlib.util.module_from_spec(spec)
spec.loader.exec_module(heldout)

times = {}
for line in (HERE / "time_direction_pass.txt").read_text().splitlines():
    parts = line.split()
    if len(parts) >= 8 and parts[-1].endswith("x") and parts[-2].endswith("x"):
        name = " ".join(parts[:-7])
        times[name] = (float(parts[-5]), float(parts[-3]))  # pass on 1 thread, on 2
nnz = {name: S.nnz for name, S in heldout.systems(Path(sys.argv[1]))}
for half in (2, 5, 10, 20, 40):
    nnz[f"band 100,000 half-width {half}"] = sum(100_000 - abs(k) for k in range(-half, half + 1))
rows = [(name, nnz[name], *times[name]) for name in times]


def cost(cut, subset):
    """Geomean and worst of (the rule's time / the faster thread count's), two threads from 2 * cut."""
    ratios = [(two if n >= 2 * cut else one) / min(one, two) for _, n, one, two in subset]
    return float(np.exp(np.mean(np.log(ratios)))), max(ratios)


fit, held = rows[0::2], rows[1::2]
cuts = [1_000, 2_500, 5_000, 7_500, 10_000, 15_000, 25_000, 50_000, 100_000, 250_000]
for c in cuts:
    print(f"two threads from {2 * c:>7,}: fitted half {cost(c, fit)[0]:.3f} (worst {cost(c, fit)[1]:.2f}), "
          f"held-out half {cost(c, held)[0]:.3f} (worst {cost(c, held)[1]:.2f}), all {cost(c, rows)[0]:.3f}")
best = min(cuts, key=lambda c: cost(c, fit)[0])
print(f"fitted: a thread per {best:,} nonzeros; held-out half {cost(best, held)[0]:.3f}, worst {cost(best, held)[1]:.2f}")
