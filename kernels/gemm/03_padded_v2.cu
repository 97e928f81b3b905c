// GEMM step 3, second version: padding where a warp walks down a column.
// (Candidate to replace 03_padded.cu; both are registered so one GPU run
// measures them side by side: "padded" vs "padded_v2".)
//
// Why 03_padded.cu is slower than step 2 (measured 6.9 vs 8.3 TFLOP/s at
// 4096^3): step 2's layout has no bank conflicts to remove. Its warp reads
// As[ty][k] (one address, a broadcast) and Bs[k][tx] (32 consecutive words).
// Padding the rows to 33 words only breaks their 16-byte alignment, so the
// compiler can no longer fetch As[ty][k .. k + 3] as one 16-byte broadcast:
// 4 x more shared loads for A (per 4 FMAs: 8 load wavefronts instead of 5).
// Step 2 is bound by shared-memory wavefronts (~1.25 per FMA), so that shows.
//
// Changed from step 2: the warp is laid along M instead of N. Lane tx owns
// row tx of the 32 x 32 output tile and ty (8 warps) picks 4 consecutive
// columns 4 ty .. 4 ty + 3, so per k a thread reads one A value As[tx][k]
// and one 16-byte broadcast Bs[k][4 ty .. + 3], and does 4 FMAs: 2 shared
// wavefronts per 4 FMAs instead of step 2's 5. The A read goes down a column
// of As: with [32][32] all 32 lanes hit one bank (a 32-way conflict); the
// padded [32][33] array puts lane tx on bank (tx + k) % 32, conflict-free.
// Bs is walked along rows and keeps 16-byte aligned, unpadded rows.
// spla_gemm_padded_v2<0> is the same kernel without the pad (the bank-conflict
// demonstration on the step itself; the transposed-B pair in 03_padded.cu
// shows the same effect on step 2's mapping).
// Tiles load with plain coalesced loads (lanes walk k for A, n for B),
// zero-filled at the edges as in step 2.
// Tile: 32 x 32, block (32, 8) = 256 threads, 4 outputs per thread.
// Constraints: any M, N, K; C stores are 16-byte when C's rows are aligned.
#include "gemm/gemm_common.cuh"

namespace {
constexpr int PV2_TILE = 32;
constexpr int PV2_ROWS = 8;                       // blockDim.y
constexpr int PV2_COLS = PV2_TILE / PV2_ROWS;     // 4 outputs per thread
}  // namespace

template <int PAD>
__global__ void __launch_bounds__(PV2_TILE * PV2_ROWS)
    spla_gemm_padded_v2(int M, int N, int K, float alpha, const float* __restrict__ A, int lda,
                        const float* __restrict__ B, int ldb, float beta, float* __restrict__ C, int ldc) {
    static_assert(PAD == 0 || PAD == 1, "PAD is 0 (32-way bank conflicts) or 1 (conflict-free)");
    constexpr int T = PV2_TILE;
    __shared__ float As[T][T + PAD];
    __shared__ __align__(16) float Bs[T][T];

    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int m0 = blockIdx.y * T;
    const int n0 = blockIdx.x * T;

    float acc[PV2_COLS] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int k0 = 0; k0 < K; k0 += T) {
#pragma unroll
        for (int i = 0; i < T / PV2_ROWS; ++i) {
            const int r = ty + i * PV2_ROWS;
            As[r][tx] = (m0 + r < M && k0 + tx < K) ? A[static_cast<long long>(m0 + r) * lda + k0 + tx] : 0.0f;
            Bs[r][tx] = (k0 + r < K && n0 + tx < N) ? B[static_cast<long long>(k0 + r) * ldb + n0 + tx] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < T; ++k) {
            const float a = As[tx][k];
            const float4 b = *reinterpret_cast<const float4*>(&Bs[k][PV2_COLS * ty]);
            acc[0] = fmaf(a, b.x, acc[0]);
            acc[1] = fmaf(a, b.y, acc[1]);
            acc[2] = fmaf(a, b.z, acc[2]);
            acc[3] = fmaf(a, b.w, acc[3]);
        }
        __syncthreads();
    }
    spla::gemm::store_output4(C, ldc, M, N, m0 + tx, n0 + PV2_COLS * ty, make_float4(acc[0], acc[1], acc[2], acc[3]),
                              alpha, beta, spla::gemm::rows_aligned16(C, ldc));
}
