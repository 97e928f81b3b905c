// GEMM step 3: a padded shared array where a warp walks down a column.
//
// Changed from step 2: the warp is laid along M instead of N, and the A tile
// that it then reads down a column is padded to [32][33].
// Step 2's warp reads As[ty][k] (one address: a broadcast) and Bs[k][tx] (32
// consecutive words), so it has no bank conflicts for padding to remove; a
// version that only padded step 2's arrays would be slower: 33-word rows
// break the 16-byte alignment that lets the compiler fetch As[ty][k .. k + 3]
// as one broadcast.
// Here lane tx owns row tx of the 32 x 32 output tile and ty (8 warps) picks
// 4 consecutive columns 4 ty .. 4 ty + 3. Per k a thread reads one A value
// As[tx][k] and one 16-byte broadcast Bs[k][4 ty .. + 3] and does 4 FMAs:
// 2 shared wavefronts per 4 FMAs instead of step 2's 5. The A read goes down
// a column: with [32][32] all 32 lanes hit one bank (a 32-way conflict); the
// padded [32][33] array puts lane tx on bank (tx + k) % 32, conflict-free.
// Bs is walked along rows and keeps 16-byte aligned, unpadded rows.
//
// Bank-conflict demonstration (benchmark variants, spla/bench/variants.py):
// spla_gemm_padded<0> is this step without the pad; spla_gemm_transposed_b<32,
// 0 | 1> is step 2 with the B tile stored transposed (Bt[n][k], read down a
// column), unpadded or padded. See BENCHMARKS.md for their rates.
//
// Tiles load with plain coalesced loads (lanes walk k for A, n for B),
// zero-filled at the edges as in step 2.
// Tile: 32 x 32, block (32, 8) = 256 threads, 4 outputs per thread.
// Constraints: any M, N, K; C stores are 16-byte when C's rows are aligned.
#include "gemm/gemm_common.cuh"

namespace {
constexpr int PAD_TILE = 32;
constexpr int PAD_ROWS = 8;                     // blockDim.y
constexpr int PAD_COLS = PAD_TILE / PAD_ROWS;   // 4 outputs per thread
}  // namespace

template <int PAD>
__global__ void __launch_bounds__(PAD_TILE * PAD_ROWS)
    spla_gemm_padded(int M, int N, int K, float alpha, const float* __restrict__ A, int lda,
                     const float* __restrict__ B, int ldb, float beta, float* __restrict__ C, int ldc) {
    static_assert(PAD == 0 || PAD == 1, "PAD is 0 (32-way bank conflicts) or 1 (conflict-free)");
    constexpr int T = PAD_TILE;
    __shared__ float As[T][T + PAD];
    __shared__ __align__(16) float Bs[T][T];

    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int m0 = blockIdx.y * T;
    const int n0 = blockIdx.x * T;

    float acc[PAD_COLS] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int k0 = 0; k0 < K; k0 += T) {
#pragma unroll
        for (int i = 0; i < T / PAD_ROWS; ++i) {
            const int r = ty + i * PAD_ROWS;
            As[r][tx] = (m0 + r < M && k0 + tx < K) ? A[static_cast<long long>(m0 + r) * lda + k0 + tx] : 0.0f;
            Bs[r][tx] = (k0 + r < K && n0 + tx < N) ? B[static_cast<long long>(k0 + r) * ldb + n0 + tx] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < T; ++k) {
            const float a = As[tx][k];
            const float4 b = *reinterpret_cast<const float4*>(&Bs[k][PAD_COLS * ty]);
            acc[0] = fmaf(a, b.x, acc[0]);
            acc[1] = fmaf(a, b.y, acc[1]);
            acc[2] = fmaf(a, b.z, acc[2]);
            acc[3] = fmaf(a, b.w, acc[3]);
        }
        __syncthreads();
    }
    spla::gemm::store_output4(C, ldc, M, N, m0 + tx, n0 + PAD_COLS * ty, make_float4(acc[0], acc[1], acc[2], acc[3]),
                              alpha, beta, spla::gemm::rows_aligned16(C, ldc));
}

// Step 2's mapping with the B tile stored transposed: lane tx reads Bt[tx][k],
// a stride of TILE + PAD words. PAD = 0: all 32 lanes in one bank (and the
// transposed stores likewise); PAD = 1: stride 33, all 32 banks.
// Block (TILE, TILE), any M, N, K.
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
