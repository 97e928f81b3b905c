// Helpers shared by the SpMM kernels (spmm_regk.cu, spmm_warp.cu, spmm_subwarp.cu, spmm_fused.cu).
//
// X and the output are dense row-major blocks of k columns: entry (j, c) sits
// at x[j * ldx + c]. A row of X is k contiguous values, so one nonzero of A
// needs one short contiguous read of X, which the kernels issue as 16-byte
// (or 8-byte) vector loads where the host has checked the alignment.
#pragma once

#include "common.cuh"

namespace spla {
namespace spmm {

// N consecutive values of T as one aligned load/store (N * sizeof(T) <= 16).
template <typename T, int N>
struct Vec;
template <> struct Vec<float, 1> { using type = float; };
template <> struct Vec<float, 2> { using type = float2; };
template <> struct Vec<float, 4> { using type = float4; };
template <> struct Vec<double, 1> { using type = double; };
template <> struct Vec<double, 2> { using type = double2; };

// The widest load (in elements) that tiles K values exactly: 16 bytes when
// K * sizeof(T) is a multiple of 16, else 8, else one element. The host
// (spla/planning/spmm.py, `regk_vector_width`) mirrors this rule to check
// pointer and leading-dimension alignment before it enables vector access.
template <typename T, int K>
struct RowVector {
    static constexpr int bytes = K * static_cast<int>(sizeof(T));
    static constexpr int width = bytes % 16 == 0 ? 16 / static_cast<int>(sizeof(T))
                               : bytes % 8 == 0  ? 8 / static_cast<int>(sizeof(T))
                                                 : 1;
};

// Unpack/pack by members so the values stay in registers (no address taken).
__device__ __forceinline__ void unpack(float v, float* out) { out[0] = v; }
__device__ __forceinline__ void unpack(float2 v, float* out) { out[0] = v.x; out[1] = v.y; }
__device__ __forceinline__ void unpack(float4 v, float* out) {
    out[0] = v.x; out[1] = v.y; out[2] = v.z; out[3] = v.w;
}
__device__ __forceinline__ void unpack(double v, double* out) { out[0] = v; }
__device__ __forceinline__ void unpack(double2 v, double* out) { out[0] = v.x; out[1] = v.y; }

__device__ __forceinline__ float pack(const float* in, Vec<float, 1>) { return in[0]; }
__device__ __forceinline__ float2 pack(const float* in, Vec<float, 2>) { return make_float2(in[0], in[1]); }
__device__ __forceinline__ float4 pack(const float* in, Vec<float, 4>) {
    return make_float4(in[0], in[1], in[2], in[3]);
}
__device__ __forceinline__ double pack(const double* in, Vec<double, 1>) { return in[0]; }
__device__ __forceinline__ double2 pack(const double* in, Vec<double, 2>) { return make_double2(in[0], in[1]); }

// Read-only (texture path) load of N values at p, which must be N*sizeof(T)-aligned.
template <typename T, int N>
__device__ __forceinline__ void load_vec(const T* __restrict__ p, T* out) {
    using V = typename Vec<T, N>::type;
    unpack(__ldg(reinterpret_cast<const V*>(p)), out);
}

template <typename T, int N>
__device__ __forceinline__ void store_vec(T* p, const T* in) {
    using V = typename Vec<T, N>::type;
    *reinterpret_cast<V*>(p) = pack(in, Vec<T, N>{});
}

// Sum over groups of `width` consecutive lanes (power of two) with xor
// butterflies: every lane of the group ends with the total. `mask` names the
// lanes of the calling group only, so groups whose rows are past the end may
// have returned already.
template <typename T, int width>
__device__ __forceinline__ T group_allreduce_sum(T v, unsigned mask) {
#pragma unroll
    for (int offset = width / 2; offset > 0; offset /= 2) {
        v += __shfl_xor_sync(mask, v, offset, width);
    }
    return v;
}

template <int width>
__device__ __forceinline__ unsigned group_mask(int lane) {
    if constexpr (width >= WARP_SIZE) {
        return FULL_MASK;
    } else {
        return ((1u << width) - 1u) << (lane & ~(width - 1));
    }
}

// out[0 .. N) = alpha * acc (+ beta * y[0 .. N) when use_y_in), each side one
// N-wide access (N > 1 needs N * sizeof(T) alignment).
template <typename T, int N>
__device__ __forceinline__ void store_scaled(T* out, const T* y, const T* acc, T alpha, T beta, int use_y_in) {
    T r[N];
    if (use_y_in) {
        if constexpr (N > 1) {
            load_vec<T, N>(y, r);
        } else {
            r[0] = y[0];
        }
#pragma unroll
        for (int v = 0; v < N; ++v) r[v] = alpha * acc[v] + beta * r[v];
    } else {
#pragma unroll
        for (int v = 0; v < N; ++v) r[v] = alpha * acc[v];
    }
    if constexpr (N > 1) {
        store_vec<T, N>(out, r);
    } else {
        out[0] = r[0];
    }
}

// One row's k sums over a group of SUB lanes (spmm_regk, spmm_fused): each
// lane walks every SUB-th nonzero of [begin, end), reads (col, val) once and
// multiplies it into all K columns of X's row col; the group then sums with
// xor shuffles, so every lane of the group ends with the whole row in acc.
// X is row-major (16-/8-byte vector loads when vec_ok) or COLMAJOR.
template <typename T, typename I, int K, int SUB, bool COLMAJOR>
__device__ __forceinline__ void row_sums(const I* __restrict__ indices, const T* __restrict__ data,
                                         const T* __restrict__ x, long long ldx, long long k,
                                         long long begin, long long end, int lane, int vec_ok, T (&acc)[K]) {
    constexpr int W = RowVector<T, K>::width;
    const int sub = lane & (SUB - 1);
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
            for (int c = 0; c < K; c += W) load_vec<T, W>(xrow + c, xv + c);
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
        const unsigned mask = group_mask<SUB>(lane);
#pragma unroll
        for (int c = 0; c < K; ++c) acc[c] = group_allreduce_sum<T, SUB>(acc[c], mask);
    }
}

// One row's (or segment's) K sums over a group of SUB lanes that spreads K over
// its lanes (spmm_fused's wide kinds): the K columns are CL = K / W slices of
// one W-wide vector each; lane `sub` of the group holds slice sub % CL and walks
// every G-th nonzero from begin + sub / CL (G = SUB / CL). So one load
// instruction reads G whole rows of X (K contiguous values each) where
// row_sums reads one W-wide piece of SUB rows, and the group's sum shuffles
// W values a lane where row_sums shuffles K. Every lane ends with its slice's
// sums. Row-major X with vector access (the host's vec_ok), k <= K a multiple
// of W; the lanes of slices past k hold the last slice's sums.
template <typename T, typename I, int K, int SUB>
__device__ __forceinline__ void slice_sums(const I* __restrict__ indices, const T* __restrict__ data,
                                           const T* __restrict__ x, long long ldx, long long k, long long begin,
                                           long long end, int lane, T (&acc)[RowVector<T, K>::width]) {
    constexpr int W = RowVector<T, K>::width;
    constexpr int CL = K / W;
    static_assert(SUB % CL == 0, "a group holds whole copies of the K columns");
    constexpr int G = SUB / CL;
    const int sub = lane & (SUB - 1);
    // slices past k (k < K, a multiple of W) read the last one, in the same load: no branch, no extra bytes
    const int slice = min(sub % CL, static_cast<int>(k / W) - 1);
    const T* xslice = x + slice * W;
#pragma unroll
    for (int v = 0; v < W; ++v) acc[v] = T(0);
#pragma unroll 4
    for (long long p = begin + sub / CL; p < end; p += G) {
        const long long col = static_cast<long long>(indices[p]);
        const T val = data[p];
        T xv[W];
        load_vec<T, W>(xslice + col * ldx, xv);
#pragma unroll
        for (int v = 0; v < W; ++v) acc[v] = fma(val, xv[v], acc[v]);
    }
    if constexpr (G > 1) {
        const unsigned mask = group_mask<SUB>(lane);
#pragma unroll
        for (int v = 0; v < W; ++v) {
#pragma unroll
            for (int offset = CL; offset < SUB; offset *= 2) acc[v] += __shfl_xor_sync(mask, acc[v], offset, SUB);
        }
    }
}

// orow[c] = alpha * acc[c] (+ beta * yrow[c] when use_y_in) for c < k, the
// writes spread over the group's lanes: with vec_ok (row-major, aligned) vector
// v = c / W goes to lane v % SUB, else column c to lane c % SUB.
template <typename T, int K, int SUB, bool COLMAJOR>
__device__ __forceinline__ void store_row_sums(T* orow, const T* yrow, const T (&acc)[K], long long k, T alpha,
                                               T beta, int use_y_in, int lane, int vec_ok) {
    constexpr int W = RowVector<T, K>::width;
    const int sub = lane & (SUB - 1);
    if (!COLMAJOR && vec_ok) {
#pragma unroll
        for (int v = 0; v < K / W; ++v) {
            if (v % SUB == sub) store_scaled<T, W>(orow + v * W, yrow + v * W, acc + v * W, alpha, beta, use_y_in);
        }
    } else {
#pragma unroll
        for (int c = 0; c < K; ++c) {
            if (c % SUB == sub && c < k) {
                const T r = alpha * acc[c];
                orow[c] = use_y_in ? r + beta * yrow[c] : r;
            }
        }
    }
}

}  // namespace spmm
}  // namespace spla
