// Fused vector kernels for the Krylov solvers (launched by spla/backends/cuda/solvers.py).
//
// Why these exist: a CG iteration besides its SpMV is only streaming vector
// work, and on the GPU it is bound by bandwidth and launch count. These
// kernels update x and r and reduce the new residual in the same pass, and
// leave every scalar (rho, p.Ap, r.r) in device memory, so an iteration never
// waits for the host.
//
// Reductions are single-launch and deterministic (solver_reduce.cuh).
// Constraints: blockDim.x == SOLVER_BLOCK (256); the partials buffer holds
// 2 * gridDim.x doubles (the Python side sizes both); n may exceed 2^31.
#include "solver_reduce.cuh"


// out[0] = sum(a * b)
template <typename T>
__global__ void __launch_bounds__(spla::SOLVER_BLOCK)
spla_solver_dot(const T* __restrict__ a, const T* __restrict__ b, long long n, double* partials,
                unsigned* counter, double* out) {
    double v[1] = {0.0};
    for (long long i = spla::global_thread_id(); i < n; i += spla::grid_threads()) {
        v[0] += static_cast<double>(a[i]) * static_cast<double>(b[i]);
    }
    spla::grid_sum_last_block<1>(v, partials, counter, out);
}

// alpha = rho / pq;  x += alpha p;  r -= alpha q;  out[0] = r.r
// With JACOBI: also z = dinv * r, out[0] = r.z and out[1] = r.r.
// A zero or non-finite p.Ap sets flag[0] = 1 (sticky) and freezes x and r.
template <typename T, bool JACOBI>
__global__ void __launch_bounds__(spla::SOLVER_BLOCK)
spla_cg_step(T* __restrict__ x, T* __restrict__ r, T* __restrict__ z, const T* __restrict__ p,
             const T* __restrict__ q, const T* __restrict__ dinv, long long n, const double* rho,
             const double* pq, double* flag, double* partials, unsigned* counter, double* out) {
    bool broke;
    const double alpha = spla::guarded_step(rho, pq, flag, &broke);
    constexpr int NS = JACOBI ? 2 : 1;
    double v[NS];
#pragma unroll
    for (int s = 0; s < NS; ++s) v[s] = 0.0;
    spla::cg_update<T, JACOBI, false>(n, static_cast<T>(alpha), x, r, z, p, q, dinv, v);
    // flag is read above by every block; writing it only after this block's
    // reads is safe because all threads compute the same verdict.
    if (broke && blockIdx.x == 0 && threadIdx.x == 0) flag[0] = 1.0;
    spla::grid_sum_last_block<NS>(v, partials, counter, out);
}
