// Session 45's A/B variant of kernels/spmv_rle.cu (R4 in this folder's README): rows of at most
// PRELOAD runs find their entries' columns in registers, not by a walk of dependent loads.
//
// The committed kernel's lane walks every run of its row (its entries stride LANES over all of
// them), each step a load of run_start that waits on the step before: on rows of 3-5 runs of 5-10,
// set 37 and set 30 (H200) ran it at 0.62-0.96x staged. Here each lane loads the row's first
// PRELOAD+1 run starts and PRELOAD first columns at once (the same addresses for every lane of a
// row group: one request each) and finds an entry's shift with PRELOAD-1 compares and selects.
// Rows of more runs keep the walk. The order of the sums is the committed kernel's (warp's bits).
#include "common.cuh"

#ifndef PRELOAD
#define PRELOAD 4
#endif

namespace {
constexpr int UNROLL = 4;

template <typename I>
__device__ __forceinline__ void walk_to(I at, I& run, I& next, long long& shift, const I* __restrict__ run_start,
                                        const I* __restrict__ run_col) {
    while (at >= next) {
        const I begin = next;
        ++run;
        next = run_start[run + 1];
        shift = static_cast<long long>(run_col[run]) - begin;
    }
}

// the shift (column less entry) of the run that holds entry `at`: runs end at ends[0..PRELOAD-1]
template <typename I>
__device__ __forceinline__ I shift_of(I at, const I (&ends)[PRELOAD], const I (&shifts)[PRELOAD]) {
    I shift = shifts[0];
#pragma unroll
    for (int j = 1; j < PRELOAD; ++j)
        if (at >= ends[j - 1]) shift = shifts[j];
    return shift;
}
}  // namespace

template <typename V, typename I, int LANES>
__global__ void spla_spmv_rle(long long n_rows, const I* __restrict__ indptr, const I* __restrict__ run_ptr,
                              const I* __restrict__ run_start, const I* __restrict__ run_col,
                              const V* __restrict__ data, const V* __restrict__ x, V* __restrict__ y,
                              V alpha, V beta) {
    static_assert(LANES >= 2 && LANES <= 32 && (LANES & (LANES - 1)) == 0, "LANES must be 2, 4, 8, 16 or 32");
    constexpr int GROUPS_PER_WARP = spla::WARP_SIZE / LANES;
    const int lane = threadIdx.x % LANES;
    const int group_in_warp = (threadIdx.x % spla::WARP_SIZE) / LANES;
    const long long warp = spla::global_thread_id() / spla::WARP_SIZE;
    const long long n_warps = spla::grid_threads() / spla::WARP_SIZE;
    for (long long top = warp * GROUPS_PER_WARP; top < n_rows; top += n_warps * GROUPS_PER_WARP) {
        const long long row = top + group_in_warp;
        V sum = V(0);
        if (row < n_rows) {
            const I start = indptr[row];
            const I length = indptr[row + 1] - start;
            if (length > lane) {
                const I first = run_ptr[row];
                const I n_runs = run_ptr[row + 1] - first;
                if (n_runs <= PRELOAD) {
                    I ends[PRELOAD], shifts[PRELOAD];
#pragma unroll
                    for (int j = 0; j < PRELOAD; ++j) {
                        // a run past the row's last: never selected (its end is past every entry)
                        const bool real = j < n_runs;
                        const I begin = real ? run_start[first + j] : I(0);
                        ends[j] = real ? run_start[first + j + 1] : start + length;
                        shifts[j] = real ? run_col[first + j] - begin : I(0);
                    }
                    I k = lane;
                    for (; k + (UNROLL - 1) * LANES < length; k += UNROLL * LANES) {
                        V v[UNROLL];
                        I column[UNROLL];
#pragma unroll
                        for (int u = 0; u < UNROLL; ++u) v[u] = data[start + k + u * LANES];
#pragma unroll
                        for (int u = 0; u < UNROLL; ++u) {
                            const I at = start + k + u * LANES;
                            column[u] = at + shift_of(at, ends, shifts);
                        }
#pragma unroll
                        for (int u = 0; u < UNROLL; ++u) sum += v[u] * __ldg(x + column[u]);
                    }
                    for (; k < length; k += LANES) {
                        const I at = start + k;
                        sum += data[at] * __ldg(x + (at + shift_of(at, ends, shifts)));
                    }
                } else {
                    I run = first;
                    I next = run_start[run + 1];
                    long long shift = static_cast<long long>(run_col[run]) - run_start[run];
                    I k = lane;
                    for (; k + (UNROLL - 1) * LANES < length; k += UNROLL * LANES) {
                        V v[UNROLL];
                        long long column[UNROLL];
#pragma unroll
                        for (int u = 0; u < UNROLL; ++u) v[u] = data[start + k + u * LANES];
#pragma unroll
                        for (int u = 0; u < UNROLL; ++u) {
                            const I at = start + k + u * LANES;
                            walk_to(at, run, next, shift, run_start, run_col);
                            column[u] = at + shift;
                        }
#pragma unroll
                        for (int u = 0; u < UNROLL; ++u) sum += v[u] * __ldg(x + column[u]);
                    }
                    for (; k < length; k += LANES) {
                        const I at = start + k;
                        walk_to(at, run, next, shift, run_start, run_col);
                        sum += data[at] * __ldg(x + (at + shift));
                    }
                }
            }
        }
        sum = spla::warp_reduce_sum<V, LANES>(sum);
        if (lane == 0 && row < n_rows) spla::store_row(y, row, sum, alpha, beta);
    }
}
