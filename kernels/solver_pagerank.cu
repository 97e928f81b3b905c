// PageRank power iteration on the GPU (launched by spla/backends/cuda/pagerank.py): the setup kernel that
// turns the adjacency into per-row scales, and the fused per-iteration update.
//
// Setup (spla_pagerank_out_weight): one thread per row sums the row's weights
// in order, in double (the order and precision of SciPy's A.sum(axis=1), so the
// dangling set matches the host build exactly and the scales to an ulp),
// and stores scale = 1 / out-weight (0 for a dangling row) and the dangling
// mask. With the scales, P x = A^T (D^-1 x): the matrix the iteration runs on
// is A's plain transpose, and no value of A is ever rewritten.
//
// Update (spla_pagerank_step), after y = M @ v, where M is A^T and v = D^-1 x
// (SCALED), or M is the prescaled P = (D^-1 A)^T and v = x (not SCALED):
//
//   x_new = alpha * (y + dangling_sum * d) + (1 - alpha) * p
//   out[0] = sum |x_new - x|            (networkx's L1 convergence error)
//   out[1] = sum over dangling i of x_new[i]   (the next iteration's dangling_sum)
//   SCALED: z_next = scale * x_new      (the next SpMV's input)
//
// Both sums come out of the same pass, so an iteration is one SpMV plus this
// one launch, and neither needs the host. p and d are vectors, or the uniform
// value 1/N when UNIFORM_P / UNIFORM_D (no vector read).
// Constraints: blockDim.x == SOLVER_BLOCK; partials hold 2 * gridDim.x doubles.
#include "solver_reduce.cuh"

template <typename T, typename I>
__global__ void __launch_bounds__(spla::SOLVER_BLOCK)
spla_pagerank_out_weight(const I* __restrict__ indptr, const T* __restrict__ data, long long n,
                         double* __restrict__ scale, unsigned char* __restrict__ is_dangling) {
    for (long long i = spla::global_thread_id(); i < n; i += spla::grid_threads()) {
        double weight = 0.0;
        const long long end = static_cast<long long>(indptr[i + 1]);
        for (long long k = static_cast<long long>(indptr[i]); k < end; ++k) weight += static_cast<double>(data[k]);
        const bool dangling = weight == 0.0;
        scale[i] = dangling ? 0.0 : 1.0 / weight;
        is_dangling[i] = dangling ? 1 : 0;
    }
}

template <typename T, bool UNIFORM_P, bool UNIFORM_D, bool SCALED>
__global__ void __launch_bounds__(spla::SOLVER_BLOCK)
spla_pagerank_step(const T* __restrict__ y, const T* __restrict__ x_old, T* __restrict__ x_new,
                   T* __restrict__ z_next, const double* __restrict__ scale,
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
        if constexpr (SCALED) z_next[i] = static_cast<T>(static_cast<double>(xi) * scale[i]);
        v[0] += fabs(static_cast<double>(xi) - static_cast<double>(x_old[i]));
        if (is_dangling[i]) v[1] += static_cast<double>(xi);
    }
    spla::grid_sum_last_block<2>(v, partials, counter, out);
}
