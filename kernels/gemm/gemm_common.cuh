// Helpers shared by the kernels/gemm/ step files: the BLAS-style epilogue and
// the cp.async / tensor-core wrappers. No __global__ functions here.
//
// Every GEMM kernel computes C = alpha * A @ B + beta * C on row-major
// matrices with leading dimensions lda, ldb, ldc (elements between rows).
#pragma once

// No standard headers: NVRTC compiles these without a C++ library, so sizes
// and addresses use the built-in long long / unsigned long long.

#include "common.cuh"

namespace spla {
namespace gemm {

// BLAS semantics: with beta == 0, C is written without being read, so an
// uninitialised (or NaN-filled) output buffer cannot leak into the result.
__device__ __forceinline__ float scale_output(float acc, float alpha, float beta, const float* c) {
    return beta == 0.0f ? alpha * acc : alpha * acc + beta * *c;
}

__device__ __forceinline__ void store_output(float* c, float acc, float alpha, float beta) {
    *c = scale_output(acc, alpha, beta, c);
}

__device__ __forceinline__ bool is_aligned16(const void* p) {
    return (reinterpret_cast<unsigned long long>(p) & 15u) == 0;
}

// Store four consecutive outputs of one row starting at column `col`. One
// 16-byte store when the row segment is whole and aligned (the usual case);
// element by element at the right edge or when C's rows are not 16-byte aligned.
__device__ __forceinline__ void store_output4(float* C, int ldc, int M, int N, int row, int col,
                                              float4 acc, float alpha, float beta, bool c_vec_ok) {
    if (row >= M) return;
    float* c = C + static_cast<long long>(row) * ldc + col;
    if (c_vec_ok && col + 3 < N) {
        float4 out;
        if (beta == 0.0f) {
            out = make_float4(alpha * acc.x, alpha * acc.y, alpha * acc.z, alpha * acc.w);
        } else {
            const float4 old = *reinterpret_cast<const float4*>(c);
            out = make_float4(alpha * acc.x + beta * old.x, alpha * acc.y + beta * old.y,
                              alpha * acc.z + beta * old.z, alpha * acc.w + beta * old.w);
        }
        *reinterpret_cast<float4*>(c) = out;
        return;
    }
    const float v[4] = {acc.x, acc.y, acc.z, acc.w};
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        if (col + j < N) store_output(c + j, v[j], alpha, beta);
    }
}

// Store two consecutive outputs of one row at c (column col): one 8-byte store
// when both are inside the matrix and c_vec_ok (rows_aligned8), else
// element by element. The caller has checked the row.
__device__ __forceinline__ void store_output2(float* c, int col, int N, float v0, float v1, float alpha,
                                              float beta, bool c_vec_ok) {
    if (c_vec_ok && col + 1 < N) {
        float2 out;
        if (beta == 0.0f) {
            out = make_float2(alpha * v0, alpha * v1);
        } else {
            const float2 old = *reinterpret_cast<const float2*>(c);
            out = make_float2(alpha * v0 + beta * old.x, alpha * v1 + beta * old.y);
        }
        *reinterpret_cast<float2*>(c) = out;
    } else {
        if (col < N) store_output(c, v0, alpha, beta);
        if (col + 1 < N) store_output(c + 1, v1, alpha, beta);
    }
}

// True when every row of C starts on a 16-byte boundary, so store_output4 may
// use vector stores. Uniform across the grid.
__device__ __forceinline__ bool rows_aligned16(const float* C, int ldc) {
    return ldc % 4 == 0 && is_aligned16(C);
}

// The same for store_output2's 8-byte stores.
__device__ __forceinline__ bool rows_aligned8(const float* C, int ldc) {
    return ldc % 2 == 0 && (reinterpret_cast<unsigned long long>(C) & 7u) == 0;
}

#ifdef SPLA_CPU_EMULATION
// The CPU test suite's stand-ins (tests/backends/cuda_on_cpu.h): each copy lands when its group
// is waited for, the latest the GPU allows.
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem, bool valid) {
    spla_emu::cp_async16(smem, gmem, valid);
}
__device__ __forceinline__ void cp_async_commit() { spla_emu::cp_async_commit(); }
template <int pending>
__device__ __forceinline__ void cp_async_wait() { spla_emu::cp_async_wait(pending); }
#else
// 16-byte asynchronous global->shared copy (sm_80+). When `valid` is false
// nothing is read and the 16 shared bytes are zero-filled (src-size 0), which
// is how the boundary tiles get their zeros without a branch in the main loop.
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem, bool valid) {
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    const int src_bytes = valid ? 16 : 0;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem), "r"(src_bytes)
                 : "memory");
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

// Wait until at most `pending` of this thread's committed groups are in flight.
template <int pending>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(pending) : "memory");
}
#endif

// A ROWS x COLS tile of the row-major matrix src (leading dimension ld) from (row0, col0) into
// shared dst (a row every DST_STRIDE floats), in 16-byte cp.async chunks: chunk tid + i * THREADS
// for each i, so a block of THREADS threads issues them all. Chunks past src's rows x cols land as
// zeros (the boundary tiles). COLS, DST_STRIDE and col0 are multiples of 4, and so is ld.
// dbuf64 and tf32 copy with it; dbuf and splitk keep their own loops, which timed faster.
template <int ROWS, int COLS, int DST_STRIDE, int THREADS>
__device__ __forceinline__ void copy_tile(float* dst, const float* __restrict__ src, int ld, int row0, int col0,
                                          int rows, int cols, int tid) {
    constexpr int CHUNKS = ROWS * COLS / 4;
#pragma unroll
    for (int i = 0; i < (CHUNKS + THREADS - 1) / THREADS; ++i) {
        const int chunk = tid + i * THREADS;
        if (CHUNKS % THREADS != 0 && chunk >= CHUNKS) break;  // fewer chunks than threads in the last round
        const int r = chunk / (COLS / 4);
        const int c = (chunk % (COLS / 4)) * 4;
        const bool valid = row0 + r < rows && col0 + c < cols;
        const float* from = valid ? src + static_cast<long long>(row0 + r) * ld + col0 + c : src;
        cp_async16(dst + r * DST_STRIDE + c, from, valid);
    }
}

// fp32 -> tf32 with round-to-nearest (ties away from zero). Feeding raw fp32
// bits would truncate the low 13 mantissa bits instead, a bias of about 2^-11
// per operand that shows up as a ~1e-3 relative error in C.
__device__ __forceinline__ unsigned to_tf32(float x) {
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return r;
}

// The 32-bit register an mma .tf32 operand is read from. ROUND: cvt.rna (one
// ALU instruction per fragment element). !ROUND: the raw fp32 bits; the
// tensor core reads only the sign, exponent and top 10 mantissa bits, i.e.
// it truncates toward zero. That shrinks every operand by ~2^-11 on average
// (a bias, not noise: C comes out ~1e-3 smaller in relative terms instead of
// ~3e-4 noise), in exchange for no conversion instructions in the k loop.
template <bool ROUND>
__device__ __forceinline__ unsigned tf32_operand(float x) {
    if constexpr (ROUND) {
        return to_tf32(x);
    } else {
        return __float_as_uint(x);
    }
}

// D = A(16x8, row) * B(8x8, col) + D on the tensor cores, tf32 in, fp32 accumulate.
// Fragment ownership (PTX ISA, mma.m16n8k8 .tf32), with g = lane / 4, t = lane % 4:
//   a0 (g, t)  a1 (g+8, t)  a2 (g, t+4)  a3 (g+8, t+4)
//   b0 (t, g)  b1 (t+4, g)
//   d0 (g, 2t) d1 (g, 2t+1) d2 (g+8, 2t) d3 (g+8, 2t+1)
__device__ __forceinline__ void mma_m16n8k8_tf32(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

}  // namespace gemm
}  // namespace spla
