"""spla.tune on the suite's two stencils, whose dia reads a palette (session 50: the tuner raised there before
6eecc44). Prints the rule, the winner and every candidate's status and time.

    PYTHONPATH=. python3 tune_stencils.py gen:poisson2d:4096 gen:poisson3d:160
"""

from __future__ import annotations

import sys

import numpy as np

import spla
from spla.planning import dia


def main(sources):
    for source in sources:
        for dtype in (np.float32, np.float64):
            A = spla.load(source).astype(dtype)
            result = spla.tune(A, persist=False)
            found = dia.structure(A.to_device())
            coded = isinstance(found, dia.Structure) and found.values is None
            print(f"{source} {np.dtype(dtype).name}: rule {result['rule']} (palette {coded}), "
                  f"winner {result['kernel']} x{result['speedup_vs_rule']:.3f}, {result['spmvs']} SpMVs, "
                  f"{result['device_ms']:.1f} ms")
            for row in result["candidates"]:
                us = f"{row['us']:.1f} us" if "us" in row else ""
                print(f"    {row['kernel']:<14} {row['status']:<7} error {row.get('error', float('nan')):.2e} {us}")


if __name__ == "__main__":
    main(sys.argv[1:])
