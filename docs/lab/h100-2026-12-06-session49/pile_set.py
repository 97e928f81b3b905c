"""Each matrix of set 46 (make_held_out_46.py, built in the device's order, so the same matrices) with its mean
row, band's width (band_lanes) and spla.planning.banks.bank_pile at 2, 4 and 8 lanes, in float32 and (R2, the
`_64` keys) float64: which the rule rotates, computed on the CPU before any timing of the set.

    PYTHONPATH=. python3 docs/lab/h100-2026-12-06-session49/pile_set.py OUT.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_held_out_46 as forty_sixth  # noqa: E402

from spla.planning.banks import bank_pile  # noqa: E402
from spla.planning.spmv import band_lanes  # noqa: E402


def main(argv) -> int:
    piles = {}
    for name, build in forty_sixth.FORTY_SIXTH.items():
        S = build()
        mean = S.nnz / S.shape[0]
        piles[name] = {"mean_row": mean, "band_lanes": band_lanes(mean, 4), "band_lanes64": band_lanes(mean, 8),
                       **{f"pile{lanes}": bank_pile(S.indptr, lanes, 4) for lanes in (2, 4, 8)},
                       **{f"pile{lanes}_64": bank_pile(S.indptr, lanes, 8) for lanes in (2, 4, 8)}}
        print(name, piles[name], flush=True)
    Path(argv[0]).write_text(json.dumps(piles, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
