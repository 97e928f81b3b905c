// Shared pieces of the solver kernels (solver_blas1.cu, solver_pagerank.cu):
// the deterministic single-launch grid reduction and the guarded step length.
//
// Reductions: each block writes its partial sums (accumulated in double, also
// for float vectors), and the last block to finish (ticket from an atomic
// counter) adds the partials in a fixed order, writes the results and resets
// the counter for the next launch. One counter and one partials buffer serve
// every reduction of a solve because launches on one stream do not overlap.
// Constraints: blockDim.x == SOLVER_BLOCK; partials hold gridDim.x * NS doubles.
#pragma once
#include "common.cuh"

#include "launch_config.cuh"  // SPLA_SOLVER_BLOCK, as the host passes it

namespace spla {

constexpr int SOLVER_BLOCK = SPLA_SOLVER_BLOCK;

// Sums NS per-thread values over the grid; out[s] gets sum s. Every thread of
// every block must call it.
template <int NS>
__device__ __forceinline__ void grid_sum_last_block(double (&v)[NS], double* partials, unsigned* counter,
                                                    double* out) {
    __shared__ double scratch[SOLVER_BLOCK / WARP_SIZE];
    __shared__ bool is_last;
#pragma unroll
    for (int s = 0; s < NS; ++s) {
        double total = block_reduce_sum<double, SOLVER_BLOCK>(v[s], scratch);
        if (threadIdx.x == 0) partials[static_cast<long long>(blockIdx.x) * NS + s] = total;
    }
    if (threadIdx.x == 0) {
        __threadfence();  // partials visible device-wide before the ticket is taken
        unsigned ticket = atomicAdd(counter, 1u);
        is_last = (ticket == gridDim.x - 1);
    }
    __syncthreads();
    if (!is_last) return;
    // Partials were written by other SMs: __ldcg reads them from L2, never from a stale L1 line.
    // Plain (non-volatile) loads let the unrolled loop issue several before the first add waits,
    // so a grid of a few thousand blocks does not pay one L2 round trip per partial; the adds
    // keep their order.
#pragma unroll
    for (int s = 0; s < NS; ++s) {
        double sum = 0.0;
#pragma unroll 8
        for (unsigned b = threadIdx.x; b < gridDim.x; b += SOLVER_BLOCK) sum += __ldcg(partials + b * NS + s);
        sum = block_reduce_sum<double, SOLVER_BLOCK>(sum, scratch);
        if (threadIdx.x == 0) out[s] = sum;
    }
    if (threadIdx.x == 0) *counter = 0u;
}

// A step length rho / pq, or 0 once the solve has broken down (flag set, or
// pq zero / non-finite). Every thread computes the same verdict.
__device__ __forceinline__ double guarded_step(const double* rho, const double* pq, const double* flag, bool* broke) {
    double step = *rho / *pq;
    bool bad = !(*pq != 0.0) || !isfinite(step);
    *broke = bad && *flag == 0.0;
    return (bad || *flag != 0.0) ? 0.0 : step;
}

}  // namespace spla
