// abs_product: out[r] = the sum over row r of |a| |x[column]|, in double: || |A| |x| || is the scale
// of an SpMV's rounding error (spla/bench/check.py), and spla.tune checks each candidate kernel's
// product against the rule's relative to it on the GPU.
//
// It reads A's CSR arrays as they are: no copy of |A| beside A on the device, and no plan (a
// structured kernel's plan holds its own copy of the values, or a palette of them). A warp a row:
// it runs once a tuning, and a long row must not leave one thread with all of it.
//
// Constraints: blockDim.x a multiple of 32 (spla::row_groups); grid-stride, so any grid covers any
// n_rows.
#include "common.cuh"

template <typename V, typename I>
__global__ void spla_abs_product(long long n_rows, const I* __restrict__ indptr, const I* __restrict__ indices,
                                 const V* __restrict__ data, const V* __restrict__ x, double* __restrict__ out) {
    spla::row_groups<double, spla::WARP_SIZE>(
        n_rows, [&](long long row, double total) { out[row] = total; },
        [&](long long row, int lane) {
            const I start = indptr[row];
            const I length = indptr[row + 1] - start;
            double sum = 0.0;
            for (I k = lane; k < length; k += spla::WARP_SIZE) {
                const double value = fabs(static_cast<double>(data[start + k]));
                sum += value * fabs(static_cast<double>(__ldg(x + indices[start + k])));
            }
            return sum;
        });
}
