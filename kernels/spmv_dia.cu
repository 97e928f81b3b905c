// spmv_dia: a matrix stored by diagonals (spla/planning/dia.py), for stencils and banded matrices
// whose entries lie on a few diagonals; each thread takes a pack of consecutive rows.
//
// What changed from spmv_scalar.cu: no column indices and no row pointers. Diagonal d holds one
// value per row at values[d * stride + row] (zero where the row has no entry; stride is n_rows
// rounded up to STRIDE_ROWS of planning/dia.py) and its column is row + offsets[d], so a warp's loads of values
// and of x are both runs of consecutive elements, and the bytes read drop to the values (with
// their padding), x and y: 0.54x CSR's on 2D Poisson in float32. Diagonals are taken in
// increasing offset (the CSR row's column order) and zeros are skipped, so the sums are the
// scalar kernel's, bit for bit (an Inf or NaN in x reaches only the rows CSR would send it to);
// the host refuses matrices that store explicit zeros, which CSR would multiply. x is never read
// outside its n_cols entries.
//
// Rows a thread: a pack of DIA_PACK_BYTES of one diagonal's values (4 rows in float32, 2 in
// float64) is one 16-byte load, so each thread has 4x (float32) the bytes in flight of a thread
// per row, and y is written by packs too where y is aligned.
//
// Constraints: any block size; a grid-stride loop over packs covers any n_rows; offsets sorted,
// at most MAX_DIAGONALS of them (planning/dia.py); stride a multiple of the pack's rows and
// values 16-byte aligned (a fresh allocation); x holds n_cols entries.
#include "common.cuh"

// x is read wherever the column falls inside it, whatever the value, so x's load does not wait
// for the value's (both are in flight at once; 5-14% faster on the H200) and the test of the
// value keeps padding out of the sum. 0: x's load waits for the value's test (the first version,
// kept as an A/B switch for scripts/ab_kernel.py).
#ifndef SPLA_DIA_EARLY_X
#define SPLA_DIA_EARLY_X 1
#endif
#ifndef SPLA_DIA_UNROLL
#define SPLA_DIA_UNROLL 4
#endif
// Bytes of one diagonal a thread loads at once (its rows: this over the value's size, at least
// one); spla/planning/dia.py's PACK_BYTES mirrors it.
#ifndef SPLA_DIA_PACK_BYTES
#define SPLA_DIA_PACK_BYTES 16
#endif
// A/B switch: rows a thread whatever the value type (0: PACK_BYTES' rows; 1 is a row a thread).
#ifndef SPLA_DIA_ROWS
#define SPLA_DIA_ROWS 0
#endif
// 1: x read by aligned packs too, two packs a diagonal shifted into place (A/B switch).
#ifndef SPLA_DIA_X_PACKS
#define SPLA_DIA_X_PACKS 0
#endif
// Blocks an SM must hold (A/B switch): 8 caps registers at 32 a thread for 256-thread blocks.
#ifndef SPLA_DIA_MIN_BLOCKS
#define SPLA_DIA_MIN_BLOCKS 0
#endif
#if SPLA_DIA_MIN_BLOCKS
#define SPLA_DIA_BOUNDS __launch_bounds__(256, SPLA_DIA_MIN_BLOCKS)
#else
#define SPLA_DIA_BOUNDS
#endif
constexpr int DIA_UNROLL = SPLA_DIA_UNROLL;  // (#pragma unroll does not expand macros)

template <typename V>
constexpr int DIA_PACK_ROWS = SPLA_DIA_ROWS > 0 ? SPLA_DIA_ROWS
                              : SPLA_DIA_PACK_BYTES / static_cast<int>(sizeof(V)) > 1
                                  ? SPLA_DIA_PACK_BYTES / static_cast<int>(sizeof(V)) : 1;

template <typename V, int R>
struct alignas(R * sizeof(V)) DiaPack {
    V v[R];
};

// x[col0 + k] for k < R, zero outside x (the padding's columns; its zero values skip them).
template <typename V, int R>
__device__ __forceinline__ void dia_x(const V* __restrict__ x, long long n_cols, long long col0, bool x_aligned,
                                      V (&xv)[R]) {
#if SPLA_DIA_X_PACKS
    using P = DiaPack<V, R>;
    const int shift = static_cast<int>(((col0 % R) + R) % R);  // one value a warp: row0 is a multiple of R
    const long long start = col0 - shift;
    if (R > 1 && x_aligned && start >= 0 && start + 2 * R <= n_cols) {
        const P lo = *reinterpret_cast<const P*>(x + start);
        const P hi = shift ? *reinterpret_cast<const P*>(x + start + R) : lo;
#pragma unroll
        for (int k = 0; k < R; ++k) {
#pragma unroll
            for (int s = 0; s < R; ++s) {
                if (s == shift) xv[k] = k + s < R ? lo.v[k + s] : hi.v[k + s - R];
            }
        }
        return;
    }
#endif
#pragma unroll
    for (int k = 0; k < R; ++k) {
        const long long col = col0 + k;
        xv[k] = (col >= 0 && col < n_cols) ? __ldg(x + col) : V(0);
    }
}

template <typename V>
__global__ void SPLA_DIA_BOUNDS spla_spmv_dia(long long n_rows, long long n_cols, long long stride, int n_diagonals,
                              const long long* __restrict__ offsets, const V* __restrict__ values,
                              const V* __restrict__ x, V* __restrict__ y, V alpha, V beta) {
    constexpr int R = DIA_PACK_ROWS<V>;
    using P = DiaPack<V, R>;
    const long long n_packs = (n_rows + R - 1) / R;
    const bool x_aligned = reinterpret_cast<unsigned long long>(x) % sizeof(P) == 0;
    const bool y_aligned = reinterpret_cast<unsigned long long>(y) % sizeof(P) == 0;
    for (long long pack = spla::global_thread_id(); pack < n_packs; pack += spla::grid_threads()) {
        const long long row0 = pack * R;
        V sum[R];
#pragma unroll
        for (int k = 0; k < R; ++k) sum[k] = V(0);
#pragma unroll DIA_UNROLL
        for (int d = 0; d < n_diagonals; ++d) {
            const P v = *reinterpret_cast<const P*>(values + d * stride + row0);
            const long long col0 = row0 + __ldg(offsets + d);
#if SPLA_DIA_EARLY_X
            V xv[R];
            dia_x<V, R>(x, n_cols, col0, x_aligned, xv);
#pragma unroll
            for (int k = 0; k < R; ++k) {
                if (v.v[k] != V(0)) sum[k] += v.v[k] * xv[k];
            }
#else
#pragma unroll
            for (int k = 0; k < R; ++k) {
                if (v.v[k] != V(0)) sum[k] += v.v[k] * __ldg(x + col0 + k);
            }
#endif
        }
        if (R > 1 && y_aligned && row0 + R <= n_rows) {
            P out;
            if (beta == V(0)) {
#pragma unroll
                for (int k = 0; k < R; ++k) out.v[k] = alpha * sum[k];
            } else {
                const P old = *reinterpret_cast<const P*>(y + row0);
#pragma unroll
                for (int k = 0; k < R; ++k) out.v[k] = alpha * sum[k] + beta * old.v[k];
            }
            *reinterpret_cast<P*>(y + row0) = out;
        } else {
#pragma unroll
            for (int k = 0; k < R; ++k) {
                if (row0 + k < n_rows) spla::store_row(y, row0 + k, sum[k], alpha, beta);
            }
        }
    }
}
