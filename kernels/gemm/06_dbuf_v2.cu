// GEMM step 6, second version: a STAGES-deep cp.async pipeline with A kept
// in its natural (row-major) layout in shared memory.
// (Candidate to replace 06_dbuf.cu; both are registered so one GPU run
// measures them side by side: "dbuf" vs "dbuf_v2*".)
//
// Changed from 06_dbuf.cu:
//  * No transpose of A. 06_dbuf.cu copies A into a staging tile and then
//    transposes it through registers after the math (a cp.async wait, 2
//    shared reads and 8 scalar shared writes per thread per k-tile, in the
//    critical path before the barrier). Here A lands in As[m][k] with
//    cp.async and stays there: each thread reads its 8 rows two k at a time
//    as float2s (16 x 8-byte loads per 4 k where 06 issues 8 x 16-byte; the
//    float4 version, 4 k at a time, needs 32 fragment registers and spills
//    at the 128-register cap), so a k-tile of A and B is pure cp.async.
//  * Because nothing is transposed, the pipeline can be deeper: STAGES - 1
//    k-tiles are in flight while the block computes on the oldest (the
//    pattern of 07_tf32.cu), still one __syncthreads per k-tile.
//  * A thread's 8 rows are 4 apart (lane / 8 + 4 i), not in two runs of 4:
//    the row addresses a warp reads at once are consecutive rows, whose
//    20-word stride (BK + 4) puts them on distinct banks; the 8 lanes that
//    share a row read the same address (a broadcast).
//  * BM and BN are template parameters (warps of 32 x 64): 128 x 128 for
//    large products, 64 x 64 for grids that would otherwise leave SMs idle
//    (1024^3: 64 blocks of 128 x 128 on 132 SMs; N = 64: half of every
//    128-wide tile would be padding).
// B is read as in step 5/6: Bs[k][n], 8 lanes read 8 consecutive float4s.
//
// Tile: warps of 32 x 64, lanes 4 (M) x 8 (N), 8 x 8 outputs per thread;
// threads = (BM / 32) * (BN / 64) * 32; dynamic shared memory
// STAGES * (BM * (BK + 4) + BK * BN) * 4 bytes; __launch_bounds__(threads,
// MIN_BLOCKS): 128 x 128 uses (256, 2), i.e. <= 128 registers; the 64-thread
// 64 x 64 tile uses (64, 4) so it may take ~170 registers without spilling.
// The k loop is unrolled by 2 (not fully): a full unroll lets the scheduler
// hoist fragment loads until it spills.
// Constraints: as steps 4-6 (K % 4, lda % 4, ldb % 4 == 0; 16-byte aligned
// A and B; the host pads otherwise). K == 0 is handled by the host, like 06.
#include "gemm/gemm_common.cuh"

namespace {

constexpr int DB2_WARP_M = 32;
constexpr int DB2_WARP_N = 64;
constexpr int DB2_LANES_N = 8;
constexpr int DB2_TM = 8;
constexpr int DB2_TN = 8;

}  // namespace

template <int BM, int BN, int BK, int STAGES, int MIN_BLOCKS>
__global__ void __launch_bounds__((BM / DB2_WARP_M) * (BN / DB2_WARP_N) * 32, MIN_BLOCKS)
    spla_gemm_dbuf_v2(int M, int N, int K, float alpha, const float* __restrict__ A, int lda,
                      const float* __restrict__ B, int ldb, float beta, float* __restrict__ C, int ldc) {
    constexpr int THREADS = (BM / DB2_WARP_M) * (BN / DB2_WARP_N) * 32;
    constexpr int WARPS_N = BN / DB2_WARP_N;
    constexpr int A_STRIDE = BK + 4;
    constexpr int STAGE_FLOATS = BM * A_STRIDE + BK * BN;
    constexpr int A_CHUNKS = BM * BK / 4;
    constexpr int B_CHUNKS = BK * BN / 4;
    static_assert(BM % DB2_WARP_M == 0 && BN % DB2_WARP_N == 0, "block tile is a whole number of warp tiles");
    static_assert(BK % 4 == 0, "tiles are copied in 16-byte chunks");
    static_assert(A_CHUNKS % THREADS == 0 && B_CHUNKS % THREADS == 0, "every thread issues the same copies");
    static_assert(STAGES >= 2, "a pipeline needs at least two stages");
    static_assert(A_STRIDE % 8 == 4, "the bank-group analysis in the header (odd multiple of 4 words)");

    extern __shared__ __align__(16) float smem[];

    const int tid = threadIdx.x;
    const int lane = tid % 32;
    const int warp = tid / 32;
    const int m0 = blockIdx.y * BM;
    const int n0 = blockIdx.x * BN;
    const int warp_m = (warp / WARPS_N) * DB2_WARP_M;
    const int warp_n = (warp % WARPS_N) * DB2_WARP_N;
    const int lane_row = lane / DB2_LANES_N;          // rows lane_row + 4 i, i < 8
    const int lane_n = (lane % DB2_LANES_N) * 4;      // columns lane_n + 32 j + 0..3, j < 2
    const int n_tiles = (K + BK - 1) / BK;

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
            spla::gemm::cp_async16(bs + r * BN + c, src, valid);
        }
    };

    float acc[DB2_TM][DB2_TN];
#pragma unroll
    for (int i = 0; i < DB2_TM; ++i)
#pragma unroll
        for (int j = 0; j < DB2_TN; ++j) acc[i][j] = 0.0f;

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

        const float* as = smem + (tile % STAGES) * STAGE_FLOATS + (warp_m + lane_row) * A_STRIDE;
        const float* bs = smem + (tile % STAGES) * STAGE_FLOATS + BM * A_STRIDE + warp_n + lane_n;
#pragma unroll 2
        for (int k2 = 0; k2 < BK; k2 += 2) {
            float2 a[DB2_TM];
#pragma unroll
            for (int i = 0; i < DB2_TM; ++i) a[i] = *reinterpret_cast<const float2*>(as + 4 * i * A_STRIDE + k2);
#pragma unroll
            for (int kk = 0; kk < 2; ++kk) {
                const float4 b_lo = *reinterpret_cast<const float4*>(bs + (k2 + kk) * BN);
                const float4 b_hi = *reinterpret_cast<const float4*>(bs + (k2 + kk) * BN + 32);
                const float b[DB2_TN] = {b_lo.x, b_lo.y, b_lo.z, b_lo.w, b_hi.x, b_hi.y, b_hi.z, b_hi.w};
#pragma unroll
                for (int i = 0; i < DB2_TM; ++i) {
                    const float a_ik = kk == 0 ? a[i].x : a[i].y;
#pragma unroll
                    for (int j = 0; j < DB2_TN; ++j) acc[i][j] = fmaf(a_ik, b[j], acc[i][j]);
                }
            }
        }
    }

    const bool c_vec_ok = spla::gemm::rows_aligned16(C, ldc);
#pragma unroll
    for (int i = 0; i < DB2_TM; ++i) {
        const int row = m0 + warp_m + lane_row + 4 * i;
#pragma unroll
        for (int j = 0; j < 2; ++j) {
            const int col = n0 + warp_n + lane_n + 32 * j;
            spla::gemm::store_output4(C, ldc, M, N, row, col,
                                      make_float4(acc[i][4 * j], acc[i][4 * j + 1], acc[i][4 * j + 2],
                                                  acc[i][4 * j + 3]),
                                      alpha, beta, c_vec_ok);
        }
    }
}
