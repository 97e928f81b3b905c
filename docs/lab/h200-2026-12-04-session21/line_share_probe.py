"""Session 21's offline probe (no GPU): for matrices of the rule's regular-large class, the
new-line share (distinct 128-byte lines of x that a run of W consecutive nonzeros touches, over
W; the median of 16 runs from random rows) beside segmented's speed over staged's, read from the
recorded bench_corpus runs. Run from the repository root:

    PYTHONPATH=. python3 docs/lab/h200-2026-12-04-session21/line_share_probe.py kron-600x5000 \
        kron-300x10000 knn-7 knn-15 knn-12-narrow corpus:knn-window:1e7 corpus:zipf-columns:1e7 \
        corpus:random-uniform:1e7 road-permuted-3000 powerlaw-transposed road-like-4000 tiny-local-20M

Names are session 19's held-out generators (other draws of the same shapes) or corpus:FAMILY:NNZ.
"""
import sys, json, math, time, importlib.util
from pathlib import Path
import numpy as np
sys.path.insert(0, 'docs/lab/h200-2026-12-04-session19')
import make_held_out_large as gen
from spla.bench import corpus
spec=importlib.util.spec_from_file_location('fa','scripts/fit_auto.py'); fa=importlib.util.module_from_spec(spec); spec.loader.exec_module(fa)
from spla.planning.spmv import AUTO
files=open('docs/lab/h200-2026-12-04-session18/fit_auto_files.txt').read().split()+['docs/lab/h200-2026-12-04-session19/corpus-regular.json','docs/lab/h200-2026-12-04-session20/corpus-unaligned.json']+open('docs/lab/h200-2026-12-04-session20/held_out_files.txt').read().split()+['docs/lab/h200-2026-12-04-session20/held-out-10.json']
items=fa.load(files, None, Path('docs/lab/h200-2026-12-03-session8/corpus-stats.json'))
ratio={}
for it in items:
    if fa._class(it, AUTO)=='regular-large':
        t=it['times']
        if 'staged' in t and 'segmented' in t:
            ratio[(it['name'].split('/')[-1].replace('.npz',''), it['dtype'])]=t['staged']/t['segmented']
tables={}
for tname in ('SECOND','THIRD','FOURTH','FIFTH','SIXTH','SEVENTH','EIGHTH','NINTH','MATRICES'):
    if hasattr(gen,tname): tables.update(getattr(gen,tname))
tables['kron-300x10000']=lambda: gen.kron_random(300,4,10000,3)
tables['knn-window']=lambda: gen.knn_window()
names=sys.argv[1:]
def footprint(S, v, W, runs=16, rng=np.random.default_rng(0)):
    out=[]
    n=S.shape[0]; ip=S.indptr
    for r0 in rng.integers(0, n, runs):
        lo=ip[r0]; hi=min(lo+W, ip[-1])
        cols=S.indices[lo:hi]
        if hi-lo < W//2: continue
        out.append(len(np.unique(cols.astype(np.int64)*v//128))/(hi-lo))
    return float(np.median(out))
for name in names:
    t0=time.time()
    S = corpus.load(name, dtype=np.float64).to_scipy().tocsr() if name.startswith('corpus:') else tables[name]().tocsr()
    S.sort_indices()
    key=name.replace('corpus:','').replace(':1e7','@10M').replace(':4e7','@40M')
    res=[]
    for dt,v in (('float32',4),('float64',8)):
        r=ratio.get((key,dt))
        res.append(f"{dt[-2:]}: seg/staged {r if r is None else round(r,2)} new-line share W=4k {footprint(S,v,4096):.2f} W=64k {footprint(S,v,65536):.2f}")
    print(f"{key:24} nnz {S.nnz/1e6:5.1f}M cols {S.shape[1]:>9,} | "+" | ".join(res)+f"  ({time.time()-t0:.0f}s)", flush=True)
