// spmv_warp: LANES threads per row, LANES in {2, 4, 8, 16, 32} (step 2).
//
// What changed from spmv_scalar.cu: a row is read by a group of LANES
// consecutive lanes, lane k taking nonzeros k, k + LANES, ... so the group's
// loads are coalesced, then a __shfl_down_sync tree sums the group's partials.
// LANES = 32 is the classic warp-per-row (CSR-vector) kernel; the host picks
// the width from the mean row length (about 2-4 nonzeros per lane per step),
// so short rows do not leave most of a warp idle.
// Still bad for very uneven rows: one 1M-nnz row is still one warp's job
// (1.6 ms on the few-huge-rows matrix; spmv_adaptive.cu splits such rows).
//
// Constraints: blockDim.x a multiple of 32 (the shuffles use the full mask,
// so every lane of a warp must reach them: the row loop, spla::row_groups in
// common.cuh, runs the same number of iterations in all lanes of a warp). It
// is grid-stride, so any grid covers any n_rows.
#include "common.cuh"

template <typename V, typename I, int LANES>
__global__ void spla_spmv_warp(long long n_rows, const I* __restrict__ indptr, const I* __restrict__ indices,
                               const V* __restrict__ data, const V* __restrict__ x, V* __restrict__ y,
                               V alpha, V beta) {
    spla::row_groups<V, LANES>(n_rows, spla::StoreRow<V>{y, alpha, beta}, [&](long long row, int lane) {
        // Offsets within the row, so k + LANES cannot pass INT_MAX near the end of a big matrix.
        const I start = indptr[row];
        const I length = indptr[row + 1] - start;
        V sum = V(0);
        for (I k = lane; k < length; k += LANES) {
            sum += data[start + k] * __ldg(x + indices[start + k]);
        }
        return sum;
    });
}
