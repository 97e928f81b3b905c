// GEMM step 7, second version: tensor cores with fewer instructions per mma.
// (Candidate to replace 07_tf32.cu; registered next to it so one GPU run
// measures them side by side: "tf32", "tf32_trunc" vs "tf32_v2", "tf32_v2_trunc".)
// Measured (H200, 2026-12-02, TFLOP/s): 137 at 4096^3 (07_tf32.cu: 143),
// 133 at 8192^3 (130): ldmatrix and the block swizzle did not pay by
// themselves. Round 3 adds ROUND = false (raw fp32 bits, truncated by the
// tensor core, as in 07_tf32.cu): with it this kernel issues 8 loads and no
// cvt per 32 mma per warp, 07_tf32.cu 32 loads.
//
// LOWER PRECISION, as 07_tf32.cu: A and B are rounded to TF32 (cvt.rna, or
// truncated with ROUND = false) before each mma.m16n8k8, sums are fp32;
// relative error ~3e-4 (~1e-3 truncated).
//
// Changed from 07_tf32.cu (same pipeline, same shared layout for A):
//  * A fragments come from ldmatrix.x4: one instruction gives a lane all four
//    a-registers of a 16 x 8 tile (the four 8 x 4-word sub-matrices are the
//    "8 x 8 b16" matrices ldmatrix knows; a 32-bit value is a pair of b16, so
//    no .trans is needed for row-major A). 07_tf32.cu used 4 scalar loads.
//  * B fragments: 4 x 16-byte loads per k-step for all 8 mma columns of a
//    warp, instead of 16 scalar loads. This works because the columns of the
//    warp's 64-wide tile are renumbered: mma column tile ni, column g is the
//    physical column 32 * (ni / 4) + 4 * g + ni % 4, so lane g's eight b0
//    values lie in two aligned float4s of one shared row. The renumbering is
//    undone in the epilogue (each lane then owns 8 consecutive physical
//    columns per row half: float4 stores). ldmatrix cannot do B: it would
//    need .trans on 32-bit elements, which it does not have.
//  * Blocks are visited in groups of GROUP_ROWS block-rows (a "swizzled"
//    order): blocks resident at the same time share A row panels and B column
//    panels in L2, which matters at 8192^3 where B (256 MB) is far larger
//    than L2 (60 MB).
// Bank conflicts (32 banks x 4 bytes; 16-byte loads are served 8 lanes at a
// time): A rows are BK + 4 = 36 words apart, so ldmatrix's 8 row addresses
// per matrix fall into 8 distinct 16-byte bank groups (9 r mod 8 = r). B rows
// are BN + 8 = 136 words apart: the 8 lanes of a quarter-warp (t = 0..3,
// g = 0..1) read 16-byte group (2 t + g + const) mod 8: all distinct.
// The instruction count per k-step and warp (64 x 64 warp tile) drops from
// 32 loads + 32 cvt to 8 loads + 32 cvt for 32 mma.
//
// Tile: BM x BN block, warps of WM x 64 (WM / 16 mma rows, 8 mma columns),
// threads = (BM / WM) * (BN / 64) * 32; dynamic shared memory
// STAGES * (BM * (BK + 4) + BK * (BN + 8)) * 4 bytes.
// Constraints: as 07_tf32.cu (K % 4, lda % 4, ldb % 4 == 0, 16-byte aligned
// A and B; the host pads otherwise). sm_80 or newer.
#include "gemm/gemm_common.cuh"

namespace {

constexpr int TF2_WN = 64;          // the column renumbering assumes 8 mma tiles of 8 columns
constexpr int TF2_GROUP_ROWS = 8;   // block-rows per L2 group

__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const float* smem_row) {
    const unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(smem_row));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
}


}  // namespace

template <int BM, int BN, int BK, int WM, int STAGES, bool ROUND = true>
__global__ void __launch_bounds__((BM / WM) * (BN / TF2_WN) * 32, 256 / ((BM / WM) * (BN / TF2_WN) * 32))
    spla_gemm_tf32_v2(int M, int N, int K, float alpha, const float* __restrict__ A, int lda,
                      const float* __restrict__ B, int ldb, float beta, float* __restrict__ C, int ldc) {
    constexpr int WN = TF2_WN;
    constexpr int THREADS = (BM / WM) * (BN / WN) * 32;
    constexpr int WARPS_N = BN / WN;
    constexpr int MI = WM / 16;
    constexpr int NI = WN / 8;  // 8
    constexpr int A_STRIDE = BK + 4;
    constexpr int B_STRIDE = BN + 8;
    constexpr int STAGE_FLOATS = BM * A_STRIDE + BK * B_STRIDE;
    constexpr int A_CHUNKS = BM * BK / 4;
    constexpr int B_CHUNKS = BK * BN / 4;
    static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0, "warp tiles are whole mma tiles");
    static_assert(BK % 8 == 0, "k-tiles are whole mma k-steps");
    static_assert(A_CHUNKS % THREADS == 0 && B_CHUNKS % THREADS == 0, "every thread issues the same copies");
    static_assert(STAGES >= 2, "a pipeline needs at least two stages");
    static_assert(A_STRIDE % 8 == 4 && B_STRIDE % 32 == 8, "the bank-conflict analysis in the header");

    extern __shared__ __align__(16) float smem[];

    const int tid = threadIdx.x;
    const int lane = tid % 32;
    const int warp = tid / 32;
    const int g = lane / 4;
    const int t4 = lane % 4;

    // Swizzled block order: consecutive launch ids walk down GROUP_ROWS
    // block-rows before moving one block-column right.
    const int grid_n = gridDim.x;
    const int grid_m = gridDim.y;
    const int id = blockIdx.y * grid_n + blockIdx.x;
    const int per_group = TF2_GROUP_ROWS * grid_n;
    const int first_row = (id / per_group) * TF2_GROUP_ROWS;
    const int rows_here = min(grid_m - first_row, TF2_GROUP_ROWS);
    const int in_group = id % per_group;
    const int block_m = first_row + in_group % rows_here;
    const int block_n = in_group / rows_here;
    const int m0 = block_m * BM;
    const int n0 = block_n * BN;

    const int warp_m = (warp / WARPS_N) * WM;
    const int warp_n = (warp % WARPS_N) * WN;
    const int n_tiles = (K + BK - 1) / BK;

    // Each thread copies the same column of A (a_c) and of B (b_c) in rows
    // that are A_ROW_STEP / B_ROW_STEP apart: base pointers once, then
    // offsets, which keeps the 64-bit address arithmetic out of the k loop.
    constexpr int A_ROW_STEP = THREADS / (BK / 4);
    constexpr int B_ROW_STEP = THREADS / (BN / 4);
    static_assert(THREADS % (BK / 4) == 0 && THREADS % (BN / 4) == 0, "copy columns are fixed per thread");
    const int a_r = tid / (BK / 4);
    const int a_c = (tid % (BK / 4)) * 4;
    const int b_r = tid / (BN / 4);
    const int b_c = (tid % (BN / 4)) * 4;
    const float* a_base = A + static_cast<long long>(m0 + a_r) * lda + a_c;
    const float* b_base = B + static_cast<long long>(b_r) * ldb + n0 + b_c;
    const long long a_step = static_cast<long long>(A_ROW_STEP) * lda;
    const long long b_step = static_cast<long long>(B_ROW_STEP) * ldb;

    auto load_stage = [&](int stage, int tile) {
        float* as = smem + stage * STAGE_FLOATS + a_r * A_STRIDE + a_c;
        float* bs = smem + stage * STAGE_FLOATS + BM * A_STRIDE + b_r * B_STRIDE + b_c;
        const int k0 = tile * BK;
        const bool a_k_ok = k0 + a_c < K;
#pragma unroll
        for (int i = 0; i < A_CHUNKS / THREADS; ++i) {
            const bool valid = a_k_ok && m0 + a_r + i * A_ROW_STEP < M;
            const float* src = valid ? a_base + i * a_step + k0 : A;
            spla::gemm::cp_async16(as + i * A_ROW_STEP * A_STRIDE, src, valid);
        }
        const bool b_n_ok = n0 + b_c < N;
        const float* b_tile = b_base + static_cast<long long>(k0) * ldb;
#pragma unroll
        for (int i = 0; i < B_CHUNKS / THREADS; ++i) {
            const bool valid = b_n_ok && k0 + b_r + i * B_ROW_STEP < K;
            const float* src = valid ? b_tile + i * b_step : B;
            spla::gemm::cp_async16(bs + i * B_ROW_STEP * B_STRIDE, src, valid);
        }
    };

    float acc[MI][NI][4];
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < NI; ++ni)
#pragma unroll
            for (int q = 0; q < 4; ++q) acc[mi][ni][q] = 0.0f;

    // ldmatrix row addresses: lane L supplies row L % 8 of sub-matrix L / 8;
    // sub-matrix j covers rows 8 (j & 1) .. + 7 and k 4 (j >> 1) .. + 3.
    const int a_row = warp_m + (lane % 8) + 8 * ((lane / 8) & 1);
    const int a_col = 4 * (lane / 16);
    // This lane's B columns: two float4s, 32 apart (see the renumbering above).
    const int b_col = warp_n + 4 * g;

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
                ldmatrix_x4(a[mi], as + (a_row + mi * 16) * A_STRIDE + kk + a_col);
#pragma unroll
                for (int q = 0; q < 4; ++q) a[mi][q] = spla::gemm::tf32_operand<ROUND>(__uint_as_float(a[mi][q]));
            }
#pragma unroll
            for (int half = 0; half < 2; ++half) {  // b0 from row kk + t, b1 from row kk + t + 4
                const float* row = bs + (kk + t4 + 4 * half) * B_STRIDE + b_col;
                const float4 lo = *reinterpret_cast<const float4*>(row);
                const float4 hi = *reinterpret_cast<const float4*>(row + 32);
                b[0][half] = spla::gemm::tf32_operand<ROUND>(lo.x);
                b[1][half] = spla::gemm::tf32_operand<ROUND>(lo.y);
                b[2][half] = spla::gemm::tf32_operand<ROUND>(lo.z);
                b[3][half] = spla::gemm::tf32_operand<ROUND>(lo.w);
                b[4][half] = spla::gemm::tf32_operand<ROUND>(hi.x);
                b[5][half] = spla::gemm::tf32_operand<ROUND>(hi.y);
                b[6][half] = spla::gemm::tf32_operand<ROUND>(hi.z);
                b[7][half] = spla::gemm::tf32_operand<ROUND>(hi.w);
            }
#pragma unroll
            for (int mi = 0; mi < MI; ++mi)
#pragma unroll
                for (int ni = 0; ni < NI; ++ni) spla::gemm::mma_m16n8k8_tf32(acc[mi][ni], a[mi], b[ni]);
        }
    }

    // acc[mi][ni] = rows g, g + 8 and mma columns 2t, 2t + 1 of tile ni, i.e.
    // physical columns 32 (ni / 4) + 8 t + ni % 4 (+ 4 for column 2t + 1).
    // So per row and per h = ni / 4 a lane owns 8 consecutive columns
    // 32 h + 8 t .. + 7: two float4 stores.
    const bool c_vec_ok = spla::gemm::rows_aligned16(C, ldc);
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int row_half = 0; row_half < 2; ++row_half) {
            const int row = m0 + warp_m + mi * 16 + g + 8 * row_half;
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int col = n0 + warp_n + 32 * h + 8 * t4;
                const int q = 2 * row_half;
                const float4 even = make_float4(acc[mi][4 * h][q], acc[mi][4 * h + 1][q], acc[mi][4 * h + 2][q],
                                                acc[mi][4 * h + 3][q]);
                const float4 odd = make_float4(acc[mi][4 * h][q + 1], acc[mi][4 * h + 1][q + 1],
                                               acc[mi][4 * h + 2][q + 1], acc[mi][4 * h + 3][q + 1]);
                spla::gemm::store_output4(C, ldc, M, N, row, col, even, alpha, beta, c_vec_ok);
                spla::gemm::store_output4(C, ldc, M, N, row, col + 4, odd, alpha, beta, c_vec_ok);
            }
        }
}
