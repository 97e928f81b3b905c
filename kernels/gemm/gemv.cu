// GEMV: y = alpha * M @ x + beta * y for a dense row-major M (float or
// double). Used by the SpMV planner's dense-row panel, whose rows are long.
//
// One warp per row: lanes stride along the row with 16-byte loads (float4 /
// double2) of M and x, then warp_reduce_sum; lane 0 writes y. Memory-bound:
// each element of M is read once, x is reused from L1/L2 by every warp.
// Constraints: any shape; the 16-byte path needs ld % (16 / sizeof(T)) == 0 and
// 16-byte aligned M and x (checked here per launch, uniform across the grid),
// otherwise the row is read element by element. blockDim.x a multiple of 32.
// beta == 0 writes y without reading it.
#include "common.cuh"

namespace {

template <typename T>
struct Vector16;
template <>
struct Vector16<float> {
    using type = float4;
    static constexpr int width = 4;
    static __device__ __forceinline__ float dot(float4 a, float4 b) {
        return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
    }
};
template <>
struct Vector16<double> {
    using type = double2;
    static constexpr int width = 2;
    static __device__ __forceinline__ double dot(double2 a, double2 b) { return a.x * b.x + a.y * b.y; }
};

}  // namespace

template <typename T>
__global__ void __launch_bounds__(256)
    spla_gemm_gemv(int n_rows, int n_cols, T alpha, const T* __restrict__ M, long long ld, const T* __restrict__ x,
                   T beta, T* __restrict__ y) {
    using V = typename Vector16<T>::type;
    constexpr int W = Vector16<T>::width;
    const int lane = threadIdx.x % spla::WARP_SIZE;
    const long long row = static_cast<long long>(blockIdx.x) * (blockDim.x / spla::WARP_SIZE) +
                          threadIdx.x / spla::WARP_SIZE;
    if (row >= n_rows) return;  // the whole warp leaves together, so the shuffles below stay full-warp

    const T* m_row = M + row * ld;
    T sum = T(0);
    int tail_start = 0;
    const bool vec_ok = ld % W == 0 && (reinterpret_cast<unsigned long long>(M) & 15u) == 0 &&
                        (reinterpret_cast<unsigned long long>(x) & 15u) == 0;
    if (vec_ok) {
        const V* mv = reinterpret_cast<const V*>(m_row);
        const V* xv = reinterpret_cast<const V*>(x);
        const int n_vec = n_cols / W;
#pragma unroll 4
        for (int i = lane; i < n_vec; i += spla::WARP_SIZE) sum += Vector16<T>::dot(mv[i], xv[i]);
        tail_start = n_vec * W;
    }
    for (int c = tail_start + lane; c < n_cols; c += spla::WARP_SIZE) sum += m_row[c] * x[c];
    sum = spla::warp_reduce_sum(sum);
    if (lane == 0) y[row] = beta == T(0) ? alpha * sum : alpha * sum + beta * y[row];
}
