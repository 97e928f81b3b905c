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
            const I row_start = indptr[row_begin];
            const I row_stop = indptr[row_begin + 1];
            const long long chunk_index = kind < 0 ? -kind - 1 : 0;
            I lo = row_start;
            I hi = row_stop;
            if (kind < 0) {
                lo = row_start + static_cast<I>(chunk_index * chunk);
                hi = (row_stop - lo > chunk) ? lo + static_cast<I>(chunk) : row_stop;
            }
            const I length = hi - lo;
            V sum = V(0);
#pragma unroll 4
            for (I k = tid; k < length; k += ADAPTIVE_THREADS) {
                sum += data[lo + k] * __ldg(x + indices[lo + k]);
            }
            sum = spla::block_reduce_sum<V, ADAPTIVE_THREADS>(sum, scratch);
            if (kind == 0) {
                if (tid == 0) spla::store_row(y, row_begin, sum, alpha, beta);
            } else {
                const long long split_id = blocks[4 * b + 3];
                const long long offset = split_offsets[split_id];
                const unsigned n_chunks = static_cast<unsigned>(split_offsets[split_id + 1] - offset);
                if (tid == 0) {
                    split_partials[offset + chunk_index] = sum;
                    __threadfence();  // the partial is visible before the counter says so
                    const unsigned done = atomicAdd(split_counters + split_id, 1u);
                    last_chunk = (done == n_chunks - 1);
                }
                __syncthreads();
                if (last_chunk) {
                    __threadfence();
                    // Strided partial sums then a block reduction: a fixed order, so
                    // results do not depend on which chunk finished last.
                    V total = V(0);
                    const volatile V* partials = split_partials + offset;
                    for (unsigned c = tid; c < n_chunks; c += ADAPTIVE_THREADS) total += partials[c];
                    total = spla::block_reduce_sum<V, ADAPTIVE_THREADS>(total, scratch);
                    if (tid == 0) {
                        spla::store_row(y, row_begin, total, alpha, beta);
                        split_counters[split_id] = 0u;  // ready for the next launch
                    }
                }
            }
        }
        __syncthreads();  // staged/scratch/last_chunk are reused by the next descriptor
    }
}
