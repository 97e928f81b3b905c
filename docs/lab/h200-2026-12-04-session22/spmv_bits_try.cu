// Session 22 try (not a product kernel): spmv_segmented's tiles with the row ends read from a
// bitmap built once with the plan, instead of walked through indptr on every call.
//
// Why: on short rows over an x that stays in L1 (ncu, rows-16-over-20k float64) segmented ran
// 4.8x the floor's instructions at 50% occupancy (64 registers) and reached 0.62 of floor + rows;
// its row walk (indptr loads, shared-memory atomics, a warp barrier) is a chain of its own on
// every tile. Here a tile's row ends are K words of a bitmap (bit i of word w: entry 32 w + i ends
// its row), one 16-byte load a strip issued beside the values, and no shared memory.
//
// Limits of the try: no empty rows (the m-th end of tile t is row first_end[t] + m, where
// first_end[t] counts the ends before the tile); no row longer than a tile (a row spans at most
// two tiles: the tile it runs out of finishes it by reading on into the next, which skips it);
// alpha = 1, beta = 0.
#include "common.cuh"

constexpr int BITS_THREADS = 256;
constexpr int BITS_WARPS = BITS_THREADS / spla::WARP_SIZE;

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

template <typename V, int K, int MIN_BLOCKS>
__global__ void __launch_bounds__(BITS_THREADS, MIN_BLOCKS)
spla_try_bits(long long n_tiles, long long nnz, const long long* __restrict__ first_end,
              const unsigned* __restrict__ ends, const int* __restrict__ indptr, const int* __restrict__ indices,
              const V* __restrict__ data, const V* __restrict__ x, V* __restrict__ y) {
    constexpr int TILE = spla::WARP_SIZE * K;
    constexpr int G = 4;
    constexpr int STRIP = spla::WARP_SIZE * G;
    constexpr int STRIPS = K / G;
    static_assert(K % G == 0, "K is a multiple of 4");
    const int lane = threadIdx.x & (spla::WARP_SIZE - 1);
    const unsigned below = (1u << lane) - 1u;
    const long long t = static_cast<long long>(blockIdx.x) * BITS_WARPS + threadIdx.x / spla::WARP_SIZE;
    if (t >= n_tiles) return;
    const long long base = t * TILE;
    const bool full = base + TILE <= nnz;

    V product[K];
    uint4 words[STRIPS];  // the strip's 4 words of end bits (the bitmap is padded to whole tiles)
#pragma unroll
    for (int s = 0; s < STRIPS; ++s) words[s] = __ldg(reinterpret_cast<const uint4*>(ends + t * K) + s);
    if (full) {
        V value[K];
        int column[K];
#pragma unroll
        for (int s = 0; s < STRIPS; ++s) {
            const long long k0 = base + s * STRIP + G * lane;
            load4(data + k0, value + G * s);
            load4(indices + k0, column + G * s);
        }
#pragma unroll
        for (int j = 0; j < K; ++j) product[j] = value[j] * __ldg(x + column[j]);
    } else {
#pragma unroll
        for (int j = 0; j < K; ++j) {
            const long long k = base + (j / G) * STRIP + G * lane + j % G;
            product[j] = k < nnz ? data[k] * __ldg(x + indices[k]) : V(0);
        }
    }
    const long long row0 = first_end[t];
    // the entry before the tile does not end its row: the tile's first end closes a row the
    // previous tile finished (reading on into this one)
    const bool has_head = t > 0 && !((__ldg(ends + t * K - 1) >> 31) & 1u);

    V carry = V(0);
    int closed = 0;
#pragma unroll
    for (int s = 0; s < STRIPS; ++s) {
        const unsigned w[4] = {words[s].x, words[s].y, words[s].z, words[s].w};
        const int q_mine = lane / 8;
        const int shift = G * (lane & 7);
        int before = closed;
        unsigned mine = 0u;
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            if (q < q_mine) before += __popc(w[q]);
            if (q == q_mine) {
                before += __popc(w[q] & ((1u << shift) - 1u));
                mine = (w[q] >> shift) & 0xfu;
            }
            closed += __popc(w[q]);
        }
        V open = V(0), first_piece = V(0);
        int m = before;
#pragma unroll
        for (int i = 0; i < G; ++i) {
            open += product[G * s + i];
            if ((mine >> i) & 1u) {
                if (m == before) {
                    first_piece = open;
                } else {
                    y[row0 + m] = open;
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
        if (mine != 0u && !(has_head && before == 0)) y[row0 + before] = first_piece + left;
        const V strip_open = __shfl_sync(spla::FULL_MASK, scan, spla::WARP_SIZE - 1);
        carry = marked ? strip_open : carry + strip_open;
    }
    // a row running on past the tile: finish it here, reading on to its end
    const bool runs_on = full && !((words[STRIPS - 1].w >> 31) & 1u) && base + TILE < nnz;
    if (runs_on) {
        const long long row = row0 + closed;
        const long long stop = indptr[row + 1];
        V rest = V(0);
        for (long long k = base + TILE + lane; k < stop; k += spla::WARP_SIZE) rest += data[k] * __ldg(x + indices[k]);
        rest = spla::warp_reduce_sum<V>(rest);
        if (lane == 0) y[row] = carry + rest;
    }
}
