// spmv_vector_masked_try: session 20's try of the vector kernel (issue 17), kept in the lab.
//
// What changes from kernels/spmv_vector.cu: a row's unaligned head and tail are no longer read one
// entry at a time. Its lanes walk every 16-byte pack the row touches, from the pack holding its
// first entry to the one holding its last, and skip the entries of neighbouring rows (masked).
// A row of 10 float32 entries starting at offset 3 touches three packs: three wide loads on
// three lanes, where the committed kernel reads a 1-entry head and a 1-entry tail apart from
// its two packs. The neighbours' entries come from sectors the warp reads anyway.
// Packs past the arrays' end (the last row's last pack) are read an entry at a time.
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
    const ValuePack* value_packs = reinterpret_cast<const ValuePack*>(data);
    const IndexPack* index_packs = reinterpret_cast<const IndexPack*>(indices);
    for (long long first = warp * GROUPS_PER_WARP; first < n_rows; first += n_warps * GROUPS_PER_WARP) {
        const long long row = first + group_in_warp;
        V sum = V(0);
        if (row < n_rows) {
            const I start = indptr[row];
            const I end = indptr[row + 1];
            // Packs [first_pack, end_pack) hold the row; entries outside [start, end) are masked.
            const long long first_pack = static_cast<long long>(start) / PACK;
            const long long end_pack = (static_cast<long long>(end) + PACK - 1) / PACK;
            for (long long p = first_pack + lane; p < end_pack; p += LANES) {
                const long long k0 = p * PACK;
                if (p < whole_packs) {
                    const ValuePack vals = value_packs[p];
                    const IndexPack cols = index_packs[p];
#pragma unroll
                    for (int e = 0; e < PACK; ++e) {
                        if (k0 + e >= start && k0 + e < end) sum += vals.v[e] * __ldg(x + cols.v[e]);
                    }
                } else {
                    for (long long k = k0 > start ? k0 : start; k < k0 + PACK && k < end; ++k) {
                        sum += data[k] * __ldg(x + indices[k]);
                    }
                }
            }
        }
        sum = spla::warp_reduce_sum<V, LANES>(sum);
        if (lane == 0 && row < n_rows) spla::store_row(y, row, sum, alpha, beta);
    }
}
