// spmm_fused: the whole adaptive SpMM schedule in ONE launch (spla_spmm_fused for k <= 16,
// spla_spmm_fused_wide past it, at the end of this file).
//
// Why: the multi-launch schedule (backends/cuda/spmm_hybrid.py) issues one launch
// per plan bin and length class (6-8 on a power-law graph, plus the zeroing
// of the long rows), and launches on one stream run back to back, so every
// class pays its own tail: the launch waits for its slowest warp (a 1,000-nnz
// row walked chunk by chunk) before the next class may start. On web-Google
// (5M nnz) those tails, not bandwidth, set the time. Here every class is a
// contiguous range of thread blocks of one grid, so the classes overlap and
// the GPU drains once.
//
// Work classes (table `classes`, int64 x 4 each, sorted by first block):
//   [first_block, kind, item_offset, n_items]
//   kind = SUB in {1, 2, 4, 8, 16, 32}: items are whole rows
//          row_list[item_offset + i], SUB lanes per row;
//   kind = -32: items are row segments (seg_row, seg_begin, seg_end)
//          [item_offset + i], 32 lanes each, added into out with atomicAdd
//          (spla_spmm_init_rows, spmm_init_rows.cu, must have written beta * y_in or 0 there).
// Each block belongs to exactly one class (found by a scan of <= 8 entries,
// uniform per block). The host lists the segments and the longest rows first,
// so their blocks are dispatched first and the short rows fill in behind.
//
// Per item the math is spmm_regk's: every lane of the group walks every
// SUB-th nonzero, reads (col, val) once, multiplies it into all K columns of
// X's row `col` held in registers, then the group sums with xor shuffles.
// The 32-lane kinds (rows over 128 nonzeros, segments) spread K over their
// lanes instead where the host asks (`sliced`) and vector loads are on
// (slice_sums in spmm_common.cuh): K / W lanes share one row of X, a W-wide
// vector each, so a load reads whole rows of X and the warp's sum shuffles W
// values, not K. Not for fewer lanes a row: at SUB = 16 it costs float64's
// K = 16 instance 10 registers (80 -> 90), a third of its blocks per SM.
// X is row-major (x[j * ldx + c]; 16-/8-byte vector loads when vec_ok, the
// same rule as spmm_regk) or column-major (COLMAJOR: x[c * ldx + j]). The
// output is row-major (ldo); y_in row-major (ldy), read only when use_y_in.
#include "spmm_common.cuh"

namespace {

// This thread's work item in its class (block `local_block` of the class, SUB lanes an item): false past
// the class's last item (the SUB lanes of a group share it, so groups leave whole); else the item's row
// and that row's nonzeros, or a segment's part of them.
template <typename I, int SUB, bool SEGMENTED>
__device__ __forceinline__ bool item_range(const I* __restrict__ indptr, const I* __restrict__ row_list,
                                           const I* __restrict__ seg_row, const long long* __restrict__ seg_begin,
                                           const long long* __restrict__ seg_end, long long item_offset,
                                           long long n_items, long long local_block, long long& row,
                                           long long& begin, long long& end) {
    constexpr int ITEMS_PER_BLOCK = 256 / SUB;  // blockDim.x == 256, asserted on the host
    const long long item = local_block * ITEMS_PER_BLOCK + threadIdx.x / SUB;
    if (item >= n_items) return false;
    const long long index = item_offset + item;
    if constexpr (SEGMENTED) {
        row = static_cast<long long>(seg_row[index]);
        begin = seg_begin[index];
        end = seg_end[index];
    } else {
        row = static_cast<long long>(row_list[index]);
        begin = static_cast<long long>(indptr[row]);
        end = static_cast<long long>(indptr[row + 1]);
    }
    return true;
}

// One item with k spread over the group's lanes (slice_sums): the first copy of the
// columns writes them, lane s of it the W values from column s * W (those under k).
template <typename T, typename I, int K, int SUB, bool SEGMENTED>
__device__ __forceinline__ void sliced_item(const I* __restrict__ indices, const T* __restrict__ data,
                                            const T* __restrict__ x, long long ldx, long long k, long long row,
                                            long long begin, long long end, int lane, T alpha, T beta,
                                            const T* __restrict__ y_in, long long ldy, int use_y_in,
                                            T* __restrict__ out, long long ldo) {
    constexpr int W = spla::spmm::RowVector<T, K>::width;
    T acc[W];
    spla::spmm::slice_sums<T, I, K, SUB>(indices, data, x, ldx, k, begin, end, lane, acc);
    const long long c = static_cast<long long>(lane & (SUB - 1)) * W;
    if (c >= K || c >= k) return;  // the other copies, and slices past k
    T* o = out + row * ldo + c;
    if constexpr (SEGMENTED) {
#pragma unroll
        for (int v = 0; v < W; ++v) atomicAdd(o + v, alpha * acc[v]);
    } else {
        spla::spmm::store_scaled<T, W>(o, y_in + row * ldy + c, acc, alpha, beta, use_y_in);
    }
}

template <typename T, typename I, int K, int SUB, bool SEGMENTED, bool COLMAJOR>
__device__ __forceinline__ void fused_item(
    const I* __restrict__ indptr, const I* __restrict__ indices, const T* __restrict__ data,
    const T* __restrict__ x, long long ldx, long long k,
    const I* __restrict__ row_list, const I* __restrict__ seg_row,
    const long long* __restrict__ seg_begin, const long long* __restrict__ seg_end,
    long long item_offset, long long n_items, long long local_block, int vec_ok, int sliced,
    T alpha, T beta, const T* __restrict__ y_in, long long ldy, int use_y_in,
    T* __restrict__ out, long long ldo) {
    long long row, begin, end;
    if (!item_range<I, SUB, SEGMENTED>(indptr, row_list, seg_row, seg_begin, seg_end, item_offset, n_items,
                                       local_block, row, begin, end)) {
        return;
    }
    const int lane = threadIdx.x & (spla::WARP_SIZE - 1);
    const int sub = lane & (SUB - 1);

    constexpr int CL = K / spla::spmm::RowVector<T, K>::width;  // lanes that hold one copy of the K columns
    if constexpr (!COLMAJOR && CL > 1 && SUB == spla::WARP_SIZE) {
        if (vec_ok && sliced) {  // uniform: the call decides it
            sliced_item<T, I, K, SUB, SEGMENTED>(indices, data, x, ldx, k, row, begin, end, lane, alpha, beta,
                                                 y_in, ldy, use_y_in, out, ldo);
            return;
        }
    }

    T acc[K];
    spla::spmm::row_sums<T, I, K, SUB, COLMAJOR>(indices, data, x, ldx, k, begin, end, lane, vec_ok, acc);

    // Every lane of the group now holds the whole row sum; the writes are
    // spread over the group's lanes (vector v = c / W goes to lane v % SUB).
    T* orow = out + row * ldo;
    if constexpr (SEGMENTED) {
#pragma unroll
        for (int c = 0; c < K; ++c) {
            if (c % SUB == sub && c < k) atomicAdd(orow + c, alpha * acc[c]);
        }
    } else {
        spla::spmm::store_row_sums<T, K, SUB, COLMAJOR>(orow, y_in + row * ldy, acc, k, alpha, beta, use_y_in, lane,
                                                        vec_ok);
    }
}

// The class of this block (a scan of <= 8 table entries, uniform per block).
__device__ __forceinline__ void find_class(const long long* __restrict__ classes, int n_classes,
                                           long long& local_block, int& kind, long long& offset,
                                           long long& n_items) {
    const long long block = static_cast<long long>(blockIdx.x);
    int cls = 0;
    for (int c = 1; c < n_classes; ++c) {
        if (block >= __ldg(classes + 4 * c)) cls = c;
    }
    local_block = block - __ldg(classes + 4 * cls);
    kind = static_cast<int>(__ldg(classes + 4 * cls + 1));
    offset = __ldg(classes + 4 * cls + 2);
    n_items = __ldg(classes + 4 * cls + 3);
}

}  // namespace

constexpr int SPLA_FUSED_KIND_SEGMENT = -32;

template <typename T, typename I, int K, bool COLMAJOR>
__global__ void __launch_bounds__(256)
spla_spmm_fused(const I* __restrict__ indptr, const I* __restrict__ indices, const T* __restrict__ data,
                const T* __restrict__ x, long long ldx, long long k,
                const long long* __restrict__ classes, int n_classes,
                const I* __restrict__ row_list, const I* __restrict__ seg_row,
                const long long* __restrict__ seg_begin, const long long* __restrict__ seg_end,
                int vec_ok, int sliced, T alpha, T beta, const T* __restrict__ y_in, long long ldy,
                int use_y_in, T* __restrict__ out, long long ldo) {
    static_assert(K >= 1 && K <= 16 && (K & (K - 1)) == 0, "K (columns in registers) is a power of two <= 16");
    long long local_block, offset, n_items;
    int kind;
    find_class(classes, n_classes, local_block, kind, offset, n_items);

#define SPLA_FUSED_CASE(SUB_, SEG_)                                                                   \
    fused_item<T, I, K, SUB_, SEG_, COLMAJOR>(indptr, indices, data, x, ldx, k, row_list, seg_row,  \
                                              seg_begin, seg_end, offset, n_items, local_block,     \
                                              vec_ok, sliced, alpha, beta, y_in, ldy, use_y_in,     \
                                              out, ldo)
    switch (kind) {
        case 1: SPLA_FUSED_CASE(1, false); break;
        case 2: SPLA_FUSED_CASE(2, false); break;
        case 4: SPLA_FUSED_CASE(4, false); break;
        case 8: SPLA_FUSED_CASE(8, false); break;
        case 16: SPLA_FUSED_CASE(16, false); break;
        case 32: SPLA_FUSED_CASE(32, false); break;
        case SPLA_FUSED_KIND_SEGMENT: SPLA_FUSED_CASE(32, true); break;
        default: break;  // the host builds only the kinds above
    }
#undef SPLA_FUSED_CASE
}

// k past 16 (spla_spmm_fused_wide): the same schedule, every kind with k spread over its lanes
// (sliced_item), so no lane holds more than one W-wide vector of a row. The host's classes start at
// CL = K / W lanes a row (kinds CL..32 and segments), X is row-major with vector loads, and k <= K
// is a multiple of W; anything else runs adaptive.
template <typename T, typename I, int K, int SUB, bool SEGMENTED>
__device__ __forceinline__ void wide_item(
    const I* __restrict__ indptr, const I* __restrict__ indices, const T* __restrict__ data,
    const T* __restrict__ x, long long ldx, long long k,
    const I* __restrict__ row_list, const I* __restrict__ seg_row,
    const long long* __restrict__ seg_begin, const long long* __restrict__ seg_end,
    long long item_offset, long long n_items, long long local_block,
    T alpha, T beta, const T* __restrict__ y_in, long long ldy, int use_y_in, T* __restrict__ out, long long ldo) {
    if constexpr (SUB >= K / spla::spmm::RowVector<T, K>::width) {
        long long row, begin, end;
        if (!item_range<I, SUB, SEGMENTED>(indptr, row_list, seg_row, seg_begin, seg_end, item_offset, n_items,
                                           local_block, row, begin, end)) {
            return;
        }
        sliced_item<T, I, K, SUB, SEGMENTED>(indices, data, x, ldx, k, row, begin, end,
                                             threadIdx.x & (spla::WARP_SIZE - 1), alpha, beta, y_in, ldy, use_y_in,
                                             out, ldo);
    }
}

template <typename T, typename I, int K>
__global__ void __launch_bounds__(256)
spla_spmm_fused_wide(const I* __restrict__ indptr, const I* __restrict__ indices, const T* __restrict__ data,
                     const T* __restrict__ x, long long ldx, long long k,
                     const long long* __restrict__ classes, int n_classes,
                     const I* __restrict__ row_list, const I* __restrict__ seg_row,
                     const long long* __restrict__ seg_begin, const long long* __restrict__ seg_end,
                     T alpha, T beta, const T* __restrict__ y_in, long long ldy, int use_y_in,
                     T* __restrict__ out, long long ldo) {
    constexpr int CL = K / spla::spmm::RowVector<T, K>::width;
    static_assert(K > 16 && (K & (K - 1)) == 0 && CL <= spla::WARP_SIZE, "one vector a lane, one copy a warp");
    long long local_block, offset, n_items;
    int kind;
    find_class(classes, n_classes, local_block, kind, offset, n_items);

#define SPLA_WIDE_CASE(SUB_, SEG_)                                                                    \
    wide_item<T, I, K, SUB_, SEG_>(indptr, indices, data, x, ldx, k, row_list, seg_row, seg_begin,  \
                                   seg_end, offset, n_items, local_block, alpha, beta, y_in, ldy,   \
                                   use_y_in, out, ldo)
    switch (kind) {
        case 8: SPLA_WIDE_CASE(8, false); break;
        case 16: SPLA_WIDE_CASE(16, false); break;
        case 32: SPLA_WIDE_CASE(32, false); break;
        case SPLA_FUSED_KIND_SEGMENT: SPLA_WIDE_CASE(32, true); break;
        default: break;  // the host builds only kinds of at least CL lanes
    }
#undef SPLA_WIDE_CASE
}
