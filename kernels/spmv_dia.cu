// spmv_dia: a matrix stored by diagonals (spla/planning/dia.py), for stencils and banded matrices
// whose entries lie on a few diagonals; each thread takes R consecutive rows.
//
// What changed from spmv_scalar.cu: no column indices and no row pointers. Diagonal d holds one
// value per row at values[d * stride + row] (zero where the row has no entry; stride is n_rows
// rounded up to planning/dia.py's STRIDE_ROWS) and its column is row + offsets[d], so a warp's
// loads of values and of x are both runs of consecutive elements, and the bytes read drop to the
// values (with their padding), x and y: 0.54x CSR's on 2D Poisson in float32. Diagonals are
// taken in increasing offset (the CSR row's column order) and zeros are skipped, so the sums are
// the scalar kernel's, bit for bit (an Inf or NaN in x reaches only the rows CSR would send it
// to); the host refuses matrices that store explicit zeros, which CSR would multiply. x is never
// read outside its n_cols entries.
//
// R rows a thread (planning/dia.py's rows_for): a thread loads R values of a diagonal at once
// (one 16-byte load at R = 4 in float32), so it has R times the bytes in flight of a thread per
// row, and writes y by R where y is aligned. Few diagonals want more rows (float32 2D Poisson:
// 0.139 ms at R = 1, 0.118 ms at R = 4, the copy bandwidth's 96%); many want fewer (33: R = 1).
//
// spla_spmv_dia_palette: the same sums over a matrix whose stored values take at most 255 bit patterns
// (a stencil of constant coefficients takes two or three): each slot holds a one-byte code, 0 for
// no entry, else the value's place in a table the block keeps in shared memory, so a diagonal
// reads a byte a row, not 4 or 8. table[code] holds the slot's value bit for bit (table[0] is zero),
// so the test of the value keeps the padding out as before and the sums are dia's. On the corpus's
// stencils of 10-200M nonzeros: 1.2-2.4x the values' entry (session 40; planning/dia.py's
// PALETTE_MIN_BYTES says from where the launcher takes it).
//
// Constraints: blocks of at most SPLA_ROW_BLOCK threads; a grid-stride loop over groups of R
// rows covers any n_rows; offsets sorted, at most MAX_DIAGONALS of them (planning/dia.py);
// stride a multiple of R and values aligned to R values (a fresh allocation); x holds n_cols
// entries.
#include "common.cuh"
#include "launch_config.cuh"  // SPLA_ROW_BLOCK and SPLA_PALETTE_VALUES, as the host passes them

// Blocks an SM must hold: 8 of 256 threads caps a thread at 32 registers (full occupancy), where
// R = 4 in float32 would take 40 and 6 blocks (2D/3D Poisson 4-9% faster with the cap; a 27-point
// stencil at R = 2 11% slower without it). A/B switch: 0 leaves the registers to the compiler.
#ifndef SPLA_DIA_MIN_BLOCKS
#define SPLA_DIA_MIN_BLOCKS 8
#endif
#if SPLA_DIA_MIN_BLOCKS
#define SPLA_DIA_BOUNDS __launch_bounds__(SPLA_ROW_BLOCK, SPLA_DIA_MIN_BLOCKS)
#else
#define SPLA_DIA_BOUNDS __launch_bounds__(SPLA_ROW_BLOCK)
#endif
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
constexpr int DIA_UNROLL = SPLA_DIA_UNROLL;  // (#pragma unroll does not expand macros)

// R values of one diagonal, loaded (and y stored) as one aligned access.
template <typename V, int R>
struct alignas(R * sizeof(V)) DiaRows {
    V v[R];
};

// R codes of one diagonal (the palette entry's), loaded as one aligned access.
template <int R>
struct alignas(R) DiaCodes {
    unsigned char c[R];
};

// The kernels' body. PALETTE: ``values`` are one-byte codes into ``table`` (see the file's notes).
template <typename V, int R, bool PALETTE>
__device__ __forceinline__ void dia_rows(long long n_rows, long long n_cols, long long stride, int n_diagonals,
                                         const long long* __restrict__ offsets, const V* __restrict__ values,
                                         const unsigned char* __restrict__ codes, const V* table,
                                         const V* __restrict__ x, V* __restrict__ y, V alpha, V beta) {
    using Rows = DiaRows<V, R>;
    const long long n_groups = (n_rows + R - 1) / R;
    const bool y_aligned = reinterpret_cast<unsigned long long>(y) % sizeof(Rows) == 0;
    for (long long group = spla::global_thread_id(); group < n_groups; group += spla::grid_threads()) {
        const long long row0 = group * R;
        V sum[R];
#pragma unroll
        for (int k = 0; k < R; ++k) sum[k] = V(0);
#pragma unroll DIA_UNROLL
        for (int d = 0; d < n_diagonals; ++d) {
            Rows v;
            if (PALETTE) {
                const DiaCodes<R> c = *reinterpret_cast<const DiaCodes<R>*>(codes + d * stride + row0);
#pragma unroll
                for (int k = 0; k < R; ++k) v.v[k] = table[c.c[k]];  // table[0] is zero: no entry
            } else {
                v = *reinterpret_cast<const Rows*>(values + d * stride + row0);
            }
            const long long col0 = row0 + __ldg(offsets + d);
#if SPLA_DIA_EARLY_X
            V xv[R];
#pragma unroll
            for (int k = 0; k < R; ++k) {
                const long long col = col0 + k;
                xv[k] = (col >= 0 && col < n_cols) ? __ldg(x + col) : V(0);
            }
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
            Rows out;
            if (beta == V(0)) {
#pragma unroll
                for (int k = 0; k < R; ++k) out.v[k] = alpha * sum[k];
            } else {
                const Rows old = *reinterpret_cast<const Rows*>(y + row0);
#pragma unroll
                for (int k = 0; k < R; ++k) out.v[k] = alpha * sum[k] + beta * old.v[k];
            }
            *reinterpret_cast<Rows*>(y + row0) = out;
        } else {
#pragma unroll
            for (int k = 0; k < R; ++k) {
                if (row0 + k < n_rows) spla::store_row(y, row0 + k, sum[k], alpha, beta);
            }
        }
    }
}

template <typename V, int R>
__global__ void SPLA_DIA_BOUNDS spla_spmv_dia(long long n_rows, long long n_cols, long long stride,
                                              int n_diagonals, const long long* __restrict__ offsets,
                                              const V* __restrict__ values, const V* __restrict__ x,
                                              V* __restrict__ y, V alpha, V beta) {
    dia_rows<V, R, false>(n_rows, n_cols, stride, n_diagonals, offsets, values, nullptr, nullptr, x, y, alpha, beta);
}

// palette: the table's n_palette entries (at most SPLA_PALETTE_TABLE; entry 0 is zero, for no entry), copied to
// shared memory once a block. (Read in place through the read-only cache instead, the calls ran
// 0.90-1.02x as fast: session 40, 36 stencils of 2-40M nonzeros.)
template <typename V, int R>
__global__ void SPLA_DIA_BOUNDS spla_spmv_dia_palette(long long n_rows, long long n_cols, long long stride,
                                                      int n_diagonals, const long long* __restrict__ offsets,
                                                      const V* __restrict__ palette, int n_palette,
                                                      const unsigned char* __restrict__ codes,
                                                      const V* __restrict__ x, V* __restrict__ y, V alpha, V beta) {
    __shared__ V table[SPLA_PALETTE_TABLE];
    spla::copy_palette(table, palette, n_palette);
    dia_rows<V, R, true>(n_rows, n_cols, stride, n_diagonals, offsets, nullptr, codes, table, x, y, alpha, beta);
}
