// spmm_warp: Y = alpha * A @ X + beta * Y with one warp per row (or row segment).
//
// Idea: the warp reads its row's nonzeros in chunks of 32, one (col, val) per
// lane with coalesced loads, so each entry of A is loaded once; the entries
// are then broadcast with __shfl_sync while the lanes stream the k columns of
// X's rows with vector loads (VEC = 4 floats or 2 doubles when the host has
// checked alignment, else 1).
//
// Lane layout: the 32 lanes form G = 32 / CL groups of CL lanes. Lane (g, l)
// owns columns tile + l*VEC + j*CL*VEC (j < J) and, at each step, multiplies
// chunk entry s + g into them, so G entries are in flight per step. The host
// picks CL as the smallest power of two with CL*VEC*J >= k (J > 1 only with
// CL == 32), so at k = 8 (float4) 16 entries are processed at once instead of
// leaving 30 lanes idle; at k = 1 this is the warp SpMV. The G partial rows are
// summed with xor shuffles at the end. A k wider than one tile (CL*VEC*J
// columns) is split over blockIdx.y, each tile re-reading the row.
//
// SEGMENTED: work item i is the nonzero range [seg_begin[i], seg_end[i]) of row
// row_ids[i], so a very long row is spread over many warps; each adds
// alpha * partial into out with atomicAdd, and the host must have written
// beta * y_in (or zeros) into those rows of out first. Otherwise work item i is
// the whole row (row_ids[i] when use_row_ids, else i) and the warp writes
// alpha * sum + beta * y_in, reading y_in only when use_y_in.
//
// Constraints (asserted on the host, spla/backends/cuda/spmm_launch.py):
//   blockDim.x is a multiple of 32; X and out are row-major (ldx, ldo);
//   VEC > 1 needs k % VEC == 0, ldx, ldo, ldy multiples of VEC and x, out,
//   y_in aligned to VEC * sizeof(T) bytes; gridDim.y * CL*VEC*J >= k.
#include "spmm_common.cuh"

template <typename T, typename I, int VEC, int CL, int J, bool SEGMENTED>
__global__ void __launch_bounds__(256)
spla_spmm_warp(const I* __restrict__ indptr, const I* __restrict__ indices, const T* __restrict__ data,
               const T* __restrict__ x, long long ldx, long long k,
               const I* __restrict__ row_ids, int use_row_ids,
               const long long* __restrict__ seg_begin, const long long* __restrict__ seg_end,
               long long n_work, T alpha, T beta, const T* __restrict__ y_in, long long ldy, int use_y_in,
               T* __restrict__ out, long long ldo) {
    static_assert(CL >= 1 && CL <= 32 && (CL & (CL - 1)) == 0, "CL lanes along k is a power of two <= 32");
    static_assert(J == 1 || CL == 32, "more than one vector per lane only once all 32 lanes span k");
    static_assert(VEC * sizeof(T) <= 16, "one vector is at most 16 bytes");
    constexpr int G = spla::WARP_SIZE / CL;  // chunk entries processed per step
    constexpr int TILE = CL * VEC * J;       // columns one warp covers

    const long long item = spla::global_thread_id() / spla::WARP_SIZE;
    if (item >= n_work) return;  // uniform across the warp, so the full-mask shuffles below are safe
    const int lane = threadIdx.x & (spla::WARP_SIZE - 1);
    const int group = lane / CL;
    const long long col0 = static_cast<long long>(blockIdx.y) * TILE + (lane % CL) * VEC;

    const long long row = (SEGMENTED || use_row_ids) ? static_cast<long long>(row_ids[item]) : item;
    long long begin, end;
    if constexpr (SEGMENTED) {
        begin = seg_begin[item];
        end = seg_end[item];
    } else {
        begin = static_cast<long long>(indptr[row]);
        end = static_cast<long long>(indptr[row + 1]);
    }

    T acc[J][VEC];
#pragma unroll
    for (int j = 0; j < J; ++j)
#pragma unroll
        for (int v = 0; v < VEC; ++v) acc[j][v] = T(0);

    for (long long base = begin; base < end; base += spla::WARP_SIZE) {
        const long long p = base + lane;
        I my_col = 0;
        T my_val = T(0);
        if (p < end) {
            my_col = indices[p];
            my_val = data[p];
        }
        const long long left = end - base;
        const int n_chunk = left < spla::WARP_SIZE ? static_cast<int>(left) : spla::WARP_SIZE;
#pragma unroll
        for (int s = 0; s < spla::WARP_SIZE; s += G) {
            if (s < n_chunk) {  // uniform: every lane shuffles
                const int e = s + group;
                const long long col = static_cast<long long>(__shfl_sync(spla::FULL_MASK, my_col, e));
                const T val = __shfl_sync(spla::FULL_MASK, my_val, e);
                if (e < n_chunk) {
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
            }
        }
    }

    if constexpr (G > 1) {
#pragma unroll
        for (int j = 0; j < J; ++j)
#pragma unroll
            for (int v = 0; v < VEC; ++v)
#pragma unroll
                for (int offset = CL; offset < spla::WARP_SIZE; offset *= 2)
                    acc[j][v] += __shfl_xor_sync(spla::FULL_MASK, acc[j][v], offset);
    }
    if (group != 0) return;

    T* orow = out + row * ldo;
    const T* yrow = y_in + row * ldy;
#pragma unroll
    for (int j = 0; j < J; ++j) {
        const long long c = col0 + j * CL * VEC;
        if (c >= k) continue;
        if constexpr (SEGMENTED) {
#pragma unroll
            for (int v = 0; v < VEC; ++v) atomicAdd(orow + c + v, alpha * acc[j][v]);
        } else {
            spla::spmm::store_scaled<T, VEC>(orow + c, yrow + c, acc[j], alpha, beta, use_y_in);
        }
    }
}
