// GEMM step 5: 2-D register blocking with warp tiling.
//
// Changed from step 4: each thread now owns an 8 x 8 block of C (64
// accumulators in registers), so per k it loads 8 A and 8 B values and does
// 64 FMAs: arithmetic intensity per shared load goes from ~2.7 to 8 FMAs.
// A is stored transposed in shared memory (As[k][m]) so that a thread's 4
// consecutive rows are one 16-byte shared load, like B's 4 consecutive
// columns. The 256 threads form 8 warps of 32 x 64 each (warp tiling); inside
// a warp, lanes sit on a 4 x 8 grid and each thread's 8 x 8 block is split
// into 2 x 2 sub-blocks of 4 x 4, 16 rows / 32 columns apart, so that the 8
// lanes of each quarter-warp read 8 consecutive float4s of B (128 bytes, no
// bank conflict) and one float4 of A (a broadcast).
//
// Tile: BM = BN = 128, BK = 8, 256 threads, __launch_bounds__(256, 2) so two
// blocks (16 warps) share an SM within 128 registers per thread.
// As rows are padded by 4 floats: the transposed stores of a warp would
// otherwise land two-per-bank; 4 (not 1) keeps float4 reads 16-byte aligned.
// Constraints: as step 4 (K % 4 == 0, lda % 4 == 0, ldb % 4 == 0, A, B
// 16-byte aligned; the host pads otherwise). C: float4 stores when its rows
// are 16-byte aligned, element stores otherwise and at the right edge.
#include "gemm/gemm_common.cuh"

namespace {

constexpr int RB_THREADS = 256;
constexpr int RB_LANES_M = 4;  // lanes per warp along M ...
constexpr int RB_LANES_N = 8;  // ... and along N
constexpr int RB_SUB = 4;      // a thread's sub-block is RB_SUB x RB_SUB
constexpr int RB_ITER_M = 2;   // sub-blocks per thread along M ...
constexpr int RB_ITER_N = 2;   // ... and along N: 8 x 8 outputs per thread
constexpr int RB_WARP_M = RB_ITER_M * RB_LANES_M * RB_SUB;  // 32
constexpr int RB_WARP_N = RB_ITER_N * RB_LANES_N * RB_SUB;  // 64
constexpr int RB_A_PAD = 4;

}  // namespace

template <int BM, int BN, int BK>
__global__ void __launch_bounds__(RB_THREADS, 2)
    spla_gemm_regblock(int M, int N, int K, float alpha, const float* __restrict__ A, int lda,
                       const float* __restrict__ B, int ldb, float beta, float* __restrict__ C, int ldc) {
    static_assert(RB_LANES_M * RB_LANES_N == 32, "a warp is 32 lanes");
    static_assert((BM / RB_WARP_M) * (BN / RB_WARP_N) * 32 == RB_THREADS, "warps cover the block tile exactly");
    static_assert(BM % RB_WARP_M == 0 && BN % RB_WARP_N == 0, "block tile is a whole number of warp tiles");
    static_assert(BM * BK == 4 * RB_THREADS && BK * BN == 4 * RB_THREADS, "one float4 of A and of B per thread");
    constexpr int WARPS_N = BN / RB_WARP_N;

    __shared__ __align__(16) float As[BK][BM + RB_A_PAD];  // transposed: As[k][m]
    __shared__ __align__(16) float Bs[BK][BN];

    const int tid = threadIdx.x;
    const int lane = tid % 32;
    const int warp = tid / 32;
    const int m0 = blockIdx.y * BM;
    const int n0 = blockIdx.x * BN;
    const int warp_m = (warp / WARPS_N) * RB_WARP_M;
    const int warp_n = (warp % WARPS_N) * RB_WARP_N;
    const int lane_m = (lane / RB_LANES_N) * RB_SUB;
    const int lane_n = (lane % RB_LANES_N) * RB_SUB;

    // Global -> shared mapping: one float4 each of A (row a_r, k a_c..a_c+3) and B.
    const int a_r = tid / (BK / 4);
    const int a_c = (tid % (BK / 4)) * 4;
    const int b_r = tid / (BN / 4);
    const int b_c = (tid % (BN / 4)) * 4;

    float acc[RB_ITER_M * RB_SUB][RB_ITER_N * RB_SUB];
#pragma unroll
    for (int i = 0; i < RB_ITER_M * RB_SUB; ++i)
#pragma unroll
        for (int j = 0; j < RB_ITER_N * RB_SUB; ++j) acc[i][j] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += BK) {
        float4 va = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if (m0 + a_r < M && k0 + a_c < K) {
            va = *reinterpret_cast<const float4*>(A + static_cast<long long>(m0 + a_r) * lda + k0 + a_c);
        }
        float4 vb = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if (k0 + b_r < K && n0 + b_c < N) {
            vb = *reinterpret_cast<const float4*>(B + static_cast<long long>(k0 + b_r) * ldb + n0 + b_c);
        }
        As[a_c + 0][a_r] = va.x;
        As[a_c + 1][a_r] = va.y;
        As[a_c + 2][a_r] = va.z;
        As[a_c + 3][a_r] = va.w;
        *reinterpret_cast<float4*>(&Bs[b_r][b_c]) = vb;
        __syncthreads();

#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a[RB_ITER_M * RB_SUB];
            float b[RB_ITER_N * RB_SUB];
#pragma unroll
            for (int im = 0; im < RB_ITER_M; ++im) {
                const float4 v = *reinterpret_cast<const float4*>(&As[k][warp_m + im * RB_LANES_M * RB_SUB + lane_m]);
                a[im * RB_SUB + 0] = v.x;
                a[im * RB_SUB + 1] = v.y;
                a[im * RB_SUB + 2] = v.z;
                a[im * RB_SUB + 3] = v.w;
            }
#pragma unroll
            for (int in = 0; in < RB_ITER_N; ++in) {
                const float4 v = *reinterpret_cast<const float4*>(&Bs[k][warp_n + in * RB_LANES_N * RB_SUB + lane_n]);
                b[in * RB_SUB + 0] = v.x;
                b[in * RB_SUB + 1] = v.y;
                b[in * RB_SUB + 2] = v.z;
                b[in * RB_SUB + 3] = v.w;
            }
#pragma unroll
            for (int i = 0; i < RB_ITER_M * RB_SUB; ++i)
#pragma unroll
                for (int j = 0; j < RB_ITER_N * RB_SUB; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }

    const bool c_vec_ok = spla::gemm::rows_aligned16(C, ldc);
#pragma unroll
    for (int im = 0; im < RB_ITER_M; ++im)
#pragma unroll
        for (int i = 0; i < RB_SUB; ++i) {
            const int row = m0 + warp_m + im * RB_LANES_M * RB_SUB + lane_m + i;
#pragma unroll
            for (int in = 0; in < RB_ITER_N; ++in) {
                const int col = n0 + warp_n + in * RB_LANES_N * RB_SUB + lane_n;
                const float* v = acc[im * RB_SUB + i] + in * RB_SUB;
                spla::gemm::store_output4(C, ldc, M, N, row, col, make_float4(v[0], v[1], v[2], v[3]), alpha,
                                          beta, c_vec_ok);
            }
        }
}
