"""B4's statistic (this folder's README): how many rows of a warp's first value load of spmv_rle.cu ask the
busiest L1 bank (32 banks of 4 bytes), median over sampled warps, from a row pointer on the host."""
import numpy as np

BANK_WORDS = 32
UNROLL = 4
SAMPLE_GROUPS = 1024

def bank_pile(indptr: np.ndarray, lanes: int, itemsize: int = 4) -> float:
    """Median, over sampled warps, of how many rows of the warp's first value load ask the busiest bank."""
    group = 32 // lanes
    n_rows = indptr.size - 1
    n_groups = n_rows // group
    if n_groups == 0:
        return 0.0
    tops = np.unique(np.linspace(0, n_groups - 1, min(n_groups, SAMPLE_GROUPS)).astype(np.int64)) * group
    rows = tops[:, None] + np.arange(group)
    starts = indptr[rows].astype(np.int64)
    long_enough = indptr[rows + 1] - starts >= UNROLL * lanes
    words = itemsize // 4
    first = (starts * words) % BANK_WORDS
    span = np.arange(lanes * words)
    banks = (first[:, :, None] + span) % BANK_WORDS                       # groups x rows x words
    hits = np.zeros((rows.shape[0], BANK_WORDS), dtype=np.int64)
    for j in range(group):
        touched = np.zeros((rows.shape[0], BANK_WORDS), dtype=bool)
        np.put_along_axis(touched, banks[:, j, :], True, axis=1)
        hits += touched & long_enough[:, j:j + 1]
    return float(np.median(hits.max(axis=1)))
