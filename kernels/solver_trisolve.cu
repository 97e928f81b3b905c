// Sparse triangular solve by level sets (spla/linalg/_triangular.py).
//
// The host analysis orders the rows level by level (order[s] is the row in
// slot s) and stores the strict triangle with its rows in that order
// (indptr/indices/data by slot) and the inverse diagonal by slot. Rows of one
// level depend only on rows of earlier levels, so they are solved in parallel:
//   x[row] = (b[row] - sum_k T[row, k] x[k]) * inv_diag   (UNIT: no scaling)
// b and x may be the same array: a row reads only its own b entry and the x
// entries of earlier levels.
//
// spla_trisolve_level: one level, a thread per row (grid-stride).
// spla_trisolve_levels_block: levels [first, last) in one launch of a single
// block; __syncthreads between levels makes each level's x visible to the
// next (thin levels, e.g. the anti-diagonals of a 2D grid, would otherwise
// cost one launch each).
// x is read through plain loads (no __ldg/const __restrict__): it changes
// during the launch.

template <typename T, typename I, bool UNIT>
__device__ __forceinline__ void spla_trisolve_row(const I* order, const long long* indptr, const I* indices,
                                                  const T* data, const T* inv_diag, const T* b, T* x,
                                                  long long s) {
    const long long row = static_cast<long long>(order[s]);
    T sum = T(0);
    for (long long p = indptr[s]; p < indptr[s + 1]; ++p) {
        sum += data[p] * x[indices[p]];
    }
    const T value = b[row] - sum;
    x[row] = UNIT ? value : value * inv_diag[s];
}

template <typename T, typename I, bool UNIT>
__global__ void spla_trisolve_level(const I* __restrict__ order, const long long* __restrict__ indptr,
                                    const I* __restrict__ indices, const T* __restrict__ data,
                                    const T* __restrict__ inv_diag, const T* b, T* x, long long begin,
                                    long long end) {
    const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
    for (long long s = begin + static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; s < end;
         s += stride) {
        spla_trisolve_row<T, I, UNIT>(order, indptr, indices, data, inv_diag, b, x, s);
    }
}

template <typename T, typename I, bool UNIT>
__global__ void spla_trisolve_levels_block(const I* __restrict__ order, const long long* __restrict__ indptr,
                                           const I* __restrict__ indices, const T* __restrict__ data,
                                           const T* __restrict__ inv_diag, const T* b, T* x,
                                           const long long* __restrict__ level_ptr, long long first,
                                           long long last) {
    for (long long level = first; level < last; ++level) {
        const long long end = level_ptr[level + 1];
        for (long long s = level_ptr[level] + threadIdx.x; s < end; s += blockDim.x) {
            spla_trisolve_row<T, I, UNIT>(order, indptr, indices, data, inv_diag, b, x, s);
        }
        __syncthreads();
    }
}
