// GEMM for small grids with a long K: split-K (not a step of the 4096^3 path;
// the "auto" choice when even 64 x 64 tiles leave most SMs idle).
//
// The shape it is for: the SpMM hybrid path multiplies a dense row panel
// (M = 2,000 rows, K = 100,000 columns) by X (K x N, N = 8 or 32). With one
// block per output tile and all of K inside the block, 128 x 128 tiles give
// 16 blocks on 132 SMs, leaving most of the GPU idle, while the product is
// bound by reading A (800 MB) once. See BENCHMARKS.md.
//
// Changed from the tile kernels (06_dbuf.cu): the grid gets a third
// dimension. Block z multiplies k-tiles [z * tiles_per_slice, (z + 1) *
// tiles_per_slice) of its output tile, and the slices' partial sums meet in
// C through fp32 atomic adds (red.global.add). The host chooses the number of
// slices so that the grid fills the GPU about once, and applies beta before
// the launch (C = 0 for beta == 0, which never reads C; C *= beta otherwise),
// so the kernel only adds alpha * partial. The order of the adds varies from
// run to run: results can differ in the last bits between runs (not in
// accuracy: an fp32 sum of S partials).
// The tile is narrow in N (BN = 32, or 8 for N <= 8) so that little of the
// work is zero padding, and tall in M (128 or 256) so that each B value in
// shared memory serves many rows. A stays in its natural layout As[m][k]
// (rows BK + 4 words apart) and a thread reads 4 k of one row as a float4:
//  * BN / TN = 8 thread-columns (BN = 32): the 8 lanes of a quarter-warp read
//    one row (a broadcast) and 8 consecutive float4s of a B row.
//  * BN / TN = 2 (BN = 8): a quarter-warp reads 4 consecutive rows whose
//    36-word stride puts them on distinct 16-byte bank groups.
// A thread's TM rows are BM / TM apart. STAGES-deep cp.async pipeline, one
// __syncthreads per k-tile, as in 07_tf32.cu.
// Tile: threads = (BM / TM) * (BN / TN); dynamic shared memory
// STAGES * (BM * (BK + 4) + BK * BN) * 4 bytes.
// Constraints: as steps 4-6 (K % 4, lda % 4, ldb % 4 == 0; 16-byte aligned A
// and B; the host pads otherwise); K > 0 (the host handles K == 0);
// gridDim.z * tiles_per_slice >= ceil(K / BK) and every slice non-empty.
#include "gemm/gemm_common.cuh"

template <int BM, int BN, int BK, int TM, int TN, int STAGES>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
    spla_gemm_splitk(int M, int N, int K, float alpha, const float* __restrict__ A, int lda,
                     const float* __restrict__ B, int ldb, float* __restrict__ C, int ldc, int tiles_per_slice) {
    constexpr int COLS = BN / TN;             // thread-columns
    constexpr int THREADS = (BM / TM) * COLS;
    constexpr int ROW_STEP = BM / TM;         // a thread's rows are this far apart
    constexpr int A_STRIDE = BK + 4;
    constexpr int STAGE_FLOATS = BM * A_STRIDE + BK * BN;
    constexpr int A_CHUNKS = BM * BK / 4;
    constexpr int B_CHUNKS = BK * BN / 4;
    constexpr int B_ROUNDS = (B_CHUNKS + THREADS - 1) / THREADS;
    static_assert(BM % TM == 0 && BN % TN == 0 && TN % 4 == 0, "threads cover the tile; columns in float4s");
    static_assert(BK % 4 == 0 && BN % 4 == 0, "tiles are copied in 16-byte chunks");
    static_assert(A_CHUNKS % THREADS == 0, "every thread issues the same A copies");
    static_assert(STAGES >= 2, "a pipeline needs at least two stages");
    static_assert(A_STRIDE % 8 == 4, "the bank-group analysis above (odd multiple of 4 words)");

    extern __shared__ __align__(16) float smem[];

    const int tid = threadIdx.x;
    const int thread_row = tid / COLS;
    const int thread_col = (tid % COLS) * TN;
    const int m0 = blockIdx.y * BM;
    const int n0 = blockIdx.x * BN;
    const int k_tiles = (K + BK - 1) / BK;
    const int first_tile = blockIdx.z * tiles_per_slice;
    const int n_tiles = min(tiles_per_slice, k_tiles - first_tile);

    // The copies stay written out: with spla::gemm::copy_tile (same instructions, scheduled
    // differently) this kernel ran 17% slower at 16384x64x4096 on an H100 (session 43, gemm_ab.py).
    auto load_stage = [&](int stage, int tile) {
        float* as = smem + stage * STAGE_FLOATS;
        float* bs = as + BM * A_STRIDE;
        const int k0 = tile * BK;
#pragma unroll
        for (int i = 0; i < A_CHUNKS / THREADS; ++i) {
            const int chunk = tid + i * THREADS;
            const int r = chunk / (BK / 4);
            const int c = (chunk % (BK / 4)) * 4;
            const bool valid = m0 + r < M && k0 + c < K;
            const float* src = valid ? A + static_cast<long long>(m0 + r) * lda + k0 + c : A;
            spla::gemm::cp_async16(as + r * A_STRIDE + c, src, valid);
        }
#pragma unroll
        for (int i = 0; i < B_ROUNDS; ++i) {
            const int chunk = tid + i * THREADS;
            if (B_CHUNKS % THREADS != 0 && chunk >= B_CHUNKS) break;  // BN = 8: fewer B chunks than threads
            const int r = chunk / (BN / 4);
            const int c = (chunk % (BN / 4)) * 4;
            const bool valid = k0 + r < K && n0 + c < N;
            const float* src = valid ? B + static_cast<long long>(k0 + r) * ldb + n0 + c : B;
            spla::gemm::cp_async16(bs + r * BN + c, src, valid);
        }
    };

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < n_tiles) load_stage(s, first_tile + s);
        spla::gemm::cp_async_commit();
    }

    for (int t = 0; t < n_tiles; ++t) {
        spla::gemm::cp_async_wait<STAGES - 2>();
        __syncthreads();

        const int next = t + STAGES - 1;
        if (next < n_tiles) load_stage(next % STAGES, first_tile + next);
        spla::gemm::cp_async_commit();

        const float* as = smem + (t % STAGES) * STAGE_FLOATS + thread_row * A_STRIDE;
        const float* bs = smem + (t % STAGES) * STAGE_FLOATS + BM * A_STRIDE + thread_col;
#pragma unroll 2
        for (int k4 = 0; k4 < BK; k4 += 4) {
            float4 a[TM];
#pragma unroll
            for (int i = 0; i < TM; ++i) a[i] = *reinterpret_cast<const float4*>(as + i * ROW_STEP * A_STRIDE + k4);
#pragma unroll
            for (int kk = 0; kk < 4; ++kk) {
                float b[TN];
#pragma unroll
                for (int j = 0; j < TN; j += 4) {
                    const float4 v = *reinterpret_cast<const float4*>(bs + (k4 + kk) * BN + j);
                    b[j] = v.x;
                    b[j + 1] = v.y;
                    b[j + 2] = v.z;
                    b[j + 3] = v.w;
                }
#pragma unroll
                for (int i = 0; i < TM; ++i) {
                    const float a_ik = kk == 0 ? a[i].x : kk == 1 ? a[i].y : kk == 2 ? a[i].z : a[i].w;
#pragma unroll
                    for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a_ik, b[j], acc[i][j]);
                }
            }
        }
    }

    // The partial sum of this slice; beta was applied to C by the host.
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = m0 + thread_row + i * ROW_STEP;
        if (row >= M) continue;
        float* c = C + static_cast<long long>(row) * ldc;
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int col = n0 + thread_col + j;
            if (col < N) atomicAdd(c + col, alpha * acc[i][j]);
        }
    }
}
