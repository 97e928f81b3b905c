// spmm_init_rows: the starting value of the rows that SpMM's segments add into.
//
// A row long enough to be cut into segments (spmm_fused's segment class, spmm_warp's
// SEGMENTED instances) is summed by atomicAdd from several warps, so its entries of out
// must hold beta * y_in (or 0) first. This is that write as a launch of its own, so the
// whole of a fused or adaptive SpMM is a run of launches that spla.spmm's hot path packs.
#include "common.cuh"

// out[rows[i], c] = beta * y_in[rows[i], c] (use_y_in) or 0, for c < k: the
// starting value of the rows the segments then add into. One thread per entry.
template <typename T, typename I>
__global__ void __launch_bounds__(256)
spla_spmm_init_rows(const I* __restrict__ rows, long long n_rows, long long k, T beta,
                    const T* __restrict__ y_in, long long ldy, int use_y_in, T* __restrict__ out, long long ldo) {
    const long long i = spla::global_thread_id();
    if (i >= n_rows * k) return;
    const long long r = static_cast<long long>(rows[i / k]);
    const long long c = i % k;
    out[r * ldo + c] = use_y_in ? beta * y_in[r * ldy + c] : T(0);
}
