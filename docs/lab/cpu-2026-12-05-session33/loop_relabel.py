"""N products of one matrix in a row (a user's power iteration or Krylov loop), through spla.spmv on
the CPU (relabel.patch applied), with the column relabelling as the code decides it (on its RELABEL_AFTER_PRODUCTS-th
product) and with it off: whole loops, the decision and relabelling included, a fresh matrix a
loop, two rounds interleaved, the faster of each.

    PYTHONPATH=. python3 docs/lab/cpu-2026-12-05-session33/loop_relabel.py SOURCE... [--products 64 128 256]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sources", nargs="+")
    parser.add_argument("--products", type=int, nargs="+", default=[64, 128, 256])
    args = parser.parse_args(argv)

    import spla
    from spla.backends import cpu
    from spla.bench import corpus

    cut = cpu.RELABEL_MIN_X_BYTES
    print(f"relabelling decided on product {cpu.RELABEL_AFTER_PRODUCTS}")
    print(f"{'matrix':34} {'products':>8} {'off s':>7} {'on s':>7} {'off/on':>7}")
    for source in args.sources:
        S = corpus.load(source).to_scipy()
        x = np.random.default_rng(0).uniform(-1, 1, S.shape[1])
        for n in args.products:
            best: dict[str, float] = {}
            for _ in range(2):
                for mode in ("off", "on"):
                    cpu.RELABEL_MIN_X_BYTES = cut if mode == "on" else 1 << 62
                    A = spla.CSRMatrix.from_scipy(S)  # a fresh cache
                    y = np.empty(A.n_rows)
                    began = time.perf_counter()
                    for _ in range(n):
                        spla.spmv(A, x, out=y)
                    best[mode] = min(best.get(mode, np.inf), time.perf_counter() - began)
            cpu.RELABEL_MIN_X_BYTES = cut
            print(f"{source[-34:]:34} {n:>8} {best['off']:>7.2f} {best['on']:>7.2f} {best['off'] / best['on']:>7.2f}",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
