// GEMM step 1: naive. One thread per output element C[row, col]; every
// operand comes straight from global memory (L1/L2 do whatever reuse they can).
//
// Changed from the previous step: this is the baseline.
// Mapping: threadIdx.x walks columns, so a warp reads one A value (broadcast)
// and 32 consecutive B values per k, and writes 32 consecutive C values.
// Constraints: none on M, N, K (K = 0 gives C = beta * C); any block shape,
// the host launches 32 x 8 threads covering an 8-row x 32-column tile.
#include "gemm/gemm_common.cuh"

__global__ void spla_gemm_naive(int M, int N, int K, float alpha, const float* __restrict__ A, int lda,
                                const float* __restrict__ B, int ldb, float beta, float* __restrict__ C,
                                int ldc) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N) return;
    const float* a = A + static_cast<long long>(row) * lda;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) {
        acc = fmaf(a[k], B[static_cast<long long>(k) * ldb + col], acc);
    }
    spla::gemm::store_output(C + static_cast<long long>(row) * ldc + col, acc, alpha, beta);
}
