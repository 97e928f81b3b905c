// GEMM step 4: float4 global loads and several outputs per thread.
//
// Changed from step 3: a BM x BN block tile with a BK-deep k-tile; tiles are
// loaded with 16-byte (float4) global loads and stores, and each thread
// computes TM outputs down one column of C with TM independent accumulators.
// The inner loop reads A four k at a time as a float4 from shared memory
// (one address per warp: a broadcast) and reuses each B value TM times, so a
// thread issues 12 shared loads per 32 FMAs instead of step 2's 2 per FMA.
//
// Constraints (the host checks them and pads A/B with zeros otherwise):
//   K % 4 == 0, lda % 4 == 0, ldb % 4 == 0, A and B 16-byte aligned, so a
//   float4 at a column that is a multiple of 4 is either wholly inside the
//   matrix or wholly outside (then zero-filled). B may be padded to ldb >=
//   round_up(N, 4) columns; columns >= N are loaded but never stored.
//   Tile: threads = BM * BN / TM; BM * BK and BK * BN multiples of 4 * threads.
//   C needs no alignment: stores are per element.
#include "gemm/gemm_common.cuh"

template <int BM, int BN, int BK, int TM>
__global__ void __launch_bounds__(BM * BN / TM)
    spla_gemm_vec4(int M, int N, int K, float alpha, const float* __restrict__ A, int lda,
                   const float* __restrict__ B, int ldb, float beta, float* __restrict__ C, int ldc) {
    constexpr int THREADS = BM * BN / TM;
    static_assert(THREADS <= 1024, "a block holds at most 1024 threads");
    static_assert(BK % 4 == 0 && BN % 4 == 0, "tiles are moved as float4");
    static_assert((BM * BK) % (4 * THREADS) == 0, "every thread loads the same number of A float4s");
    static_assert((BK * BN) % (4 * THREADS) == 0, "every thread loads the same number of B float4s");
    static_assert(THREADS % BN == 0 && (THREADS / BN) * TM == BM, "threads cover the tile exactly");

    __shared__ __align__(16) float As[BM][BK];
    __shared__ __align__(16) float Bs[BK][BN];

    const int tid = threadIdx.x;
    const int m0 = blockIdx.y * BM;
    const int n0 = blockIdx.x * BN;
    const int out_col = tid % BN;         // consecutive lanes -> consecutive columns
    const int out_row0 = (tid / BN) * TM;  // first of this thread's TM rows

    float acc[TM];
#pragma unroll
    for (int i = 0; i < TM; ++i) acc[i] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int i = 0; i < BM * BK / 4 / THREADS; ++i) {
            const int chunk = tid + i * THREADS;
            const int r = chunk / (BK / 4);
            const int c = (chunk % (BK / 4)) * 4;
            float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            if (m0 + r < M && k0 + c < K) {
                v = *reinterpret_cast<const float4*>(A + static_cast<long long>(m0 + r) * lda + k0 + c);
            }
            *reinterpret_cast<float4*>(&As[r][c]) = v;
        }
#pragma unroll
        for (int i = 0; i < BK * BN / 4 / THREADS; ++i) {
            const int chunk = tid + i * THREADS;
            const int r = chunk / (BN / 4);
            const int c = (chunk % (BN / 4)) * 4;
            float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            if (k0 + r < K && n0 + c < N) {
                v = *reinterpret_cast<const float4*>(B + static_cast<long long>(k0 + r) * ldb + n0 + c);
            }
            *reinterpret_cast<float4*>(&Bs[r][c]) = v;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; k += 4) {
            const float b0 = Bs[k][out_col];
            const float b1 = Bs[k + 1][out_col];
            const float b2 = Bs[k + 2][out_col];
            const float b3 = Bs[k + 3][out_col];
#pragma unroll
            for (int i = 0; i < TM; ++i) {
                const float4 a = *reinterpret_cast<const float4*>(&As[out_row0 + i][k]);
                acc[i] = fmaf(a.x, b0, acc[i]);
                acc[i] = fmaf(a.y, b1, acc[i]);
                acc[i] = fmaf(a.z, b2, acc[i]);
                acc[i] = fmaf(a.w, b3, acc[i]);
            }
        }
        __syncthreads();
    }

    const int col = n0 + out_col;
    if (col >= N) return;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = m0 + out_row0 + i;
        if (row < M) spla::gemm::store_output(C + static_cast<long long>(row) * ldc + col, acc[i], alpha, beta);
    }
}
