// One fused PageRank power-iteration update (spla/graph.py), after y = P @ x
// with P the column-stochastic transpose of the row-normalised adjacency:
//
//   x_new = alpha * (y + dangling_sum * d) + (1 - alpha) * p
//   out[0] = sum |x_new - x|            (networkx's L1 convergence error)
//   out[1] = sum over dangling i of x_new[i]   (the next iteration's dangling_sum)
//
// Both sums come out of the same pass, so an iteration is one SpMV plus this
// one launch, and neither needs the host. p and d are vectors, or the uniform
// value 1/N when UNIFORM_P / UNIFORM_D (no vector read).
// Constraints: blockDim.x == SOLVER_BLOCK; partials hold 2 * gridDim.x doubles.
#include "solver_reduce.cuh"

template <typename T, bool UNIFORM_P, bool UNIFORM_D>
__global__ void __launch_bounds__(spla::SOLVER_BLOCK)
spla_pagerank_step(const T* __restrict__ y, const T* __restrict__ x_old, T* __restrict__ x_new,
                   const unsigned char* __restrict__ is_dangling, const T* __restrict__ p,
                   const T* __restrict__ d, long long n, double uniform, double alpha,
                   const double* dangling_sum, double* partials, unsigned* counter, double* out) {
    const double dsum = *dangling_sum;
    double v[2] = {0.0, 0.0};
    for (long long i = spla::global_thread_id(); i < n; i += spla::grid_threads()) {
        const double pi = UNIFORM_P ? uniform : static_cast<double>(p[i]);
        const double di = UNIFORM_D ? uniform : static_cast<double>(d[i]);
        const T xi = static_cast<T>(alpha * (static_cast<double>(y[i]) + dsum * di) + (1.0 - alpha) * pi);
        x_new[i] = xi;
        v[0] += fabs(static_cast<double>(xi) - static_cast<double>(x_old[i]));
        if (is_dangling[i]) v[1] += static_cast<double>(xi);
    }
    spla::grid_sum_last_block<2>(v, partials, counter, out);
}
