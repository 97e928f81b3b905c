// spmv_segmented: fixed-size nonzero tiles, one warp each, a segmented warp scan (step 6).
//
// What changed from spmv_adaptive2.cu: no bins of whole rows. The nonzeros are
// cut into tiles of TILE = 32 * K consecutive entries, whatever rows they
// belong to, and warp t takes tile t, so every warp does the same work however
// the row lengths fall. On the 16M-row power law (rows of ~8 nnz, web-like
// columns) adaptive2's per-block chain (descriptor -> indptr -> values -> x ->
// barrier -> sum) left too few loads in flight: 0.74x cuSPARSE. Here a lane's
// loads depend only on its tile number: K values and K column indices, then K
// independent x gathers, all in flight at once.
//
// Loads are striped: lane l takes entries base + 32 j + l, so each load
// instruction reads 32 consecutive entries, and the x gathers of neighbouring
// columns in one row fall into one instruction and share L2 sectors (on the
// power law: 4% faster in float32 and 8% in float64 than 16-byte packs of K
// consecutive entries per lane, BENCHMARKS.md round 4). The sums want the
// blocked order (lane l adds entries l K .. l K + K - 1), so the products go
// through shared memory, padded so both orders are free of bank conflicts.
//
// Rows and tiles:
//  * tile t "owns" the rows that start in it, tile_rows[t] .. tile_rows[t+1]-1
//    (spla/plan.py, segmented_tile_rows; the last tile also owns trailing empty
//    rows). The warp marks, in shared memory, the tile position where each row
//    ending in the tile ends; a lane then adds its K products left to right,
//    finishing a row at each mark, and a segmented scan over the lanes carries
//    the open sum of each lane into the first row its right neighbours finish.
//  * a row cut by one tile edge is finished by its owner, which reads the
//    entries that spill into the next tile (most cut rows are short: a few
//    extra loads, no fence). A row touching three or more tiles leaves one
//    partial sum in each: the owner's in tail_partials[owner], every later
//    tile's in head_partials[tile]. Each tile bumps counters[owner] after
//    storing its partial (a fence and an atomic); the tile that brings the
//    count to the number of tiles the row touches adds the partials in tile
//    order and writes y. No float atomics: the sum's order is fixed, so
//    every call gives the same bits.
//  * empty rows are written (alpha * 0 + beta * y) by their owner.
//
// Constraints (checked by spla/backend/spmv_cuda.py):
//   blockDim.x == SEGMENTED_THREADS; a tile owns fewer than 2^31 rows (marks
//   are int offsets from the tile's first row); counters start at zero and each
//   finishing tile resets its own (one stream at a time per matrix, as
//   spmv_adaptive2's split rows). Shared memory per block: 8 warps x TILE x
//   (4 + sizeof(V)) bytes plus padding, 16.6 KiB at float32 K = 8; float64
//   K = 16 would need 50 KiB, over the 48 KiB of static shared memory, and is
//   not instantiated. A tile that owns many empty rows walks them 32 at a time:
//   a matrix of mostly empty rows is better served by adaptive2.
#include "common.cuh"

constexpr int SEGMENTED_THREADS = 256;
constexpr int SEGMENTED_WARPS = SEGMENTED_THREADS / spla::WARP_SIZE;
// Rounds of 32 rows whose offsets a warp loads at once while marking row ends.
constexpr int WALK = 4;

// Blocks an SM must hold, so the compiler keeps registers to what fits: 5 (48
// registers a thread) where a lane's K values take 32 bytes, 4 (64) where they
// take 64; under 48, float64 K = 8 spilled hundreds of bytes.
template <typename V, int K>
constexpr int segmented_min_blocks() {
    static_assert(K * sizeof(V) <= 64, "a lane's K values take at most 64 bytes (shared memory, registers)");
    return K * sizeof(V) <= 32 ? 5 : 4;
}

template <typename V, typename I, int K>
__global__ void __launch_bounds__(SEGMENTED_THREADS, segmented_min_blocks<V, K>())
spla_spmv_segmented(long long n_tiles, long long nnz, const long long* __restrict__ tile_rows,
                    const I* __restrict__ indptr, const I* __restrict__ indices, const V* __restrict__ data,
                    const V* __restrict__ x, V* __restrict__ y, V alpha, V beta,
                    V* head_partials, V* tail_partials, unsigned int* counters) {
    constexpr int TILE = spla::WARP_SIZE * K;
    // one V of padding every PAD entries: the striped stores (32 j + lane) and the
    // blocked reads (lane K + j) then both touch 32 distinct banks
    constexpr int PAD = 128 / sizeof(V);
    __shared__ V products[SEGMENTED_WARPS][TILE + TILE / PAD];
    __shared__ int ends_here[SEGMENTED_WARPS][TILE];  // row ending at each position - row_base, or -1
    const int lane = threadIdx.x & (spla::WARP_SIZE - 1);
    const int warp = threadIdx.x / spla::WARP_SIZE;
    int* row_at = ends_here[warp];
    V* product = products[warp];

    // Store this tile's partial of `row` (owner tile t0, last tile t1) and, if
    // it is the last of the row's partials to arrive, add them all and write y.
    // Called by the whole warp with the same arguments.
    auto arrive = [&](long long row, V partial, V* slot, long long t0, long long t1) {
        int last = 0;
        if (lane == 0) {
            *slot = partial;
            __threadfence();  // the partial is visible before the counter says so
            last = atomicAdd(counters + t0, 1u) == static_cast<unsigned>(t1 - t0);
        }
        if (!__shfl_sync(spla::FULL_MASK, last, 0)) return;
        __threadfence();
        V sum = V(0);
        for (long long u = t0 + 1 + lane; u <= t1; u += spla::WARP_SIZE) sum += __ldcg(head_partials + u);
        sum = spla::warp_reduce_sum<V>(sum);
        if (lane == 0) {
            spla::store_row(y, row, __ldcg(tail_partials + t0) + sum, alpha, beta);
            counters[t0] = 0u;  // ready for the next launch
        }
    };

    const long long warps = static_cast<long long>(gridDim.x) * SEGMENTED_WARPS;
    for (long long t = static_cast<long long>(blockIdx.x) * SEGMENTED_WARPS + warp; t < n_tiles; t += warps) {
        const long long base = t * TILE;

        // 1. issue this lane's loads: the tile's row range, K values and K column
        //    indices, then the K x gathers; nothing waits for them until step 3, so
        //    the row marks below are found while the gathers are in flight
        const long long r_lo = tile_rows[t];
        const long long r_hi = tile_rows[t + 1];
        const long long row_base = r_lo > 0 ? r_lo - 1 : 0;  // marks hold row - row_base
        V value[K], gathered[K];
        if (base + TILE <= nnz) {
            I column[K];
#pragma unroll
            for (int j = 0; j < K; ++j) {
                // read once: evict first, so x keeps its place in L2
                value[j] = __ldcs(data + base + j * spla::WARP_SIZE + lane);
                column[j] = __ldcs(indices + base + j * spla::WARP_SIZE + lane);
            }
#pragma unroll
            for (int j = 0; j < K; ++j) gathered[j] = __ldg(x + column[j]);
        } else {  // the last tile: entries past nnz count as zero
#pragma unroll
            for (int j = 0; j < K; ++j) {
                const long long k = base + j * spla::WARP_SIZE + lane;
                value[j] = k < nnz ? data[k] : V(0);
                gathered[j] = k < nnz ? __ldg(x + indices[k]) : V(0);
            }
        }

        // 2. mark where rows end in this tile: the owned rows and the one running in from the left.
        //    WALK rounds of 32 rows load their offsets before any is used, so a tile of
        //    short rows waits for indptr once, not once per 32 rows
#pragma unroll
        for (int j = 0; j < K; ++j) row_at[lane * K + j] = -1;
        __syncwarp();
        for (long long r0 = row_base + lane; r0 < r_hi; r0 += WALK * spla::WARP_SIZE) {
            I start[WALK], end[WALK];
#pragma unroll
            for (int u = 0; u < WALK; ++u) {
                const long long r = r0 + u * spla::WARP_SIZE;
                start[u] = r < r_hi ? indptr[r] : I(0);
                end[u] = r < r_hi ? indptr[r + 1] : I(0);
            }
#pragma unroll
            for (int u = 0; u < WALK; ++u) {
                const long long r = r0 + u * spla::WARP_SIZE;
                const long long last = static_cast<long long>(end[u]) - 1 - base;
                if (end[u] > start[u]) {
                    if (last >= 0 && last < TILE) row_at[last] = static_cast<int>(r - row_base);
                } else if (r >= r_lo && r < r_hi) {
                    spla::store_row(y, r, V(0), alpha, beta);
                }
            }
        }
        __syncwarp();

        // 3. lane-local sums over the blocked order (the products go from striped to
        //    blocked through shared memory): a row that ends at a lane's second or later
        //    mark lies wholly in that lane; the first mark's row may have begun to the left
#pragma unroll
        for (int j = 0; j < K; ++j) {
            const int p = j * spla::WARP_SIZE + lane;
            product[p + p / PAD] = value[j] * gathered[j];
        }
        __syncwarp();
        V open = V(0), first_sum = V(0);
        long long first_row = -1;
#pragma unroll
        for (int j = 0; j < K; ++j) {
            const int p = lane * K + j;
            open += product[p + p / PAD];
            const int mark = row_at[p];
            if (mark >= 0) {
                const long long row = row_base + mark;
                if (first_row < 0) {
                    first_sum = open;
                    first_row = row;
                } else {
                    spla::store_row(y, row, open, alpha, beta);
                }
                open = V(0);
            }
        }
        const int has_mark = first_row >= 0;
        const bool runs_on = row_at[TILE - 1] < 0 && base + TILE <= nnz;  // a row runs on past the tile
        __syncwarp();  // row_at and product are rewritten by the next tile

        // 4. segmented inclusive scan of the open sums; a marked lane starts a segment
        V scan = open;
        int segment = has_mark;
#pragma unroll
        for (int d = 1; d < spla::WARP_SIZE; d *= 2) {
            const V up = __shfl_up_sync(spla::FULL_MASK, scan, d);
            const int up_segment = __shfl_up_sync(spla::FULL_MASK, segment, d);
            if (lane >= d && !segment) {
                scan += up;
                segment = up_segment;
            }
        }
        V carry = __shfl_up_sync(spla::FULL_MASK, scan, 1);
        if (lane == 0) carry = V(0);
        const V tile_open = __shfl_sync(spla::FULL_MASK, scan, spla::WARP_SIZE - 1);  // after the last mark

        // 5. finish rows. A row cut by one tile edge (the common case: a short row
        //    across the edge) is finished by its owner, which reads the entries that
        //    spill into the next tile; the next tile drops its piece. Rows that touch
        //    three or more tiles go through arrive().
        const bool has_head = r_lo > 0 && indptr[r_lo] > base;  // row r_lo - 1 runs into this tile
        const unsigned marked = __ballot_sync(spla::FULL_MASK, has_mark);
        const int first_marked = __ffs(marked) - 1;
        if (has_mark && !(has_head && lane == first_marked)) {
            spla::store_row(y, first_row, first_sum + carry, alpha, beta);
        }
        if (base >= nnz) continue;  // the one tile of a matrix with no nonzeros
        if (has_head) {
            const long long row = r_lo - 1;
            const long long t0 = static_cast<long long>(indptr[row]) / TILE;
            const long long t1 = (static_cast<long long>(indptr[r_lo]) - 1) / TILE;
            if (t1 - t0 > 1) {
                const V head = marked ? __shfl_sync(spla::FULL_MASK, first_sum + carry, first_marked) : tile_open;
                arrive(row, head, head_partials + t, t0, t1);
            }
        }
        // the row running on past the tile started in it (not the head row crossing it whole)
        if (runs_on && (marked != 0 || !has_head)) {
            const long long row = r_hi - 1;
            const long long stop = indptr[r_hi];
            const long long t1 = (stop - 1) / TILE;
            if (t1 == t + 1) {
                V rest = V(0);
#pragma unroll 1
                for (long long k = base + TILE + lane; k < stop; k += spla::WARP_SIZE) {
                    rest += data[k] * __ldg(x + indices[k]);
                }
                rest = spla::warp_reduce_sum<V>(rest);
                if (lane == 0) spla::store_row(y, row, tile_open + rest, alpha, beta);
            } else {
                arrive(row, tile_open, tail_partials + t, t, t1);
            }
        }
    }
}
