// spmv_scalar: one thread per row (the baseline, step 1 of the SpMV path).
//
// Idea: thread `row` walks its row's nonzeros sequentially and writes
// y[row] = alpha * (A x)[row] + beta * y[row].
// Good when rows are short and regular (stencils: 5-27 nnz/row): a warp then
// touches 32 neighbouring row segments, which L1 turns into few sectors, and
// there is no reduction at all. Measured on the H200 at 3.5 TB/s on the 2D
// Poisson matrix (cuSPARSE: 2.3 TB/s).
// Bad when rows are long or uneven: one long row stalls its whole warp
// (56 ms on the few-huge-rows matrix), see spmv_warp.cu and spmv_adaptive.cu.
//
// Constraints: any block size; a grid-stride loop covers any n_rows with any
// grid. float accumulates in float (the fp32 error is ~sqrt(row length) ulps,
// inside fp32 tolerances for rows up to ~1e5 nnz; long rows go elsewhere).
#include "common.cuh"

template <typename V, typename I>
__global__ void spla_spmv_scalar(long long n_rows, const I* __restrict__ indptr, const I* __restrict__ indices,
                                 const V* __restrict__ data, const V* __restrict__ x, V* __restrict__ y,
                                 V alpha, V beta) {
    for (long long row = spla::global_thread_id(); row < n_rows; row += spla::grid_threads()) {
        const I start = indptr[row];
        const I end = indptr[row + 1];
        V sum = V(0);
        for (I j = start; j < end; ++j) {
            sum += data[j] * __ldg(x + indices[j]);
        }
        spla::store_row(y, row, sum, alpha, beta);
    }
}
