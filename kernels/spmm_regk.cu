// spmm_regk: Y = alpha * A @ X + beta * Y for small k, all k columns in registers.
//
// Idea: for k <= 16 one thread can hold the whole output row in K registers,
// so a group of SUB lanes (1, 2, 4 or 8) takes one row, each lane walks every
// SUB-th nonzero of it, reads (col, val) once and multiplies it into all k
// columns of X's row `col`; the SUB partial rows are then summed with xor
// shuffles. A is read exactly once however large k is (cuSPARSE through CuPy
// re-reads it), and short rows (2D/3D stencils, ~5-7 nnz) keep every lane busy,
// which a warp per row (spmm_warp.cu) cannot do at small k.
//
// X layouts (template COLMAJOR):
//   row-major   x[j * ldx + c]; when the host sets vec_ok (k == K and x, y_in
//               and out aligned for RowVector<T, K>::width elements, ldx and
//               ldy multiples of it) each X row is read with 16-/8-byte
//               vector loads and the row is stored the same way (vector v by lane
//               v % SUB of the group); else
//               scalar loads guarded by c < k.
//   column-major x[c * ldx + j] (an F-ordered X, no transposed copy): lanes of
//               a warp hold neighbouring rows, whose columns are usually close,
//               so each of the k column reads is coalesced across the warp.
// The output is row-major with leading dimension ldo; y_in is row-major with
// ldy and is read only when use_y_in (the host clears it when beta == 0, so a
// NaN-filled Y never leaks in).
//
// Work items: n_work rows, row = row_ids[i] when use_row_ids (one bin of the
// adaptive plan) else i. One item per SUB lanes; blockDim.x must be a multiple
// of 32 (asserted on the host), so a group never straddles a warp.
#include "spmm_common.cuh"

template <typename T, typename I, int K, int SUB, bool COLMAJOR>
__global__ void __launch_bounds__(256)
spla_spmm_regk(const I* __restrict__ indptr, const I* __restrict__ indices, const T* __restrict__ data,
               const T* __restrict__ x, long long ldx, long long k,
               const I* __restrict__ row_ids, int use_row_ids, long long n_work, int vec_ok,
               T alpha, T beta, const T* __restrict__ y_in, long long ldy, int use_y_in,
               T* __restrict__ out, long long ldo) {
    static_assert(K >= 1 && K <= 16 && (K & (K - 1)) == 0, "K (columns in registers) is a power of two <= 16");
    static_assert(SUB >= 1 && SUB <= 32 && (SUB & (SUB - 1)) == 0, "SUB lanes per row is a power of two <= 32");
    const long long thread = spla::global_thread_id();
    const long long item = thread / SUB;
    if (item >= n_work) return;  // whole groups leave together: item is the same for all SUB lanes
    const int lane = threadIdx.x & (spla::WARP_SIZE - 1);
    const long long row = use_row_ids ? static_cast<long long>(row_ids[item]) : item;
    const long long begin = static_cast<long long>(indptr[row]);
    const long long end = static_cast<long long>(indptr[row + 1]);

    T acc[K];
    spla::spmm::row_sums<T, I, K, SUB, COLMAJOR>(indices, data, x, ldx, k, begin, end, lane, vec_ok, acc);
    spla::spmm::store_row_sums<T, K, SUB, COLMAJOR>(out + row * ldo, y_in + row * ldy, acc, k, alpha, beta,
                                                    use_y_in, lane, vec_ok);
}
