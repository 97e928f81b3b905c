// spmv_blocked: the second launch of the blocked kernel (spla/planning/blocked.py). The first, staged over
// A regrouped by column blocks, left the sum of each (block, row) pair that holds entries in partials, one
// a row of the regrouped copy; row r's pairs are partials[pairs[k]] for k in [pair_ptr[r], pair_ptr[r + 1]),
// in block order. This one adds them in that order and writes y[r] = alpha * sum + beta * y[r] (a fixed
// order: every call gives the same bits). A row with no entries gets beta * y[r].
//
// A thread a row: a row has at most one pair a block (a few to a few dozen), and this launch reads each
// partial once, a few microseconds beside the first launch's pass over the nonzeros.
//
// Constraints: grid-stride, so any grid covers any n_rows.
#include "common.cuh"

template <typename V, typename I>
__global__ void spla_spmv_blocked(long long n_rows, const I* __restrict__ pair_ptr, const I* __restrict__ pairs,
                                  const V* __restrict__ partials, V* __restrict__ y, V alpha, V beta) {
    for (long long r = spla::global_thread_id(); r < n_rows; r += spla::grid_threads()) {
        V sum = V(0);
        for (I k = pair_ptr[r]; k < pair_ptr[r + 1]; ++k) sum += partials[pairs[k]];
        spla::store_row(y, r, sum, alpha, beta);
    }
}
