// spmv_rle: LANES threads per row of a matrix whose rows are made of runs of consecutive columns
// (dense blocks, rows of a few bands, nodes of several unknowns each; spla/planning/rle.py finds
// the runs), LANES in {2, 4, 8, 16, 32}.
//
// What changed from spmv_band.cu: a row may hold any number of runs. The column indices are
// stored run-length encoded: run j starts at entry run_start[j] in column run_col[j], so entry k of
// run j sits in column run_col[j] + (k - run_start[j]), and row r's first run is run_ptr[r]. That
// is 8 bytes a run in place of 4 a nonzero: on runs of 8, about 0.63x CSR's bytes of matrix in
// float32 and 0.75x in float64. The encoding is exact for any CSR (a run may be one entry, rows
// need not be sorted), so what auto weighs is only whether the runs are long enough to pay.
// The mapping and the order of every sum are spmv_warp.cu's, so rle:LANES gives warp:LANES's
// results bit for bit.
//
// A lane walks its row's runs as its entries pass their ends (the runs' starts are read through
// L1: every lane of a row group reads the same few). The walk is what a lane waits on, so each
// lane loads UNROLL values first, then finds their columns, then gathers x: UNROLL loads of each
// in flight a lane, as band's unrolled loop has.
//
// spla_spmv_rle_rotated: the same with each row's value loads in a rotated order, for rows that
// start on one L1 bank (value_rounds.cuh; session 48).
//
// Constraints: as spmv_warp.cu (blockDim.x a multiple of 32, grid-stride over rows). run_start
// holds one entry more than there are runs (the last: nnz); run_ptr[r] is read only for rows with
// entries.
#include "common.cuh"
#include "value_rounds.cuh"

namespace {
using spla::UNROLL;

// Moves (run, next, shift) on to the run that holds entry `at`: next is where the run after it
// starts, shift the column of an entry of the run less its position.
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
}  // namespace

template <bool ROTATE, typename V, typename I, int LANES>
__device__ __forceinline__ void rle_rows(long long n_rows, const I* __restrict__ indptr, const I* __restrict__ run_ptr,
                                         const I* __restrict__ run_start, const I* __restrict__ run_col,
                                         const V* __restrict__ data, const V* __restrict__ x, V* __restrict__ y,
                                         V alpha, V beta) {
    spla::row_groups<V, LANES>(n_rows, spla::StoreRow<V>{y, alpha, beta}, [&](long long row, int lane) {
        V sum = V(0);
        // the row's ends from indptr, not run_start[run_ptr[row]]: loads beside run_ptr's, not after it
        const I start = indptr[row];
        const I length = indptr[row + 1] - start;
        if (length > lane) {
            I run = run_ptr[row];
            I next = run_start[run + 1];
            long long shift = static_cast<long long>(run_col[run]) - run_start[run];
            I k = lane;
            for (; k + (UNROLL - 1) * LANES < length; k += UNROLL * LANES) {
                V v[UNROLL];
                long long column[UNROLL];
                spla::load_round<ROTATE, V, I, LANES>(v, data, start + k, row);
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
        return sum;
    });
}

template <typename V, typename I, int LANES>
__global__ void spla_spmv_rle(long long n_rows, const I* __restrict__ indptr, const I* __restrict__ run_ptr,
                              const I* __restrict__ run_start, const I* __restrict__ run_col,
                              const V* __restrict__ data, const V* __restrict__ x, V* __restrict__ y,
                              V alpha, V beta) {
    rle_rows<false, V, I, LANES>(n_rows, indptr, run_ptr, run_start, run_col, data, x, y, alpha, beta);
}

template <typename V, typename I, int LANES>
__global__ void spla_spmv_rle_rotated(long long n_rows, const I* __restrict__ indptr, const I* __restrict__ run_ptr,
                                      const I* __restrict__ run_start, const I* __restrict__ run_col,
                                      const V* __restrict__ data, const V* __restrict__ x, V* __restrict__ y,
                                      V alpha, V beta) {
    rle_rows<true, V, I, LANES>(n_rows, indptr, run_ptr, run_start, run_col, data, x, y, alpha, beta);
}
