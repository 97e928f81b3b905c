// GEMM step 9: Hopper tensor cores through wgmma (sm_90a only). TF32 inputs,
// fp32 accumulation, both operands read by the tensor cores straight from
// shared memory through matrix descriptors.
//
// LOWER PRECISION: A and B reach the tensor cores as raw fp32 bits (cp.async
// copies them to shared memory untouched, so there is no register pass in
// which to round them); the tensor cores use the TF32 part (sign, exponent,
// top 10 mantissa bits). Relative error in C ~1e-3 (as "tf32_trunc").
//
// See BENCHMARKS.md for its rate (the B transpose included) against cuBLAS
// TF32 and step 7.
//
// Why it wins: a warpgroup reads both operands from shared memory through
// descriptors, so there are no per-warp fragment loads. Step 7 (mma.sync
// m16n8k8) has every warp load its A and B fragments into registers itself
// (4 + 2 32-bit loads per 256-flop share of an mma, plus cvt), and those
// shared-memory load instructions, not the tensor cores, set its pace.
// wgmma.mma_async lets a warpgroup (4 warps, 128 threads) issue one
// 64 x N x 8 product whose A and B the tensor cores fetch themselves: one
// instruction per 64 x 256 x 8 = 262,144 flops instead of 128 mma.sync plus
// their loads.
//
// Changed from step 7:
// - Block tile 128 x 256 x 32 (BM x BN x BK), 256 threads = 2 warpgroups;
//   warpgroup w computes rows 64w .. 64w + 63 with 4 wgmma m64n256k8 per
//   k-tile (accumulators: 128 fp32 registers per thread). The wide N halves
//   the A traffic per flop against 128 x 128, and with fp32 operands (twice
//   the bytes of bf16) that L2 -> SM traffic matters.
// - Shared layout: the canonical K-major, 128-byte-swizzled layout that the
//   descriptors describe. BK = 32 floats = 128 bytes = one swizzle row, so a
//   tile is R rows of 128 bytes, row r at byte r * 128, and its 16-byte chunk
//   c (floats 4c .. 4c + 3) stored at chunk position c ^ (r % 8). Each 8-row
//   group (1024 bytes) is one swizzle atom; atoms are 1024 bytes apart (the
//   descriptor's stride byte offset) and every tile starts 1024-byte aligned
//   (the swizzle pattern is a function of address bits 4-9, so the base
//   offset field stays 0). The k-step kk of a tile is addressed by adding
//   kk * 32 bytes to the descriptor's start address, inside the swizzle row:
//   the hardware applies the XOR to the final address, as for the copy.
//   The XOR also makes the copies conflict-free: the 8 chunks of one row land
//   on 8 distinct 16-byte bank groups.
// - B must be K-major too: for .tf32, wgmma has no transpose (imm-trans is
//   f16/bf16 only), and B is K x N row-major (N contiguous, MN-major). The
//   host therefore transposes B once per call into Bt (N x K, K contiguous),
//   zero-padded to whole tiles (spla_gemm_transpose_pad below): O(KN) bytes
//   moved against O(MNK) flops, ~40 us against ~700 us at 4096^3, counted in
//   the timings (the bench times the whole call).
// - Pipeline: STAGES = 4 shared stages of A and Bt tiles, filled by cp.async
//   from all 256 threads. wgmma reads shared memory through the async proxy,
//   so each thread orders its own landed cp.async writes before the barrier
//   with fence.proxy.async.shared::cta. One __syncthreads per k-tile; the
//   wgmma batch of tile t stays in flight while tile t + 1's is issued
//   (wgmma.wait_group 1), so the stage refilled at tile t is the one of tile
//   t - 2, which every warpgroup has certified finished before the barrier.
//   Loads run 2 tiles ahead.
// - Block order: 1-D grid, GROUP_M block-rows side by side (column-major
//   within a group), so the ~132 resident blocks share A and B panels in L2.
// Constraints: Bt is N_pad x K_pad (multiples of BN and BK, zeros outside
// B), its leading dimension a multiple of 4 floats; A needs K % 4 == 0,
// lda % 4 == 0 and 16-byte alignment (the host pads otherwise); rows of A
// beyond M and k-chunks beyond K are zero-filled, outputs beyond M or N are
// not stored. Dynamic shared memory SHARED_BYTES (4 x 48 KB + 1 KB for
// aligning the tiles to 1024 bytes), 1 block per SM.
//
// Target: compiled for sm_90a only (-arch=sm_90a through NVRTC;
// -gencode=arch=compute_90a,code=sm_90a with nvcc). Built for anything else
// (the CI test compiles every file with -arch=sm_90) the kernel body is
// replaced by one that fills its C tile with NaN, and the probe kernel
// reports 0, so a wrong target fails loudly instead of silently.
#include "gemm/gemm_common.cuh"

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define SPLA_WGMMA_AVAILABLE 1
#else
#define SPLA_WGMMA_AVAILABLE 0
#endif

namespace spla {
namespace gemm {
namespace wgmma {

constexpr int BM = 128;
constexpr int BN = 256;
constexpr int BK = 32;
constexpr int STAGES = 4;
constexpr int THREADS = 256;
constexpr int GROUP_M = 8;
constexpr int ROW_BYTES = BK * 4;                        // 128: one swizzle row
constexpr int A_TILE_BYTES = BM * ROW_BYTES;             // 16 KB
constexpr int B_TILE_BYTES = BN * ROW_BYTES;             // 32 KB
constexpr int STAGE_BYTES = A_TILE_BYTES + B_TILE_BYTES;
constexpr int SHARED_BYTES = STAGES * STAGE_BYTES + 1024;
constexpr int TRANSPOSE_TILE = 32;
static_assert(ROW_BYTES == 128, "one k-tile row must be exactly one 128-byte swizzle row");
static_assert(BM == 2 * 64 && THREADS == 2 * 128, "two warpgroups of 64 rows each");
static_assert(A_TILE_BYTES % 1024 == 0 && STAGE_BYTES % 1024 == 0, "tiles start on swizzle-atom boundaries");
static_assert(SHARED_BYTES <= 227 * 1024, "one block's shared memory must fit sm_90's opt-in limit");

#if SPLA_WGMMA_AVAILABLE
// Byte offset of 16-byte chunk `chunk` of row `row` in a 128B-swizzled tile.
__device__ __forceinline__ unsigned swizzled_offset(int row, int chunk) {
    return static_cast<unsigned>(row * ROW_BYTES + ((chunk ^ (row & 7)) << 4));
}

__device__ __forceinline__ void copy16(unsigned dst, const float* src, bool valid) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0)
                 : "memory");
}

// Shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format"):
// bits 0-13 start address >> 4, 16-29 leading-dimension byte offset >> 4
// (unused by K-major swizzled layouts whose K extent is one swizzle row; 1 by
// convention), 32-45 stride byte offset >> 4 (1024: from one 8-row atom to
// the next), 49-51 base offset (0: atoms are 1024-byte aligned), 62-63
// swizzle mode (1 = 128-byte swizzle).
__device__ __forceinline__ unsigned long long descriptor(unsigned address) {
    return static_cast<unsigned long long>((address & 0x3FFFF) >> 4)
           | (1ull << 16)
           | (static_cast<unsigned long long>(1024 >> 4) << 32)
           | (1ull << 62);
}

__device__ __forceinline__ void fence_operands() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void commit_batch() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int pending>
__device__ __forceinline__ void wait_batches() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(pending) : "memory");
}

// d (64 x 256 per warpgroup) += A (64 x 8, K-major, shared) * B (8 x 256, K-major, shared).
// Accumulator ownership (PTX ISA, wgmma D fragments for m64nNk8, f32): warp
// q of the warpgroup holds rows 16q .. 16q + 15; with g = lane / 4, t = lane % 4,
// d[4j + 2h + v] is row 16q + g + 8h, column 8j + 2t + v (j = 0 .. 31).
__device__ __forceinline__ void mma_m64n256k8(float (&d)[128], unsigned long long desc_a,
                                              unsigned long long desc_b) {
    asm volatile(
        "{\n"
        ".reg .pred accumulate;\n"
        "setp.ne.b32 accumulate, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127},"
        " %128, %129, accumulate, 1, 1;\n"
        "}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
          "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
          "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
          "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
          "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
          "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
          "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "l"(desc_a), "l"(desc_b), "r"(1)
        : "memory");
}
#endif

}  // namespace wgmma
}  // namespace gemm
}  // namespace spla

// C (M x N) = alpha * A (M x K, row-major) @ Bt^T + beta * C, with Bt the
// N_pad x K_pad K-major copy of B. 1-D grid of ceil(M / BM) * ceil(N / BN)
// blocks, THREADS threads, SHARED_BYTES of dynamic shared memory.
extern "C" __global__ void __launch_bounds__(spla::gemm::wgmma::THREADS, 1)
    spla_gemm_tf32_wgmma(int M, int N, int K, float alpha, const float* __restrict__ A, int lda,
                         const float* __restrict__ Bt, int ldbt, float beta, float* __restrict__ C, int ldc) {
    using namespace spla::gemm::wgmma;
    // Grouped block order: GROUP_M block-rows at a time, down each column of the group.
    const int blocks_m = (M + BM - 1) / BM;
    const int blocks_n = (N + BN - 1) / BN;
    const int per_group = GROUP_M * blocks_n;
    const int block = static_cast<int>(blockIdx.x);
    const int first_m = (block / per_group) * GROUP_M;
    const int group_rows = min(blocks_m - first_m, GROUP_M);
    const int m0 = (first_m + (block % per_group) % group_rows) * BM;
    const int n0 = ((block % per_group) / group_rows) * BN;
    const int tid = threadIdx.x;

#if SPLA_WGMMA_AVAILABLE
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    // The swizzle is a function of shared-address bits 4-9: align the tiles to 1024 bytes.
    const unsigned smem_base = (static_cast<unsigned>(__cvta_generic_to_shared(smem_raw)) + 1023u) & ~1023u;

    const int warpgroup = tid / 128;
    const int n_tiles = (K + BK - 1) / BK;

    // Issue the copies of k-tile `tile` into stage `stage`: A rows m0 .. m0 + BM - 1
    // (zeros past M and K), Bt rows n0 .. n0 + BN - 1 (always inside the padded Bt).
    auto load_stage = [&](int stage, int tile) {
        const unsigned a_tile = smem_base + stage * STAGE_BYTES;
        const unsigned b_tile = a_tile + A_TILE_BYTES;
        const int k0 = tile * BK;
#pragma unroll
        for (int i = 0; i < BM * 8 / THREADS; ++i) {
            const int chunk = tid + i * THREADS;
            const int row = chunk / 8;
            const int c = chunk % 8;
            const bool valid = m0 + row < M && k0 + 4 * c < K;
            const float* src = valid ? A + static_cast<long long>(m0 + row) * lda + k0 + 4 * c : A;
            copy16(a_tile + swizzled_offset(row, c), src, valid);
        }
#pragma unroll
        for (int i = 0; i < BN * 8 / THREADS; ++i) {
            const int chunk = tid + i * THREADS;
            const int row = chunk / 8;
            const int c = chunk % 8;
            copy16(b_tile + swizzled_offset(row, c), Bt + static_cast<long long>(n0 + row) * ldbt + k0 + 4 * c,
                   true);
        }
    };

    float acc[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) acc[i] = 0.0f;

    // Prologue: STAGES - 2 tiles in flight. Every slot commits a cp.async
    // group, empty or not, so "tile t has landed" is always "at most
    // STAGES - 3 groups pending" at the top of iteration t.
#pragma unroll
    for (int s = 0; s < STAGES - 2; ++s) {
        if (s < n_tiles) load_stage(s, s);
        spla::gemm::cp_async_commit();
    }

    for (int tile = 0; tile < n_tiles; ++tile) {
        spla::gemm::cp_async_wait<STAGES - 3>();
        // This thread's landed copies (generic proxy) become visible to the
        // tensor cores' reads (async proxy); the barrier then publishes every
        // thread's, and certifies that all warpgroups finished tile - 2.
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        __syncthreads();

        const int next = tile + STAGES - 2;
        if (next < n_tiles) load_stage(next % STAGES, next);
        spla::gemm::cp_async_commit();

        const unsigned a_tile = smem_base + (tile % STAGES) * STAGE_BYTES;
        const unsigned b_tile = a_tile + A_TILE_BYTES;
        const unsigned long long desc_a = descriptor(a_tile + warpgroup * 64 * ROW_BYTES);
        const unsigned long long desc_b = descriptor(b_tile);
        fence_operands();
#pragma unroll
        for (int kk = 0; kk < BK / 8; ++kk) {
            // kk * 8 floats = kk * 32 bytes along the swizzle row: (32 >> 4) = 2 per step in the address field.
            mma_m64n256k8(acc, desc_a + 2 * kk, desc_b + 2 * kk);
        }
        commit_batch();
        wait_batches<1>();  // tile - 1 done; this tile's batch stays in flight
    }
    wait_batches<0>();

    // Epilogue: d[4j + 2h + v] is row 16q + g + 8h, column 8j + 2t + v of the warpgroup's 64 x 256.
    const int lane = tid % 32;
    const int warp_rows = m0 + warpgroup * 64 + ((tid / 32) % 4) * 16 + lane / 4;
    const int col_base = n0 + 2 * (lane % 4);
    const bool c_vec_ok = spla::gemm::rows_aligned8(C, ldc);
#pragma unroll
    for (int j = 0; j < 32; ++j) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int row = warp_rows + 8 * h;
            const int col = col_base + 8 * j;
            if (row >= M) continue;
            spla::gemm::store_output2(C + static_cast<long long>(row) * ldc + col, col, N, acc[4 * j + 2 * h],
                                      acc[4 * j + 2 * h + 1], alpha, beta, c_vec_ok);
        }
    }
#else
    // Not compiled for sm_90a: no wgmma. Poison this block's tile so that a
    // wrong compilation target shows up as NaN, never as plausible numbers.
    (void)K; (void)alpha; (void)A; (void)lda; (void)Bt; (void)ldbt; (void)beta;
    for (int i = tid; i < BM * BN; i += THREADS) {
        const int row = m0 + i / BN;
        const int col = n0 + i % BN;
        if (row < M && col < N) C[static_cast<long long>(row) * ldc + col] = __int_as_float(0x7fc00000);
    }
#endif
}

// out[0] = 1 when this module was compiled with the sm_90a features (wgmma),
// else 0; out[1] = __CUDA_ARCH__. The host runs it once before trusting the
// GEMM kernel of the same module.
extern "C" __global__ void spla_gemm_tf32_wgmma_probe(int* out) {
#if defined(__CUDA_ARCH__)
    out[0] = SPLA_WGMMA_AVAILABLE;
    out[1] = __CUDA_ARCH__;
#endif
}

// Bt (n_pad x ldbt, row-major) = B^T for k < K, n < N, zeros elsewhere, so that
// the GEMM kernel reads whole, K-major tiles of B without bounds checks. One
// 32 x 32 tile per block of 32 x 8 threads, through a padded shared tile: the
// reads run along B's rows (n), the writes along Bt's rows (k), both coalesced.
// Grid: (n_pad / 32, ldbt / 32); n_pad and ldbt are multiples of 32.
extern "C" __global__ void __launch_bounds__(256)
    spla_gemm_transpose_pad(int K, int N, const float* __restrict__ B, int ldb, float* __restrict__ Bt, int ldbt) {
    constexpr int T = spla::gemm::wgmma::TRANSPOSE_TILE;
    __shared__ float tile[T][T + 1];
    const int n0 = blockIdx.x * T;
    const int k0 = blockIdx.y * T;
#pragma unroll
    for (int i = 0; i < T; i += 8) {
        const int k = k0 + threadIdx.y + i;
        const int n = n0 + threadIdx.x;
        tile[threadIdx.y + i][threadIdx.x] = (k < K && n < N) ? B[static_cast<long long>(k) * ldb + n] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < T; i += 8) {
        const int n = n0 + threadIdx.y + i;
        const int k = k0 + threadIdx.x;
        Bt[static_cast<long long>(n) * ldbt + k] = tile[threadIdx.x][threadIdx.y + i];
    }
}
