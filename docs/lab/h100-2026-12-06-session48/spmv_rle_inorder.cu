// spmv_rle: LANES threads per row of a matrix whose rows are made of runs of consecutive columns
// (dense blocks, rows of a few bands, nodes of several unknowns each; spla/planning/rle.py finds
// the runs), LANES in {2, 4, 8, 16, 32}.
//
// What changed from spmv_band.cu: a row may hold any number of runs. The column indices are
// stored run-length encoded: run j starts at entry run_start[j] in column run_col[j], so entry k of
// run j sits in column run_col[j] + (k - run_start[j]), and row r's first run is run_ptr[r]. That
// is 8 bytes a run in place of 4 a nonzero: on runs of 8, about 0.63x CSR's bytes of matrix in
// float32 and 0.75x in float64. The encoding is exact for any CSR (a run may be one entry, rows
// need not be sorted), so what auto weighs is only whether the runs are long enough to pay.
// The mapping and the order of every sum are spmv_warp.cu's, so rle:LANES gives warp:LANES's
// results bit for bit.
//
// A lane walks its row's runs as its entries pass their ends (the runs' starts are read through
// L1: every lane of a row group reads the same few). The walk is what a lane waits on, so each
// lane loads UNROLL values first, then finds their columns, then gathers x: UNROLL loads of each
// in flight a lane, as band's unrolled loop has.
//
// Rows that start on one L1 bank (float32 rows of 32, 64, ... entries: whole 128-byte lines) make
// every row of a row group ask that bank in one value load, one row a cycle: 16-way at 2 lanes.
// Where the plan says so (`rotate`: spla.planning.rle.rotates, float32 only), each row takes its
// UNROLL loads in an order rotated by its row number and puts them back in order before the sum,
// so one load spreads over UNROLL offsets and the sums, hence the bits, do not change. (float64
// keeps the plain order: the rotation's registers cost it more than its conflicts; session 48.)
//
// Constraints: as spmv_warp.cu (blockDim.x a multiple of 32, grid-stride over rows). run_start
// holds one entry more than there are runs (the last: nnz); run_ptr[r] is read only for rows with
// entries.
#include "common.cuh"

namespace {
constexpr int UNROLL = 4;
static_assert(UNROLL == 4, "the rotation's two steps turn four values");

// Moves (run, next, shift) on to the run that holds entry `at`: next is where the run after it
// starts, shift the column of an entry of the run less its position.
template <typename I>
__device__ __forceinline__ void walk_to(I at, I& run, I& next, long long& shift, const I* __restrict__ run_start,
                                        const I* __restrict__ run_col) {
    while (at >= next) {
        const I begin = next;
        ++run;
        next = run_start[run + 1];
        shift = static_cast<long long>(run_col[run]) - begin;
    }
}
}  // namespace

template <typename V, typename I, int LANES>
__global__ void spla_spmv_rle(long long n_rows, int rotate, const I* __restrict__ indptr, const I* __restrict__ run_ptr,
                              const I* __restrict__ run_start, const I* __restrict__ run_col,
                              const V* __restrict__ data, const V* __restrict__ x, V* __restrict__ y,
                              V alpha, V beta) {
    spla::row_groups<V, LANES>(n_rows, spla::StoreRow<V>{y, alpha, beta}, [&](long long row, int lane) {
        V sum = V(0);
        // the row's ends from indptr, not run_start[run_ptr[row]]: loads beside run_ptr's, not after it
        const I start = indptr[row];
        const I length = indptr[row + 1] - start;
        if (length > lane) {
            I run = run_ptr[row];
            I next = run_start[run + 1];
            long long shift = static_cast<long long>(run_col[run]) - run_start[run];
            I k = lane;
            for (; k + (UNROLL - 1) * LANES < length; k += UNROLL * LANES) {
                V v[UNROLL];
                long long column[UNROLL];
                if (false) {  // session 48, B4's baseline: the plain order whatever the plan says
                    const int turn = static_cast<int>(row) & (UNROLL - 1);
#pragma unroll
                    for (int u = 0; u < UNROLL; ++u) v[u] = data[start + k + ((u + turn) & (UNROLL - 1)) * LANES];
                    // v[u] holds entry u + turn (mod UNROLL): turn right by one, then by two
                    if (turn & 1) {
                        const V last = v[3];
                        v[3] = v[2];
                        v[2] = v[1];
                        v[1] = v[0];
                        v[0] = last;
                    }
                    if (turn & 2) {
                        V t = v[0];
                        v[0] = v[2];
                        v[2] = t;
                        t = v[1];
                        v[1] = v[3];
                        v[3] = t;
                    }
                } else {
#pragma unroll
                    for (int u = 0; u < UNROLL; ++u) v[u] = data[start + k + u * LANES];
                }
#pragma unroll
                for (int u = 0; u < UNROLL; ++u) {
                    const I at = start + k + u * LANES;
                    walk_to(at, run, next, shift, run_start, run_col);
                    column[u] = at + shift;
                }
#pragma unroll
                for (int u = 0; u < UNROLL; ++u) sum += v[u] * __ldg(x + column[u]);
            }
            for (; k < length; k += LANES) {
                const I at = start + k;
                walk_to(at, run, next, shift, run_start, run_col);
                sum += data[at] * __ldg(x + (at + shift));
            }
        }
        return sum;
    });
}
