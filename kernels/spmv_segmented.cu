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
// Layout (BENCHMARKS.md, segmented rounds 4 and 10-16): a tile is K / 4
// strips of 128 entries, and lane l holds the 4 consecutive entries at
// 128 s + 4 l of strip s (one 16-byte load of values and one of indices per
// strip where the arrays are 16-byte aligned, else single loads). One gather
// instruction then spans 128 neighbouring entries, so the x lines of nearby
// rows are shared, and a lane can add its own 4 entries left to right. Nothing
// is staged in shared memory but K words of row-end bits a warp: the kernel is
// bound by L2 requests for x, and L1 (which shared memory would take from) is
// what keeps the near-diagonal x lines between gathers. The earlier version
// staged the products (16.6 KiB a block at K = 8): with L1 at ~156 KiB instead
// of ~220 it was 7% slower on the power law, and K = 16 did not fit it at all.
//
// Rows and tiles:
//  * tile t "owns" the rows that start in it, tile_rows[t] .. tile_rows[t+1]-1
//    (spla/planning/segmented.py, segmented_tile_rows; the last tile also owns trailing empty
//    rows). The warp sets a bit at the tile position where each row ending in
//    the tile ends. Per strip, a lane adds its 4 products, finishing a row at
//    each bit, and a segmented scan over the lanes carries the open sums (and
//    the previous strip's) into the first row each lane finishes.
//  * the m-th end of a tile is row r_lo - (1 if row r_lo - 1 runs into the
//    tile) + m when the tile has no empty rows; a matrix with empty rows gets
//    a list of ending rows per warp in dynamic shared memory (the launcher
//    asks for it only then), filled while the rows are walked.
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
//  * row ends from the plan (spla_spmv_segmented_bits, session 22): where no
//    row is empty the plan holds one bit a nonzero (segmented_end_bits, nnz / 8
//    bytes), and a tile loads its K words (a 16-byte load a strip, beside the
//    values) instead of walking its rows' offsets (indptr loads, shared-memory
//    atomics, a barrier: on rows of 2-16 over an x held in L1, ncu counted 4.8x
//    the instructions of a plain product at half the occupancy). Where no row
//    is longer than a tile either (spla_spmv_segmented_bits_short), a row
//    touches at most two tiles and the code for rows over three (head pieces,
//    counters) is left out: the general bitmap entry still issued 1.32x the
//    instructions of a try without it. Beside the walk (BENCHMARKS.md, session
//    22): 1.09-1.24x on short rows over a small or local x, 1.02-1.05x on
//    scattered short rows over 8M columns; 0.92x on rows of 5-15 over 60k
//    columns in float32 (random-width-60k@10M), the one of nine it lost on.
//
// Constraints (checked by spla/planning/spmv.py and spla/backends/cuda/spmv.py):
//   blockDim.x == SEGMENTED_THREADS; K a multiple of 4 with K * sizeof(V) <= 64
//   (registers); a tile owns fewer than 2^31 rows (the list holds int offsets
//   from the tile's first row); dynamic shared memory of SEGMENTED_WARPS * TILE
//   ints when the matrix has an empty row, else none; counters start at zero
//   and each finishing tile resets its own (one stream at a time per matrix,
//   as spmv_adaptive2's split rows). A tile that owns many empty rows walks
//   them 32 at a time: a matrix of mostly empty rows is better served by
//   adaptive2.
#include "common.cuh"
#include "launch_config.cuh"  // the -D constants the host passes

constexpr int SEGMENTED_THREADS = SPLA_SEGMENTED_THREADS;
constexpr int SEGMENTED_WARPS = SEGMENTED_THREADS / spla::WARP_SIZE;
// Rounds of 32 rows whose offsets a warp loads at once while finding row ends
// (3 rather than 4: at 4 the float32 kernels spilled).
constexpr int WALK = 3;

// Blocks an SM must hold, so the compiler keeps registers to what fits: 5 (48
// registers a thread) where a lane's K values take 32 bytes, 4 (64) where they
// take 64 (3 blocks would give 80 registers and no spills, but measured
// slower: the occupancy matters more here; see BENCHMARKS.md).
template <typename V, int K>
constexpr int segmented_min_blocks() {
    static_assert(K * sizeof(V) <= 64, "a lane's K values take at most 64 bytes of registers");
    return K * sizeof(V) <= 32 ? 5 : 4;
}

// Four consecutive entries at p (16-byte aligned) with evict-first loads.
__device__ __forceinline__ void load4(const float* p, float* out) {
    const float4 v = __ldcs(reinterpret_cast<const float4*>(p));
    out[0] = v.x; out[1] = v.y; out[2] = v.z; out[3] = v.w;
}
__device__ __forceinline__ void load4(const int* p, int* out) {
    const int4 v = __ldcs(reinterpret_cast<const int4*>(p));
    out[0] = v.x; out[1] = v.y; out[2] = v.z; out[3] = v.w;
}
__device__ __forceinline__ void load4(const double* p, double* out) {
    const double2 a = __ldcs(reinterpret_cast<const double2*>(p));
    const double2 b = __ldcs(reinterpret_cast<const double2*>(p) + 1);
    out[0] = a.x; out[1] = a.y; out[2] = b.x; out[3] = b.y;
}
__device__ __forceinline__ void load4(const long long* p, long long* out) {
    const longlong2 a = __ldcs(reinterpret_cast<const longlong2*>(p));
    const longlong2 b = __ldcs(reinterpret_cast<const longlong2*>(p) + 1);
    out[0] = a.x; out[1] = a.y; out[2] = b.x; out[3] = b.y;
}

// A strip's 4 words of end bits (128 entries), read for one lane, which holds entries
// 4 (lane & 7) .. + 3 of word lane / 8: its own 4 bits (mine), the strip's ends before them, and
// the strip's ends in all, packed as mine | before << 4 | total << 12.
__device__ __forceinline__ unsigned strip_ends(unsigned w0, unsigned w1, unsigned w2, unsigned w3, int lane) {
    const unsigned w[4] = {w0, w1, w2, w3};
    const int q = lane / 8;
    const int shift = 4 * (lane & 7);
    unsigned before = 0u, mine = 0u;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        if (i < q) before += __popc(w[i]);
        if (i == q) {
            before += __popc(w[i] & ((1u << shift) - 1u));
            mine = (w[i] >> shift) & 0xfu;
        }
    }
    const unsigned total = __popc(w0) + __popc(w1) + __popc(w2) + __popc(w3);
    return mine | before << 4 | total << 12;
}

// The tiles of the entry points below. BITS: the row ends come from end_bits, K words a tile
// built with the plan (bit i of word t * K + j: entry t * TILE + 32 j + i ends its row), and the
// matrix has no empty row; else each tile walks its rows' offsets to find them. SHORT (with
// BITS): no row is longer than a tile, so a row touches at most two tiles and the partial sums
// of rows over three or more (head pieces, counters) are left out.
template <typename V, typename I, int K, bool BITS, bool SHORT = false>
__device__ __forceinline__ void segmented_tiles(long long n_tiles, long long nnz, const long long* __restrict__ tile_rows,
                                                const I* __restrict__ indptr, const I* __restrict__ indices,
                                                const V* __restrict__ data, const V* __restrict__ x, V* __restrict__ y,
                                                V alpha, V beta, V* head_partials, V* tail_partials,
                                                unsigned int* counters, const unsigned* __restrict__ end_bits) {
    constexpr int TILE = spla::WARP_SIZE * K;
    constexpr int G = 4;  // consecutive entries a lane holds in a strip
    constexpr int STRIP = spla::WARP_SIZE * G;
    constexpr int STRIPS = K / G;
    static_assert(K % G == 0, "K is a multiple of 4");
    // bit i of ends[warp][j]: a row ends at tile position 32 j + i
    __shared__ unsigned ends_all[SEGMENTED_WARPS][K];
    // ending_rows[warp][m]: the row (from row_base) of the tile's m-th end, for
    // tiles with empty rows; dynamic shared memory the launcher gives only to
    // matrices with an empty row
    extern __shared__ int ending_rows_all[];
    const int lane = threadIdx.x & (spla::WARP_SIZE - 1);
    const int warp = threadIdx.x / spla::WARP_SIZE;
    const unsigned below = (1u << lane) - 1u;  // lanes under this one
    unsigned* ends = ends_all[warp];
    int* ending_rows = ending_rows_all + warp * TILE;
    // 16-byte loads of a lane's 4 entries need both arrays 16-byte aligned (a
    // strip starts at a multiple of 128 entries)
    const bool packed = ((reinterpret_cast<unsigned long long>(data) |
                          reinterpret_cast<unsigned long long>(indices)) & 15u) == 0u;

    auto arrive = [&](long long row, V partial, V* slot, long long t0, long long t1) {
        spla::arrive_cut_row(row, partial, slot, t0, t1, counters, head_partials, tail_partials, y, alpha, beta, lane);
    };

    const long long warps = static_cast<long long>(gridDim.x) * SEGMENTED_WARPS;
    for (long long t = static_cast<long long>(blockIdx.x) * SEGMENTED_WARPS + warp; t < n_tiles; t += warps) {
        const long long base = t * TILE;

        // 1. loads: strip s holds entries base + 128 s .. + 127, lane l the four
        //    at 128 s + 4 l (one 16-byte load of values, one of indices)
        const long long r_lo = tile_rows[t];
        const long long r_hi = tile_rows[t + 1];
        const long long row_base = r_lo > 0 ? r_lo - 1 : 0;
        V value[K], gathered[K];
        // BITS: each strip's end bits (4 words, one 16-byte load beside the values), read at
        // once into this lane's strip_ends, packed as mine | before << 4 | total << 12 (a
        // register a strip, not four)
        unsigned strip_info[STRIPS];
        bool last_ends = false;  // the tile's last entry ends its row
        if constexpr (BITS) {
#pragma unroll
            for (int s = 0; s < STRIPS; ++s) {
                const uint4 w = __ldcs(reinterpret_cast<const uint4*>(end_bits + t * K) + s);  // read once
                strip_info[s] = strip_ends(w.x, w.y, w.z, w.w, lane);
                if (s == STRIPS - 1) last_ends = w.w >> 31;
            }
        }
        if (base + TILE <= nnz) {
            I column[K];
#pragma unroll
            for (int s = 0; s < STRIPS; ++s) {
                // read once: evict first, so x keeps its place in the caches
                const long long k0 = base + s * STRIP + G * lane;
                if (packed) {
                    load4(data + k0, value + G * s);
                    load4(indices + k0, column + G * s);
                } else {
#pragma unroll
                    for (int i = 0; i < G; ++i) {
                        value[G * s + i] = __ldcs(data + k0 + i);
                        column[G * s + i] = __ldcs(indices + k0 + i);
                    }
                }
            }
#pragma unroll
            for (int j = 0; j < K; ++j) gathered[j] = __ldg(x + column[j]);
        } else {
#pragma unroll
            for (int j = 0; j < K; ++j) {
                const long long k = base + (j / G) * STRIP + G * lane + j % G;
                value[j] = k < nnz ? data[k] : V(0);
                gathered[j] = k < nnz ? __ldg(x + indices[k]) : V(0);
            }
        }

        // 2. set the end bit of every row ending in the tile; write the owned empty rows.
        //    Lane-strided, each lane leaving when its rows run out (measured faster
        //    than a warp-uniform loop over the same rows on power-law matrices).
        //    BITS: the plan's bits, no walk (and no empty rows)
        bool saw_empty = false;
        if constexpr (!BITS) {
            if (lane < K) ends[lane] = 0u;
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
                        if (last >= 0 && last < TILE) atomicOr(ends + (last >> 5), 1u << (last & 31));
                    } else if (r >= r_lo && r < r_hi) {
                        spla::store_row(y, r, V(0), alpha, beta);
                        saw_empty = true;
                    }
                }
            }
        }
        V product[K];  // value and gathered die here: fewer registers through the scan
#pragma unroll
        for (int j = 0; j < K; ++j) product[j] = value[j] * gathered[j];
        const bool has_empty = !BITS && __any_sync(spla::FULL_MASK, saw_empty);
        // row r_lo - 1 runs into this tile (BITS: the entry before the tile ends no row)
        const bool has_head = BITS ? t > 0 && !((end_bits[t * K - 1] >> 31) & 1u)
                                   : r_lo > 0 && indptr[r_lo] > base;
        const int first_end = static_cast<int>(r_lo - row_base) - (has_head ? 1 : 0);  // row of the first end
        if (has_empty) {
            // list the ending rows in order (rows end in row order, so the m-th is the
            // tile's m-th end) in a second walk over the offsets just read: listing
            // them in the first walk held more registers there, and it spilled
            int listed = 0;
            for (long long g0 = row_base; g0 < r_hi; g0 += spla::WARP_SIZE) {
                const long long r = g0 + lane;
                const I start = r < r_hi ? indptr[r] : I(0);
                const I end = r < r_hi ? indptr[r + 1] : I(0);
                const long long last = static_cast<long long>(end) - 1 - base;
                const bool ending = end > start && last >= 0 && last < TILE;
                const unsigned ending_lanes = __ballot_sync(spla::FULL_MASK, ending);
                if (ending) ending_rows[listed + __popc(ending_lanes & below)] = static_cast<int>(r - row_base);
                listed += __popc(ending_lanes);
            }
            __syncwarp();
        }
        if constexpr (!BITS) __syncwarp();  // the walk's end bits (and the list) are read by every lane below

        // 3. per strip: each lane adds its four entries left to right, closing a row at
        //    each end bit; a segmented scan over the lanes carries the open sums (and
        //    the previous strip's) into the first row each lane closes
        auto row_at = [&](int m) -> long long {  // the row of the tile's m-th end
            return row_base + (has_empty ? ending_rows[m] : first_end + m);
        };
        V carry = V(0), head_piece = V(0);
        int closed = 0;  // ends in the strips before this one
#pragma unroll
        for (int s = 0; s < STRIPS; ++s) {
            const unsigned* w = ends + s * (STRIP / 32);
            const unsigned info = BITS ? strip_info[s] : strip_ends(w[0], w[1], w[2], w[3], lane);
            const int before = closed + static_cast<int>((info >> 4) & 0xffu);  // the tile's ends before this lane's
            const unsigned mine = info & 0xfu;  // which of this lane's 4 entries end a row
            closed += static_cast<int>(info >> 12);
            V open = V(0), first_piece = V(0);
            int m = before;
#pragma unroll
            for (int i = 0; i < G; ++i) {
                open += product[G * s + i];
                if ((mine >> i) & 1u) {
                    if (m == before) {
                        first_piece = open;
                    } else {
                        spla::store_row(y, row_at(m), open, alpha, beta);
                    }
                    ++m;
                    open = V(0);
                }
            }
            const unsigned marked = __ballot_sync(spla::FULL_MASK, mine != 0u);
            const unsigned upto = marked & (below | (1u << lane));
            const int seg_start = upto ? 31 - __clz(upto) : 0;
            V scan = open;
#pragma unroll
            for (int d = 1; d < spla::WARP_SIZE; d *= 2) {
                const V up = __shfl_up_sync(spla::FULL_MASK, scan, d);
                if (lane - d >= seg_start) scan += up;
            }
            V left = __shfl_up_sync(spla::FULL_MASK, scan, 1);
            if (lane == 0) left = V(0);
            if ((marked & below) == 0u) left += carry;
            const V piece = first_piece + left;
            const bool is_head = mine != 0u && has_head && before == 0;
            if (mine != 0u && !is_head) {
                spla::store_row(y, row_at(before), piece, alpha, beta);
            }
            if constexpr (!SHORT) {
                const unsigned head_lane = __ballot_sync(spla::FULL_MASK, is_head);
                if (head_lane) head_piece = __shfl_sync(spla::FULL_MASK, piece, __ffs(head_lane) - 1);
            }
            const V strip_open = __shfl_sync(spla::FULL_MASK, scan, spla::WARP_SIZE - 1);
            carry = marked ? strip_open : carry + strip_open;
        }
        const V tile_open = carry;  // after the tile's last end
        if constexpr (!BITS) last_ends = ends[K - 1] >> 31;
        const bool runs_on = !last_ends && base + TILE <= nnz;  // a row runs on past the tile
        if constexpr (!BITS) __syncwarp();  // ends and the list are rewritten by the next tile

        // 4. rows cut by tile edges
        if (base >= nnz) continue;  // the one tile of a matrix with no nonzeros
        if (!SHORT && has_head) {
            const long long row = r_lo - 1;
            const long long t0 = static_cast<long long>(indptr[row]) / TILE;
            const long long t1 = (static_cast<long long>(indptr[r_lo]) - 1) / TILE;
            if (t1 - t0 > 1) arrive(row, closed ? head_piece : tile_open, head_partials + t, t0, t1);
        }
        if (runs_on && (closed != 0 || !has_head)) {
            const long long row = r_hi - 1;
            const long long stop = indptr[r_hi];
            const long long t1 = (stop - 1) / TILE;
            if (SHORT || t1 == t + 1) {
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

template <typename V, typename I, int K>
__global__ void __launch_bounds__(SEGMENTED_THREADS, segmented_min_blocks<V, K>())
spla_spmv_segmented(long long n_tiles, long long nnz, const long long* __restrict__ tile_rows,
                    const I* __restrict__ indptr, const I* __restrict__ indices, const V* __restrict__ data,
                    const V* __restrict__ x, V* __restrict__ y, V alpha, V beta,
                    V* head_partials, V* tail_partials, unsigned int* counters) {
    segmented_tiles<V, I, K, false>(n_tiles, nnz, tile_rows, indptr, indices, data, x, y, alpha, beta,
                                    head_partials, tail_partials, counters, nullptr);
}

// The same tiles with the row ends read from the plan's bitmap: a matrix without empty rows.
template <typename V, typename I, int K>
__global__ void __launch_bounds__(SEGMENTED_THREADS, segmented_min_blocks<V, K>())
spla_spmv_segmented_bits(long long n_tiles, long long nnz, const long long* __restrict__ tile_rows,
                         const I* __restrict__ indptr, const I* __restrict__ indices, const V* __restrict__ data,
                         const V* __restrict__ x, V* __restrict__ y, V alpha, V beta,
                         V* head_partials, V* tail_partials, unsigned int* counters,
                         const unsigned* __restrict__ end_bits) {
    segmented_tiles<V, I, K, true>(n_tiles, nnz, tile_rows, indptr, indices, data, x, y, alpha, beta,
                                   head_partials, tail_partials, counters, end_bits);
}

// ... and no row longer than a tile.
template <typename V, typename I, int K>
__global__ void __launch_bounds__(SEGMENTED_THREADS, segmented_min_blocks<V, K>())
spla_spmv_segmented_bits_short(long long n_tiles, long long nnz, const long long* __restrict__ tile_rows,
                               const I* __restrict__ indptr, const I* __restrict__ indices,
                               const V* __restrict__ data, const V* __restrict__ x, V* __restrict__ y, V alpha,
                               V beta, V* head_partials, V* tail_partials, unsigned int* counters,
                               const unsigned* __restrict__ end_bits) {
    segmented_tiles<V, I, K, true, true>(n_tiles, nnz, tile_rows, indptr, indices, data, x, y, alpha, beta,
                                         head_partials, tail_partials, counters, end_bits);
}
