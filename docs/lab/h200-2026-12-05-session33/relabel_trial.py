"""For R1-R3 (README, "Columns by count"): write each source as it is and with its columns relabelled
by descending count (B = A with column order[j'] renamed j', so A x = B x[order]), and time on the
GPU the gather x[order] a call would add and the relabelling itself (count, sort, relabel the
indices: what a plan would pay once), CUDA events, median of 50 and of 5 after warm-up.

    PYTHONPATH=. python3 relabel_trial.py OUTDIR corpus:rmat-skewed:4e7 ...

Writes OUTDIR/NAME.npz, OUTDIR/NAME-by-count.npz (sorted rows, uncompressed) and prints, per source
and dtype, the gather's device time and that B x[order] equals A x to rounding.
"""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from l1_model import by_count  # noqa: E402


def device_ms(cupy, call, repeats: int) -> float:
    """Median device time of ``call`` in milliseconds, after two calls of warm-up."""
    for _ in range(2):
        call()
    times = []
    for _ in range(repeats):
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        call()
        stop.record()
        stop.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, stop))
    return float(np.median(times))


def relabel_on_device(cupy, indices, n_cols: int):
    """The relabelled indices, on the GPU: a count a column, a sort by count, a gather over nnz."""
    order = cupy.argsort(-cupy.bincount(indices, minlength=n_cols))
    label = cupy.empty(n_cols, dtype=indices.dtype)
    label[order] = cupy.arange(n_cols, dtype=indices.dtype)
    return cupy.take(label, indices)


def main(argv) -> int:
    import cupy

    from spla.bench import corpus

    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    for source in argv[1:]:
        A = corpus.load(source).to_scipy().tocsr()
        counts = np.bincount(A.indices, minlength=A.shape[1])
        order = np.argsort(-counts, kind="stable")
        # copies: B sorts its own rows in place
        B = sp.csr_matrix((A.data.copy(), by_count(A.indices, A.shape[1]), A.indptr.copy()), shape=A.shape)
        B.sort_indices()
        name = source.replace(":", "-")
        sp.save_npz(out / f"{name}.npz", A, compressed=False)
        sp.save_npz(out / f"{name}-by-count.npz", B, compressed=False)
        indices = cupy.asarray(A.indices)
        relabel_ms = device_ms(cupy, partial(relabel_on_device, cupy, indices, A.shape[1]), 5)
        for dtype in (np.float32, np.float64):
            x = cupy.asarray(np.random.default_rng(0).uniform(-1, 1, A.shape[1]).astype(dtype))
            index = cupy.asarray(order)
            gathered = cupy.empty_like(x)
            gather_us = device_ms(cupy, partial(cupy.take, x, index, out=gathered), 50) * 1e3
            y_a = A.astype(dtype) @ cupy.asnumpy(x)
            y_b = B.astype(dtype) @ cupy.asnumpy(gathered)
            agree = np.allclose(y_a, y_b, rtol=1e-4 if dtype == np.float32 else 1e-10, atol=1e-3)
            print(f"{source} {np.dtype(dtype).name}: {A.shape[0]:,} x {A.shape[1]:,}, {A.nnz:,} nnz; "
                  f"x[order] {gather_us:.1f} us; relabelling {relabel_ms:.2f} ms; B x[order] == A x: {agree}",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
