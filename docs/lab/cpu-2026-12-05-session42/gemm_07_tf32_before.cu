// GEMM step 7: tensor cores. mma.sync.m16n8k8 with TF32 inputs and fp32
// accumulation, fed by a STAGES-deep cp.async pipeline.
//
// LOWER PRECISION: every A and B value is rounded to TF32 (10 explicit
// mantissa bits, round-to-nearest) before the multiply, so C carries a
// relative error of ~3e-4 (vs ~1e-6 for the fp32 steps). Sums are fp32.
//
// Changed from step 6: the FMAs become warp-wide mma instructions (one
// m16n8k8 = 2048 flops); tiles travel global -> shared with cp.async (no
// register staging, no transpose: the fragment layouts read A row-major and
// B row-major directly), and the pipeline keeps STAGES - 1 k-tiles in flight
// while the warps compute on the oldest one. Still one __syncthreads per
// k-tile: it publishes tile t (after cp.async.wait_group) and certifies that
// every warp is done with tile t - 1, whose stage the next copies overwrite.
//
// Shared layout, chosen for conflict-free fragment loads (32 banks of 4 bytes,
// g = lane / 4, t = lane % 4):
//   As[BM][BK + 4]: lane (g, t) reads As[r + g][k + t]; the row stride
//     BK + 4 = 36 words puts the 32 lanes on banks 4g + t, all distinct.
//   Bs[BK][BN + 8]: lane reads Bs[k + t][c + g]; stride 136 words -> banks 8t + g.
//   Both strides are multiples of 16 bytes, as cp.async's 16-byte copies need.
// Tile: BM x BN block, warps of WM x WN (WM/16 x WN/8 mma tiles each),
// threads = (BM / WM) * (BN / WN) * 32; dynamic shared memory
// STAGES * (BM * (BK + 4) + BK * (BN + 8)) * 4 bytes (> 48 KB: the host raises
// the kernel's limit with cudaFuncSetAttribute before launching).
// Constraints: as steps 4-6 (K % 4, lda % 4, ldb % 4 == 0; 16-byte aligned A,
// B; the host pads otherwise). sm_80 or newer.
// ROUND = false ("tf32_trunc"): the fragments are the raw fp32 bits, which
// the tensor core truncates to TF32 (see tf32_operand in gemm_common.cuh):
// no cvt instruction per fragment element (32 per 32 mma per warp), a
// truncation bias of ~1e-3 relative in C.
// The per-warp fragment loads from shared memory set the pace, not the
// tensor cores; 09_tf32_wgmma.cu removes them. 3 blocks per SM (<= 168
// registers) would spill with 64 x 64 warp tiles, hence 2. See BENCHMARKS.md
// for the rates of "tf32" and "tf32_trunc" against cuBLAS TF32.
#include "gemm/gemm_common.cuh"

template <int BM, int BN, int BK, int WM, int WN, int STAGES, bool ROUND = true>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32, 2)
    spla_gemm_tf32(int M, int N, int K, float alpha, const float* __restrict__ A, int lda,
                   const float* __restrict__ B, int ldb, float beta, float* __restrict__ C, int ldc) {
    constexpr int THREADS = (BM / WM) * (BN / WN) * 32;
    constexpr int WARPS_N = BN / WN;
    constexpr int MI = WM / 16;  // mma tiles per warp along M
    constexpr int NI = WN / 8;   // ... and along N
    constexpr int A_STRIDE = BK + 4;
    constexpr int B_STRIDE = BN + 8;
    constexpr int STAGE_FLOATS = BM * A_STRIDE + BK * B_STRIDE;
    constexpr int A_CHUNKS = BM * BK / 4;  // 16-byte copies per stage
    constexpr int B_CHUNKS = BK * BN / 4;
    static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 8 == 0, "warp tiles are whole mma tiles");
    static_assert(BK % 8 == 0, "k-tiles are whole mma k-steps");
    static_assert(A_CHUNKS % THREADS == 0 && B_CHUNKS % THREADS == 0, "every thread issues the same copies");
    static_assert(STAGES >= 2, "a pipeline needs at least two stages");
    static_assert((A_STRIDE * 4) % 16 == 0 && (B_STRIDE * 4) % 16 == 0, "cp.async targets 16-byte aligned rows");

    extern __shared__ __align__(16) float smem[];

    const int tid = threadIdx.x;
    const int lane = tid % 32;
    const int warp = tid / 32;
    const int g = lane / 4;
    const int t4 = lane % 4;
    const int m0 = blockIdx.y * BM;
    const int n0 = blockIdx.x * BN;
    const int warp_m = (warp / WARPS_N) * WM;
    const int warp_n = (warp % WARPS_N) * WN;
    const int n_tiles = (K + BK - 1) / BK;

    // Issue the copies of k-tile `tile` into stage `stage` (zero-filled outside A and B).
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
        for (int i = 0; i < B_CHUNKS / THREADS; ++i) {
            const int chunk = tid + i * THREADS;
            const int r = chunk / (BN / 4);
            const int c = (chunk % (BN / 4)) * 4;
            const bool valid = k0 + r < K && n0 + c < N;
            const float* src = valid ? B + static_cast<long long>(k0 + r) * ldb + n0 + c : B;
            spla::gemm::cp_async16(bs + r * B_STRIDE + c, src, valid);
        }
    };

    float acc[MI][NI][4];
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < NI; ++ni)
#pragma unroll
            for (int q = 0; q < 4; ++q) acc[mi][ni][q] = 0.0f;

    // Prologue: STAGES - 1 tiles in flight. Every slot commits a group, empty
    // or not, so "tile t has landed" is always "at most STAGES - 2 pending".
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < n_tiles) load_stage(s, s);
        spla::gemm::cp_async_commit();
    }

    for (int tile = 0; tile < n_tiles; ++tile) {
        spla::gemm::cp_async_wait<STAGES - 2>();
        __syncthreads();

        const int next = tile + STAGES - 1;
        if (next < n_tiles) load_stage(next % STAGES, next);
        spla::gemm::cp_async_commit();

        const float* as = smem + (tile % STAGES) * STAGE_FLOATS;
        const float* bs = as + BM * A_STRIDE;
#pragma unroll
        for (int kk = 0; kk < BK; kk += 8) {
            unsigned a[MI][4];
            unsigned b[NI][2];
#pragma unroll
            for (int mi = 0; mi < MI; ++mi) {
                const float* p = as + (warp_m + mi * 16 + g) * A_STRIDE + kk + t4;
                a[mi][0] = spla::gemm::tf32_operand<ROUND>(p[0]);
                a[mi][1] = spla::gemm::tf32_operand<ROUND>(p[8 * A_STRIDE]);
                a[mi][2] = spla::gemm::tf32_operand<ROUND>(p[4]);
                a[mi][3] = spla::gemm::tf32_operand<ROUND>(p[8 * A_STRIDE + 4]);
            }
#pragma unroll
            for (int ni = 0; ni < NI; ++ni) {
                const float* p = bs + (kk + t4) * B_STRIDE + warp_n + ni * 8 + g;
                b[ni][0] = spla::gemm::tf32_operand<ROUND>(p[0]);
                b[ni][1] = spla::gemm::tf32_operand<ROUND>(p[4 * B_STRIDE]);
            }
#pragma unroll
            for (int mi = 0; mi < MI; ++mi)
#pragma unroll
                for (int ni = 0; ni < NI; ++ni) spla::gemm::mma_m16n8k8_tf32(acc[mi][ni], a[mi], b[ni]);
        }
    }

    // Accumulator (mi, ni) holds rows r, r + 8 and columns c, c + 1 of its 16 x 8 tile.
    const bool c_vec_ok = spla::gemm::rows_aligned8(C, ldc);
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < NI; ++ni)
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                const int row = m0 + warp_m + mi * 16 + g + half * 8;
                const int col = n0 + warp_n + ni * 8 + 2 * t4;
                if (row >= M) continue;
                spla::gemm::store_output2(C + static_cast<long long>(row) * ldc + col, col, N, acc[mi][ni][2 * half],
                                          acc[mi][ni][2 * half + 1], alpha, beta, c_vec_ok);
            }
}
