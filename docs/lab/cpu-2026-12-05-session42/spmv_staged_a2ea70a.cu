// spmv_staged: a block per tile of nonzeros, products staged in shared memory (step 7).
//
// What changed from spmv_segmented.cu: a tile is a block's, not a warp's, and
// its products wait in shared memory, not registers. Nsight Compute on a 40M
// power law (BENCHMARKS.md, sessions 15 and 17) put cuSPARSE's lead on how busy
// it keeps L2: segmented holds a tile's values, indices and gathers in 64
// registers a thread, so only 38% of the warp slots are filled. Here a thread's
// T loads go straight to shared memory as products, so few registers are live
// and 75% of the warp slots are filled; the rows are then summed from there.
//
// Tile t is the nonzeros [t * TILE, (t + 1) * TILE), TILE = STAGED_THREADS * T;
// thread i loads entries i, i + STAGED_THREADS, ... of it, so one gather
// instruction reads x at 32 consecutive nonzeros (16-byte loads of a lane's 4
// consecutive entries, as segmented's, spread a gather over more sectors of x:
// 22% more L2 sectors, 7% slower).
//
// Rows (the tile ownership of spmv_segmented: tile t owns the rows that start in
// it, tile_rows[t] .. tile_rows[t+1] - 1, the last tile the trailing empty rows,
// spla/planning/segmented.py):
//  * a thread a row, over the owned rows and the row running into the tile
//    from the left (its "head" row), sums the row's products in the tile (from
//    an offset that keeps a warp's reads in distinct banks, staged_bank_offset)
//    and writes y;
//  * rows with more than LONG products in the tile, and rows cut by a tile
//    edge, go on a list that the block's warps take one row at a time (lanes
//    strided over the products, a shuffle reduction), so one long row does not
//    hold up a thread while the others wait at the end of the block (a smaller
//    LONG measured slower, and so did 32 against 128: the list's atomics,
//    barrier and one row a warp cost more than a thread's serial sum);
//  * a row cut by tile edges leaves its sum in each tile it touches: the first
//    tile's in tail_partials[t], each later one's in head_partials[t], and they
//    are added in tile order (no float atomics: every call gives the same bits).
//    With `counters` (few cut rows: a small matrix, spla/planning/segmented.py,
//    STAGED_ONE_LAUNCH_CUT), each tile bumps the row's counter after its
//    partial, and the warp that brings it to the row's tile count adds them, as
//    spmv_segmented.cu does: a call is one launch. Without (counters ==
//    nullptr), spla_spmv_staged_finish, launched next, adds them: on the 40M
//    power law and R-MAT graphs the fence and counter held blocks 11-15% of
//    the time, more than the second launch costs there; on a matrix under
//    about a million nonzeros the second launch's host time (some 5 us) is as
//    long as the kernel.
//
// Narrow columns (spla_spmv_staged_narrow): where every tile's columns span fewer than 65,536
// (spla/planning/segmented.py, narrow_columns), a nonzero's column is read as a 2-byte offset
// from its tile's smallest column, tile_cols[t]: 6 bytes a float32 nonzero, not 8 (10, not 12,
// in float64). The products, and so the bits of y, are the same as from the indices.
//
// Values (the _uniform and _palette entries): where every stored value has one bit pattern
// (spla.csr_passes.uniform_values), it is read once a thread, so a tile streams its columns alone;
// where they take at most 255 (spla.planning.palette, a graph Laplacian's or small integer
// weights), each is a byte, codes[k], into a table of SPLA_PALETTE_TABLE that each block copies to shared memory
// first: a nonzero with its column takes 5 bytes, not 8 in float32 or 12 in float64. Each product
// is still the stored value times x, so the bits are the same.
//
// Constraints (checked by spla/planning/spmv.py and spla/backends/cuda/spmv.py):
//   blockDim.x == STAGED_THREADS (blocks loop over tiles grid-stride; the
//   launcher gives a block a tile); without counters the finish kernel runs
//   after this one on the same stream, over the plan's cut rows
//   (spla/planning/segmented.py, staged_cut_rows); counters (one a tile, for the
//   row that starts in it) are zero before a call and left zero after it; the
//   partial sums and counters are the matrix's, so one stream at a time per
//   matrix (as segmented's).
#include "common.cuh"
#include "launch_config.cuh"  // the -D constants the host passes

constexpr int STAGED_THREADS = SPLA_STAGED_THREADS;
constexpr int STAGED_WARPS = STAGED_THREADS / spla::WARP_SIZE;
// Rows with more products than this in a tile are summed by a warp, not a thread. 128, not 32
// (session 24, docs/lab/h200-2026-12-04-session24): a thread summing its row of up to 128 from
// shared memory beat the warps' list 1.12-1.78x on regular rows of 24-100 entries and 1.3-1.7x
// on 40 a row (block-sparse), and held within 2% on power laws, multimodal rows and short rows.
constexpr int LONG = SPLA_STAGED_THREAD_ROW;  // segmented.STAGED_THREAD_ROW, which auto's rule reads too

// Blocks an SM must hold, so the compiler keeps registers to what fits: all
// 2,048 threads (32 registers) where a thread's values take at most 32 bytes,
// else 1,536 (40 registers; 32 kept fewer loads in flight: 10% slower).
template <typename V, int T>
constexpr int staged_min_blocks() {
    return T * sizeof(V) <= 32 ? 2048 / STAGED_THREADS : 1536 / STAGED_THREADS;
}

// Where a thread of the row-a-thread step starts summing its row of `length` products (it wraps
// to the row's start after the end). The warp's threads read their rows at the same step, and rows
// of one length L start L apart, so from their first products they would all hit one shared-memory
// bank where L is a multiple of 32 (32 banks of 4 bytes; 16 doubles a half warp's pass), and
// 2^k-way where L has k factors of two: 32-way at rows of 32, which ran staged at half warp's
// speed (runs-4x8-local-3000, session 31). Lanes whose rows would start in one bank start g of
// them apart (g = 2^k, at most the banks): rows of one length are read without a conflict, rows
// of odd length as before, rows of mixed lengths no worse (a count over random ones; measured in
// session 33: 1.6-2.6x on rows of 16-64, odd and mixed rows within 1%). The order is fixed by the
// lane and the row, so every call gives the same bits.
template <typename V>
__device__ __forceinline__ int staged_bank_offset(int length, int lane) {
    constexpr int LOG_BANKS = sizeof(V) == 8 ? 4 : 5;  // elements a pass: 32 floats, 16 doubles
    const int twos = min(__ffs(length) - 1, LOG_BANKS);  // length's factors of two; -1 for an empty row
    return twos < 0 ? 0 : (lane & ((1 << LOG_BANKS) - 1)) >> (LOG_BANKS - twos);
}

// How a tile reads nonzero k's value (see Values above): data[k] (EACH), data[0] (ONE), or
// data[codes[k]] from the block's copy of the table (PALETTE: data holds SPLA_PALETTE_TABLE values).
enum class Values { EACH, ONE, PALETTE };

// The kernels' body. C is the stored column type: I (the matrix's indices), or unsigned short
// (NARROW: tile t's columns as offsets from tile_cols[t], 2 bytes a nonzero, not 4 or 8).
template <typename V, typename I, typename C, int T, bool NARROW, Values VALUES = Values::EACH>
__device__ __forceinline__ void staged_tiles(long long n_tiles, long long nnz, const long long* __restrict__ tile_rows,
                                             const I* __restrict__ indptr, const C* __restrict__ indices,
                                             const I* __restrict__ tile_cols, const V* __restrict__ data,
                                             const unsigned char* __restrict__ codes, const V* __restrict__ x,
                                             V* __restrict__ y, V alpha, V beta, V* __restrict__ head_partials,
                                             V* __restrict__ tail_partials, unsigned int* counters) {
    constexpr int TILE = STAGED_THREADS * T;
    constexpr int LISTED = TILE / (LONG + 1) + 2;  // long rows fit in a tile, and two cut ones
    constexpr int TABLE = VALUES == Values::PALETTE ? SPLA_PALETTE_TABLE : 1;
    __shared__ V products[TILE];
    __shared__ int listed[LISTED];  // rows for the warps, from the tile's first row
    __shared__ int n_listed;
    __shared__ V table[TABLE];

    const int lane = threadIdx.x & (spla::WARP_SIZE - 1);
    const int warp = threadIdx.x / spla::WARP_SIZE;
    const V value = VALUES == Values::ONE ? __ldg(data) : V(0);
    if constexpr (VALUES == Values::PALETTE) {
        for (int i = threadIdx.x; i < TABLE; i += STAGED_THREADS) table[i] = __ldg(data + i);
        __syncthreads();
    }
    auto value_at = [&](long long k) -> V {  // read once: evict first, so x keeps its place in the caches
        if constexpr (VALUES == Values::ONE) return value;
        if constexpr (VALUES == Values::PALETTE) return table[__ldcs(codes + k)];
        return __ldcs(data + k);
    };
    for (long long t = blockIdx.x; t < n_tiles; t += gridDim.x) {
        const long long base = t * TILE;
        const long long stop = base + TILE < nnz ? base + TILE : nnz;
        if (threadIdx.x == 0) n_listed = 0;
        const V* xt = NARROW ? x + tile_cols[t] : x;  // where the tile's column offsets count from

        // 1. products into shared memory, in tile order
        if (base + TILE <= nnz) {
#pragma unroll
            for (int s = 0; s < T; ++s) {
                const int at = s * STAGED_THREADS + threadIdx.x;
                products[at] = value_at(base + at) * __ldg(xt + __ldcs(indices + base + at));
            }
        } else {  // the last tile: past nnz, zeros
            for (int at = threadIdx.x; at < TILE; at += STAGED_THREADS) {
                const long long k = base + at;
                if (k < nnz)
                    products[at] = value_at(k) * __ldg(xt + __ldcs(indices + k));
                else
                    products[at] = V(0);
            }
        }
        __syncthreads();

        // 2. a thread a row; long and cut rows listed for the warps
        const long long r_lo = tile_rows[t];
        const long long r_hi = tile_rows[t + 1];
        const bool has_head = r_lo > 0 && base < nnz && indptr[r_lo] > base;  // row r_lo - 1 runs into the tile
        const long long first = has_head ? r_lo - 1 : r_lo;
        for (long long r = first + threadIdx.x; r < r_hi; r += STAGED_THREADS) {
            const long long start = indptr[r], end = indptr[r + 1];
            const long long from = start > base ? start : base;
            const long long to = end < stop ? end : stop;
            if (start < base || end > stop || to - from > LONG) {
                listed[atomicAdd(&n_listed, 1)] = static_cast<int>(r - first);
                continue;
            }
            // from the row's bank offset to its end, then from its start (staged_bank_offset); one
            // loop in the tile's 32-bit places keeps 4 loads in flight under the register bound
            // (two loops, or 64-bit places, issued fewer and ran up to 12% slower, session 33)
            const int lo = static_cast<int>(from - base), hi = static_cast<int>(to - base);
            V sum = V(0);
            for (int k = lo + staged_bank_offset<V>(hi - lo, lane), left = hi - lo; left > 0; --left) {
                sum += products[k];
                k = k + 1 == hi ? lo : k + 1;
            }
            spla::store_row(y, r, sum, alpha, beta);
        }
        __syncthreads();

        // 3. a warp a listed row (the list's order varies between calls; each row's sum does not)
        const int n_rows_listed = n_listed;
        for (int i = warp; i < n_rows_listed; i += STAGED_WARPS) {
            const long long r = first + listed[i];
            const long long start = indptr[r], end = indptr[r + 1];
            const long long from = start > base ? start : base;
            const long long to = end < stop ? end : stop;
            V sum = V(0);
            for (long long k = from + lane; k < to; k += spla::WARP_SIZE) sum += products[k - base];
            sum = spla::warp_reduce_sum<V>(sum);
            if (start >= base && end <= stop) {
                if (lane == 0) spla::store_row(y, r, sum, alpha, beta);
                continue;
            }
            V* slot = (start >= base ? tail_partials : head_partials) + t;  // the row begins in this tile, or before
            if (counters == nullptr) {
                if (lane == 0) *slot = sum;
                continue;
            }
            // one launch: the tile that brings the row's counter (at its first tile) to the count of its
            // other tiles adds the partials, in tile order, as spla_spmv_staged_finish would
            const long long t0 = start / TILE, t1 = (end - 1) / TILE;
            spla::arrive_cut_row(r, sum, slot, t0, t1, counters, head_partials, tail_partials, y, alpha, beta, lane);
        }
        __syncthreads();  // the next tile rewrites the products and the list
    }
}

template <typename V, typename I, int T>
__global__ void __launch_bounds__(STAGED_THREADS, staged_min_blocks<V, T>())
spla_spmv_staged(long long n_tiles, long long nnz, const long long* __restrict__ tile_rows,
                 const I* __restrict__ indptr, const I* __restrict__ indices, const V* __restrict__ data,
                 const V* __restrict__ x, V* __restrict__ y, V alpha, V beta,
                 V* __restrict__ head_partials, V* __restrict__ tail_partials, unsigned int* counters) {
    staged_tiles<V, I, I, T, false>(n_tiles, nnz, tile_rows, indptr, indices, nullptr, data, nullptr, x, y, alpha,
                                    beta, head_partials, tail_partials, counters);
}

// The same over 2-byte column offsets: nonzero k of tile t is in column tile_cols[t] + offsets[k]
// (spla/planning/segmented.py, narrow_columns: every tile's columns span under 65,536).
template <typename V, typename I, int T>
__global__ void __launch_bounds__(STAGED_THREADS, staged_min_blocks<V, T>())
spla_spmv_staged_narrow(long long n_tiles, long long nnz, const long long* __restrict__ tile_rows,
                        const I* __restrict__ indptr, const unsigned short* __restrict__ offsets,
                        const I* __restrict__ tile_cols, const V* __restrict__ data, const V* __restrict__ x,
                        V* __restrict__ y, V alpha, V beta, V* __restrict__ head_partials,
                        V* __restrict__ tail_partials, unsigned int* counters) {
    staged_tiles<V, I, unsigned short, T, true>(n_tiles, nnz, tile_rows, indptr, offsets, tile_cols, data, nullptr,
                                                x, y, alpha, beta, head_partials, tail_partials, counters);
}

// The same two over a matrix of one value: data holds that value alone.
template <typename V, typename I, int T>
__global__ void __launch_bounds__(STAGED_THREADS, staged_min_blocks<V, T>())
spla_spmv_staged_uniform(long long n_tiles, long long nnz, const long long* __restrict__ tile_rows,
                         const I* __restrict__ indptr, const I* __restrict__ indices, const V* __restrict__ data,
                         const V* __restrict__ x, V* __restrict__ y, V alpha, V beta,
                         V* __restrict__ head_partials, V* __restrict__ tail_partials, unsigned int* counters) {
    staged_tiles<V, I, I, T, false, Values::ONE>(n_tiles, nnz, tile_rows, indptr, indices, nullptr, data, nullptr, x,
                                                 y, alpha, beta, head_partials, tail_partials, counters);
}

template <typename V, typename I, int T>
__global__ void __launch_bounds__(STAGED_THREADS, staged_min_blocks<V, T>())
spla_spmv_staged_narrow_uniform(long long n_tiles, long long nnz, const long long* __restrict__ tile_rows,
                                const I* __restrict__ indptr, const unsigned short* __restrict__ offsets,
                                const I* __restrict__ tile_cols, const V* __restrict__ data,
                                const V* __restrict__ x, V* __restrict__ y, V alpha, V beta,
                                V* __restrict__ head_partials, V* __restrict__ tail_partials,
                                unsigned int* counters) {
    staged_tiles<V, I, unsigned short, T, true, Values::ONE>(n_tiles, nnz, tile_rows, indptr, offsets, tile_cols,
                                                             data, nullptr, x, y, alpha, beta, head_partials,
                                                             tail_partials, counters);
}

// ... and over a palette: table holds SPLA_PALETTE_TABLE values (the palette's, then zeros), codes a byte a nonzero.
template <typename V, typename I, int T>
__global__ void __launch_bounds__(STAGED_THREADS, staged_min_blocks<V, T>())
spla_spmv_staged_palette(long long n_tiles, long long nnz, const long long* __restrict__ tile_rows,
                         const I* __restrict__ indptr, const I* __restrict__ indices, const V* __restrict__ table,
                         const unsigned char* __restrict__ codes, const V* __restrict__ x, V* __restrict__ y,
                         V alpha, V beta, V* __restrict__ head_partials, V* __restrict__ tail_partials,
                         unsigned int* counters) {
    staged_tiles<V, I, I, T, false, Values::PALETTE>(n_tiles, nnz, tile_rows, indptr, indices, nullptr, table, codes,
                                                     x, y, alpha, beta, head_partials, tail_partials, counters);
}

template <typename V, typename I, int T>
__global__ void __launch_bounds__(STAGED_THREADS, staged_min_blocks<V, T>())
spla_spmv_staged_narrow_palette(long long n_tiles, long long nnz, const long long* __restrict__ tile_rows,
                                const I* __restrict__ indptr, const unsigned short* __restrict__ offsets,
                                const I* __restrict__ tile_cols, const V* __restrict__ table,
                                const unsigned char* __restrict__ codes, const V* __restrict__ x,
                                V* __restrict__ y, V alpha, V beta, V* __restrict__ head_partials,
                                V* __restrict__ tail_partials, unsigned int* counters) {
    staged_tiles<V, I, unsigned short, T, true, Values::PALETTE>(n_tiles, nnz, tile_rows, indptr, offsets, tile_cols,
                                                                 table, codes, x, y, alpha, beta, head_partials,
                                                                 tail_partials, counters);
}

// The rows cut by tile edges, a warp each: cut[3 c .. 3 c + 2] = (row, first tile, last tile);
// y[row] = the first tile's tail partial + the later tiles' head partials, in tile order.
template <typename V>
__global__ void __launch_bounds__(STAGED_THREADS)
spla_spmv_staged_finish(long long n_cut, const long long* __restrict__ cut, const V* __restrict__ head_partials,
                        const V* __restrict__ tail_partials, V* __restrict__ y, V alpha, V beta) {
    const int lane = threadIdx.x & (spla::WARP_SIZE - 1);
    const long long warps = spla::grid_threads() / spla::WARP_SIZE;
    for (long long c = spla::global_thread_id() / spla::WARP_SIZE; c < n_cut; c += warps)
        spla::finish_cut_row(cut[3 * c], cut[3 * c + 1], cut[3 * c + 2], head_partials, tail_partials, y, alpha,
                             beta, lane);
}
