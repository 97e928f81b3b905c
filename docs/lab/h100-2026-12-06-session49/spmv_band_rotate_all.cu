// Session 49 variant (R2): kernels/spmv_band.cu with the rotated loads in both entries (spla_spmv_band runs
// band_rows<true>), so float64, which the tree never rotates, and float32 rows that do not pile take them too.
// spmv_band: LANES threads per row of a matrix whose every row is one contiguous run of columns
// (bands of any width or profile; spla/planning/band.py finds them), LANES in {2, 4, 8, 16, 32}.
//
// What changed from spmv_warp.cu: no column indices. Row r's k-th entry sits in column
// first[r] + k, so the kernel reads the values, one first column and one row pointer per row, x
// and y: about 0.54x CSR's bytes in float32 and 0.69x in float64 on rows of 32 entries. Unlike dia
// nothing is padded: a row's length is its own (banded rows of random width fill a band's
// diagonals by half), and explicit zeros are stored and multiplied as CSR does.
// The mapping and the order of every sum are spmv_warp.cu's, so band:LANES gives warp:LANES's
// results bit for bit.
//
// spla_spmv_band_rotated: the same with each row's value loads taken in rounds of UNROLL in a
// rotated order, for rows that start on one L1 bank (value_rounds.cuh; session 49).
//
// Constraints: as spmv_warp.cu (blockDim.x a multiple of 32, grid-stride over rows); first[r]
// is read only for rows with entries.
#include "common.cuh"
#include "value_rounds.cuh"

template <bool ROTATE, typename V, typename I, int LANES>
__device__ __forceinline__ void band_rows(long long n_rows, const I* __restrict__ indptr, const I* __restrict__ first,
                                          const V* __restrict__ data, const V* __restrict__ x, V* __restrict__ y,
                                          V alpha, V beta) {
    spla::row_groups<V, LANES>(n_rows, spla::StoreRow<V>{y, alpha, beta}, [&](long long row, int lane) {
        const I start = indptr[row];
        const I end = indptr[row + 1];
        V sum = V(0);
        if (end > start) {
            const V* xs = x + first[row];  // entry start + k sits in column first[row] + k
            const V* values = data + start;
            const I length = end - start;
            I k = lane;
            if constexpr (ROTATE) {
                for (; k + (spla::UNROLL - 1) * LANES < length; k += spla::UNROLL * LANES) {
                    V v[spla::UNROLL];
                    spla::load_round<true, V, I, LANES>(v, values, k, row);
#pragma unroll
                    for (int u = 0; u < spla::UNROLL; ++u) sum += v[u] * __ldg(xs + k + u * LANES);
                }
            }
            // unrolled by 4: four loads of each in flight a lane, 3-16% faster on the H200 at the
            // lanes the host picks (spla.planning.spmv.band_lanes); the order of the sums is kept
#pragma unroll 4
            for (; k < length; k += LANES) {
                sum += values[k] * __ldg(xs + k);
            }
        }
        return sum;
    });
}

template <typename V, typename I, int LANES>
__global__ void spla_spmv_band(long long n_rows, const I* __restrict__ indptr, const I* __restrict__ first,
                               const V* __restrict__ data, const V* __restrict__ x, V* __restrict__ y,
                               V alpha, V beta) {
    band_rows<true, V, I, LANES>(n_rows, indptr, first, data, x, y, alpha, beta);
}

template <typename V, typename I, int LANES>
__global__ void spla_spmv_band_rotated(long long n_rows, const I* __restrict__ indptr, const I* __restrict__ first,
                                       const V* __restrict__ data, const V* __restrict__ x, V* __restrict__ y,
                                       V alpha, V beta) {
    band_rows<true, V, I, LANES>(n_rows, indptr, first, data, x, y, alpha, beta);
}
