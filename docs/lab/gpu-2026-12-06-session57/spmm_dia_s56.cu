// spmm_dia: Y = alpha * A @ X + beta * Y for A stored by diagonals (spla/planning/dia.py): the SpMM
// of the matrices whose SpMV runs spmv_dia.cu (stencils, bands).
//
// What changed from spmm_subwarp.cu: no column indices and no row pointers. Diagonal d holds one
// slot a row at d * stride + row (its value, or with PALETTE a one-byte code into a table each
// block keeps in shared memory: spmv_dia.cu's palette entry) and the slot's column is row +
// offsets[d]. A thread takes one row and VEC consecutive columns of X; the k / VEC threads of a row
// are neighbours, so a warp's loads of one diagonal are one contiguous run of X's rows, and a row's
// threads read its slot from one line. The matrix costs a byte a slot with the palette: 2D Poisson
// at k = 8 in float32 reads 5 + 32 + 32 bytes a row (codes, X, Y), against CSR's 44 + 32 + 32.
//
// Sums: each of a row's k sums takes its diagonals in increasing offset (the CSR row's column
// order) with fma and skips padding (a zero value), so the bits are spmm_subwarp.cu's. X's entry
// is loaded wherever the column falls inside X, before the value's test (spmv_dia.cu's
// SPLA_DIA_EARLY_X), so both loads are in flight at once.
//
// VEC: the widest of 16 bytes, 8 (float32's float2) and one value that k, the leading
// dimensions and the pointers allow.
//
// Constraints (asserted on the host, spla/backends/cuda/spmm_launch.py): row-major X and out;
// VEC > 1 needs k % VEC == 0, ldx, ldo, ldy multiples of VEC and x, out, y_in aligned to
// VEC * sizeof(T) bytes; offsets sorted; a grid-stride loop covers any n_rows * k / VEC. y_in is
// read only when use_y_in.
#include "launch_config.cuh"  // SPLA_PALETTE_VALUES, as the host passes it
#include "spmm_common.cuh"

template <typename T, int VEC, bool PALETTE>
__global__ void __launch_bounds__(256)
spla_spmm_dia(long long n_rows, long long n_cols, long long stride, int n_diagonals,
              const long long* __restrict__ offsets, const T* __restrict__ values, const T* __restrict__ palette,
              int n_palette, const unsigned char* __restrict__ codes, const T* __restrict__ x, long long ldx,
              long long k, T alpha, T beta, const T* __restrict__ y_in, long long ldy, int use_y_in,
              T* __restrict__ out, long long ldo) {
    static_assert(VEC * sizeof(T) <= 16, "one vector is at most 16 bytes");
    __shared__ T table[PALETTE ? SPLA_PALETTE_TABLE : 1];
    if constexpr (PALETTE) spla::copy_palette(table, palette, n_palette);
    const long long per_row = k / VEC;  // threads a row
    const long long n_items = n_rows * per_row;
    for (long long item = spla::global_thread_id(); item < n_items; item += spla::grid_threads()) {
        const long long row = item / per_row;
        const long long c = (item - row * per_row) * VEC;
        T acc[VEC];
#pragma unroll
        for (int v = 0; v < VEC; ++v) acc[v] = T(0);
#pragma unroll 4
        for (int d = 0; d < n_diagonals; ++d) {
            const long long slot = d * stride + row;
            const T value = PALETTE ? table[__ldg(codes + slot)] : __ldg(values + slot);
            const long long col = row + __ldg(offsets + d);
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
