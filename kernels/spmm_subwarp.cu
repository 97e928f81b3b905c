// spmm_subwarp: Y = alpha * A @ X + beta * Y, one group of CL lanes per short row.
//
// What changed from spmm_warp.cu: there the 32 lanes of a warp share one row
// (G = 32 / CL of its entries in flight per step), which suits long rows but
// wastes a warp on a 5-entry stencil row at k = 32: 8k rows in flight on the
// whole GPU, each a chain of dependent loads (indptr, indices, X), so the
// kernel is latency-bound. Here each group of CL lanes takes its own row and
// walks it alone, so a warp carries G = 32 / CL rows, with no shuffles at all:
// the CL lanes of a group read the same (col, val) (one broadcast
// transaction) and then together one contiguous piece of X's row `col`
// (CL * VEC values per vector step, J steps). For k <= 16, spmm_regk.cu holds
// the whole row in one thread instead.
//
// Lane layout: lane l of a group owns columns tile + l*VEC + j*CL*VEC (j < J);
// the host picks (CL, J) as for spmm_warp.cu (`warp_shape`), a k wider than
// one tile is split over blockIdx.y.
//
// Constraints (asserted on the host, spla/backends/cuda/spmm_launch.py):
//   blockDim.x is a multiple of 32 (so groups never straddle warps);
//   row-major X and out; VEC > 1 needs k % VEC == 0, ldx, ldo, ldy multiples
//   of VEC and x, out, y_in aligned to VEC * sizeof(T) bytes;
//   gridDim.y * CL*VEC*J >= k. y_in is read only when use_y_in.
#include "spmm_common.cuh"

template <typename T, typename I, int VEC, int CL, int J>
__global__ void __launch_bounds__(256)
spla_spmm_subwarp(const I* __restrict__ indptr, const I* __restrict__ indices, const T* __restrict__ data,
                  const T* __restrict__ x, long long ldx, long long k,
                  const I* __restrict__ row_ids, int use_row_ids, long long n_work,
                  T alpha, T beta, const T* __restrict__ y_in, long long ldy, int use_y_in,
                  T* __restrict__ out, long long ldo) {
    static_assert(CL >= 1 && CL <= 32 && (CL & (CL - 1)) == 0, "CL lanes along k is a power of two <= 32");
    static_assert(J == 1 || CL == 32, "more than one vector per lane only once all 32 lanes span k");
    static_assert(VEC * sizeof(T) <= 16, "one vector is at most 16 bytes");
    constexpr int TILE = CL * VEC * J;

    const long long item = spla::global_thread_id() / CL;
    if (item >= n_work) return;  // no shuffles below, so groups may leave independently
    const int lane_in_group = threadIdx.x % CL;
    const long long col0 = static_cast<long long>(blockIdx.y) * TILE + lane_in_group * VEC;
    const long long row = use_row_ids ? static_cast<long long>(row_ids[item]) : item;
    const long long begin = static_cast<long long>(indptr[row]);
    const long long end = static_cast<long long>(indptr[row + 1]);

    T acc[J][VEC];
#pragma unroll
    for (int j = 0; j < J; ++j)
#pragma unroll
        for (int v = 0; v < VEC; ++v) acc[j][v] = T(0);

#pragma unroll 4
    for (long long p = begin; p < end; ++p) {
        const long long col = static_cast<long long>(indices[p]);
        const T val = data[p];
        const T* xrow = x + col * ldx;
#pragma unroll
        for (int j = 0; j < J; ++j) {
            const long long c = col0 + j * CL * VEC;
            if (c < k) {
                T xv[VEC];
                if constexpr (VEC > 1) {
                    spla::spmm::load_vec<T, VEC>(xrow + c, xv);
                } else {
                    xv[0] = __ldg(xrow + c);
                }
#pragma unroll
                for (int v = 0; v < VEC; ++v) acc[j][v] = fma(val, xv[v], acc[j][v]);
            }
        }
    }

    T* orow = out + row * ldo;
    const T* yrow = y_in + row * ldy;
#pragma unroll
    for (int j = 0; j < J; ++j) {
        const long long c = col0 + j * CL * VEC;
        if (c < k) spla::spmm::store_scaled<T, VEC>(orow + c, yrow + c, acc[j], alpha, beta, use_y_in);
    }
}
