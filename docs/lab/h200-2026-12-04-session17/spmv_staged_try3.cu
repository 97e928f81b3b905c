// spmv_staged: a block per tile of nonzeros, products staged in shared memory (step 7).
//
// What changed from spmv_segmented.cu: a tile is a block's, not a warp's, and
// its products wait in shared memory, not registers. Nsight Compute on a 40M
// power law (BENCHMARKS.md, session 15) put cuSPARSE's lead on how busy it keeps
// L2 (92% against segmented's 79%): segmented holds a tile's values, indices
// and gathers in 64 registers a thread, so only 38% of the warp slots are
// filled, and its segmented scan costs instructions. Here a thread's loads
// (T values and indices in 16-byte packs, then T gathers of x) go straight to
// shared memory as products, so few registers are live and every warp slot can
// be filled; the rows are then summed from shared memory.
//
// Tile t is the nonzeros [t * TILE, (t + 1) * TILE), TILE = STAGED_THREADS * T,
// laid out as T / 4 strips of 4 * STAGED_THREADS entries, thread i loading the
// 4 consecutive entries at 4 i of each strip (coalesced 16-byte loads).
//
// Rows (the tile ownership of spmv_segmented: tile t owns the rows that start in
// it, tile_rows[t] .. tile_rows[t+1] - 1, the last tile the trailing empty rows,
// spla/planning/segmented.py):
//  * a thread a row, over the owned rows and the row running into the tile
//    from the left (its "head" row), sums the row's products in the tile left
//    to right and writes y;
//  * rows with more than LONG products in the tile, and rows cut by a tile
//    edge, go on a list that the block's warps take one row at a time (lanes
//    strided over the products, a shuffle reduction), so one long row does not
//    hold up a thread while the others wait at the end of the block;
//  * a cut row leaves one partial sum in each of its tiles, added in tile
//    order by the last to arrive (spla::arrive_cut_row): no float atomics, every
//    call gives the same bits.
//
// Constraints (checked by spla/planning/spmv.py and spla/backends/cuda/spmv.py):
//   blockDim.x == STAGED_THREADS (blocks loop over tiles grid-stride; the
//   launcher gives a block a tile); T a multiple of 4; counters start at zero and each finishing tile resets its own
//   (one stream at a time per matrix, as segmented).
#include "common.cuh"
#include "launch_config.cuh"  // the -D constants the host passes

constexpr int STAGED_THREADS = SPLA_STAGED_THREADS;
constexpr int STAGED_WARPS = STAGED_THREADS / spla::WARP_SIZE;
// Rows with more products than this in a tile are summed by a warp, not a thread.
constexpr int LONG = spla::WARP_SIZE;

// Blocks an SM must hold, so the compiler keeps registers to what fits: all
// 2,048 threads (32 registers) where a thread's values take at most 32 bytes.
template <typename V, int T>
constexpr int staged_min_blocks() {
    return T * sizeof(V) <= 32 ? 2048 / STAGED_THREADS : 1536 / STAGED_THREADS;
}

template <typename V, typename I, int T>
__global__ void __launch_bounds__(STAGED_THREADS, staged_min_blocks<V, T>())
spla_spmv_staged(long long n_tiles, long long nnz, const long long* __restrict__ tile_rows,
                 const I* __restrict__ indptr, const I* __restrict__ indices, const V* __restrict__ data,
                 const V* __restrict__ x, V* __restrict__ y, V alpha, V beta,
                 V* head_partials, V* tail_partials, unsigned int* counters) {
    constexpr int TILE = STAGED_THREADS * T;
    constexpr int LISTED = TILE / (LONG + 1) + 2;  // long rows fit in a tile, and two cut ones
    __shared__ V products[TILE];
    __shared__ int listed[LISTED];  // rows for the warps, from the tile's first row
    __shared__ int n_listed;

    const int lane = threadIdx.x & (spla::WARP_SIZE - 1);
    const int warp = threadIdx.x / spla::WARP_SIZE;
    for (long long t = blockIdx.x; t < n_tiles; t += gridDim.x) {
        const long long base = t * TILE;
        const long long stop = base + TILE < nnz ? base + TILE : nnz;
        if (threadIdx.x == 0) n_listed = 0;
#ifdef TRY_PREFETCH
        const long long r_lo = tile_rows[t];
        const long long r_hi = tile_rows[t + 1];
        const bool has_head = r_lo > 0 && base < nnz && indptr[r_lo] > base;  // row r_lo - 1 runs into the tile
        const long long first = has_head ? r_lo - 1 : r_lo;
        long long r = first + threadIdx.x;
        long long start = 0, end = 0;
        if (r < r_hi) {
            start = indptr[r];
            end = indptr[r + 1];
        }
#endif

        // 1. products into shared memory, in tile order
        if (base + TILE <= nnz) {
#pragma unroll
            for (int s = 0; s < T; ++s) {
                const int at = s * STAGED_THREADS + threadIdx.x;
                products[at] = __ldcs(data + base + at) * __ldg(x + __ldcs(indices + base + at));
            }
        } else {
            for (int at = threadIdx.x; at < TILE; at += STAGED_THREADS) {
                const long long k = base + at;
                products[at] = k < nnz ? __ldcs(data + k) * __ldg(x + __ldcs(indices + k)) : V(0);
            }
        }
        __syncthreads();
#ifdef TRY_LOADS_ONLY
        if (threadIdx.x == 0) y[t % (tile_rows[n_tiles])] = products[t & (TILE - 1)];
        __syncthreads();
        continue;
#endif

        // 2. a thread a row; long and cut rows listed for the warps
#ifdef TRY_PREFETCH
        for (; r < r_hi; r += STAGED_THREADS, start = r < r_hi ? indptr[r] : 0, end = r < r_hi ? indptr[r + 1] : 0) {
#else
        const long long r_lo = tile_rows[t];
        const long long r_hi = tile_rows[t + 1];
        const bool has_head = r_lo > 0 && base < nnz && indptr[r_lo] > base;  // row r_lo - 1 runs into the tile
        const long long first = has_head ? r_lo - 1 : r_lo;
        for (long long r = first + threadIdx.x; r < r_hi; r += STAGED_THREADS) {
            const long long start = indptr[r], end = indptr[r + 1];
#endif
            const long long from = start > base ? start : base;
            const long long to = end < stop ? end : stop;
            if (start < base || end > stop || to - from > LONG) {
                listed[atomicAdd(&n_listed, 1)] = static_cast<int>(r - first);
                continue;
            }
            V sum = V(0);
            for (long long k = from; k < to; ++k) sum += products[k - base];
            spla::store_row(y, r, sum, alpha, beta);
        }
        __syncthreads();

        // 3. a warp a listed row (the list's order varies between calls; each row's sum does not)
        const int n_rows_listed = n_listed;
        for (int i = warp; i < n_rows_listed; i += STAGED_WARPS) {
            const long long r = first + listed[i];
            const long long start = indptr[r], end = indptr[r + 1];
            const long long from = start > base ? start : base;
            const long long to = end < stop ? end : stop;
            V sum = V(0);
            for (long long k = from + lane; k < to; k += spla::WARP_SIZE) sum += products[k - base];
            sum = spla::warp_reduce_sum<V>(sum);
            if (start >= base && end <= stop) {
                if (lane == 0) spla::store_row(y, r, sum, alpha, beta);
            } else {
                const long long t0 = start / TILE, t1 = (end - 1) / TILE;
#ifdef TRY_NO_ARRIVE
                if (lane == 0) (t0 == t ? tail_partials : head_partials)[t] = sum + V(t1);
#else
                spla::arrive_cut_row(lane, r, sum, t0 == t ? tail_partials + t : head_partials + t, t0, t1,
                                     head_partials, tail_partials, counters, y, alpha, beta);
#endif
            }
        }
        __syncthreads();  // the next tile rewrites the products and the list
    }
}
