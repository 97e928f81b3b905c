// solver_cg_product: CG's product q = A p and its p.q in one launch, and from the second
// iteration on the new search direction p = z + beta p formed inside the same launch
// (launched by spla/backends/cuda/solvers.py, CgProduct).
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
// Reduction: the row's owner adds p[row] * q[row] in double; grid_sum_last_block then sums
// the threads in a fixed order, so the result is the same on every run with the same grid.
//
// Constraints: A square (p and q indexed alike); blockDim.x == SOLVER_BLOCK; partials hold
// gridDim.x doubles; a grid-stride loop covers any number of rows with any grid.
// Figures: BENCHMARKS.md, captured CG (scripts/bench_precond.py --parts capture).
#include "solver_reduce.cuh"

namespace spla {

// z + beta p rounded once, written with an explicit fma so that no reader of an entry can
// round it differently from another.
__device__ __forceinline__ float direction_entry(float z, float p, float beta) { return fmaf(beta, p, z); }
__device__ __forceinline__ double direction_entry(double z, double p, double beta) { return fma(beta, p, z); }

// Entry c of the vector the SpMV multiplies: p_in[c], or with DIRECTION z[c] + beta p_in[c].
template <bool DIRECTION, typename V>
__device__ __forceinline__ V product_entry(long long c, const V* __restrict__ p_in, const V* __restrict__ z, V beta) {
    if constexpr (DIRECTION) {
        return direction_entry(__ldg(z + c), __ldg(p_in + c), beta);
    } else {
        return __ldg(p_in + c);
    }
}

}  // namespace spla

// DIRECTION false: q = A p_in, out[0] = p_in.q (p_out, z, rho_new and rho_old not touched).
// DIRECTION true:  p_out = z + beta p_in, q = A p_out, out[0] = p_out.q.
template <typename V, typename I, int LANES, bool DIRECTION>
__global__ void __launch_bounds__(spla::SOLVER_BLOCK)
spla_cg_product(long long n_rows, const I* __restrict__ indptr, const I* __restrict__ indices,
                const V* __restrict__ data, const V* __restrict__ p_in, const V* __restrict__ z,
                V* __restrict__ p_out, V* __restrict__ q, const double* rho_new, const double* rho_old,
                double* partials, unsigned* counter, double* out) {
    static_assert(LANES >= 1 && LANES <= 32 && (LANES & (LANES - 1)) == 0, "LANES must be 1, 2, 4, 8, 16 or 32");
    V beta = V(0);
    if constexpr (DIRECTION) {
        const double old = *rho_old;
        beta = static_cast<V>(old != 0.0 ? *rho_new / old : 0.0);
    }
    double v[1] = {0.0};  // this thread's share of p.q, from the rows it owns
    if constexpr (LANES == 1) {
        for (long long row = spla::global_thread_id(); row < n_rows; row += spla::grid_threads()) {
            const I start = indptr[row];
            const I end = indptr[row + 1];
            V sum = V(0);
            // with DIRECTION each entry loads z and p: unrolled by 2 (not the default 4), the
            // double/int32 instance keeps to 32 registers (full occupancy) without spilling
#pragma unroll(DIRECTION ? 2 : 4)
            for (I j = start; j < end; ++j) {
                sum += data[j] * spla::product_entry<DIRECTION>(indices[j], p_in, z, beta);
            }
            q[row] = sum;
            const V p_row = spla::product_entry<DIRECTION>(row, p_in, z, beta);
            if constexpr (DIRECTION) p_out[row] = p_row;
            v[0] += static_cast<double>(p_row) * static_cast<double>(sum);
        }
    } else {
        constexpr int GROUPS_PER_WARP = spla::WARP_SIZE / LANES;
        const int lane = threadIdx.x % LANES;
        const int group_in_warp = (threadIdx.x % spla::WARP_SIZE) / LANES;
        const long long warp = spla::global_thread_id() / spla::WARP_SIZE;
        const long long n_warps = spla::grid_threads() / spla::WARP_SIZE;
        // the same trip count in all 32 lanes: the shuffles use the full mask
        for (long long first = warp * GROUPS_PER_WARP; first < n_rows; first += n_warps * GROUPS_PER_WARP) {
            const long long row = first + group_in_warp;
            V sum = V(0);
            if (row < n_rows) {
                const I start = indptr[row];
                const I length = indptr[row + 1] - start;
                // a lane takes a few entries of a short row: unrolled by 2 (not 4), no instance
                // spills and most keep to 32 registers
#pragma unroll 2
                for (I k = lane; k < length; k += LANES) {
                    sum += data[start + k] * spla::product_entry<DIRECTION>(indices[start + k], p_in, z, beta);
                }
            }
            sum = spla::warp_reduce_sum<V, LANES>(sum);
            if (lane == 0 && row < n_rows) {
                q[row] = sum;
                const V p_row = spla::product_entry<DIRECTION>(row, p_in, z, beta);
                if constexpr (DIRECTION) p_out[row] = p_row;
                v[0] += static_cast<double>(p_row) * static_cast<double>(sum);
            }
        }
    }
    spla::grid_sum_last_block<1>(v, partials, counter, out);
}
