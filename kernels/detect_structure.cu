// The passes that find dia's and band's structure in a device CSR matrix (launched by
// spla/backends/cuda/detect.py for spla/csr_passes.py, which planning/dia.py and band.py call;
// the NumPy passes there are the reference). Each is one launch whose counts the caller reads back
// once: CuPy's array operations took a dozen launches and three host reads for the same answers
// (session 32: 1.74 ms to find the diagonals of a 300k-row tridiagonal matrix on the H200).
//
// spla_dia_sample: the diagonal (column - row) of each sampled entry; a thread an entry, its row
// found by a binary search of indptr.
// spla_dia_check: a thread a row (grid-stride). Each entry's diagonal is looked up among the
// sorted candidates (at most SPLA_MAX_DIAGONALS, in shared memory); an entry on candidate d stores
// its value at values[d * stride + row], one that is on none is counted and its diagonal kept in
// missed[] (the first `capacity` of them). Also counted: stored zeros, and rows whose columns do
// not strictly increase (not canonical). counts = {missed, zeros, rows not canonical}.
// spla_band_first: a thread a row (grid-stride): the row's first column (0 for an empty row), and
// whether its last column is first + length - 1 (counts[0]: rows with entries where it is not).
// spla_palette_codes: a thread a value (grid-stride; dia's slots or a CSR matrix's values,
// spla/planning/palette.py): its code is the place of its bit pattern in the sorted table (at most
// SPLA_PALETTE_VALUES + 1 patterns, the first 0, in shared memory), so a zero (dia: no entry) is 0.
// A value off the table gets code 0 as well; it is counted and its bits kept in missed[] (the first
// `capacity`), a warp's misses with one atomic. counts = {missed}.
//
// Constraints: indptr non-decreasing from 0 to nnz; counts zeroed by the caller (atomics); the
// candidates sorted and at most SPLA_MAX_DIAGONALS, the palette's table sorted (as unsigned bits),
// 0 first, at most SPLA_PALETTE_VALUES + 1 patterns; blockDim.x a multiple of 32 (the counts are
// summed a warp at a time, every lane taking part).
#include "common.cuh"
#include "launch_config.cuh"  // SPLA_MAX_DIAGONALS and SPLA_PALETTE_VALUES, as the host passes them

namespace {

// The row holding entry p < nnz: the r with indptr[r] <= p < indptr[r + 1] (empty rows skipped).
template <typename I>
__device__ long long row_of_entry(const I* __restrict__ indptr, long long n_rows, long long p) {
    long long lo = 0;       // indptr[lo] <= p
    long long hi = n_rows;  // p < indptr[hi] = nnz
    while (hi - lo > 1) {
        const long long mid = lo + (hi - lo) / 2;
        if (static_cast<long long>(indptr[mid]) <= p) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return lo;
}

// The place of the first of sorted[0 .. n) that is not below key (n where all are): a binary search.
template <typename T>
__device__ __forceinline__ int first_not_below(const T* sorted, int n, T key) {
    int lo = 0;
    int hi = n;
    while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if (sorted[mid] < key) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

// Lane 0 of each warp adds the warp's total of v into *total.
__device__ __forceinline__ void add_warp_total(unsigned long long v, unsigned long long* total) {
    v = spla::warp_reduce_sum<unsigned long long>(v);
    if ((threadIdx.x & (spla::WARP_SIZE - 1)) == 0 && v != 0) {
        atomicAdd(total, v);
    }
}

// The unsigned type of a value's bits: a palette tells values apart by their bits (-0.0 is not 0.0).
template <int BYTES>
struct BitsOf;
template <>
struct BitsOf<4> {
    using type = unsigned int;
};
template <>
struct BitsOf<8> {
    using type = unsigned long long;
};

}  // namespace

template <typename I>
__global__ void spla_dia_sample(const I* __restrict__ indptr, const I* __restrict__ indices, long long n_rows,
                                const long long* __restrict__ positions, long long n_sample,
                                long long* __restrict__ diagonals) {
    const long long i = spla::global_thread_id();
    if (i < n_sample) {
        const long long p = positions[i];
        diagonals[i] = static_cast<long long>(indices[p]) - row_of_entry(indptr, n_rows, p);
    }
}

template <typename V, typename I>
__global__ void spla_dia_check(const I* __restrict__ indptr, const I* __restrict__ indices, const V* __restrict__ data,
                               long long n_rows, const long long* __restrict__ candidates, int n_candidates,
                               V* __restrict__ values, long long stride, long long* __restrict__ missed,
                               long long capacity, unsigned long long* __restrict__ counts) {
    __shared__ long long diagonals[SPLA_MAX_DIAGONALS];
    for (int d = threadIdx.x; d < n_candidates; d += blockDim.x) {
        diagonals[d] = candidates[d];
    }
    __syncthreads();
    unsigned long long zeros = 0;
    unsigned long long unordered = 0;
    for (long long row = spla::global_thread_id(); row < n_rows; row += spla::grid_threads()) {
        const long long start = indptr[row];
        const long long end = indptr[row + 1];
        long long previous = 0;
        bool ordered = true;
        for (long long k = start; k < end; ++k) {
            const long long column = indices[k];
            ordered = ordered && (k == start || column > previous);
            previous = column;
            const V value = data[k];
            zeros += value == V(0);
            const long long diagonal = column - row;
            const int lo = first_not_below(diagonals, n_candidates, diagonal);
            if (lo < n_candidates && diagonals[lo] == diagonal) {
                values[lo * stride + row] = value;
            } else {
                const unsigned long long slot = atomicAdd(counts, 1ull);
                if (slot < static_cast<unsigned long long>(capacity)) {
                    missed[slot] = diagonal;
                }
            }
        }
        unordered += !ordered;
    }
    add_warp_total(zeros, counts + 1);
    add_warp_total(unordered, counts + 2);
}

template <typename I>
__global__ void spla_band_first(const I* __restrict__ indptr, const I* __restrict__ indices, long long n_rows,
                                I* __restrict__ first, unsigned long long* __restrict__ counts) {
    unsigned long long broken = 0;
    for (long long row = spla::global_thread_id(); row < n_rows; row += spla::grid_threads()) {
        const long long start = indptr[row];
        const long long end = indptr[row + 1];
        I column = 0;
        if (end > start) {
            column = indices[start];
            broken += static_cast<long long>(indices[end - 1]) - column != end - start - 1;
        }
        first[row] = column;
    }
    add_warp_total(broken, counts);
}

template <typename V>
__global__ void spla_palette_codes(const V* __restrict__ values, long long n, const V* __restrict__ table,
                                   int n_table, unsigned char* __restrict__ codes, V* __restrict__ missed,
                                   long long capacity, unsigned long long* __restrict__ counts) {
    using U = typename BitsOf<sizeof(V)>::type;
    const U* bits = reinterpret_cast<const U*>(values);
    __shared__ U patterns[SPLA_PALETTE_TABLE];
    spla::copy_palette(patterns, reinterpret_cast<const U*>(table), n_table);  // as bits: -0.0 is not 0.0
    const int lane = threadIdx.x & (spla::WARP_SIZE - 1);
    // the warp's lanes step together (i - lane is the warp's first value), so a step's misses are one ballot
    for (long long i = spla::global_thread_id(); i - lane < n; i += spla::grid_threads()) {
        const U b = i < n ? bits[i] : U(0);
        const int lo = first_not_below(patterns, n_table, b);
        const bool miss = lo == n_table || patterns[lo] != b;
        if (i < n) {
            codes[i] = miss ? static_cast<unsigned char>(0) : static_cast<unsigned char>(lo);
        }
        const unsigned misses = __ballot_sync(spla::FULL_MASK, miss);
        if (misses == 0u) {
            continue;
        }
        const int leader = __ffs(misses) - 1;
        unsigned long long first = 0;
        if (lane == leader) {
            first = atomicAdd(counts, static_cast<unsigned long long>(__popc(misses)));
        }
        first = __shfl_sync(spla::FULL_MASK, first, leader);
        const unsigned long long slot = first + __popc(misses & ((1u << lane) - 1u));
        if (miss && slot < static_cast<unsigned long long>(capacity)) {
            reinterpret_cast<U*>(missed)[slot] = b;
        }
    }
}
