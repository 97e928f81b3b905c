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
//               vector loads and SUB == 1 stores its row the same way; else
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
    constexpr int W = spla::spmm::RowVector<T, K>::width;

    const long long thread = spla::global_thread_id();
    const long long item = thread / SUB;
    if (item >= n_work) return;  // whole groups leave together: item is the same for all SUB lanes
    const int lane = threadIdx.x & (spla::WARP_SIZE - 1);
    const int sub = lane & (SUB - 1);
    const long long row = use_row_ids ? static_cast<long long>(row_ids[item]) : item;
    const long long begin = static_cast<long long>(indptr[row]);
    const long long end = static_cast<long long>(indptr[row + 1]);

    T acc[K];
#pragma unroll
    for (int c = 0; c < K; ++c) acc[c] = T(0);

    if (!COLMAJOR && vec_ok) {
#pragma unroll 4
        for (long long p = begin + sub; p < end; p += SUB) {
            const long long col = static_cast<long long>(indices[p]);
            const T val = data[p];
            const T* xrow = x + col * ldx;
            T xv[K];
#pragma unroll
            for (int c = 0; c < K; c += W) spla::spmm::load_vec<T, W>(xrow + c, xv + c);
#pragma unroll
            for (int c = 0; c < K; ++c) acc[c] = fma(val, xv[c], acc[c]);
        }
    } else {
#pragma unroll 2
        for (long long p = begin + sub; p < end; p += SUB) {
            const long long col = static_cast<long long>(indices[p]);
            const T val = data[p];
#pragma unroll
            for (int c = 0; c < K; ++c) {
                if (c < k) {
                    const T xc = COLMAJOR ? __ldg(x + c * ldx + col) : __ldg(x + col * ldx + c);
                    acc[c] = fma(val, xc, acc[c]);
                }
            }
        }
    }

    if constexpr (SUB > 1) {
        const unsigned mask = spla::spmm::group_mask<SUB>(lane);
#pragma unroll
        for (int c = 0; c < K; ++c) acc[c] = spla::spmm::group_allreduce_sum<T, SUB>(acc[c], mask);
    }

    T* orow = out + row * ldo;
    const T* yrow = y_in + row * ldy;
    if (SUB == 1 && !COLMAJOR && vec_ok) {
#pragma unroll
        for (int c = 0; c < K; c += W) {
            T r[W];
            if (use_y_in) {
                spla::spmm::load_vec<T, W>(yrow + c, r);
#pragma unroll
                for (int v = 0; v < W; ++v) r[v] = alpha * acc[c + v] + beta * r[v];
            } else {
#pragma unroll
                for (int v = 0; v < W; ++v) r[v] = alpha * acc[c + v];
            }
            spla::spmm::store_vec<T, W>(orow + c, r);
        }
    } else {
        // every lane of the group holds the full sums: lane `sub` writes columns c = sub (mod SUB)
#pragma unroll
        for (int c = 0; c < K; ++c) {
            if (c % SUB == sub && c < k) {
                const T r = alpha * acc[c];
                orow[c] = use_y_in ? r + beta * yrow[c] : r;
            }
        }
    }
}
