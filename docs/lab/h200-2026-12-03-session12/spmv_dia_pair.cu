// spmv_dia: one thread per row of a matrix stored by diagonals (spla/planning/dia.py), for
// stencils and banded matrices whose entries lie on a few diagonals.
//
// What changed from spmv_scalar.cu: no column indices and no row pointers. Diagonal d holds one
// value per row at values[d * n_rows + row] (zero where the row has no entry) and its column is
// row + offsets[d], so a warp's loads of values and of x are both 32 consecutive elements, and
// the bytes read drop to the values (with their padding), x and y: 0.54x CSR's on 2D Poisson in
// float32. Diagonals are taken in increasing offset (the CSR row's column order) and zeros are
// skipped, so the sums are the scalar kernel's, bit for bit (an Inf or NaN in x reaches only the
// rows CSR would send it to); the host refuses matrices that store explicit zeros, which CSR
// would multiply. x is never read outside its n_cols entries.
//
// Constraints: any block size; a grid-stride loop covers any n_rows; offsets sorted, at most
// MAX_DIAGONALS of them (planning/dia.py); x holds n_cols entries.
#include "common.cuh"

// x is read wherever the column falls inside it, whatever the value, so x's load does not wait
// for the value's (both are in flight at once; 5-14% faster on the H200) and the test of the
// value keeps padding out of the sum. 0: x's load waits for the value's test (the first version,
// kept as an A/B switch for scripts/ab_kernel.py).
#ifndef SPLA_DIA_EARLY_X
#define SPLA_DIA_EARLY_X 1
#endif
#ifndef SPLA_DIA_UNROLL
#define SPLA_DIA_UNROLL 4
#endif
constexpr int DIA_UNROLL = SPLA_DIA_UNROLL;  // (#pragma unroll does not expand macros)

// A/B copy (session 12): two rows a thread, row and row + grid_threads (two steps of the
// committed grid-stride loop fused), so each thread has two independent chains of loads in flight;
// the second row's bound is tested once, outside the diagonal loop. Launched on half the grid.
template <typename V>
__global__ void spla_spmv_dia(long long n_rows, long long n_cols, int n_diagonals,
                              const long long* __restrict__ offsets, const V* __restrict__ values,
                              const V* __restrict__ x, V* __restrict__ y, V alpha, V beta) {
    const long long stride = spla::grid_threads();
    for (long long row = spla::global_thread_id(); row < n_rows; row += 2 * stride) {
        const long long other = row + stride;
        const bool two = other < n_rows;
        const long long other_row = two ? other : row;  // a valid row: its loads are harmless
        V sum = V(0), sum2 = V(0);
#pragma unroll DIA_UNROLL
        for (int d = 0; d < n_diagonals; ++d) {
            const long long offset = __ldg(offsets + d);
            const V v = values[d * n_rows + row];
            const V v2 = values[d * n_rows + other_row];
            const long long col = row + offset;
            const long long col2 = other_row + offset;
            const V xv = (col >= 0 && col < n_cols) ? __ldg(x + col) : V(0);
            const V xv2 = (col2 >= 0 && col2 < n_cols) ? __ldg(x + col2) : V(0);
            if (v != V(0)) sum += v * xv;
            if (v2 != V(0)) sum2 += v2 * xv2;
        }
        spla::store_row(y, row, sum, alpha, beta);
        if (two) spla::store_row(y, other, sum2, alpha, beta);
    }
}
