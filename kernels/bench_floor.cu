// The floors of a CSR SpMV: kernels that do one part of its work with none of
// its row bookkeeping, so a kernel's time can be read against the least any
// kernel reading the nonzeros in CSR order needs (scripts/spmv_floor.py).
//
// spla_floor<V, I, MODE> walks the nonzeros in spmv_staged's order: a block a
// tile of blockDim.x * ENTRIES consecutive entries (blocks grid-stride
// over the tiles), thread i loading entries i, i + blockDim.x, ... of it, so a
// warp's load reads 32 consecutive entries and an SM works on whole tiles. The
// launch order matters where neighbouring rows share columns (a kNN graph of
// rows within +-5,000 columns, 40M nonzeros): a block a tile, as staged, ran
// as fast as staged; resident blocks looping over the tiles drift apart (1.26x
// slower); one grid-wide stride over single entries scattered the rows over the
// SMs (1.8x). A thread writes one partial sum, so the compiler keeps every load
// (a block a tile: 4 bytes a thread, 1/16 of a float32 tile's values and indices):
//   MODE_STREAM   reads values and indices (the bytes the matrix streams);
//   MODE_GATHER   reads indices and x at them (the gather, no values);
//   MODE_PRODUCT  both: the sum of data[k] * x[indices[k]], an SpMV without rows.
// spla_floor_permute gathers x into another order (xp[i] = x[perm[i]]): the
// per-call price of running a plan whose columns were relabelled.
#include "common.cuh"

constexpr int MODE_STREAM = 0;
constexpr int MODE_GATHER = 1;
constexpr int MODE_PRODUCT = 2;

template <typename V, typename I, int MODE>
__device__ __forceinline__ V floor_term(long long k, const I* __restrict__ indices, const V* __restrict__ data,
                                        const V* __restrict__ x) {
    if (MODE == MODE_STREAM) return __ldcs(data + k) + static_cast<V>(__ldcs(indices + k));
    if (MODE == MODE_GATHER) return __ldg(x + __ldcs(indices + k));
    return __ldcs(data + k) * __ldg(x + __ldcs(indices + k));
}

// ENTRIES: a thread's loads a tile (FLOOR_ENTRIES in spla/backends/cuda/floor.py)
template <typename V, typename I, int MODE, int ENTRIES>
__global__ void spla_floor(long long nnz, const I* __restrict__ indices, const V* __restrict__ data,
                           const V* __restrict__ x, V* __restrict__ partial) {
    const long long tile = static_cast<long long>(blockDim.x) * ENTRIES;
    V sum = V(0);
    for (long long base = blockIdx.x * tile; base < nnz; base += gridDim.x * tile) {
        if (base + tile <= nnz) {
            V terms[ENTRIES];
#pragma unroll
            for (int s = 0; s < ENTRIES; ++s) {
                terms[s] = floor_term<V, I, MODE>(base + s * blockDim.x + threadIdx.x, indices, data, x);
            }
#pragma unroll
            for (int s = 0; s < ENTRIES; ++s) sum += terms[s];
        } else {
            for (long long k = base + threadIdx.x; k < nnz; k += blockDim.x) sum += floor_term<V, I, MODE>(k, indices, data, x);
        }
    }
    partial[spla::global_thread_id()] = sum;
}

template <typename V, typename I>
__global__ void spla_floor_permute(long long n, const I* __restrict__ perm, const V* __restrict__ x,
                                   V* __restrict__ xp) {
    const long long stride = spla::grid_threads();
    for (long long i = spla::global_thread_id(); i < n; i += stride) xp[i] = __ldg(x + __ldcs(perm + i));
}
