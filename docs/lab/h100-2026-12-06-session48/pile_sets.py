"""spla.planning.rle.bank_pile (float32) at 2, 4 and 8 lanes of the matrices of sets 41 (five) and 42-45, rebuilt
on the CPU from their makers in the order each maker writes them, as JSON.

    PYTHONPATH=. python3 docs/lab/h100-2026-12-06-session48/pile_sets.py OUT.json SET   (SET: 41-45; one a process, so
                                                                          that each maker draws from its own seed)
"""
from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

from spla.planning.rle import bank_pile

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

TABLES = {"41": ("make_held_out_41", "FORTY_FIRST"), "42": ("make_held_out_42", "FORTY_SECOND"),
          "43": ("make_held_out_43", "FORTY_THIRD"), "44": ("make_held_out_44", "FORTY_FOURTH"),
          "45": ("make_held_out_45", "FORTY_FIFTH")}
FIVE_OF_41 = ("aligned-runs-2x16-local-5000", "sliding-2x16-jitter3", "runs-2x19-local-4000", "runs-3x11-local-900",
              "blocks-17x17-2")


def main(argv) -> int:
    out = {}
    for s in argv[1:2]:
        module, table = TABLES[s]
        maker = importlib.import_module(module)
        names = FIVE_OF_41 if s == "41" else list(getattr(maker, table))
        for name in names:
            A = getattr(maker, table)[name]().tocsr()
            out[name] = {"set": s, "mean_row": round(A.nnz / A.shape[0], 2),
                         **{f"pile{lanes}": bank_pile(A.indptr, lanes, 4) for lanes in (2, 4, 8)}}
            print(name, out[name], flush=True)
    Path(argv[0]).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
