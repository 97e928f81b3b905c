// Smoothed-aggregation AMG set-up on the GPU (launched by spla/backends/cuda/amg.py for
// spla/linalg/_amg_setup.py): the per-row passes over a level's matrix, the graph steps of the
// parallel MIS(2) aggregation, and the fused vector steps of the Lanczos spectral-radius estimate.
//
// Why raw kernels: the set-up of a hierarchy runs each of these once or a few times per level, on
// levels from millions of rows down to hundreds, so launches and host reads decide its time. A
// thread per row reads a row once and needs no per-entry row ids, no nnz-long masks or prefix
// sums, and no boolean compaction (which reads its size back to the host); the Lanczos steps keep
// every scalar on the device (single-launch deterministic reductions, solver_reduce.cuh).
//
// Rows: spla_amg_diagonal (the diagonal), spla_amg_strong_count / spla_amg_strong_fill (the
// symmetric strength graph: j != i with |a_ij| >= theta sqrt|a_ii a_jj| and above `negligible`
// of that scale; counted, then written at the prefix-summed offsets), spla_amg_jacobi_operator
// (the values of I - w D^-1 A on A's structure), spla_amg_row_count (strong neighbours in a mask).
// The host side (NumPy) computes the same values: products and quotients are rounded one at a
// time (__dmul_rn, __ddiv_rn, __dadd_rn: no contraction into FMAs), so both sides build the
// same strength graph and the same prolongation smoother bit for bit.
//
// Aggregation: every node carries one int64 key that packs (state << state_shift) | (hashed
// priority << 32) | node, so a maximum over a neighbourhood names the winning node as well as
// its state, and ties cannot happen. States: 0 out (isolated, or near a root), 1 undecided,
// 2 root. spla_amg_row_max: out[i] = max(keys[i], max over the row's columns j of keys[j]), the
// first hop of an MIS(2) round. spla_amg_mis_round: one MIS round's decision for every undecided
// node from the maximum `top` of `near` over it and its neighbours (near = keys: MIS(1); near =
// the first hop: MIS(2)): it becomes a root when it is the maximum itself, goes out when a root
// is that close, else stays undecided and sets remaining[0] (a flag the host reads every few
// rounds instead of reducing the states). spla_amg_join: a node without an aggregate joins that
// of its source neighbour of highest priority. spla_amg_priorities / spla_amg_start_vector:
// SplitMix64 hashes of the node numbers. A maximum does not depend on the order it is taken in,
// and the hash wraps around as NumPy's uint64 does: NumPy gets the same keys and aggregates.
//
// Lanczos (rho(D^-1 A) in the D inner product, which makes D^-1 A self-adjoint): with u = A v,
// alpha = u.v (spla_amg_dot), w = D^-1 u - alpha v - beta p and |w|_D^2 = sum d w^2
// (spla_amg_lanczos_orthogonalize), v' = w / |w|_D (spla_amg_lanczos_normalize). The scalars
// live in one device array, indexed by slot; beta_slot < 0 means beta = 0 (the first step).
//
// Constraints: a thread per row in a grid-stride loop (AMG levels have short rows: stencils and
// Galerkin operators); keys, top and out distinct arrays of n int64; I is the index type; the
// reductions need blockDim.x == SOLVER_BLOCK and partials of gridDim.x doubles.
#include "solver_reduce.cuh"

namespace spla {

__device__ __forceinline__ bool amg_strong(long long i, long long j, double a, const double* diagonal, double theta,
                                           double negligible) {
    if (i == j) return false;
    const double scale = sqrt(fabs(__dmul_rn(diagonal[i], diagonal[j])));
    const double magnitude = fabs(a);
    return magnitude >= __dmul_rn(theta, scale) && magnitude > __dmul_rn(negligible, scale);
}

}  // namespace spla

template <typename I>
__global__ void spla_amg_diagonal(const I* __restrict__ indptr, const I* __restrict__ indices,
                                  const double* __restrict__ data, double* __restrict__ out, long long n) {
    for (long long i = spla::global_thread_id(); i < n; i += spla::grid_threads()) {
        double d = 0.0;
        const long long end = static_cast<long long>(indptr[i + 1]);
        for (long long p = static_cast<long long>(indptr[i]); p < end; ++p) {
            if (static_cast<long long>(indices[p]) == i) d = data[p];  // canonical rows: one entry at most
        }
        out[i] = d;
    }
}

template <typename I>
__global__ void spla_amg_strong_count(const I* __restrict__ indptr, const I* __restrict__ indices,
                                      const double* __restrict__ data, const double* __restrict__ diagonal,
                                      double theta, double negligible, long long* __restrict__ counts, long long n) {
    for (long long i = spla::global_thread_id(); i < n; i += spla::grid_threads()) {
        long long count = 0;
        const long long end = static_cast<long long>(indptr[i + 1]);
        for (long long p = static_cast<long long>(indptr[i]); p < end; ++p) {
            count += spla::amg_strong(i, static_cast<long long>(indices[p]), data[p], diagonal, theta, negligible);
        }
        counts[i] = count;
    }
}

template <typename I>
__global__ void spla_amg_strong_fill(const I* __restrict__ indptr, const I* __restrict__ indices,
                                     const double* __restrict__ data, const double* __restrict__ diagonal,
                                     double theta, double negligible, const I* __restrict__ graph_indptr,
                                     I* __restrict__ graph_indices, long long n) {
    for (long long i = spla::global_thread_id(); i < n; i += spla::grid_threads()) {
        long long q = static_cast<long long>(graph_indptr[i]);
        const long long end = static_cast<long long>(indptr[i + 1]);
        for (long long p = static_cast<long long>(indptr[i]); p < end; ++p) {
            const I j = indices[p];
            if (spla::amg_strong(i, static_cast<long long>(j), data[p], diagonal, theta, negligible)) {
                graph_indices[q++] = j;
            }
        }
    }
}

template <typename I>
__global__ void spla_amg_jacobi_operator(const I* __restrict__ indptr, const I* __restrict__ indices,
                                         const double* __restrict__ data, const double* __restrict__ diagonal,
                                         double weight, double* __restrict__ out, long long n) {
    for (long long i = spla::global_thread_id(); i < n; i += spla::grid_threads()) {
        const double d = diagonal[i];
        const long long end = static_cast<long long>(indptr[i + 1]);
        for (long long p = static_cast<long long>(indptr[i]); p < end; ++p) {
            const double scaled = __dmul_rn(-weight, __ddiv_rn(data[p], d));
            out[p] = static_cast<long long>(indices[p]) == i ? __dadd_rn(scaled, 1.0) : scaled;
        }
    }
}

template <typename I>
__global__ void spla_amg_row_count(const I* __restrict__ indptr, const I* __restrict__ indices,
                                   const bool* __restrict__ mask, long long* __restrict__ out, long long n) {
    for (long long i = spla::global_thread_id(); i < n; i += spla::grid_threads()) {
        long long count = 0;
        const long long end = static_cast<long long>(indptr[i + 1]);
        for (long long p = static_cast<long long>(indptr[i]); p < end; ++p) count += mask[indices[p]];
        out[i] = count;
    }
}

template <typename I>
__global__ void spla_amg_row_max(const I* __restrict__ indptr, const I* __restrict__ indices,
                                 const long long* __restrict__ keys, long long* __restrict__ out, long long n) {
    for (long long i = spla::global_thread_id(); i < n; i += spla::grid_threads()) {
        long long best = keys[i];
        const long long end = static_cast<long long>(indptr[i + 1]);
        for (long long p = static_cast<long long>(indptr[i]); p < end; ++p) {
            const long long candidate = keys[indices[p]];
            best = candidate > best ? candidate : best;
        }
        out[i] = best;
    }
}

// One MIS round for every undecided node: top = max of `near` over the node and its neighbours
// (near = keys for MIS(1); near = spla_amg_row_max(keys) for MIS(2), the distance-2 maximum).
template <typename I>
__global__ void spla_amg_mis_round(const I* __restrict__ indptr, const I* __restrict__ indices,
                                   const long long* __restrict__ keys, const long long* __restrict__ near,
                                   long long* __restrict__ out, int* __restrict__ remaining, int state_shift,
                                   long long n) {
    const long long priority_mask = (1LL << state_shift) - 1;
    for (long long i = spla::global_thread_id(); i < n; i += spla::grid_threads()) {
        const long long key = keys[i];
        long long state = key >> state_shift;
        if (state == 1) {
            long long top = near[i];
            const long long end = static_cast<long long>(indptr[i + 1]);
            for (long long p = static_cast<long long>(indptr[i]); p < end; ++p) {
                const long long candidate = near[indices[p]];
                top = candidate > top ? candidate : top;
            }
            if (top == key) {
                state = 2;
            } else if ((top >> state_shift) == 2) {
                state = 0;
            } else {
                remaining[0] = 1;
            }
        }
        out[i] = (state << state_shift) | (key & priority_mask);
    }
}

// Each node without an aggregate (owner < 0) that has a neighbour among `sources` joins the
// aggregate of the one of highest priority: out[i] = owner[j]; others keep owner[i].
template <typename I>
__global__ void spla_amg_join(const I* __restrict__ indptr, const I* __restrict__ indices,
                              const long long* __restrict__ owner, const long long* __restrict__ priorities,
                              const bool* __restrict__ sources, long long* __restrict__ out, long long n) {
    for (long long i = spla::global_thread_id(); i < n; i += spla::grid_threads()) {
        long long own = owner[i];
        if (own < 0) {
            long long best = -1;
            const long long end = static_cast<long long>(indptr[i + 1]);
            for (long long p = static_cast<long long>(indptr[i]); p < end; ++p) {
                const long long j = static_cast<long long>(indices[p]);
                if (sources[j] && priorities[j] > best) {
                    best = priorities[j];
                    own = owner[j];
                }
            }
        }
        out[i] = own;
    }
}

// SplitMix64's finaliser of i + offset: the hashed priorities (28 bits << 32 | node) and the
// Lanczos start vector (53 bits scaled to [-1, 1)), as NumPy computes them (uint64 wrap-around).
__device__ __forceinline__ unsigned long long spla_amg_mix(unsigned long long x) {
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ULL;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

__global__ void spla_amg_priorities(long long* __restrict__ out, long long n, unsigned long long offset) {
    for (long long i = spla::global_thread_id(); i < n; i += spla::grid_threads()) {
        const unsigned long long h = spla_amg_mix(static_cast<unsigned long long>(i) + offset);
        out[i] = (static_cast<long long>(h >> 36) << 32) | i;
    }
}

__global__ void spla_amg_start_vector(double* __restrict__ out, long long n, unsigned long long offset) {
    for (long long i = spla::global_thread_id(); i < n; i += spla::grid_threads()) {
        const unsigned long long h = spla_amg_mix(static_cast<unsigned long long>(i) + offset);
        out[i] = static_cast<double>(h >> 11) * 0x1p-52 - 1.0;
    }
}

// scalars[slot] = sum(a * b), or sum(a * b * weight) when WEIGHTED
template <bool WEIGHTED>
__global__ void __launch_bounds__(spla::SOLVER_BLOCK)
spla_amg_dot(const double* __restrict__ a, const double* __restrict__ b, const double* __restrict__ weight,
             long long n, double* partials, unsigned* counter, double* scalars, int slot) {
    double v[1] = {0.0};
    for (long long i = spla::global_thread_id(); i < n; i += spla::grid_threads()) {
        const double ab = a[i] * b[i];
        v[0] += WEIGHTED ? ab * weight[i] : ab;
    }
    spla::grid_sum_last_block<1>(v, partials, counter, scalars + slot);
}

__global__ void __launch_bounds__(spla::SOLVER_BLOCK)
spla_amg_lanczos_orthogonalize(const double* __restrict__ u, const double* __restrict__ dinv,
                               const double* __restrict__ d, const double* __restrict__ v,
                               const double* __restrict__ p, double* __restrict__ w, long long n, double* partials,
                               unsigned* counter, double* scalars, int alpha_slot, int beta_slot, int out_slot) {
    const double alpha = scalars[alpha_slot];
    const double beta = beta_slot >= 0 ? sqrt(scalars[beta_slot]) : 0.0;
    double sum[1] = {0.0};
    for (long long i = spla::global_thread_id(); i < n; i += spla::grid_threads()) {
        const double wi = u[i] * dinv[i] - alpha * v[i] - beta * p[i];
        w[i] = wi;
        sum[0] += d[i] * wi * wi;
    }
    spla::grid_sum_last_block<1>(sum, partials, counter, scalars + out_slot);
}

__global__ void spla_amg_lanczos_normalize(const double* __restrict__ w, double* __restrict__ v, long long n,
                                           const double* __restrict__ scalars, int slot) {
    const double scale = 1.0 / sqrt(scalars[slot]);
    for (long long i = spla::global_thread_id(); i < n; i += spla::grid_threads()) v[i] = w[i] * scale;
}

// Row-length statistics of one CSR structure for the SpMV planner, one pass: out[0] += the sum of
// the lengths, out[1] += the sum of their squares, out[2] = max(out[2], the longest), out[3] +=
// the empty rows. Integer sums are exact, so the host forms the standard deviation without
// cancellation. out is zeroed before; a warp's totals go in with one atomic each.
template <typename I>
__global__ void spla_amg_row_summary(const I* __restrict__ indptr, long long n, unsigned long long* __restrict__ out) {
    unsigned long long total = 0, squares = 0, longest = 0, empty = 0;
    for (long long i = spla::global_thread_id(); i < n; i += spla::grid_threads()) {
        const auto length = static_cast<unsigned long long>(indptr[i + 1] - indptr[i]);
        total += length;
        squares += length * length;
        longest = length > longest ? length : longest;
        empty += length == 0;
    }
    for (int offset = spla::WARP_SIZE / 2; offset > 0; offset /= 2) {
        total += __shfl_down_sync(spla::FULL_MASK, total, offset);
        squares += __shfl_down_sync(spla::FULL_MASK, squares, offset);
        const unsigned long long other = __shfl_down_sync(spla::FULL_MASK, longest, offset);
        longest = other > longest ? other : longest;
        empty += __shfl_down_sync(spla::FULL_MASK, empty, offset);
    }
    if ((threadIdx.x & (spla::WARP_SIZE - 1)) == 0) {
        atomicAdd(out, total);
        atomicAdd(out + 1, squares);
        atomicMax(out + 2, longest);
        atomicAdd(out + 3, empty);
    }
}
