// Shared device helpers for spla's kernels. Every .cu file includes this one.
// Keep it free of __global__ functions: each kernel file owns its kernels.
#pragma once

namespace spla {

constexpr unsigned FULL_MASK = 0xffffffffu;
constexpr int WARP_SIZE = 32;

// Sum over the `width` lanes of a (sub-)warp group; lane 0 of each group holds
// the total. width must be a power of two <= 32.
template <typename T, int width = WARP_SIZE>
__device__ __forceinline__ T warp_reduce_sum(T v) {
#pragma unroll
    for (int offset = width / 2; offset > 0; offset /= 2) {
        v += __shfl_down_sync(FULL_MASK, v, offset, width);
    }
    return v;
}

}  // namespace spla
