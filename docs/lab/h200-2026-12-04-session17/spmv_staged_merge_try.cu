// spmv_staged: merge-path tiles, a block each, products staged in shared memory (step 7).
//
// What changed from spmv_segmented.cu: a tile is a block's, not a warp's, its
// products wait in shared memory, not registers, and the work is split along the
// merge path of rows and nonzeros, so every thread walks the same number of
// items however the row lengths (and empty rows) fall. Nsight Compute on a 40M
// power law (BENCHMARKS.md, sessions 15 and 17) put cuSPARSE's lead on how busy
// it keeps L2 with few instructions: segmented holds a tile's values, indices
// and gathers in 64 registers a thread (38% of the warp slots filled); a first
// staged kernel that summed a row a thread lost 22% of its time to the rows'
// uneven lengths (barrier stalls), and its 16-byte loads (a lane's 4
// consecutive entries) spread one gather instruction over more sectors of x
// than consecutive entries a lane do.
//
// The merge path is the sequence of the rows' ends and the nonzeros in order:
// row r's end is item r + indptr[r + 1], nonzero k of row r is item r + k. Tile
// t is the items [t * TILE, (t + 1) * TILE), TILE = STAGED_THREADS * T; it starts
// at row tile_rows[t] (the row ends before it) and nonzero t * TILE - tile_rows[t]
// (spla/planning/segmented.py, staged_tile_rows).
//  1. the tile's products (lane-consecutive loads: a gather instruction covers
//     32 consecutive nonzeros) and its row ends go to shared memory;
//  2. thread i takes items [i T, (i + 1) T) of the tile (a binary search of the
//     path finds where they start) and adds products, closing a row at each row
//     end. Rows closed whole by the thread are written at once; the first row a
//     thread closes may have begun in earlier threads;
//  3. a segmented scan over the threads (keyed by the row open at each thread's
//     end) gives each first-closed row the sums of the threads before it.
// Rows cut by tile edges (a row whose first nonzero and end are in different
// tiles) leave one partial sum in each of their tiles, added in tile order by the
// last to arrive (spla::arrive_cut_row): no float atomics, every call gives the
// same bits.
//
// Constraints (checked by spla/planning/spmv.py and spla/backends/cuda/spmv.py):
//   blockDim.x == STAGED_THREADS (blocks loop over tiles grid-stride; the
//   launcher gives a block a tile); counters start at zero and each finishing
//   tile resets its own (one stream at a time per matrix, as segmented).
#include "common.cuh"
#include "launch_config.cuh"  // the -D constants the host passes

constexpr int STAGED_THREADS = SPLA_STAGED_THREADS;
constexpr int STAGED_WARPS = STAGED_THREADS / spla::WARP_SIZE;
constexpr int NO_END = 0x7fffffff;  // the row end after the tile's last: never reached

// Blocks an SM must hold, so the compiler keeps registers to what fits (40 a thread at 6).
constexpr int STAGED_MIN_BLOCKS = 1536 / STAGED_THREADS;

template <typename V, typename I, int T>
__global__ void __launch_bounds__(STAGED_THREADS, STAGED_MIN_BLOCKS)
spla_spmv_staged(long long n_tiles, long long nnz, const long long* __restrict__ tile_rows,
                 const I* __restrict__ indptr, const I* __restrict__ indices, const V* __restrict__ data,
                 const V* __restrict__ x, V* __restrict__ y, V alpha, V beta,
                 V* head_partials, V* tail_partials, unsigned int* counters) {
    constexpr int TILE = STAGED_THREADS * T;
    __shared__ V products[TILE];
    __shared__ int ends[TILE + 1];  // the tile's row ends, as offsets from its first nonzero
    __shared__ int warp_key[STAGED_WARPS];
    __shared__ V warp_run[STAGED_WARPS];
    __shared__ V head_sum;  // the tile's part of its first row, when that row began before it

    const int lane = threadIdx.x & (spla::WARP_SIZE - 1);
    const int warp = threadIdx.x / spla::WARP_SIZE;
    const long long n_rows = tile_rows[n_tiles];
    for (long long t = blockIdx.x; t < n_tiles; t += gridDim.x) {
        const long long d0 = t * TILE;
        const long long r0 = tile_rows[t], r1 = tile_rows[t + 1];
        const long long k0 = d0 - r0;
        const long long k1 = (t + 1 < n_tiles ? (t + 1) * TILE : n_rows + nnz) - r1;
        const int n_ends = static_cast<int>(r1 - r0);   // rows closed in the tile
        const int n_items = static_cast<int>(k1 - k0);  // nonzeros in the tile

        // 1. products and row ends into shared memory
#pragma unroll
        for (int s = 0; s < T; ++s) {
            const int at = s * STAGED_THREADS + threadIdx.x;
            if (at < n_items) products[at] = __ldcs(data + k0 + at) * __ldg(x + __ldcs(indices + k0 + at));
        }
        for (int at = threadIdx.x; at < n_ends; at += STAGED_THREADS) {
            ends[at] = static_cast<int>(indptr[r0 + 1 + at] - k0);
        }
        if (threadIdx.x == 0) ends[n_ends] = NO_END;
        __syncthreads();

        // 2. this thread's items: where they start on the path (j row ends, k nonzeros before)
        const int path = n_ends + n_items;
        const int diagonal = min(static_cast<int>(threadIdx.x) * T, path);
        int lo = max(diagonal - n_items, 0), hi = min(diagonal, n_ends);
        while (lo < hi) {
            const int pivot = (lo + hi) >> 1;
            if (ends[pivot] <= diagonal - pivot - 1) lo = pivot + 1; else hi = pivot;
        }
        int j = lo, k = diagonal - lo;
        V sum = V(0), first_sum = V(0);
        int first_row = -1;  // the first row this thread closes, as an offset from r0
        const bool head_cut = k0 > static_cast<long long>(indptr[r0]);  // row r0 began in an earlier tile
#pragma unroll
        for (int i = 0; i < T; ++i) {
            if (j + k < path) {
                if (k < ends[j]) {
                    sum += products[k++];
                } else {
                    if (first_row < 0) {
                        first_row = j;
                        first_sum = sum;
                    } else {
                        spla::store_row(y, r0 + j, sum, alpha, beta);
                    }
                    sum = V(0);
                    ++j;
                }
            }
        }

        // 3. segmented scan of the open sums, keyed by the open row (keys rise with the thread)
        V run = sum;
        const int key = j;
#pragma unroll
        for (int d = 1; d < spla::WARP_SIZE; d *= 2) {
            const V up = __shfl_up_sync(spla::FULL_MASK, run, d);
            const int up_key = __shfl_up_sync(spla::FULL_MASK, key, d);
            if (lane >= d && up_key == key) run += up;
        }
        if (lane == spla::WARP_SIZE - 1) {
            warp_key[warp] = key;
            warp_run[warp] = run;
        }
        __syncthreads();
        // A thread whose key is the previous warp's last key began its run in an earlier warp
        // (keys rise), so every warp back to where that key starts adds its last run.
        V carried = V(0);
        for (int w = warp - 1; w >= 0 && warp_key[w] == key; --w) carried += warp_run[w];
        run += carried;
        // the run before this thread, for its first closed row
        V before = __shfl_up_sync(spla::FULL_MASK, run, 1);
        int before_key = __shfl_up_sync(spla::FULL_MASK, key, 1);
        if (lane == 0) {
            before = V(0);
            before_key = -1;
            if (warp > 0) {
                before_key = warp_key[warp - 1];
                for (int w = warp - 1; w >= 0 && warp_key[w] == before_key; --w) before += warp_run[w];
            }
        }
        if (first_row >= 0) {
            const V whole = first_sum + (before_key == first_row ? before : V(0));
            if (first_row == 0 && head_cut) {
                head_sum = whole;
            } else {
                spla::store_row(y, r0 + first_row, whole, alpha, beta);
            }
        }
        __syncthreads();

        // rows cut by the tile's edges: its first row, if it began before the tile and ends in
        // it, and the row open at its end (the last thread's run), if it has nonzeros here
        if (warp == 0 && n_ends > 0 && head_cut) {
            const long long start = indptr[r0], end = indptr[r0 + 1];
            spla::arrive_cut_row(lane, r0, head_sum, head_partials + t, (r0 + start) / TILE, (r0 + end) / TILE,
                                 head_partials, tail_partials, counters, y, alpha, beta);
        }
        if (warp == STAGED_WARPS - 1 && r1 < n_rows && k1 > static_cast<long long>(indptr[r1])) {
            const long long start = indptr[r1], end = indptr[r1 + 1];
            const long long t0 = (r1 + start) / TILE;
            const V open = __shfl_sync(spla::FULL_MASK, run, spla::WARP_SIZE - 1);
            spla::arrive_cut_row(lane, r1, open, t0 == t ? tail_partials + t : head_partials + t, t0,
                                 (r1 + end) / TILE, head_partials, tail_partials, counters, y, alpha, beta);
        }
        __syncthreads();  // the next tile rewrites shared memory
    }
}
