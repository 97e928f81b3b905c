// GEMM step 6: double buffering, one __syncthreads per k-tile.
//
// Changed from step 5: two shared buffers per operand and a deeper k-tile
// (BK = 16). While the block computes on buffer `cur`, the next k-tile is
// already on its way into buffer `cur ^ 1` (copies issued before the math,
// so their latency hides behind 16 k-steps of FMAs). One barrier per k-tile is enough: the
// buffer written in iteration t was last read in iteration t - 1, which every
// thread finished before passing the barrier that ends iteration t - 1.
// Register fragments are double-buffered by the scheduler inside the
// unrolled k loop: the A/B values for k + 1 load while the FMAs of k run.
// The next tile travels with cp.async (sm_80+), so it needs no staging
// registers (those pushed step 5's layout past 128 registers and spilled):
// B goes straight into its other buffer; A lands untransposed in a staging
// tile, and after the math each thread transposes the chunks it copied
// itself into As[cur ^ 1] (A is read as As[k][m], as in step 5).
//
// Tile: BM = BN = 128, BK = 16, 256 threads, 8 x 8 outputs per thread in the
// warp layout of step 5; 2 x (16 x 132 + 16 x 128) + 128 x 16 floats =
// 40.5 KB static shared memory; __launch_bounds__(256, 2).
// Constraints: as steps 4-5 (K % 4, lda % 4, ldb % 4 == 0; 16-byte aligned
// A and B; the host pads otherwise) and K > 0: the first tile's copies are
// issued unconditionally (a guard there costs registers and spills), so the
// host handles K == 0 (C = beta * C) itself.
// See BENCHMARKS.md for its rate against regblock and cuBLAS.
//
// The same idea for small grids: spla_gemm_dbuf64 (registry "dbuf64", the
// "auto" choice when 128 x 128 tiles leave SMs idle), at the end of this file.
#include "gemm/gemm_common.cuh"

namespace {

constexpr int DB_THREADS = 256;
constexpr int DB_LANES_M = 4;
constexpr int DB_LANES_N = 8;
constexpr int DB_SUB = 4;
constexpr int DB_ITER_M = 2;
constexpr int DB_ITER_N = 2;
constexpr int DB_WARP_M = DB_ITER_M * DB_LANES_M * DB_SUB;  // 32
constexpr int DB_WARP_N = DB_ITER_N * DB_LANES_N * DB_SUB;  // 64
constexpr int DB_TM = DB_ITER_M * DB_SUB;                   // 8 rows per thread
constexpr int DB_TN = DB_ITER_N * DB_SUB;                   // 8 columns per thread
constexpr int DB_A_PAD = 4;

}  // namespace

template <int BM, int BN, int BK>
__global__ void __launch_bounds__(DB_THREADS, 2)
    spla_gemm_dbuf(int M, int N, int K, float alpha, const float* __restrict__ A, int lda,
                   const float* __restrict__ B, int ldb, float beta, float* __restrict__ C, int ldc) {
    static_assert(DB_LANES_M * DB_LANES_N == 32, "a warp is 32 lanes");
    static_assert((BM / DB_WARP_M) * (BN / DB_WARP_N) * 32 == DB_THREADS, "warps cover the block tile exactly");
    static_assert(BM % DB_WARP_M == 0 && BN % DB_WARP_N == 0, "block tile is a whole number of warp tiles");
    static_assert((BM * BK) % (4 * DB_THREADS) == 0 && (BK * BN) % (4 * DB_THREADS) == 0,
                  "every thread moves the same number of float4s");
    constexpr int WARPS_N = BN / DB_WARP_N;
    constexpr int A_LOADS = BM * BK / 4 / DB_THREADS;
    constexpr int B_LOADS = BK * BN / 4 / DB_THREADS;

    __shared__ __align__(16) float As[2][BK][BM + DB_A_PAD];  // transposed: As[buf][k][m]
    __shared__ __align__(16) float Bs[2][BK][BN];
    __shared__ __align__(16) float As_raw[BM][BK];            // A as it lies in memory

    const int tid = threadIdx.x;
    const int lane = tid % 32;
    const int warp = tid / 32;
    const int m0 = blockIdx.y * BM;
    const int n0 = blockIdx.x * BN;
    const int warp_m = (warp / WARPS_N) * DB_WARP_M;
    const int warp_n = (warp % WARPS_N) * DB_WARP_N;
    const int lane_m = (lane / DB_LANES_N) * DB_SUB;
    const int lane_n = (lane % DB_LANES_N) * DB_SUB;

    // A: global -> the raw (untransposed) staging tile with cp.async. Each
    // thread later transposes exactly the chunks it copied itself, so its own
    // cp.async.wait_group is all the ordering that step needs.
    auto copy_a = [&](int k0) {
        // This kernel's copies stay written out: with spla::gemm::copy_tile (same instructions,
        // scheduled differently) it ran 1.0-2.6% slower on an H100 (session 43, gemm_ab.py).
#pragma unroll
        for (int i = 0; i < A_LOADS; ++i) {
            const int chunk = tid + i * DB_THREADS;
            const int r = chunk / (BK / 4);
            const int c = (chunk % (BK / 4)) * 4;
            const bool valid = m0 + r < M && k0 + c < K;
            const float* src = valid ? A + static_cast<long long>(m0 + r) * lda + k0 + c : A;
            spla::gemm::cp_async16(&As_raw[r][c], src, valid);
        }
    };
    // A: staging tile -> shared buffer `buf`, transposed (As[buf][k][m]).
    auto transpose_a = [&](int buf) {
#pragma unroll
        for (int i = 0; i < A_LOADS; ++i) {
            const int chunk = tid + i * DB_THREADS;
            const int r = chunk / (BK / 4);
            const int c = (chunk % (BK / 4)) * 4;
            const float4 v = *reinterpret_cast<const float4*>(&As_raw[r][c]);
            As[buf][c + 0][r] = v.x;
            As[buf][c + 1][r] = v.y;
            As[buf][c + 2][r] = v.z;
            As[buf][c + 3][r] = v.w;
        }
    };
    // B: global -> shared buffer `buf` directly with cp.async (no registers, no transpose needed).
    auto copy_b = [&](int buf, int k0) {
#pragma unroll
        for (int i = 0; i < B_LOADS; ++i) {
            const int chunk = tid + i * DB_THREADS;
            const int r = chunk / (BN / 4);
            const int c = (chunk % (BN / 4)) * 4;
            const bool valid = k0 + r < K && n0 + c < N;
            const float* src = valid ? B + static_cast<long long>(k0 + r) * ldb + n0 + c : B;
            spla::gemm::cp_async16(&Bs[buf][r][c], src, valid);
        }
        spla::gemm::cp_async_commit();
    };

    float acc[DB_TM][DB_TN];
#pragma unroll
    for (int i = 0; i < DB_TM; ++i)
#pragma unroll
        for (int j = 0; j < DB_TN; ++j) acc[i][j] = 0.0f;

    // Shared -> register fragments for step k of buffer buf.
    auto load_fragments = [&](int buf, int k, float (&a)[DB_TM], float (&b)[DB_TN]) {
#pragma unroll
        for (int im = 0; im < DB_ITER_M; ++im) {
            const float4 v = *reinterpret_cast<const float4*>(&As[buf][k][warp_m + im * DB_LANES_M * DB_SUB + lane_m]);
            a[im * DB_SUB + 0] = v.x;
            a[im * DB_SUB + 1] = v.y;
            a[im * DB_SUB + 2] = v.z;
            a[im * DB_SUB + 3] = v.w;
        }
#pragma unroll
        for (int in = 0; in < DB_ITER_N; ++in) {
            const float4 v = *reinterpret_cast<const float4*>(&Bs[buf][k][warp_n + in * DB_LANES_N * DB_SUB + lane_n]);
            b[in * DB_SUB + 0] = v.x;
            b[in * DB_SUB + 1] = v.y;
            b[in * DB_SUB + 2] = v.z;
            b[in * DB_SUB + 3] = v.w;
        }
    };

    const int n_tiles = (K + BK - 1) / BK;
    copy_a(0);
    copy_b(0, 0);  // commits the group holding both tiles
    spla::gemm::cp_async_wait<0>();
    transpose_a(0);
    __syncthreads();

    for (int t = 0; t < n_tiles; ++t) {
        const int cur = t & 1;
        const bool has_next = t + 1 < n_tiles;
        if (has_next) {
            copy_a((t + 1) * BK);
            copy_b(cur ^ 1, (t + 1) * BK);
        }
        // Unrolled by 8, not fully: a full unroll lets the scheduler hoist so
        // many fragment loads that the kernel spills past 128 registers.
#pragma unroll 8
        for (int k = 0; k < BK; ++k) {
            float frag_a[DB_TM];
            float frag_b[DB_TN];
            load_fragments(cur, k, frag_a, frag_b);
#pragma unroll
            for (int i = 0; i < DB_TM; ++i)
#pragma unroll
                for (int j = 0; j < DB_TN; ++j) acc[i][j] = fmaf(frag_a[i], frag_b[j], acc[i][j]);
        }
        if (has_next) {
            spla::gemm::cp_async_wait<0>();
            transpose_a(cur ^ 1);
        }
        __syncthreads();
    }

    const bool c_vec_ok = spla::gemm::rows_aligned16(C, ldc);
#pragma unroll
    for (int im = 0; im < DB_ITER_M; ++im)
#pragma unroll
        for (int i = 0; i < DB_SUB; ++i) {
            const int row = m0 + warp_m + im * DB_LANES_M * DB_SUB + lane_m + i;
#pragma unroll
            for (int in = 0; in < DB_ITER_N; ++in) {
                const int col = n0 + warp_n + in * DB_LANES_N * DB_SUB + lane_n;
                const float* v = acc[im * DB_SUB + i] + in * DB_SUB;
                spla::gemm::store_output4(C, ldc, M, N, row, col, make_float4(v[0], v[1], v[2], v[3]), alpha,
                                          beta, c_vec_ok);
            }
        }
}


// ---------------------------------------------------------------------------
// dbuf64: the double-buffered idea with a 64 x 64 block tile, for grids of
// 128 x 128 tiles too small to fill the GPU (1024^3: 64 blocks on 132 SMs;
// N = 64: half of every 128-wide tile would be padding).
//
// Changed from spla_gemm_dbuf above:
//  * 64 x 64 block tile, 2 warps of 32 x 64, 8 x 8 outputs per thread, so a
//    1024^3 product has 256 blocks instead of 64.
//  * A stays in its natural layout As[m][k] (no staging tile, no transpose):
//    each thread reads its 8 rows two k at a time as float2s. Its rows are 4
//    apart (lane / 8 + 4 i): the rows a warp reads at once are consecutive,
//    their 20-word stride (BK + 4) puts them on distinct banks, and the 8
//    lanes sharing a row read one address (a broadcast).
//  * With nothing to transpose the pipeline is STAGES deep (STAGES - 1
//    k-tiles in flight, as in 07_tf32.cu), still one __syncthreads per k-tile.
// At 128 x 128 this layout is slower than spla_gemm_dbuf; at 64 x 64 it
// wins where grids are small (see BENCHMARKS.md).
// Tile: 64 threads; dynamic shared memory STAGES * (64 * (BK + 4) + BK * 64)
// * 4 bytes; __launch_bounds__(64, 4) so it may take ~170 registers without
// spilling. The k loop is unrolled by 2 (not fully): a full unroll lets the
// scheduler hoist fragment loads until it spills.
// Constraints: as spla_gemm_dbuf (K % 4, lda % 4, ldb % 4 == 0; 16-byte
// aligned A and B; the host pads otherwise; K == 0 handled by the host).

namespace {

constexpr int DB64_TILE = 64;
constexpr int DB64_WARP_M = 32;
constexpr int DB64_THREADS = (DB64_TILE / DB64_WARP_M) * 32;  // 2 warps, each 32 x 64
constexpr int DB64_LANES_N = 8;
constexpr int DB64_TM = 8;
constexpr int DB64_TN = 8;

}  // namespace

template <int BK, int STAGES>
__global__ void __launch_bounds__(DB64_THREADS, 4)
    spla_gemm_dbuf64(int M, int N, int K, float alpha, const float* __restrict__ A, int lda,
                     const float* __restrict__ B, int ldb, float beta, float* __restrict__ C, int ldc) {
    constexpr int BM = DB64_TILE;
    constexpr int BN = DB64_TILE;
    constexpr int THREADS = DB64_THREADS;
    constexpr int A_STRIDE = BK + 4;
    constexpr int STAGE_FLOATS = BM * A_STRIDE + BK * BN;
    static_assert(BK % 4 == 0, "tiles are copied in 16-byte chunks");
    static_assert(STAGES >= 2, "a pipeline needs at least two stages");
    static_assert(A_STRIDE % 8 == 4, "the bank-group analysis above (odd multiple of 4 words)");

    extern __shared__ __align__(16) float smem[];

    const int tid = threadIdx.x;
    const int lane = tid % 32;
    const int warp = tid / 32;
    const int m0 = blockIdx.y * BM;
    const int n0 = blockIdx.x * BN;
    const int warp_m = warp * DB64_WARP_M;
    const int lane_row = lane / DB64_LANES_N;          // rows lane_row + 4 i, i < 8
    const int lane_n = (lane % DB64_LANES_N) * 4;      // columns lane_n + 32 j + 0..3, j < 2
    const int n_tiles = (K + BK - 1) / BK;

    auto load_stage = [&](int stage, int tile) {
        float* as = smem + stage * STAGE_FLOATS;
        spla::gemm::copy_tile<BM, BK, A_STRIDE, THREADS>(as, A, lda, m0, tile * BK, M, K, tid);
        spla::gemm::copy_tile<BK, BN, BN, THREADS>(as + BM * A_STRIDE, B, ldb, tile * BK, n0, K, N, tid);
    };

    float acc[DB64_TM][DB64_TN];
#pragma unroll
    for (int i = 0; i < DB64_TM; ++i)
#pragma unroll
        for (int j = 0; j < DB64_TN; ++j) acc[i][j] = 0.0f;

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
        const float* bs = smem + (tile % STAGES) * STAGE_FLOATS + BM * A_STRIDE + lane_n;
#pragma unroll 2
        for (int k2 = 0; k2 < BK; k2 += 2) {
            float2 a[DB64_TM];
#pragma unroll
            for (int i = 0; i < DB64_TM; ++i) a[i] = *reinterpret_cast<const float2*>(as + 4 * i * A_STRIDE + k2);
#pragma unroll
            for (int kk = 0; kk < 2; ++kk) {
                const float4 b_lo = *reinterpret_cast<const float4*>(bs + (k2 + kk) * BN);
                const float4 b_hi = *reinterpret_cast<const float4*>(bs + (k2 + kk) * BN + 32);
                const float b[DB64_TN] = {b_lo.x, b_lo.y, b_lo.z, b_lo.w, b_hi.x, b_hi.y, b_hi.z, b_hi.w};
#pragma unroll
                for (int i = 0; i < DB64_TM; ++i) {
                    const float a_ik = kk == 0 ? a[i].x : a[i].y;
#pragma unroll
                    for (int j = 0; j < DB64_TN; ++j) acc[i][j] = fmaf(a_ik, b[j], acc[i][j]);
                }
            }
        }
    }

    const bool c_vec_ok = spla::gemm::rows_aligned16(C, ldc);
#pragma unroll
    for (int i = 0; i < DB64_TM; ++i) {
        const int row = m0 + warp_m + lane_row + 4 * i;
#pragma unroll
        for (int j = 0; j < 2; ++j) {
            const int col = n0 + lane_n + 32 * j;
            spla::gemm::store_output4(C, ldc, M, N, row, col,
                                      make_float4(acc[i][4 * j], acc[i][4 * j + 1], acc[i][4 * j + 2],
                                                  acc[i][4 * j + 3]),
                                      alpha, beta, c_vec_ok);
        }
    }
}
