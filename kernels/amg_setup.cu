// Smoothed-aggregation AMG set-up on the GPU (launched by spla/backends/cuda/amg.py for
// spla/linalg/_amg_setup.py): the graph steps of the parallel MIS(2) aggregation.
//
// Every node carries one int64 key that packs (state << state_shift) | (hashed priority << 32)
// | node, so a maximum over a neighbourhood names the winning node as well as its state, and
// ties cannot happen. States: 0 out (isolated, or within distance 2 of a root), 1 undecided,
// 2 root.
//
// spla_amg_row_max: out[i] = max(keys[i], max over the row's columns j of keys[j]) for the
// strength graph held as CSR (indptr, indices). Two launches give the distance-2 maximum of an
// MIS(2) round, one launch the aggregate an unassigned node joins. A thread per row in a
// grid-stride loop: strength graphs have short rows (stencils, Galerkin operators). The host
// (NumPy's maximum.reduceat) gets the same keys bit for bit: a maximum does not depend on the
// order it is taken in.
//
// spla_amg_mis2_update: one MIS(2) round's decision for every undecided node, from its key and
// the distance-2 maximum `top`: it becomes a root when it is the maximum itself, goes out when
// a root is within distance 2, else stays undecided and sets remaining[0] (a flag the host reads
// every few rounds instead of reducing the states each round).
// Constraints: keys, top and out are distinct arrays of n int64; I is the graph's index type.
#include "common.cuh"

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

__global__ void spla_amg_mis2_update(const long long* __restrict__ keys, const long long* __restrict__ top,
                                     long long* __restrict__ out, int* __restrict__ remaining, long long n,
                                     int state_shift) {
    const long long priority_mask = (1LL << state_shift) - 1;
    for (long long i = spla::global_thread_id(); i < n; i += spla::grid_threads()) {
        const long long key = keys[i];
        long long state = key >> state_shift;
        if (state == 1) {
            const long long best = top[i];
            if (best == key) {
                state = 2;
            } else if ((best >> state_shift) == 2) {
                state = 0;
            } else {
                remaining[0] = 1;
            }
        }
        out[i] = (state << state_shift) | (key & priority_mask);
    }
}
