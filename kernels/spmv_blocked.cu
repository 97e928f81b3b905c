// spmv_blocked: the second launch of the blocked kernel (spla/planning/blocked.py). The first, staged over
// A regrouped by column blocks, left row r's sum over block p in partials[p * n_rows + r]; this one adds
// each row's partials in block order and writes y[r] = alpha * sum + beta * y[r] (a fixed order: every
// call gives the same bits).
//
// A thread a row: consecutive threads read consecutive partials of one block, so each block's loads
// are whole lines, and the row count of a matrix that blocks pay on (a few hundred to some thousands,
// each with hundreds of entries a block) makes this launch a few microseconds.
//
// Constraints: grid-stride, so any grid covers any n_rows; partials holds n_blocks * n_rows values.
#include "common.cuh"

template <typename V>
__global__ void spla_spmv_block_sum(long long n_rows, long long n_blocks, const V* __restrict__ partials,
                                    V* __restrict__ y, V alpha, V beta) {
    for (long long r = spla::global_thread_id(); r < n_rows; r += spla::grid_threads()) {
        V sum = V(0);
        for (long long p = 0; p < n_blocks; ++p) sum += partials[p * n_rows + r];
        spla::store_row(y, r, sum, alpha, beta);
    }
}
