// spmv_adaptive: nnz-balanced blocks from a host-built plan, one launch (step 4).
//
// What changed from spmv_warp.cu / spmv_vector.cu: work is no longer "a fixed
// number of lanes per row". spla/planning/adaptive.py cuts the rows into thread blocks of
// roughly equal nnz (CSR-Adaptive / CSR-stream style) and this kernel reads
// one 4-entry descriptor per block:
//   {row_begin, row_end, kind, split_id}
//   kind > 0  "stream": many short rows [row_begin, row_end) whose nnz fit in
//             ADAPTIVE_STAGE. The block loads all their products
//             data[j] * x[indices[j]] with fully coalesced loads into shared
//             memory, then groups of `kind` lanes (1..32, chosen by the plan
//             from the block's row count and longest row) sum one row each.
//   kind == 0 "block": one medium row, summed by the whole block.
//   kind < 0  "split": chunk (-kind - 1) of a long row (split_id names it):
//             the block sums one `chunk`-long slice, stores the partial,
//             and the last chunk to finish (a counter per long row, the
//             threadfence-reduction pattern) adds the partials in chunk order
//             and writes y. One launch, deterministic, and y is never read
//             when beta == 0 (no atomicAdd into a pre-zeroed y).
// Rows the plan routes to a dense panel are not in the descriptors; the host
// runs them through the dense GEMV.
//
// Constraints (asserted on the host in spla/planning/adaptive.py and spla/backends/cuda/spmv.py):
//   blockDim.x == ADAPTIVE_THREADS; a stream block's nnz <= ADAPTIVE_STAGE;
//   a split row's chunks are `chunk` long (the plan's thresholds.chunk);
//   split_counters start at zero (the last block resets its own counter, so
//   consecutive launches on one stream reuse them; concurrent launches of one
//   plan on different streams would race and are not supported).
//   Shared memory: ADAPTIVE_STAGE values (8 KiB float, 16 KiB double).
//   The grid loops over descriptors, so any grid size covers any plan.
#include "common.cuh"
#include "launch_config.cuh"  // the -D constants the host passes

constexpr int ADAPTIVE_THREADS = SPLA_ADAPTIVE_THREADS;
constexpr int ADAPTIVE_STAGE = SPLA_ADAPTIVE_STAGE;

template <typename V, typename I>
__global__ void __launch_bounds__(ADAPTIVE_THREADS)
spla_spmv_adaptive(const long long* __restrict__ blocks, long long n_blocks, const I* __restrict__ indptr,
                   const I* __restrict__ indices, const V* __restrict__ data, const V* __restrict__ x,
                   V* __restrict__ y, V alpha, V beta, long long chunk,
                   const long long* __restrict__ split_offsets, V* split_partials,
                   unsigned int* split_counters) {
    __shared__ V staged[ADAPTIVE_STAGE];
    __shared__ V scratch[ADAPTIVE_THREADS / spla::WARP_SIZE];
    __shared__ bool last_chunk;
    const int tid = threadIdx.x;

    for (long long b = blockIdx.x; b < n_blocks; b += gridDim.x) {
        const long long row_begin = blocks[4 * b];
        const long long row_end = blocks[4 * b + 1];
        const long long kind = blocks[4 * b + 2];

        if (kind > 0) {
            const I base = indptr[row_begin];
            const I n = indptr[row_end] - base;
#pragma unroll 4
            for (I k = tid; k < n; k += ADAPTIVE_THREADS) {
                staged[k] = data[base + k] * __ldg(x + indices[base + k]);
            }
            __syncthreads();
            const int width = static_cast<int>(kind);
            const int lane = tid & (width - 1);
            const int group = tid / width;
            const int n_groups = ADAPTIVE_THREADS / width;
            const long long n_rows = row_end - row_begin;
            // Same trip count in every thread: the shuffles need whole warps.
            for (long long first = 0; first < n_rows; first += n_groups) {
                const long long r = first + group;
                V sum = V(0);
                if (r < n_rows) {
                    const I lo = indptr[row_begin + r] - base;
                    const I hi = indptr[row_begin + r + 1] - base;
                    for (I k = lo + lane; k < hi; k += width) sum += staged[k];
                }
                sum = spla::warp_reduce_sum_width(sum, width);
                if (lane == 0 && r < n_rows) spla::store_row(y, row_begin + r, sum, alpha, beta);
            }
        } else {
            I lo, hi;
            spla::long_row_range(indptr, row_begin, kind, chunk, lo, hi);
            const I length = hi - lo;
            V sum = V(0);
#pragma unroll 4
            for (I k = tid; k < length; k += ADAPTIVE_THREADS) {
                sum += data[lo + k] * __ldg(x + indices[lo + k]);
            }
            spla::finish_long_row<V, ADAPTIVE_THREADS>(sum, row_begin, kind, blocks + 4 * b, split_offsets,
                                                       split_partials, split_counters, y, alpha, beta, scratch,
                                                       last_chunk);
        }
        __syncthreads();  // staged/scratch/last_chunk are reused by the next descriptor
    }
}
