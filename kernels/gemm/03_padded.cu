// GEMM step 3: padded shared arrays, and a demonstration of what padding is for.
//
// Changed from step 2: the shared tiles are declared [TILE][TILE + 1].
// In step 2's layout a warp reads As[ty][k] (one address: a broadcast) and
// Bs[k][tx] (32 consecutive words: 32 banks), so it has no bank conflicts and
// padding buys little there (expect ~step 2's speed: spla_gemm_padded).
//
// Padding matters when a warp walks a shared array down a column. The
// transposed-B variant (spla_gemm_transposed_b) stores the B tile as
// Bt[n][k], as one would to read B^T or to give each thread a contiguous k
// run: lane tx then reads Bt[tx][k], a stride of TILE words. With TILE = 32
// and PAD = 0 all 32 lanes hit one bank (a 32-way conflict, on the
// transposed stores too); PAD = 1 makes the stride 33 words and spreads the
// lanes over all 32 banks. Time <32, 0> against <32, 1> to see the effect.
// Constraints: as step 2 (block = (TILE, TILE), any M, N, K).
#include "gemm/gemm_common.cuh"

template <int TILE>
__global__ void __launch_bounds__(TILE * TILE)
    spla_gemm_padded(int M, int N, int K, float alpha, const float* __restrict__ A, int lda,
                     const float* __restrict__ B, int ldb, float beta, float* __restrict__ C, int ldc) {
    static_assert(TILE * TILE <= 1024, "a block holds at most 1024 threads");
    __shared__ float As[TILE][TILE + 1];
    __shared__ float Bs[TILE][TILE + 1];

    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;

    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        As[ty][tx] = (row < M && k0 + tx < K) ? A[static_cast<long long>(row) * lda + k0 + tx] : 0.0f;
        Bs[ty][tx] = (k0 + ty < K && col < N) ? B[static_cast<long long>(k0 + ty) * ldb + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) {
            acc = fmaf(As[ty][k], Bs[k][tx], acc);
        }
        __syncthreads();
    }
    if (row < M && col < N) {
        spla::gemm::store_output(C + static_cast<long long>(row) * ldc + col, acc, alpha, beta);
    }
}

template <int TILE, int PAD>
__global__ void __launch_bounds__(TILE * TILE)
    spla_gemm_transposed_b(int M, int N, int K, float alpha, const float* __restrict__ A, int lda,
                           const float* __restrict__ B, int ldb, float beta, float* __restrict__ C, int ldc) {
    static_assert(TILE * TILE <= 1024, "a block holds at most 1024 threads");
    static_assert(PAD == 0 || PAD == 1, "PAD is 0 (bank conflicts) or 1 (conflict-free)");
    __shared__ float As[TILE][TILE + PAD];
    __shared__ float Bt[TILE][TILE + PAD];  // Bt[n][k] = B[k0 + k][n0 + n]

    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;

    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        As[ty][tx] = (row < M && k0 + tx < K) ? A[static_cast<long long>(row) * lda + k0 + tx] : 0.0f;
        // The global read stays coalesced (lanes walk n); the shared write goes down a column.
        Bt[tx][ty] = (k0 + ty < K && col < N) ? B[static_cast<long long>(k0 + ty) * ldb + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) {
            acc = fmaf(As[ty][k], Bt[tx][k], acc);
        }
        __syncthreads();
    }
    if (row < M && col < N) {
        spla::gemm::store_output(C + static_cast<long long>(row) * ldc + col, acc, alpha, beta);
    }
}
