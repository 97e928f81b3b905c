/* The CPU backend's CSR SpMV, y[i] = sum_p data[p] * x[indices[p]] for rows [begin, end).
 *
 * Each row is summed in its stored order in the value type, as SciPy's csr_matvec does, so a row
 * gets SciPy's bits (built without floating-point contraction: -std=c99). spla/backends/cpu.py
 * runs disjoint row ranges on several threads (ctypes releases the GIL for the call).
 */
#include <stdint.h>

#define SPLA_CSR_SPMV(NAME, VALUE, INDEX)                                                               \
    void NAME(int64_t begin, int64_t end, const INDEX *indptr, const INDEX *indices, const VALUE *data, \
              const VALUE *x, VALUE *y) {                                                               \
        for (int64_t i = begin; i < end; ++i) {                                                         \
            VALUE sum = 0;                                                                              \
            for (INDEX p = indptr[i]; p < indptr[i + 1]; ++p) sum += data[p] * x[indices[p]];          \
            y[i] = sum;                                                                                 \
        }                                                                                               \
    }

SPLA_CSR_SPMV(spla_csr_spmv_f32_i32, float, int32_t)
SPLA_CSR_SPMV(spla_csr_spmv_f64_i32, double, int32_t)
SPLA_CSR_SPMV(spla_csr_spmv_f32_i64, float, int64_t)
SPLA_CSR_SPMV(spla_csr_spmv_f64_i64, double, int64_t)
