// solver_cg_product: CG's product q = A p and its p.q in one launch, and from the second
// iteration on the new search direction p = z + beta p formed inside the same launch
// (launched by spla/backends/cuda/solvers.py, CgProduct); and spla_cg_loop, whole CG
// iterations in one launch for small problems (CgLoop, at the end of this file).
//
// Why: on small problems a CG iteration is bound by its launch count (each launch, or each
// node of a CUDA graph, costs a few microseconds whatever it does), and on large ones by
// bandwidth. An iteration used to be four launches: SpMV, dot(p, q), the fused x/r update
// (solver_blas1.cu) and the direction update. This kernel does the first two and the fourth,
// so an iteration is two launches, and p is no longer written by one launch and read back by
// the next.
//
// The direction is exact CG: p_new = z + beta p_old with beta = rho_new / rho_old (0 when
// rho_old is 0), the formula of the separate update. The SpMV reads entry c of p_new at every
// nonzero in column c, so instead of reading it, a thread forms it from z[c] and p_old[c] with
// one fused multiply-add (direction_entry); every thread that needs entry c gets the same bits,
// and the row's owner stores them in p_new. p_new must be a third buffer (neighbours still read
// p_old); the caller alternates two.
//
// Row mapping: that of the SpMV kernel `auto` picks for regular short rows, so large problems
// stream as fast as with the SpMV alone. LANES == 1 is spmv_scalar.cu (a thread per row),
// LANES in {2, 4, 8, 16, 32} is spmv_warp.cu (a group of LANES lanes per row, lane k taking
// entries k, k + LANES, ..., then a shuffle tree). Each row is summed in the same order as
// there, so q equals that kernel's y bit for bit.
//
// Or dia's (spmv_dia.cu, planning/dia.py), where auto runs dia: a thread per row over A's
// diagonals, through the palette's one-byte codes where dia reads them (_dia entries). A row's
// diagonals are taken in increasing offset and padding is skipped, so q equals the scalar
// kernel's bit for bit, and on the same grid the whole iteration is the CSR mapping's; what
// changes is the bytes: Poisson's five diagonals read 5 bytes a row from the palette against
// CSR's 8 + 5 x 12 in float64.
//
// Reduction: the row's owner adds p[row] * q[row] in double; grid_sum_last_block then sums
// the threads in a fixed order, so the result is the same on every run with the same grid.
//
// Constraints: A square (p and q indexed alike); blockDim.x == SOLVER_BLOCK; partials hold
// gridDim.x doubles (spla_cg_loop: 3 gridDim.x); a grid-stride loop covers any number of rows
// with any grid.
// Figures: BENCHMARKS.md, captured CG (scripts/bench_precond.py --parts capture).
#include "solver_reduce.cuh"

namespace spla {

// z + beta p rounded once, written with an explicit fma so that no reader of an entry can
// round it differently from another.
__device__ __forceinline__ float direction_entry(float z, float p, float beta) { return fmaf(beta, p, z); }
__device__ __forceinline__ double direction_entry(double z, double p, double beta) { return fma(beta, p, z); }

// A vector entry: through the read-only cache where the vector is constant during the launch,
// from L2 (never a stale L1 line) where other blocks of the same launch wrote it (spla_cg_loop).
template <bool COHERENT, typename V>
__device__ __forceinline__ V load_entry(const V* v) {
    if constexpr (COHERENT) {
        return __ldcg(v);
    } else {
        return __ldg(v);
    }
}

// Entry c of the vector the SpMV multiplies: p_in[c], or with DIRECTION z[c] + beta p_in[c].
template <bool DIRECTION, bool COHERENT, typename V>
__device__ __forceinline__ V product_entry(long long c, const V* __restrict__ p_in, const V* __restrict__ z, V beta) {
    if constexpr (DIRECTION) {
        return direction_entry(load_entry<COHERENT>(z + c), load_entry<COHERENT>(p_in + c), beta);
    } else {
        return load_entry<COHERENT>(p_in + c);
    }
}

// A row's owner: q[row], p[row] with DIRECTION, and its share of p.q.
template <bool DIRECTION, bool COHERENT, typename V>
__device__ __forceinline__ void finish_row(long long row, V sum, const V* __restrict__ p_in, const V* __restrict__ z,
                                           V* __restrict__ p_out, V* __restrict__ q, V beta, double& pq) {
    q[row] = sum;
    const V p_row = product_entry<DIRECTION, COHERENT>(row, p_in, z, beta);
    if constexpr (DIRECTION) p_out[row] = p_row;
    pq += static_cast<double>(p_row) * static_cast<double>(sum);
}

// The product step over the rows this thread takes part in: q = A p (with DIRECTION p = z +
// beta p_in, stored in p_out by each row's owner), returning this thread's share of p.q.
template <typename V, typename I, int LANES, bool DIRECTION, bool COHERENT>
__device__ __forceinline__ double product_rows(long long n_rows, const I* __restrict__ indptr,
                                               const I* __restrict__ indices, const V* __restrict__ data,
                                               const V* __restrict__ p_in, const V* __restrict__ z,
                                               V* __restrict__ p_out, V* __restrict__ q, V beta) {
    static_assert(LANES >= 1 && LANES <= 32 && (LANES & (LANES - 1)) == 0, "LANES must be 1, 2, 4, 8, 16 or 32");
    double pq = 0.0;
    const auto finish = [&](long long row, V sum) {
        finish_row<DIRECTION, COHERENT>(row, sum, p_in, z, p_out, q, beta, pq);
    };
    if constexpr (LANES == 1) {
        for (long long row = global_thread_id(); row < n_rows; row += grid_threads()) {
            const I start = indptr[row];
            const I end = indptr[row + 1];
            V sum = V(0);
            // with DIRECTION each entry loads z and p: unrolled by 2 (not the default 4), the
            // double/int32 instance keeps to 32 registers (full occupancy) without spilling
#pragma unroll(DIRECTION ? 2 : 4)
            for (I j = start; j < end; ++j) {
                sum += data[j] * product_entry<DIRECTION, COHERENT>(indices[j], p_in, z, beta);
            }
            finish(row, sum);
        }
    } else {
        row_groups<V, LANES>(n_rows, finish, [&](long long row, int lane) {
            const I start = indptr[row];
            const I length = indptr[row + 1] - start;
            V sum = V(0);
            // a lane takes a few entries of a short row: unrolled by 2 (not 4), no instance
            // spills and most keep to 32 registers
#pragma unroll 2
            for (I k = lane; k < length; k += LANES) {
                sum += data[start + k] * product_entry<DIRECTION, COHERENT>(indices[start + k], p_in, z, beta);
            }
            return sum;
        });
    }
    return pq;
}

// The row mappings the kernels below take, each with product<DIRECTION, COHERENT>(p_in, z, p_out,
// q, beta): the product step over this thread's rows, returning its share of p.q.
//
// CsrRows: a row kernel's lanes over A's CSR arrays (product_rows).
template <typename V, typename I, int LANES>
struct CsrRows {
    long long n_rows;
    const I* __restrict__ indptr;
    const I* __restrict__ indices;
    const V* __restrict__ data;

    template <bool DIRECTION, bool COHERENT>
    __device__ __forceinline__ double product(const V* p_in, const V* z, V* p_out, V* q, V beta) const {
        return product_rows<V, I, LANES, DIRECTION, COHERENT>(n_rows, indptr, indices, data, p_in, z, p_out, q, beta);
    }
};

// DiaRows: a thread per row over A's diagonals (spmv_dia.cu's layout): values[d * stride + row],
// or with PALETTE table[codes[d * stride + row]] (table in shared memory); column row + offsets[d].
template <typename V, bool PALETTE>
struct DiaRows {
    long long n_rows;
    long long stride;
    int n_diagonals;
    const long long* __restrict__ offsets;
    const V* __restrict__ values;
    const unsigned char* __restrict__ codes;
    const V* table;

    template <bool DIRECTION, bool COHERENT>
    __device__ __forceinline__ double product(const V* __restrict__ p_in, const V* __restrict__ z,
                                              V* __restrict__ p_out, V* __restrict__ q, V beta) const {
        double pq = 0.0;
        for (long long row = global_thread_id(); row < n_rows; row += grid_threads()) {
            V sum = V(0);
#pragma unroll 4
            for (int d = 0; d < n_diagonals; ++d) {
                const V v = PALETTE ? table[__ldg(codes + d * stride + row)] : __ldg(values + d * stride + row);
                const long long col = row + __ldg(offsets + d);
                // the vector's entry loads beside the value's (spmv_dia.cu's SPLA_DIA_EARLY_X); the
                // test of the value keeps padding out of the sum
                const V e = (col >= 0 && col < n_rows) ? product_entry<DIRECTION, COHERENT>(col, p_in, z, beta) : V(0);
                if (v != V(0)) sum += v * e;
            }
            finish_row<DIRECTION, COHERENT>(row, sum, p_in, z, p_out, q, beta, pq);
        }
        return pq;
    }
};

// dia's kernels' arguments as DiaRows: the values (not read with PALETTE), or the palette's
// n_palette entries, copied to the block's shared memory, and the codes (not read without it).
template <typename V, bool PALETTE>
__device__ __forceinline__ DiaRows<V, PALETTE> dia_mapping(long long n_rows, long long stride, int n_diagonals,
                                                           const long long* offsets, const V* values,
                                                           const V* palette, int n_palette,
                                                           const unsigned char* codes) {
    __shared__ V table[PALETTE ? SPLA_PALETTE_TABLE : 1];
    if constexpr (PALETTE) copy_palette(table, palette, n_palette);
    return {n_rows, stride, n_diagonals, offsets, values, codes, table};
}

// DIRECTION false: q = A p_in, out[0] = p_in.q (p_out, z, rho_new and rho_old not touched).
// DIRECTION true:  p_out = z + beta p_in, q = A p_out, out[0] = p_out.q.
template <typename V, bool DIRECTION, typename Rows>
__device__ __forceinline__ void cg_product(const Rows& rows, const V* p_in, const V* z, V* p_out, V* q,
                                           const double* rho_new, const double* rho_old, double* partials,
                                           unsigned* counter, double* out) {
    V beta = V(0);
    if constexpr (DIRECTION) {
        const double old = *rho_old;
        beta = static_cast<V>(old != 0.0 ? *rho_new / old : 0.0);
    }
    double v[1] = {rows.template product<DIRECTION, false>(p_in, z, p_out, q, beta)};
    grid_sum_last_block<1>(v, partials, counter, out);
}

}  // namespace spla

template <typename V, typename I, int LANES, bool DIRECTION>
__global__ void __launch_bounds__(spla::SOLVER_BLOCK)
spla_cg_product(long long n_rows, const I* __restrict__ indptr, const I* __restrict__ indices,
                const V* __restrict__ data, const V* __restrict__ p_in, const V* __restrict__ z,
                V* __restrict__ p_out, V* __restrict__ q, const double* rho_new, const double* rho_old,
                double* partials, unsigned* counter, double* out) {
    const spla::CsrRows<V, I, LANES> rows{n_rows, indptr, indices, data};
    spla::cg_product<V, DIRECTION>(rows, p_in, z, p_out, q, rho_new, rho_old, partials, counter, out);
}

template <typename V, bool PALETTE, bool DIRECTION>
__global__ void __launch_bounds__(spla::SOLVER_BLOCK)
spla_cg_product_dia(long long n_rows, long long stride, int n_diagonals, const long long* __restrict__ offsets,
                    const V* __restrict__ values, const V* __restrict__ palette, int n_palette,
                    const unsigned char* __restrict__ codes, const V* __restrict__ p_in, const V* __restrict__ z,
                    V* __restrict__ p_out, V* __restrict__ q, const double* rho_new, const double* rho_old,
                    double* partials, unsigned* counter, double* out) {
    const auto rows = spla::dia_mapping<V, PALETTE>(n_rows, stride, n_diagonals, offsets, values, palette, n_palette,
                                                    codes);
    spla::cg_product<V, DIRECTION>(rows, p_in, z, p_out, q, rho_new, rho_old, partials, counter, out);
}

// Up to `count` whole CG iterations, first .. first + count - 1, in one cooperative launch
// (every block resident: grid_barrier needs it), for problems small enough that an iteration's
// work takes less time than a launch. Each iteration is the product step above (p = z + beta
// p_prev, q = A p, p.q; the first iteration takes p as given), a grid-wide sum of p.q, then the
// step of spla_cg_step (solver_blas1.cu: x += alpha p, r -= alpha q, with JACOBI z = D^{-1} r,
// and r.z and r.r), and a second grid-wide sum. Every block forms the same sums
// (grid_sum_everywhere), so alpha, beta and the convergence test never pass through memory.
// Block 0 writes each iteration's scalars to `state` in the layout of the launch-per-step loop:
// state[0] the breakdown flag, state[1] p.q, state[2 + 2 (k % 2)] rho_k (r.z, or r.r without
// JACOBI), with JACOBI state[3 + 2 (k % 2)] r.r; and state[6] = 1 once sqrt(r.r) < atol (the
// host's test, also for NaN), state[7] = the last iteration run. The loop stops after the
// iteration that converged or broke down, and a launch that finds either does nothing, so the
// iterates and the stopping iteration do not depend on how the iterations are split into
// launches.
//
// p of iteration k lives in p_even or p_odd by k's parity (p_odd holds p_1 on the first launch).
// Without JACOBI z is r. Vectors written in the launch (p, q, r, z) are read back from L2: after
// a grid barrier another block may have written them, and a line this SM read before would be
// stale. x is only touched by the thread that owns its entries (the same grid-stride mapping in
// every iteration). The sums differ from spla_cg_product + spla_cg_step in their order (other
// grids), so the iterates equal the launch-per-step loop's to rounding. The loop's body is
// cg_loop_iterations, over the CSR mapping (spla_cg_loop) or dia's (spla_cg_loop_dia).
namespace spla {

template <typename V, bool JACOBI, typename Rows>
__device__ __forceinline__ void cg_loop_iterations(const Rows& rows, long long n_rows, V* x, V* r, V* z,
                                                   const V* __restrict__ dinv, V* p_even, V* p_odd, V* q,
                                                   double* state, double* partials, unsigned* sync, long long first,
                                                   long long count, double atol) {
    double flag = state[0];
    if (flag != 0.0 || state[6] != 0.0) return;  // every block reads the same: all return
    double rho = state[2 + 2 * ((first - 1) & 1)];  // rho_{k-1}
    double rho_old = state[2 + 2 * (first & 1)];    // rho_{k-2}, not read when first == 1
    constexpr int NS = JACOBI ? 2 : 1;
    for (long long k = first; k < first + count; ++k) {
        V* p = (k & 1) ? p_odd : p_even;
        const V* p_prev = (k & 1) ? p_even : p_odd;
        double pq[1];
        if (k == 1) {
            pq[0] = rows.template product<false, true>(p, z, p, q, V(0));
        } else {
            const V beta = static_cast<V>(rho_old != 0.0 ? rho / rho_old : 0.0);
            pq[0] = rows.template product<true, true>(p_prev, z, p, q, beta);
        }
        grid_sum_everywhere<1>(pq, partials, sync);
        bool broke;
        const V alpha = static_cast<V>(guarded_step(rho, pq[0], flag, &broke));
        if (broke) flag = 1.0;
        double sums[NS];
#pragma unroll
        for (int s = 0; s < NS; ++s) sums[s] = 0.0;
        cg_update<V, JACOBI, true>(n_rows, alpha, x, r, z, p, q, dinv, sums);
        grid_sum_everywhere<NS>(sums, partials + gridDim.x, sync);
        rho_old = rho;
        rho = sums[0];
        const double rr = sums[NS - 1];
        const bool converged = sqrt(0.0 > rr ? 0.0 : rr) < atol;  // Python's sqrt(max(rr, 0.0)) < atol
        if (blockIdx.x == 0 && threadIdx.x == 0) {
            state[0] = flag;
            state[1] = pq[0];
#pragma unroll
            for (int s = 0; s < NS; ++s) state[2 + 2 * (k & 1) + s] = sums[s];
            state[6] = converged ? 1.0 : 0.0;
            state[7] = static_cast<double>(k);
        }
        if (converged || flag != 0.0) break;
    }
}

}  // namespace spla

template <typename V, typename I, int LANES, bool JACOBI>
__global__ void __launch_bounds__(spla::SOLVER_BLOCK)
spla_cg_loop(long long n_rows, const I* __restrict__ indptr, const I* __restrict__ indices,
             const V* __restrict__ data, V* x, V* r, V* z, const V* __restrict__ dinv, V* p_even, V* p_odd,
             V* q, double* state, double* partials, unsigned* sync, long long first, long long count,
             double atol) {
    const spla::CsrRows<V, I, LANES> rows{n_rows, indptr, indices, data};
    spla::cg_loop_iterations<V, JACOBI>(rows, n_rows, x, r, z, dinv, p_even, p_odd, q, state, partials, sync, first,
                                        count, atol);
}

template <typename V, bool PALETTE, bool JACOBI>
__global__ void __launch_bounds__(spla::SOLVER_BLOCK)
spla_cg_loop_dia(long long n_rows, long long stride, int n_diagonals, const long long* __restrict__ offsets,
                 const V* __restrict__ values, const V* __restrict__ palette, int n_palette,
                 const unsigned char* __restrict__ codes, V* x, V* r, V* z, const V* __restrict__ dinv, V* p_even,
                 V* p_odd, V* q, double* state, double* partials, unsigned* sync, long long first, long long count,
                 double atol) {
    const auto rows = spla::dia_mapping<V, PALETTE>(n_rows, stride, n_diagonals, offsets, values, palette, n_palette,
                                                    codes);
    spla::cg_loop_iterations<V, JACOBI>(rows, n_rows, x, r, z, dinv, p_even, p_odd, q, state, partials, sync, first,
                                        count, atol);
}
