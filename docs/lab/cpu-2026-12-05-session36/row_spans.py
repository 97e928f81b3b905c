"""How wide a window of x each row and each staged tile reads, for the records of float32's packed
class (auto's regular-large-packed: segmented), regenerated on the CPU from their makers: the
feature that may tell the matrices where staged beats segmented (rows within a few thousand
columns) from those where segmented wins (kNN windows of 8k-30k columns, Kronecker products).

    PYTHONPATH=. python3 row_spans.py NAMES_FILE OUT.json

NAMES_FILE: one record name a line (/tmp/hN/NAME.npz or FAMILY@SCALE; read from the file where it
exists, else made again by its set's maker, whose random draws may then differ). Each matrix's figures are
written to OUT.json as soon as they are known, so a run cut short keeps what it measured.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
TILE = 4096          # staged's tile in float32 (T = 16): 256 threads x 16 entries
LINE_COLUMNS = 32    # float32 entries of x in a 128-byte line


def _makers() -> dict:
    """name -> generator, from every held-out maker's module-level tables."""
    found = {}
    for path in sorted((ROOT / "docs" / "lab").glob("*/make_held_out*.py")):
        if path.name == "make_held_out.py":
            continue  # session 18's script runs at import
        sys.path.insert(0, str(path.parent))
        spec = importlib.util.spec_from_file_location(path.stem + "_spans", path)
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except (ImportError, OSError) as error:  # a maker that needs what this machine lacks
            print(f"skip {path}: {error}", file=sys.stderr)
            continue
        for value in vars(module).values():
            if isinstance(value, dict) and value and all(isinstance(k, str) and callable(v) for k, v in value.items()):
                for name, make in value.items():
                    found.setdefault(name, make)
    return found


def build(name: str, makers: dict):
    import scipy.sparse as sp

    from spla.bench import corpus
    if Path(name).is_file():  # the set's own file, where it is at hand
        return sp.load_npz(name).tocsr()
    if "@" in name:
        family, scale = name.split("@")
        nnz = int(float(scale.replace("M", "e6").replace("k", "e3")))
        return corpus.build(family, nnz, seed=0, dtype=np.float32).to_scipy()
    key = Path(name).stem
    A = sp.csr_matrix(makers[key]())
    A.sort_indices()
    return A


def spans(A) -> dict:
    indptr, indices = A.indptr.astype(np.int64), A.indices.astype(np.int64)
    lengths = np.diff(indptr)
    rows = lengths >= 2
    first, last = indices[indptr[:-1][rows]], indices[indptr[1:][rows] - 1]
    row_span = last - first
    lines = indices // LINE_COLUMNS
    n_tiles = max(1, A.nnz // TILE)
    tile_lines, tile_span = [], []
    for t in np.linspace(0, n_tiles - 1, min(n_tiles, 512)).astype(np.int64):
        piece = lines[t * TILE:(t + 1) * TILE]
        tile_lines.append(np.unique(piece).size)
        tile_span.append(int(piece.max() - piece.min()) * LINE_COLUMNS)
    return {"rows": int(A.shape[0]), "cols": int(A.shape[1]), "nnz": int(A.nnz),
            "row_span_median": float(np.median(row_span)) if row_span.size else 0.0,
            "row_span_p90": float(np.percentile(row_span, 90)) if row_span.size else 0.0,
            "tile_lines_median": float(np.median(tile_lines)),
            "tile_span_median": float(np.median(tile_span))}


def main(argv) -> int:
    names = [line.strip() for line in Path(argv[0]).read_text().splitlines() if line.strip()]
    out = Path(argv[1])
    result = json.loads(out.read_text()) if out.is_file() else {}
    makers = _makers()
    for name in names:
        if name in result:
            continue
        began = time.perf_counter()
        try:
            A = build(name, makers)
        except KeyError:
            print(f"{name}: no maker found", flush=True)
            continue
        result[name] = spans(A)
        del A
        out.write_text(json.dumps(result, indent=1, sort_keys=True))
        print(f"{name}: {result[name]} ({time.perf_counter() - began:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
