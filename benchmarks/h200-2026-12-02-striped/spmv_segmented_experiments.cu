// spmv_segmented: fixed-size nonzero tiles, one warp each, a segmented warp scan (step 6).
//
// What changed from spmv_adaptive2.cu: no bins of whole rows. The nonzeros are
// cut into tiles of TILE = 32 * K consecutive entries, whatever rows they
// belong to, and warp t takes tile t, so every warp does the same work however
// the row lengths fall. On the 16M-row power law (rows of ~8 nnz, random
// columns) adaptive2's per-block chain (descriptor -> indptr -> values -> x ->
// barrier -> sum) left too few loads in flight: 0.74x cuSPARSE. Here a lane's
// loads depend only on its tile number: K values and K column indices as
// 16-byte packs, then K independent x gathers, all in flight at once; the K
// products stay in registers (no shared-memory stage, no block barrier).
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
//   blockDim.x == SEGMENTED_THREADS; data and indices start on 16-byte
//   boundaries (16-byte packs at offsets that are multiples of K entries);
//   counters start at zero and each finishing tile resets its own (one stream
//   at a time per matrix, as spmv_adaptive2's split rows). Shared memory:
//   TILE row ids per warp (8 KiB per block at K = 8, int32). A tile that owns
//   many empty rows walks them 32 at a time: a matrix of mostly empty rows is
//   better served by adaptive2.
#include "common.cuh"

#ifndef SEG_THREADS
#define SEG_THREADS 256
#endif
constexpr int SEGMENTED_THREADS = SEG_THREADS;
constexpr int SEGMENTED_WARPS = SEGMENTED_THREADS / spla::WARP_SIZE;
// Rounds of 32 rows whose offsets a warp loads at once while marking row ends.
constexpr int WALK = 4;

#ifndef SEG_STRIPED
#define SEG_STRIPED 0
#endif
#ifndef SEG_X_HINT
#define SEG_X_HINT 0
#endif
#ifndef SEG_CHUNKED
#define SEG_CHUNKED 0
#endif
#ifndef SEG_COALESCED_Y
#define SEG_COALESCED_Y 0
#endif
#if SEG_COALESCED_Y && !SEG_STRIPED
#error "SEG_COALESCED_Y keeps row sums in the striped kernel's shared stage"
#endif
#ifndef SEG_META_STREAM
#define SEG_META_STREAM 0
#endif

namespace {

// K consecutive entries from p (16-byte aligned) as 16-byte packs.
template <typename T, int K>
__device__ __forceinline__ void load_packs(const T* __restrict__ p, T (&out)[K]) {
    static_assert((K * sizeof(T)) % 16 == 0, "a lane's run must be whole 16-byte packs");
    constexpr int PER_PACK = 16 / sizeof(T);
    union Pack {
        uint4 bits;
        T v[PER_PACK];
    };
#pragma unroll
    for (int i = 0; i < K / PER_PACK; ++i) {
        Pack pack;
        // read once: evict first, so x keeps its place in L2
        pack.bits = __ldcs(reinterpret_cast<const uint4*>(p) + i);
#pragma unroll
        for (int e = 0; e < PER_PACK; ++e) out[i * PER_PACK + e] = pack.v[e];
    }
}

// x gathers: with SEG_X_HINT, lines of x get L2 priority evict_last (x is
// reused; data and indices are read once and marked evict_first by __ldcs).
template <typename V>
__device__ __forceinline__ V load_x(const V* p, unsigned long long policy) {
#if SEG_X_HINT
    V v;
    if constexpr (sizeof(V) == 4) {
        asm("ld.global.nc.L2::cache_hint.f32 %0, [%1], %2;" : "=f"(v) : "l"(p), "l"(policy));
    } else {
        asm("ld.global.nc.L2::cache_hint.f64 %0, [%1], %2;" : "=d"(v) : "l"(p), "l"(policy));
    }
    return v;
#else
    return __ldg(p);
#endif
}

template <typename T>
__device__ __forceinline__ T load_meta(const T* p) {
#if SEG_META_STREAM
    return __ldcs(p);
#else
    return *p;
#endif
}

}  // namespace

// Blocks an SM must hold, so the compiler keeps registers to what fits: 5 (48
// registers a thread) where a lane's K values take 32 bytes, 4 (64) where they
// take 64; under 48, float64 K = 8 spilled hundreds of bytes.
template <typename V, int K>
constexpr int segmented_min_blocks() {
    return K * sizeof(V) <= 32 ? 5 : (K * sizeof(V) <= 64 ? 4 : 1);
}

template <typename V, typename I, int K>
__global__ void __launch_bounds__(SEGMENTED_THREADS, segmented_min_blocks<V, K>())
spla_spmv_segmented(long long n_tiles, long long nnz, const long long* __restrict__ tile_rows,
                    const I* __restrict__ indptr, const I* __restrict__ indices, const V* __restrict__ data,
                    const V* __restrict__ x, V* __restrict__ y, V alpha, V beta,
                    V* head_partials, V* tail_partials, unsigned int* counters) {
    constexpr int TILE = spla::WARP_SIZE * K;
#if SEG_STRIPED
    // one V of padding every PAD entries: both the striped stores (j*32 + lane)
    // and the blocked reads (lane*K + j) then fall in distinct banks
    constexpr int PAD = 128 / sizeof(V);
    __shared__ V staged_all[SEGMENTED_WARPS][TILE + TILE / PAD];
    __shared__ int ends_here[SEGMENTED_WARPS][TILE];  // row ending at each position - row_base, or -1
    using Mark = int;
#else
    __shared__ __align__(16) I ends_here[SEGMENTED_WARPS][TILE];  // row ending at each position, or -1
    using Mark = I;
#endif
    const int lane = threadIdx.x & (spla::WARP_SIZE - 1);
    const int warp = threadIdx.x / spla::WARP_SIZE;
    Mark* row_at = ends_here[warp];
    unsigned long long policy = 0;
#if SEG_X_HINT
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
#endif

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

#if SEG_CHUNKED
    // block b sweeps one contiguous run of tiles, its warps side by side, so the
    // x entries near the diagonal that neighbouring rows share stay in this SM's L1
    const long long per_block = (n_tiles + gridDim.x - 1) / gridDim.x;
    const long long t_end = min(n_tiles, (static_cast<long long>(blockIdx.x) + 1) * per_block);
    for (long long t = static_cast<long long>(blockIdx.x) * per_block + warp; t < t_end; t += SEGMENTED_WARPS) {
#else
    const long long warps = static_cast<long long>(gridDim.x) * SEGMENTED_WARPS;
    for (long long t = static_cast<long long>(blockIdx.x) * SEGMENTED_WARPS + warp; t < n_tiles; t += warps) {
#endif
        const long long base = t * TILE;
        const long long first = base + static_cast<long long>(lane) * K;

        // 1. issue this lane's loads: the tile's row range, K values and K column indices
        //    as 16-byte packs, then the K x gathers; nothing waits for them until step 3,
        //    so the row marks below are found while the gathers are in flight
        const long long r_lo = load_meta(tile_rows + t);
        const long long r_hi = load_meta(tile_rows + t + 1);
        const long long row_base = r_lo > 0 ? r_lo - 1 : 0;  // marks hold row - row_base
        V value[K], gathered[K];
#if SEG_STRIPED
        // lane takes entries base + j*32 + lane: each load instruction reads 32
        // consecutive entries, so neighbouring columns of a row share x sectors
        if (base + TILE <= nnz) {
            I column[K];
#pragma unroll
            for (int j = 0; j < K; ++j) {
                value[j] = __ldcs(data + base + j * spla::WARP_SIZE + lane);
                column[j] = __ldcs(indices + base + j * spla::WARP_SIZE + lane);
            }
#pragma unroll
            for (int j = 0; j < K; ++j) gathered[j] = load_x(x + column[j], policy);
        } else {
#pragma unroll
            for (int j = 0; j < K; ++j) {
                const long long k = base + j * spla::WARP_SIZE + lane;
                value[j] = k < nnz ? data[k] : V(0);
                gathered[j] = k < nnz ? load_x(x + indices[k], policy) : V(0);
            }
        }
#else
        if (first + K <= nnz) {
            I column[K];
            load_packs<V, K>(data + first, value);
            load_packs<I, K>(indices + first, column);
#pragma unroll
            for (int j = 0; j < K; ++j) gathered[j] = load_x(x + column[j], policy);
        } else {  // the last tile: entries past nnz count as zero
#pragma unroll
            for (int j = 0; j < K; ++j) {
                const bool inside = first + j < nnz;
                value[j] = inside ? data[first + j] : V(0);
                gathered[j] = inside ? load_x(x + indices[first + j], policy) : V(0);
            }
        }
#endif

        // 2. mark where rows end in this tile: the owned rows and the one running in from the left.
        //    WALK rounds of 32 rows load their offsets before any is used, so a tile of
        //    short rows waits for indptr once, not once per 32 rows
#pragma unroll
        for (int j = 0; j < K; ++j) row_at[lane * K + j] = Mark(-1);
        __syncwarp();
        for (long long r0 = (r_lo > 0 ? r_lo - 1 : 0) + lane; r0 < r_hi; r0 += WALK * spla::WARP_SIZE) {
            I start[WALK], end[WALK];
#pragma unroll
            for (int u = 0; u < WALK; ++u) {
                const long long r = r0 + u * spla::WARP_SIZE;
                start[u] = r < r_hi ? load_meta(indptr + r) : I(0);
                end[u] = r < r_hi ? load_meta(indptr + r + 1) : I(0);
            }
#pragma unroll
            for (int u = 0; u < WALK; ++u) {
                const long long r = r0 + u * spla::WARP_SIZE;
                const long long last = static_cast<long long>(end[u]) - 1 - base;
                if (end[u] > start[u]) {
                    if (last >= 0 && last < TILE) row_at[last] = static_cast<Mark>(r - row_base);
                }
#if !SEG_COALESCED_Y
                else if (r >= r_lo && r < r_hi) {
                    spla::store_row(y, r, V(0), alpha, beta);
                }
#endif
            }
        }
        __syncwarp();

        // 3. lane-local sums: a row that ends at a lane's second or later mark lies
        //    wholly in that lane; the first mark's row may have begun to the left
#if SEG_STRIPED
        V* staged = staged_all[warp];
#pragma unroll
        for (int j = 0; j < K; ++j) {
            const int p = j * spla::WARP_SIZE + lane;
            staged[p + p / PAD] = value[j] * gathered[j];
        }
        __syncwarp();
#endif
        V open = V(0), first_sum = V(0);
        long long first_row = -1;
        int first_at = 0;  // tile position of the lane's first mark
#pragma unroll
        for (int j = 0; j < K; ++j) {
#if SEG_STRIPED
            const int p = lane * K + j;
            open += staged[p + p / PAD];
#else
            open += value[j] * gathered[j];
#endif
            const Mark mark = row_at[lane * K + j];
            if (mark >= 0) {
                const long long row = row_base + mark;
                if (first_row < 0) {
                    first_sum = open;
                    first_row = row;
                    first_at = lane * K + j;
                } else {
#if SEG_COALESCED_Y
                    // the finished sum replaces this lane's own (already read) product
                    staged[(lane * K + j) + (lane * K + j) / PAD] = open;
#else
                    spla::store_row(y, row, open, alpha, beta);
#endif
                }
                open = V(0);
            }
        }
        const int has_mark = first_row >= 0;
        const bool runs_on = row_at[TILE - 1] < 0 && base + TILE <= nnz;  // a row runs on past the tile
        __syncwarp();  // row_at (and staged) are rewritten by the next tile

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
#if SEG_COALESCED_Y
        // every finished row's sum sits at its last position; the owned rows that end
        // here are written in order, 32 neighbouring rows a store (empty rows too)
        if (has_mark) staged[first_at + first_at / PAD] = first_sum + carry;
        __syncwarp();
        for (long long r = r_lo + lane; r < r_hi; r += spla::WARP_SIZE) {
            const I start = indptr[r], end = indptr[r + 1];
            const long long last = static_cast<long long>(end) - 1 - base;
            if (end == start) {
                spla::store_row(y, r, V(0), alpha, beta);
            } else if (last < TILE) {
                spla::store_row(y, r, staged[last + last / PAD], alpha, beta);
            }
        }
#else
        if (has_mark && !(has_head && lane == first_marked)) {
            spla::store_row(y, first_row, first_sum + carry, alpha, beta);
        }
#endif
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
