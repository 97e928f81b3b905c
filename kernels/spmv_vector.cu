// spmv_vector: LANES threads per row, each loading 16-byte packs (step 3).
//
// What changed from spmv_warp.cu: the body of every row is read as aligned
// 16-byte packs of values and of column indices (float4 + int4 for
// float/int32, double2 + int2 for double/int32, float2/double2 + longlong2
// for int64 indices), so a lane issues one wide load where spmv_warp issues
// 2-4 narrow ones and keeps several x gathers in flight.
// Rows start anywhere, so each row is cut in three: an unaligned head
// (fewer than PACK entries, up to the first pack boundary), the aligned
// packs, and a tail after the last full pack; head and tail are read one
// entry at a time. Rows shorter than a pack are all head.
//
// Constraints: data and indices must start on a 16-byte boundary (checked on
// the host; CuPy allocations are 256-byte aligned, slices may not be);
// blockDim.x a multiple of 32 (full-mask shuffles, loop uniform per warp);
// grid-stride loop, so any grid covers any n_rows.
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
    constexpr int PACK = PackEntries<V, I>::value;
    using ValuePack = Pack<V, PACK>;
    using IndexPack = Pack<I, PACK>;
    spla::row_groups<V, LANES>(n_rows, spla::StoreRow<V>{y, alpha, beta}, [&](long long row, int lane) {
        V sum = V(0);
        const I start = indptr[row];
        const I end = indptr[row + 1];
        // [start, body_begin): head; [body_begin, body_end): packs; [body_end, end): tail.
        // Rounded in 64 bits: start + PACK - 1 may pass INT_MAX for int32 offsets.
        const long long up = (static_cast<long long>(start) + PACK - 1) / PACK * PACK;
        const I body_begin = up < end ? static_cast<I>(up) : end;
        I body_end = end / PACK * PACK;
        if (body_end < body_begin) body_end = body_begin;
        // Head and tail together hold fewer than 2 * PACK <= 8 entries: one per lane.
        const I head = body_begin - start;
        const I edge = head + (end - body_end);
        for (I k = lane; k < edge; k += LANES) {
            const I j = k < head ? start + k : body_end + (k - head);
            sum += data[j] * __ldg(x + indices[j]);
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
        return sum;
    });
}
