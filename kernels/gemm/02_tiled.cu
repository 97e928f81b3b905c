// GEMM step 2: shared-memory tiling. A block of TILE x TILE threads computes a
// TILE x TILE tile of C; per k-step it stages a TILE x TILE tile of A and of B
// in shared memory, so each global value is read once per block instead of
// once per thread (TILE-fold fewer global loads).
//
// Changed from step 1: global -> shared staging, two __syncthreads per k-tile.
// Boundary tiles are zero-filled when loaded, so the inner product loop runs
// a full TILE with no bounds checks (zeros add nothing).
// Constraints: TILE * TILE <= 1024 threads (TILE 16 or 32); block = (TILE, TILE);
// any M, N, K.
#include "gemm/gemm_common.cuh"

template <int TILE>
__global__ void __launch_bounds__(TILE * TILE)
    spla_gemm_tiled(int M, int N, int K, float alpha, const float* __restrict__ A, int lda,
                    const float* __restrict__ B, int ldb, float beta, float* __restrict__ C, int ldc) {
    static_assert(TILE * TILE <= 1024, "a block holds at most 1024 threads");
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];

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
        __syncthreads();  // the next iteration overwrites the tiles others may still read
    }
    if (row < M && col < N) {
        spla::gemm::store_output(C + static_cast<long long>(row) * ldc + col, acc, alpha, beta);
    }
}
