// A/B copy of kernels/spmv_scalar.cu for the stencil bandwidth target (issue 17, session 11).
// TRY_LOAD: how the matrix's data and indices are read (each entry is read once):
//   0 plain (committed), 1 __ldcs (streaming: evict first), 2 __ldcg (L2 only: L1 keeps x),
//   3 __ldlu (last use).
// TRY_UNROLL: unroll the entry loop by this factor (independent loads issued ahead).
#include "common.cuh"

#ifndef TRY_LOAD
#define TRY_LOAD 0
#endif
#ifndef TRY_UNROLL
#define TRY_UNROLL 1
#endif

template <typename T>
__device__ __forceinline__ T load_once(const T* p) {
#if TRY_LOAD == 1
    return __ldcs(p);
#elif TRY_LOAD == 2
    return __ldcg(p);
#elif TRY_LOAD == 3
    return __ldlu(p);
#else
    return *p;
#endif
}

template <typename V, typename I>
__global__ void spla_spmv_scalar(long long n_rows, const I* __restrict__ indptr, const I* __restrict__ indices,
                                 const V* __restrict__ data, const V* __restrict__ x, V* __restrict__ y,
                                 V alpha, V beta) {
    for (long long row = spla::global_thread_id(); row < n_rows; row += spla::grid_threads()) {
        const I start = indptr[row];
        const I end = indptr[row + 1];
        V sum = V(0);
#pragma unroll TRY_UNROLL
        for (I j = start; j < end; ++j) {
            sum += load_once(data + j) * __ldg(x + load_once(indices + j));
        }
        spla::store_row(y, row, sum, alpha, beta);
    }
}
