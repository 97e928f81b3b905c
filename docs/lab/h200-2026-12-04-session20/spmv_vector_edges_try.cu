// spmv_vector_edges_try: session 20's second try of the vector kernel (issue 17), kept in the lab.
//
// What changes from kernels/spmv_vector.cu: a row's unaligned head and tail are no longer read one
// entry at a time. Each is read as the whole 16-byte pack that holds it, its neighbouring rows'
// entries masked: lane 0 takes the head pack, lane LANES - 1 the tail pack, and the packs wholly
// inside the row go round the lanes as before. A row inside one pack is one masked pack.
// (The first try masked every pack of the row: 25% slower on bimodal rows, whose long rows
// paid a mask test an entry.) Packs past the arrays' end are read an entry at a time.
#include "common.cuh"

namespace {

// PACK consecutive entries of T read as one aligned load.
template <typename T, int PACK>
struct alignas(sizeof(T) * PACK) Pack {
    T v[PACK];
};

// Entries per pack: both the value pack and the index pack must stay <= 16 B.
template <typename V, typename I>
struct PackEntries {
    static constexpr int value = (16 / sizeof(V) < 16 / sizeof(I)) ? int(16 / sizeof(V)) : int(16 / sizeof(I));
};

// Entries [lo, hi) of pack p (p * PACK <= lo < hi <= (p + 1) * PACK) times their x entries: one
// wide load of the pack where it lies wholly inside the arrays, else an entry at a time.
template <typename V, typename I, int PACK>
__device__ __forceinline__ V masked_pack(long long p, long long lo, long long hi, long long whole_packs,
                                         const I* __restrict__ indices, const V* __restrict__ data,
                                         const V* __restrict__ x) {
    V sum = V(0);
    const long long k0 = p * PACK;
    if (p < whole_packs) {
        const Pack<V, PACK> vals = reinterpret_cast<const Pack<V, PACK>*>(data)[p];
        const Pack<I, PACK> cols = reinterpret_cast<const Pack<I, PACK>*>(indices)[p];
#pragma unroll
        for (int e = 0; e < PACK; ++e) {
            if (k0 + e >= lo && k0 + e < hi) sum += vals.v[e] * __ldg(x + cols.v[e]);
        }
    } else {
        for (long long k = lo; k < hi; ++k) sum += data[k] * __ldg(x + indices[k]);
    }
    return sum;
}

}  // namespace


template <typename V, typename I, int LANES>
__global__ void spla_spmv_vector(long long n_rows, const I* __restrict__ indptr, const I* __restrict__ indices,
                                 const V* __restrict__ data, const V* __restrict__ x, V* __restrict__ y,
                                 V alpha, V beta) {
    static_assert(LANES >= 2 && LANES <= 32 && (LANES & (LANES - 1)) == 0, "LANES must be 2, 4, 8, 16 or 32");
    constexpr int PACK = PackEntries<V, I>::value;
    using ValuePack = Pack<V, PACK>;
    using IndexPack = Pack<I, PACK>;
    constexpr int GROUPS_PER_WARP = spla::WARP_SIZE / LANES;
    const int lane = threadIdx.x % LANES;
    const int group_in_warp = (threadIdx.x % spla::WARP_SIZE) / LANES;
    const long long warp = spla::global_thread_id() / spla::WARP_SIZE;
    const long long n_warps = spla::grid_threads() / spla::WARP_SIZE;
    // Packs wholly inside the arrays (data and indices start on 16-byte boundaries).
    const long long whole_packs = static_cast<long long>(indptr[n_rows]) / PACK;
    for (long long first = warp * GROUPS_PER_WARP; first < n_rows; first += n_warps * GROUPS_PER_WARP) {
        const long long row = first + group_in_warp;
        V sum = V(0);
        if (row < n_rows) {
            const I start = indptr[row];
            const I end = indptr[row + 1];
            const long long lo = start, hi = end;
            // Packs [pack_begin, pack_end) lie wholly inside the row; the pack before them holds its
            // unaligned head, the pack after them its unaligned tail.
            const long long pack_begin = (lo + PACK - 1) / PACK;
            const long long pack_end = hi / PACK;
            const bool one_pack = pack_end < pack_begin;  // inside one pack, away from both its edges
            const I body_begin = one_pack ? end : static_cast<I>(pack_begin * PACK);
            const I body_end = one_pack ? end : static_cast<I>(pack_end * PACK);
            if (one_pack) {
                if (lane == 0 && lo < hi) sum += masked_pack<V, I, PACK>(lo / PACK, lo, hi, whole_packs, indices, data, x);
            } else {
                if (lane == 0 && lo % PACK != 0)
                    sum += masked_pack<V, I, PACK>(lo / PACK, lo, pack_begin * PACK, whole_packs, indices, data, x);
                if (lane == LANES - 1 && hi % PACK != 0)
                    sum += masked_pack<V, I, PACK>(pack_end, pack_end * PACK, hi, whole_packs, indices, data, x);
            }
            const ValuePack* value_packs = reinterpret_cast<const ValuePack*>(data + body_begin);
            const IndexPack* index_packs = reinterpret_cast<const IndexPack*>(indices + body_begin);
            const I n_packs = (body_end - body_begin) / PACK;
            for (I p = lane; p < n_packs; p += LANES) {
                const ValuePack vals = value_packs[p];
                const IndexPack cols = index_packs[p];
#pragma unroll
                for (int e = 0; e < PACK; ++e) {
                    sum += vals.v[e] * __ldg(x + cols.v[e]);
                }
            }
        }
        sum = spla::warp_reduce_sum<V, LANES>(sum);
        if (lane == 0 && row < n_rows) spla::store_row(y, row, sum, alpha, beta);
    }
}
