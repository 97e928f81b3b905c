// Session 57's try of kernels/spmm_dia.cu (timed beside it by dia_try.py; not a library kernel).
//
// The same sums in the same order (each of a row's k sums takes its diagonals in increasing
// offset with fma, skipping a zero value), so the bits must equal spla_spmm_dia's. Two changes:
// - BATCH diagonals' codes, offsets and X vectors are loaded into registers before any of their
//   FMAs (the library kernel's SASS keeps about two X loads in flight a thread);
// - X's loads are never predicated (the column clamped into X, the value made zero after);
// - the offsets sit in shared memory beside the palette (one copy a block, not a dependent global
//   load before each X load);
// - MIN_BLOCKS, the blocks an SM must hold: 1 leaves ptxas at 32 registers (where it keeps about two
//   X loads in flight however large BATCH), 4 lets it hold a batch (48 registers at BATCH 5).
#include "launch_config.cuh"
#include "spmm_common.cuh"

#define TRY_MAX_DIAGONALS 64

template <typename T, int VEC, bool PALETTE, int BATCH, int MIN_BLOCKS>
__global__ void __launch_bounds__(256, MIN_BLOCKS)
spla_spmm_dia_try(long long n_rows, long long n_cols, long long stride, int n_diagonals,
                  const long long* __restrict__ offsets, const T* __restrict__ values, const T* __restrict__ palette,
                  int n_palette, const unsigned char* __restrict__ codes, const T* __restrict__ x, long long ldx,
                  long long k, T alpha, T beta, const T* __restrict__ y_in, long long ldy, int use_y_in,
                  T* __restrict__ out, long long ldo) {
    __shared__ T table[PALETTE ? SPLA_PALETTE_TABLE : 1];
    __shared__ long long offset[TRY_MAX_DIAGONALS];
    for (int i = threadIdx.x; i < n_diagonals; i += blockDim.x) offset[i] = offsets[i];
    if constexpr (PALETTE) {
        spla::copy_palette(table, palette, n_palette);  // (its __syncthreads covers offset too)
    } else {
        __syncthreads();
    }
    const long long per_row = k / VEC;
    const long long n_items = n_rows * per_row;
    for (long long item = spla::global_thread_id(); item < n_items; item += spla::grid_threads()) {
        const long long row = item / per_row;
        const long long c = (item - row * per_row) * VEC;
        T acc[VEC];
#pragma unroll
        for (int v = 0; v < VEC; ++v) acc[v] = T(0);
        int d = 0;
        for (; d + BATCH <= n_diagonals; d += BATCH) {
            T value[BATCH];
            T xv[BATCH][VEC];
#pragma unroll
            for (int b = 0; b < BATCH; ++b) {
                const long long slot = (d + b) * stride + row;
                value[b] = PALETTE ? table[__ldg(codes + slot)] : __ldg(values + slot);
                // every load lands inside X (the column clamped) and is made zero after, so no load
                // is predicated and all BATCH of them can be in flight at once
                const long long col = row + offset[d + b];
                const bool inside = col >= 0 && col < n_cols;
                const long long at = inside ? col : (col < 0 ? 0 : n_cols - 1);
                if constexpr (VEC > 1) {
                    spla::spmm::load_vec<T, VEC>(x + at * ldx + c, xv[b]);
                } else {
                    xv[b][0] = __ldg(x + at * ldx + c);
                }
#pragma unroll
                for (int v = 0; v < VEC; ++v) xv[b][v] = inside ? xv[b][v] : T(0);
            }
#pragma unroll
            for (int b = 0; b < BATCH; ++b) {
                if (value[b] != T(0)) {
#pragma unroll
                    for (int v = 0; v < VEC; ++v) acc[v] = fma(value[b], xv[b][v], acc[v]);
                }
            }
        }
        for (; d < n_diagonals; ++d) {
            const long long slot = d * stride + row;
            const T value = PALETTE ? table[__ldg(codes + slot)] : __ldg(values + slot);
            const long long col = row + offset[d];
            T xv[VEC];
            if (col >= 0 && col < n_cols) {
                if constexpr (VEC > 1) {
                    spla::spmm::load_vec<T, VEC>(x + col * ldx + c, xv);
                } else {
                    xv[0] = __ldg(x + col * ldx + c);
                }
            } else {
#pragma unroll
                for (int v = 0; v < VEC; ++v) xv[v] = T(0);
            }
            if (value != T(0)) {
#pragma unroll
                for (int v = 0; v < VEC; ++v) acc[v] = fma(value, xv[v], acc[v]);
            }
        }
        spla::spmm::store_scaled<T, VEC>(out + row * ldo + c, y_in + row * ldy + c, acc, alpha, beta, use_y_in);
    }
}
