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
// order) with fma and skips padding (a zero value), so the bits are spmm_subwarp.cu's. A thread
// loads a batch of diagonals' values and X vectors before any of their FMAs (X's column clamped
// into X and the vector zeroed outside it, so no load waits on a test), and the offsets sit in
// shared memory beside the palette.
//
// VEC: the widest of 16 bytes, 8 (float32's float2) and one value that k, the leading
// dimensions and the pointers allow.
//
// Constraints (asserted on the host, spla/backends/cuda/spmm_launch.py): row-major X and out;
// VEC > 1 needs k % VEC == 0, ldx, ldo, ldy multiples of VEC and x, out, y_in aligned to
// VEC * sizeof(T) bytes; offsets sorted, at most SPLA_MAX_DIAGONALS of them (planning/dia.py); a
// grid-stride loop covers any n_rows * k / VEC. y_in is read only when use_y_in.
#include "launch_config.cuh"  // SPLA_MAX_DIAGONALS and SPLA_PALETTE_VALUES, as the host passes them
#include "spmm_common.cuh"

// Diagonals whose X vectors a thread has in flight at once, and the blocks an SM must hold. Left to
// itself ptxas kept this kernel at 32 registers with about two X loads in flight a thread, an FMA
// group between each (session 57's SASS; Nsight Compute: 60-63% of DRAM bandwidth at 96% occupancy,
// the long scoreboard the top stall). A batch's loads are issued before its FMAs, and 4 blocks an SM
// leave the registers to hold them (40-48). Measured through spla.spmm (session 57, H100,
// docs/lab/gpu-2026-12-06-session57, call 3 against call 1): 0.93-1.19x the unbatched kernel, geomean
// 1.055x over 48 runs of six stencils and bands at k = 2-16 (2-D Poisson 1.15x, the 7-point 3-D
// Poisson 0.98x); BATCH 5 against 4 and 8 was chosen by a try whose timing also held host time.
#ifndef SPLA_SPMM_DIA_BATCH
#define SPLA_SPMM_DIA_BATCH 5
#endif
#ifndef SPLA_SPMM_DIA_MIN_BLOCKS
#define SPLA_SPMM_DIA_MIN_BLOCKS 4
#endif

namespace {

// Diagonal d's contribution to a row's VEC sums: X's vector is loaded wherever the column falls
// (clamped into X, then zeroed outside it, so the load is never predicated and a batch's loads
// can all be in flight), and added only where the slot's value is not zero (padding).
template <typename T, int VEC>
struct DiaTerm {
    T value;
    T x[VEC];

    __device__ __forceinline__ void load(T slot_value, long long col, long long n_cols, const T* __restrict__ x_row0,
                                         long long ldx) {
        value = slot_value;
        const bool inside = col >= 0 && col < n_cols;
        const long long at = inside ? col : (col < 0 ? 0 : n_cols - 1);
        if constexpr (VEC > 1) {
            spla::spmm::load_vec<T, VEC>(x_row0 + at * ldx, x);
        } else {
            x[0] = __ldg(x_row0 + at * ldx);
        }
#pragma unroll
        for (int v = 0; v < VEC; ++v) x[v] = inside ? x[v] : T(0);
    }

    __device__ __forceinline__ void add_to(T (&acc)[VEC]) const {
        if (value != T(0)) {
#pragma unroll
            for (int v = 0; v < VEC; ++v) acc[v] = fma(value, x[v], acc[v]);
        }
    }
};

}  // namespace

template <typename T, int VEC, bool PALETTE>
__global__ void __launch_bounds__(256, SPLA_SPMM_DIA_MIN_BLOCKS)
spla_spmm_dia(long long n_rows, long long n_cols, long long stride, int n_diagonals,
              const long long* __restrict__ offsets, const T* __restrict__ values, const T* __restrict__ palette,
              int n_palette, const unsigned char* __restrict__ codes, const T* __restrict__ x, long long ldx,
              long long k, T alpha, T beta, const T* __restrict__ y_in, long long ldy, int use_y_in,
              T* __restrict__ out, long long ldo) {
    static_assert(VEC * sizeof(T) <= 16, "one vector is at most 16 bytes");
    constexpr int BATCH = SPLA_SPMM_DIA_BATCH;
    __shared__ T table[PALETTE ? SPLA_PALETTE_TABLE : 1];
    __shared__ long long offset[SPLA_MAX_DIAGONALS];
    for (int i = threadIdx.x; i < n_diagonals; i += blockDim.x) offset[i] = offsets[i];
    if constexpr (PALETTE) {
        spla::copy_palette(table, palette, n_palette);  // its __syncthreads covers offset too
    } else {
        __syncthreads();
    }
    const long long per_row = k / VEC;  // threads a row
    const long long n_items = n_rows * per_row;
    for (long long item = spla::global_thread_id(); item < n_items; item += spla::grid_threads()) {
        const long long row = item / per_row;
        const long long c = (item - row * per_row) * VEC;  // this thread's first column
        const T* x_row0 = x + c;                                 // its columns of X's row 0
        auto slot_value = [&](int d) {
            const long long slot = d * stride + row;
            return PALETTE ? table[__ldg(codes + slot)] : __ldg(values + slot);
        };
        T acc[VEC];
#pragma unroll
        for (int v = 0; v < VEC; ++v) acc[v] = T(0);
        int d = 0;
        for (; d + BATCH <= n_diagonals; d += BATCH) {
            DiaTerm<T, VEC> terms[BATCH];
#pragma unroll
            for (int b = 0; b < BATCH; ++b) terms[b].load(slot_value(d + b), row + offset[d + b], n_cols, x_row0, ldx);
#pragma unroll
            for (int b = 0; b < BATCH; ++b) terms[b].add_to(acc);
        }
        for (; d < n_diagonals; ++d) {
            DiaTerm<T, VEC> term;
            term.load(slot_value(d), row + offset[d], n_cols, x_row0, ldx);
            term.add_to(acc);
        }
        spla::spmm::store_scaled<T, VEC>(out + row * ldo + c, y_in + row * ldy + c, acc, alpha, beta, use_y_in);
    }
}
