// Shared device helpers for spla's kernels. Every .cu file includes this one.
// Keep it free of __global__ functions: each kernel file owns its kernels.
#pragma once

namespace spla {

constexpr unsigned FULL_MASK = 0xffffffffu;
constexpr int WARP_SIZE = 32;

// Sum over the `width` lanes of a (sub-)warp group; lane 0 of each group holds
// the total. width must be a power of two <= 32.
template <typename T, int width = WARP_SIZE>
__device__ __forceinline__ T warp_reduce_sum(T v) {
#pragma unroll
    for (int offset = width / 2; offset > 0; offset /= 2) {
        v += __shfl_down_sync(FULL_MASK, v, offset, width);
    }
    return v;
}

// The same with a width known only at run time (a power of two in 1..32).
// Every lane of the warp must call it (FULL_MASK), also lanes with no work.
template <typename T>
__device__ __forceinline__ T warp_reduce_sum_width(T v, int width) {
    for (int offset = width / 2; offset > 0; offset /= 2) {
        v += __shfl_down_sync(FULL_MASK, v, offset, width);
    }
    return v;
}

// Sum over a whole block of THREADS threads (a multiple of 32); thread 0 gets
// the total. `scratch` holds THREADS / 32 values in shared memory. Starts with
// a barrier so that scratch can be reused by consecutive calls.
template <typename T, int THREADS>
__device__ __forceinline__ T block_reduce_sum(T v, T* scratch) {
    static_assert(THREADS % WARP_SIZE == 0 && THREADS <= 1024, "block must be whole warps, at most 1024 threads");
    constexpr int WARPS = THREADS / WARP_SIZE;
    v = warp_reduce_sum<T>(v);
    __syncthreads();
    if ((threadIdx.x & (WARP_SIZE - 1)) == 0) scratch[threadIdx.x / WARP_SIZE] = v;
    __syncthreads();
    if (threadIdx.x < WARP_SIZE) {
        v = threadIdx.x < WARPS ? scratch[threadIdx.x] : T(0);
        v = warp_reduce_sum<T>(v);
    }
    return v;
}

// y[row] = alpha * sum + beta * y[row]; with beta == 0, y is never read, so an
// uninitialised (even NaN-filled) output is fine, as BLAS promises.
template <typename V>
__device__ __forceinline__ void store_row(V* y, long long row, V sum, V alpha, V beta) {
    if (beta == V(0)) {
        y[row] = alpha * sum;
    } else {
        y[row] = alpha * sum + beta * y[row];
    }
}

// The long-row descriptors of spmv_adaptive.cu and spmv_adaptive2.cu, {row, row + 1, kind,
// split_id}: a block sums the whole row (kind == 0) or chunk -kind - 1 of it, `chunk` entries
// long (kind < 0). [lo, hi): the entries it sums.
template <typename I>
__device__ __forceinline__ void long_row_range(const I* indptr, long long row, long long kind, long long chunk,
                                               I& lo, I& hi) {
    lo = indptr[row];
    hi = indptr[row + 1];
    if (kind < 0) {
        const I row_stop = hi;
        lo += static_cast<I>((-kind - 1) * chunk);
        hi = (row_stop - lo > chunk) ? lo + static_cast<I>(chunk) : row_stop;
    }
}

// The block's sum of that range written out: to y for a whole row; for a chunk, stored as the
// row's partial, and the last chunk of the row to finish (a counter a row, the
// threadfence-reduction pattern) adds the partials in chunk order, a fixed order whatever
// finished last, writes y and resets the counter for the next launch. Every thread calls it;
// `descriptor` is the block's (its split_id read only for a chunk), `last_chunk` a __shared__
// flag, `scratch` block_reduce_sum's.
template <typename V, int THREADS>
__device__ __forceinline__ void finish_long_row(V sum, long long row, long long kind, const long long* descriptor,
                                                const long long* split_offsets, V* split_partials,
                                                unsigned int* split_counters, V* y, V alpha, V beta, V* scratch,
                                                bool& last_chunk) {
    const int tid = threadIdx.x;
    sum = block_reduce_sum<V, THREADS>(sum, scratch);
    if (kind == 0) {
        if (tid == 0) store_row(y, row, sum, alpha, beta);
        return;
    }
    const long long split_id = descriptor[3];
    const long long offset = split_offsets[split_id];
    const unsigned n_chunks = static_cast<unsigned>(split_offsets[split_id + 1] - offset);
    if (tid == 0) {
        split_partials[offset + (-kind - 1)] = sum;
        __threadfence();  // the partial is visible before the counter says so
        const unsigned done = atomicAdd(split_counters + split_id, 1u);
        last_chunk = (done == n_chunks - 1);
    }
    __syncthreads();
    if (last_chunk) {
        __threadfence();
        V total = V(0);
        const volatile V* partials = split_partials + offset;
        for (unsigned c = tid; c < n_chunks; c += THREADS) total += partials[c];
        total = block_reduce_sum<V, THREADS>(total, scratch);
        if (tid == 0) {
            store_row(y, row, total, alpha, beta);
            split_counters[split_id] = 0u;
        }
    }
}

// First global thread id and the grid stride, in 64 bits: n_rows * lanes can
// pass 2^31 (16.7M rows x 32 lanes already reaches 2^29).
__device__ __forceinline__ long long global_thread_id() {
    return static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ long long grid_threads() {
    return static_cast<long long>(gridDim.x) * blockDim.x;
}

// The row loop of the kernels that give each row a group of LANES consecutive lanes (warp, vector,
// band, rle, CG's fused product), LANES in {2, 4, 8, 16, 32}: a grid-stride loop over each warp's
// first row, the same number of trips in all 32 lanes (the reduction's shuffles use the full mask,
// so blockDim.x must be a multiple of 32). row_sum(row, lane) gives a lane's partial of a row
// (row < n_rows), the group's shuffles add them in one fixed order, and lane 0 hands the total to
// finish(row, total).
template <typename V, int LANES, typename Finish, typename RowSum>
__device__ __forceinline__ void row_groups(long long n_rows, Finish finish, RowSum row_sum) {
    static_assert(LANES >= 2 && LANES <= 32 && (LANES & (LANES - 1)) == 0, "LANES must be 2, 4, 8, 16 or 32");
    constexpr int GROUPS_PER_WARP = WARP_SIZE / LANES;
    const int lane = threadIdx.x % LANES;
    const int group_in_warp = (threadIdx.x % WARP_SIZE) / LANES;
    const long long warp = global_thread_id() / WARP_SIZE;
    const long long n_warps = grid_threads() / WARP_SIZE;
    for (long long top = warp * GROUPS_PER_WARP; top < n_rows; top += n_warps * GROUPS_PER_WARP) {
        const long long row = top + group_in_warp;
        V sum = row < n_rows ? row_sum(row, lane) : V(0);
        sum = warp_reduce_sum<V, LANES>(sum);
        if (lane == 0 && row < n_rows) finish(row, sum);
    }
}

// The SpMV kernels' finish for row_groups: y[row] = alpha * total + beta * y[row] (store_row).
template <typename V>
struct StoreRow {
    V* y;
    V alpha;
    V beta;
    __device__ __forceinline__ void operator()(long long row, V total) const { store_row(y, row, total, alpha, beta); }
};

// A palette's table (spla/planning/palette.py: code 0's zero, then the values) into the block's
// shared ``table``, zeros past its n_palette entries; every thread of the block calls it. The
// palette entries of spmv_dia.cu and spmv_staged.cu then read table[code]; detect_structure.cu's
// palette pass searches it (as unsigned bits).
template <typename V, int TABLE>
__device__ __forceinline__ void copy_palette(V (&table)[TABLE], const V* __restrict__ palette, int n_palette) {
    for (int i = threadIdx.x; i < TABLE; i += blockDim.x) table[i] = i < n_palette ? palette[i] : V(0);
    __syncthreads();
}

// Rows cut by tile edges (segmented, staged). Tile t holds a row's partial sum in
// tail_partials[t] when the row begins there, else in head_partials[t].

// y[row] = the tail partial of its first tile t0 + the head partials of tiles
// t0 + 1 .. t1, in tile order, by one warp (lane 0 writes). __ldcg: other blocks
// may have written them in this launch. One order, so every path gives the same bits.
template <typename V>
__device__ __forceinline__ void finish_cut_row(long long row, long long t0, long long t1, const V* head_partials,
                                               const V* tail_partials, V* y, V alpha, V beta, int lane) {
    V sum = V(0);
    for (long long u = t0 + 1 + lane; u <= t1; u += WARP_SIZE) sum += __ldcg(head_partials + u);
    sum = warp_reduce_sum<V>(sum);
    if (lane == 0) store_row(y, row, __ldcg(tail_partials + t0) + sum, alpha, beta);
}

// One warp's partial of a row cut over tiles t0 .. t1 (written to `slot`). The
// warp whose arrival brings counters[t0] to t1 - t0 (every other tile's partial is
// in) finishes the row and resets the counter for the next launch. Every lane of
// the warp calls it.
template <typename V>
__device__ __forceinline__ void arrive_cut_row(long long row, V partial, V* slot, long long t0, long long t1,
                                               unsigned int* counters, const V* head_partials,
                                               const V* tail_partials, V* y, V alpha, V beta, int lane) {
    int last = 0;
    if (lane == 0) {
        *slot = partial;
        __threadfence();  // the partial is visible before the counter says so
        last = atomicAdd(counters + t0, 1u) == static_cast<unsigned>(t1 - t0);
    }
    if (!__shfl_sync(FULL_MASK, last, 0)) return;
    __threadfence();
    finish_cut_row(row, t0, t1, head_partials, tail_partials, y, alpha, beta, lane);
    if (lane == 0) counters[t0] = 0u;
}

}  // namespace spla
