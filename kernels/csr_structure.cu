// What a CSR matrix's structure is, in one pass (launched by spla/backends/cuda/csr_structure.py
// for spla/csr_ops.py): whether the column indices ascend in every row (sorted), whether they
// ascend strictly (canonical: sorted and no duplicates), and the longest row. cuSPARSE's SpGEMM
// needs canonical operands and spla bounds the product by nnz(A) times B's longest row, so a
// new matrix needs all three before its first product: found together they cost one pass over
// `indices`, a small part of `indptr` per block and one host read (see BENCHMARKS.md, SpGEMM).
//
// Work mapping: block b takes the entries [b * CHUNK, (b + 1) * CHUNK), CHUNK = THREADS *
// PER_THREAD, so the work is balanced by entries whatever the row lengths (a thread per row
// would leave one thread with a whole dense row). Two warps find the rows whose first entry
// lies in the chunk (warp-cooperative searches of indptr, five rounds of loads for a million
// rows); the block marks those first entries in a shared bitmap and measures those rows. Then
// each thread compares entries k - 1 and k for its PER_THREAD entries k, skipping the k that
// start a row: a descent makes the matrix unsorted, an equal pair non-canonical.
//
// out[0] is set to 1 if some row has a descent, out[1] if some row repeats a column, out[2] is
// raised to the longest row (atomics, so the caller zeroes out and may hold several matrices'
// results in one array, read back once).
// Constraints: nnz > 0; indptr is non-decreasing from 0 to nnz (a malformed one gives a wrong
// answer but no out-of-bounds access); I is the index type of indptr and indices; the block has
// THREADS threads, a multiple of 32 and at least 64; CHUNK a multiple of 32.
#include "common.cuh"

namespace {

// The first position p in [0, n] with a[p] >= key, for a non-decreasing a[0..n) (n if none).
// Every lane of the warp calls it with the same arguments: each round the 32 lanes probe 32
// evenly spaced positions of the remaining range, which shrinks 32-fold.
template <typename I>
__device__ long long warp_lower_bound(const I* __restrict__ a, long long n, long long key) {
    const int lane = threadIdx.x & (spla::WARP_SIZE - 1);
    long long lo = 0;
    long long hi = n;  // a[lo - 1] < key (or lo == 0), and a[hi] >= key (or hi == n)
    while (lo < hi) {
        const long long step = (hi - lo + spla::WARP_SIZE - 1) / spla::WARP_SIZE;
        const long long probe = lo + (lane + 1) * step - 1;
        const bool reached = probe >= hi || static_cast<long long>(a[probe]) >= key;
        const unsigned ballot = __ballot_sync(spla::FULL_MASK, reached);
        if (ballot == 0) {  // the last probe was hi - 1, still below key
            return hi;
        }
        const int first = __ffs(ballot) - 1;
        const long long reached_at = lo + (first + 1) * step - 1;
        lo += first * step;
        hi = reached_at < hi ? reached_at : hi;
    }
    return lo;
}

}  // namespace

template <typename I, int THREADS, int PER_THREAD>
__global__ void __launch_bounds__(THREADS)
spla_csr_structure(const I* __restrict__ indptr, const I* __restrict__ indices, long long n_rows, long long nnz,
                   unsigned long long* __restrict__ out) {
    static_assert(THREADS % spla::WARP_SIZE == 0 && THREADS >= 2 * spla::WARP_SIZE, "two whole warps at least");
    constexpr int CHUNK = THREADS * PER_THREAD;
    static_assert(CHUNK % 32 == 0, "the bitmap holds whole words");
    constexpr int WORDS = CHUNK / 32;
    __shared__ unsigned row_starts[WORDS];
    __shared__ long long rows[2];

    const long long first = static_cast<long long>(blockIdx.x) * CHUNK;
    const long long last = first + CHUNK < nnz ? first + CHUNK : nnz;
    for (int w = threadIdx.x; w < WORDS; w += THREADS) {
        row_starts[w] = 0u;
    }
    const int warp = threadIdx.x / spla::WARP_SIZE;
    if (warp < 2) {  // warp 0: the first row starting at or after `first`; warp 1: at or after `last`
        const long long row = warp_lower_bound(indptr, n_rows + 1, warp == 0 ? first : last);
        if ((threadIdx.x & (spla::WARP_SIZE - 1)) == 0) {
            rows[warp] = row;
        }
    }
    __syncthreads();

    // Every row with an entry starts in exactly one chunk: this block marks and measures those.
    unsigned long long longest = 0;
    const long long row_end = rows[1] < n_rows ? rows[1] : n_rows;
    for (long long r = rows[0] + threadIdx.x; r < row_end; r += THREADS) {
        const long long start = static_cast<long long>(indptr[r]);
        if (start >= first && start < last) {
            const long long bit = start - first;
            atomicOr(&row_starts[bit / 32], 1u << (bit % 32));
        }
        const long long length = static_cast<long long>(indptr[r + 1]) - start;
        if (length > 0 && static_cast<unsigned long long>(length) > longest) {
            longest = static_cast<unsigned long long>(length);
        }
    }
    __syncthreads();

    int descent = 0;
    int repeat = 0;
#pragma unroll
    for (int j = 0; j < PER_THREAD; ++j) {
        const int offset = j * THREADS + threadIdx.x;
        const long long k = first + offset;
        if (k > 0 && k < last && !((row_starts[offset / 32] >> (offset % 32)) & 1u)) {
            const I previous = indices[k - 1];
            const I current = indices[k];
            descent |= current < previous;
            repeat |= current == previous;
        }
    }
    descent = __syncthreads_or(descent);
    repeat = __syncthreads_or(repeat);

#pragma unroll
    for (int offset = spla::WARP_SIZE / 2; offset > 0; offset /= 2) {
        const unsigned long long other = __shfl_down_sync(spla::FULL_MASK, longest, offset);
        longest = other > longest ? other : longest;
    }
    if ((threadIdx.x & (spla::WARP_SIZE - 1)) == 0 && longest > 0) {
        atomicMax(&out[2], longest);
    }
    if (threadIdx.x == 0) {
        if (descent) atomicOr(&out[0], 1ull);
        if (repeat) atomicOr(&out[1], 1ull);
    }
}
