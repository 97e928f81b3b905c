// LAB COPY of kernels/spmv_adaptive2.cu (session 39): batched loads behind -DSPLA_AB_BATCH=B (rows, block
// and split paths) and -DSPLA_AB_STREAM_BATCH=B (stream blocks), float32's register bound behind
// -DSPLA_AB_MIN_BLOCKS=N; without them, the committed kernel.
// spmv_adaptive2: spmv_adaptive.cu with balanced medium rows and more loads in flight (step 5).
//
// What changed from spmv_adaptive.cu (kept as it was, so both are measured):
//  * "rows" blocks (kind == ADAPTIVE2_KIND_ROWS): medium rows (too long to
//    stage, far too short to fill a 256-thread block: 257..1024 nnz by
//    default) no longer get a whole block each. The plan lists them sorted
//    by length in `row_list`, and one block takes THREADS / width of them,
//    `width` lanes per row (descriptor slot 3), so the rows of a block are
//    about equally long and no warp waits for another (a 256-thread block
//    per such row reads a few hundred nonzeros and spends most of its time
//    in two barriers).
//  * stream blocks also stage their rows' offsets (indptr - base) in shared
//    memory, so the summing rounds read only shared memory; in spmv_adaptive
//    every round re-read indptr from global memory, one dependent latency
//    per round.
//  * loads in the rows/block/split paths are issued four at a time into
//    independent accumulators (memory-level parallelism for x gathers).
//  * no dense path: the plan that goes with this kernel routes dense rows
//    like any other row (split into chunks): a dense panel saves at most half
//    the panel's bytes, while a GEMV with one warp per panel row leaves the GPU
//    nearly idle on a panel of a few rows; split chunks run fully parallel
//    (see BENCHMARKS.md).
// The descriptor layout is spmv_adaptive.cu's plus the rows kind:
//   {row_begin, row_end, kind, split_id}          kind in 1..32: stream, lanes per row
//   {row, row + 1, 0, -1}                          block per row
//   {row, row + 1, -(chunk + 1), split_id}         chunk of a split row
//   {list_begin, list_end, KIND_ROWS, width}       rows row_list[list_begin:list_end]
//
// Constraints (checked by spla/planning/adaptive.py when it builds the plan):
//   blockDim.x == ADAPTIVE2_THREADS; a stream block holds <= ADAPTIVE2_STAGE
//   nonzeros and < ADAPTIVE2_STAGE rows; a rows block holds at most
//   THREADS / width rows, width in {1, 2, 4, 8, 16, 32}; split counters start
//   at zero and are reset by the last chunk (one stream at a time per plan).
//   Shared memory: 2048 values + 2049 ints (16 KiB float, 24 KiB double).
//   The grid loops over descriptors, so any grid size covers any plan.
#include "common.cuh"
#include "launch_config.cuh"  // the -D constants the host passes

constexpr int ADAPTIVE2_THREADS = SPLA_ADAPTIVE_THREADS;
constexpr int ADAPTIVE2_STAGE = SPLA_ADAPTIVE_STAGE;
constexpr long long ADAPTIVE2_KIND_ROWS = SPLA_KIND_ROWS;

namespace {

// sum of data[k] * x[indices[k]] for k = lane, lane + step, ... < length. Offsets are relative to
// the row (or chunk) start, so k stays far from INT_MAX even near the end of a big matrix.
#if SPLA_AB_BATCH
// LAB VARIANT (session 39, B1): a lane's entries in predicated batches of SPLA_AB_BATCH. A batch
// issues all its index and value loads, then all its gathers, so a lane waits for two dependent loads
// a batch, where the committed loop waits for two every 4 entries and two for each entry past them.
// Entry j of a batch adds into s[j % 4]: the committed loop's order wherever a lane's count is a multiple of 4.
template <typename V, typename I>
__device__ __forceinline__ V strided_dot(const I* __restrict__ indices, const V* __restrict__ data,
                                         const V* __restrict__ x, I length, int lane, int step) {
    constexpr int B = SPLA_AB_BATCH;
    V s[4] = {V(0), V(0), V(0), V(0)};
    for (I k = lane; k < length; k += B * step) {
        I c[B];
        V v[B];
#pragma unroll
        for (int j = 0; j < B; ++j) {
            const I at = k + j * step;
            c[j] = at < length ? indices[at] : I(0);
            v[j] = at < length ? data[at] : V(0);
        }
#pragma unroll
        for (int j = 0; j < B; ++j) {
            if (k + j * step < length) s[j % 4] += v[j] * __ldg(x + c[j]);
        }
    }
    return (s[0] + s[1]) + (s[2] + s[3]);
}
#else
// the committed loop: four loads in flight per thread
template <typename V, typename I>
__device__ __forceinline__ V strided_dot(const I* __restrict__ indices, const V* __restrict__ data,
                                         const V* __restrict__ x, I length, int lane, int step) {
    V s0 = V(0), s1 = V(0), s2 = V(0), s3 = V(0);
    I k = lane;
    for (; k + 3 * step < length; k += 4 * step) {
        const I c0 = indices[k], c1 = indices[k + step], c2 = indices[k + 2 * step], c3 = indices[k + 3 * step];
        const V v0 = data[k], v1 = data[k + step], v2 = data[k + 2 * step], v3 = data[k + 3 * step];
        s0 += v0 * __ldg(x + c0);
        s1 += v1 * __ldg(x + c1);
        s2 += v2 * __ldg(x + c2);
        s3 += v3 * __ldg(x + c3);
    }
    for (; k < length; k += step) s0 += data[k] * __ldg(x + indices[k]);
    return (s0 + s1) + (s2 + s3);
}

#endif

}  // namespace

#if SPLA_AB_MIN_BLOCKS
// LAB VARIANT (B3): float32 held to the registers that let an SM hold SPLA_AB_MIN_BLOCKS blocks (8: 32
// registers, as the committed kernel compiles); float64 to 6 (its committed 40 registers)
template <typename V>
constexpr int adaptive2_min_blocks() { return sizeof(V) == 4 ? SPLA_AB_MIN_BLOCKS : 6; }
#define SPLA_AB_BOUNDS __launch_bounds__(ADAPTIVE2_THREADS, adaptive2_min_blocks<V>())
#else
#define SPLA_AB_BOUNDS __launch_bounds__(ADAPTIVE2_THREADS)
#endif

template <typename V, typename I>
__global__ void SPLA_AB_BOUNDS
spla_spmv_adaptive2(const long long* __restrict__ blocks, long long n_blocks, const long long* __restrict__ row_list,
                    const I* __restrict__ indptr, const I* __restrict__ indices, const V* __restrict__ data,
                    const V* __restrict__ x, V* __restrict__ y, V alpha, V beta, long long chunk,
                    const long long* __restrict__ split_offsets, V* split_partials,
                    unsigned int* split_counters) {
    __shared__ V staged[ADAPTIVE2_STAGE];
    __shared__ int offsets[ADAPTIVE2_STAGE + 1];
    __shared__ V scratch[ADAPTIVE2_THREADS / spla::WARP_SIZE];
    __shared__ bool last_chunk;
    const int tid = threadIdx.x;

    for (long long b = blockIdx.x; b < n_blocks; b += gridDim.x) {
        const long long first = blocks[4 * b];
        const long long last = blocks[4 * b + 1];
        const long long kind = blocks[4 * b + 2];

        if (kind == ADAPTIVE2_KIND_ROWS) {
            const int width = static_cast<int>(blocks[4 * b + 3]);
            const int lane = tid & (width - 1);
            const int group = tid / width;
            const int n_groups = ADAPTIVE2_THREADS / width;
            // same trip count in every thread: the shuffles need whole warps
            for (long long at = first; at < last; at += n_groups) {
                const long long slot = at + group;
                V sum = V(0);
                long long row = -1;
                if (slot < last) {
                    row = row_list[slot];
                    const I start = indptr[row];
                    sum = strided_dot(indices + start, data + start, x, indptr[row + 1] - start, lane, width);
                }
                sum = spla::warp_reduce_sum_width(sum, width);
                if (lane == 0 && row >= 0) spla::store_row(y, row, sum, alpha, beta);
            }
        } else if (kind > 0) {
            const long long row_begin = first;
            const int n_rows = static_cast<int>(last - first);
            const I base = indptr[row_begin];
            for (int r = tid; r <= n_rows; r += ADAPTIVE2_THREADS) {
                offsets[r] = static_cast<int>(indptr[row_begin + r] - base);
            }
            const int n = static_cast<int>(indptr[row_begin + n_rows] - base);
#if SPLA_AB_STREAM_BATCH
            // LAB VARIANT (B2): the stream block's products in predicated batches (at most
            // ADAPTIVE2_STAGE / 256 = 8 a thread), every load of a batch issued before its gathers
            for (int k0 = tid; k0 < n; k0 += SPLA_AB_STREAM_BATCH * ADAPTIVE2_THREADS) {
                I c[SPLA_AB_STREAM_BATCH];
                V v[SPLA_AB_STREAM_BATCH];
#pragma unroll
                for (int j = 0; j < SPLA_AB_STREAM_BATCH; ++j) {
                    const int k = k0 + j * ADAPTIVE2_THREADS;
                    c[j] = k < n ? indices[base + k] : I(0);
                    v[j] = k < n ? data[base + k] : V(0);
                }
#pragma unroll
                for (int j = 0; j < SPLA_AB_STREAM_BATCH; ++j) {
                    const int k = k0 + j * ADAPTIVE2_THREADS;
                    if (k < n) staged[k] = v[j] * __ldg(x + c[j]);
                }
            }
#else
#pragma unroll 4
            for (int k = tid; k < n; k += ADAPTIVE2_THREADS) {
                staged[k] = data[base + k] * __ldg(x + indices[base + k]);
            }
#endif
            __syncthreads();
            const int width = static_cast<int>(kind);
            const int lane = tid & (width - 1);
            const int group = tid / width;
            const int n_groups = ADAPTIVE2_THREADS / width;
            for (int at = 0; at < n_rows; at += n_groups) {
                const int r = at + group;
                V sum = V(0);
                if (r < n_rows) {
                    const int hi = offsets[r + 1];
                    for (int k = offsets[r] + lane; k < hi; k += width) sum += staged[k];
                }
                sum = spla::warp_reduce_sum_width(sum, width);
                if (lane == 0 && r < n_rows) spla::store_row(y, row_begin + r, sum, alpha, beta);
            }
        } else {
            I lo, hi;
            spla::long_row_range(indptr, first, kind, chunk, lo, hi);
            const V sum = strided_dot(indices + lo, data + lo, x, hi - lo, tid, ADAPTIVE2_THREADS);
            spla::finish_long_row<V, ADAPTIVE2_THREADS>(sum, first, kind, blocks + 4 * b, split_offsets,
                                                        split_partials, split_counters, y, alpha, beta, scratch,
                                                        last_chunk);
        }
        __syncthreads();  // staged/offsets/scratch/last_chunk are reused by the next descriptor
    }
}
