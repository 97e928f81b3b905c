// value_rounds.cuh: a lane's UNROLL value loads of one round, for the kernels of warp's mapping
// that read a row's values in rounds of UNROLL loads LANES apart (spmv_band.cu, spmv_rle.cu).
//
// Rows that start on one L1 bank (float32 rows of 32, 64, ... entries, float64 rows of 16, 32, ...:
// whole 128-byte lines) make every row of a row group ask that bank in one value load, one row a
// cycle: 16-way at 2 lanes.
// The rotated order takes each row's UNROLL loads starting at a turn set by its row number and
// puts the values back in order before the sum, so one load spreads over UNROLL offsets and the
// sums, hence the bits, do not change. The host runs it where a warp piles at least half its rows
// on one bank, at 2-8 lanes (spla.planning.banks.rotates: float32 rle, session 48; float32 and
// float64 band, session 49; rle's float64 keeps the plain loads, whose registers it needs).
#pragma once

#include "launch_config.cuh"  // SPLA_VALUE_UNROLL: spla.planning.banks.UNROLL, which bank_pile counts in

namespace spla {
constexpr int UNROLL = SPLA_VALUE_UNROLL;
static_assert(UNROLL == 4, "the rotation's two steps turn four values");

// v[u] = data[at + u * LANES]; with ROTATE, loaded in the order u + turn (mod UNROLL) and turned back.
template <bool ROTATE, typename V, typename I, int LANES>
__device__ __forceinline__ void load_round(V (&v)[UNROLL], const V* __restrict__ data, I at, long long row) {
    if constexpr (ROTATE) {
        const int turn = static_cast<int>(row) & (UNROLL - 1);
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) v[u] = data[at + ((u + turn) & (UNROLL - 1)) * LANES];
        if (turn & 1) {  // v[u] holds entry u + turn: turn right by one ...
            const V last = v[3];
            v[3] = v[2];
            v[2] = v[1];
            v[1] = v[0];
            v[0] = last;
        }
        if (turn & 2) {  // ... and by two
            V t = v[0];
            v[0] = v[2];
            v[2] = t;
            t = v[1];
            v[1] = v[3];
            v[3] = t;
        }
    } else {
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) v[u] = data[at + u * LANES];
    }
}
}  // namespace spla
