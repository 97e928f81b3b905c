"""Probe (session 15, not kept): does relabelling columns for locality speed SpMV on irregular matrices?"""
import json, sys, time
import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import reverse_cuthill_mckee
import cupy
from spla import bench
from spla.bench import corpus
from spla.csr import CSRMatrix
from spla.ops import spmv as ops_spmv

def relabel(S, rank):
    S = S.tocsr(copy=True)
    S.indices = rank[S.indices].astype(S.indices.dtype)
    S.has_sorted_indices = False
    S.sort_indices()
    return S

out = sys.argv[1]
kernels = ["cusparse", "cusparse:2", "segmented", "adaptive", "adaptive2"]
records = []
for source in sys.argv[2:]:
    A64 = corpus.load(source, dtype=np.float64)
    S = A64.to_scipy().tocsr()
    n = S.shape[1]
    orders = {"orig": np.arange(n)}
    t = time.perf_counter()
    counts = np.bincount(S.indices, minlength=n)
    perm = np.argsort(-counts, kind="stable")          # new position -> old column
    rank = np.empty(n, np.int64); rank[perm] = np.arange(n); orders["degree"] = rank
    _, first = np.unique(S.indices, return_index=True)  # first touch in row order
    cols = np.unique(S.indices)
    firstrow = np.searchsorted(S.indptr, first, side="right") - 1
    perm = np.concatenate([cols[np.argsort(firstrow, kind="stable")], np.setdiff1d(np.arange(n), cols)])
    rank = np.empty(n, np.int64); rank[perm] = np.arange(n); orders["first"] = rank
    print(source, "orders", round(time.perf_counter() - t, 1), "s", flush=True)
    if S.shape[0] == S.shape[1]:
        t = time.perf_counter()
        P = sp.csr_matrix((np.ones(S.nnz, np.int8), S.indices, S.indptr), shape=S.shape)
        perm = reverse_cuthill_mckee((P + P.T).tocsr(), symmetric_mode=True)
        rank = np.empty(n, np.int64); rank[perm] = np.arange(n); orders["rcm"] = rank
        print(source, "rcm", round(time.perf_counter() - t, 1), "s", flush=True)
    for oname, rank in orders.items():
        B64 = CSRMatrix.from_scipy(relabel(S, rank)) if oname != "orig" else A64
        check = bench.SpmvCheck.for_matrix(B64)
        for dtype in ("float32", "float64"):
            A = B64.astype(dtype).to_device()
            x = cupy.asarray(check.x.astype(dtype))
            y = cupy.empty(A.n_rows, dtype=dtype)
            runs, rows = {}, []
            for k in kernels:
                row = {"source": source, "order": oname, "dtype": dtype, "kernel": k}
                rows.append(row)
                if check.record(row, lambda k=k: ops_spmv.spmv(A, x, kernel=k, out=y), dtype, f"{oname} {dtype} {k}"):
                    runs[k] = lambda k=k: ops_spmv.spmv(A, x, kernel=k, out=y)
            xp = cupy.asarray(np.random.default_rng(0).permutation(n))
            runs["xperm"] = lambda: cupy.take(x, xp, out=cupy.empty_like(x))
            samples = bench.time_in_turns(runs, rounds=3, budget_s=0.1)
            for row in rows:
                if row["status"] == "ok":
                    row["ms"] = float(np.median(samples[row["kernel"]]))
            line = " ".join(f"{r['kernel']}={r.get('ms', float('nan')) * 1e3:.0f}" for r in rows)
            print(f"{source} {oname:<7} {dtype} {line} xperm={np.median(samples['xperm']) * 1e3:.0f} us", flush=True)
            records += rows
            del A, x, y
            cupy.get_default_memory_pool().free_all_blocks()
json.dump(records, open(out, "w"), indent=1)
