/* The CPU backend's CSR SpMV and SpMM over rows [begin, end):
 *   spmv: y[i] = sum_p data[p] * x[indices[p]];
 *   spmv_uniform: the same where every stored value is data[0] (a pattern matrix's ones);
 *   spmm: Y[i, :] = sum_p data[p] * X[indices[p], :], X and Y row-major with k columns.
 *
 * Each row is summed in its stored order in the value type, as SciPy's csr_matvec and
 * csr_matvecs do (the latter from zero, k entries at a time), so a row gets SciPy's bits (built
 * with -ffp-contract=off: no fused multiply-adds). spla/backends/cpu.py runs disjoint row ranges
 * on several threads (ctypes releases the GIL for the call).
 */
#include <stdint.h>

/* AT is the value of nonzero p: data[p], or, where every stored value is data[0] (bit for bit;
 * spmv_uniform), that value read once before the loop (FIRST): the loop then reads the column indices
 * alone, 4 bytes a nonzero instead of 8 or 12, and each product is still the stored value times
 * x[...], so the bits are the same. */
#define SPLA_CSR_SPMV(NAME, VALUE, INDEX, FIRST, AT)                                                    \
    void NAME(int64_t begin, int64_t end, const INDEX *indptr, const INDEX *indices, const VALUE *data, \
              const VALUE *x, VALUE *y) {                                                               \
        FIRST;                                                                                          \
        for (int64_t i = begin; i < end; ++i) {                                                         \
            VALUE sum = 0;                                                                              \
            for (INDEX p = indptr[i]; p < indptr[i + 1]; ++p) sum += AT * x[indices[p]];               \
            y[i] = sum;                                                                                 \
        }                                                                                               \
    }

SPLA_CSR_SPMV(spla_csr_spmv_f32_i32, float, int32_t, (void)0, data[p])
SPLA_CSR_SPMV(spla_csr_spmv_f64_i32, double, int32_t, (void)0, data[p])
SPLA_CSR_SPMV(spla_csr_spmv_f32_i64, float, int64_t, (void)0, data[p])
SPLA_CSR_SPMV(spla_csr_spmv_f64_i64, double, int64_t, (void)0, data[p])
SPLA_CSR_SPMV(spla_csr_spmv_uniform_f32_i32, float, int32_t, const float value = data[0], value)
SPLA_CSR_SPMV(spla_csr_spmv_uniform_f64_i32, double, int32_t, const double value = data[0], value)
SPLA_CSR_SPMV(spla_csr_spmv_uniform_f32_i64, float, int64_t, const float value = data[0], value)
SPLA_CSR_SPMV(spla_csr_spmv_uniform_f64_i64, double, int64_t, const double value = data[0], value)

/* SpMM sums W columns of a row at a time in registers (a sum kept in Y would go through memory for
 * every nonzero): W = 16 while 16 are left, then 8, then the rest (1-7) in one more pass. Each
 * Y[i, c] still adds its products in the row's order from zero, as csr_matvecs does. */
#define SPLA_SPMM_COLUMNS(VALUE, INDEX, W)                                                              \
    {                                                                                                   \
        VALUE acc[W];                                                                                   \
        for (int c = 0; c < W; ++c) acc[c] = 0;                                                         \
        for (INDEX p = indptr[i]; p < indptr[i + 1]; ++p) {                                             \
            const VALUE a = data[p];                                                                    \
            const VALUE *x = X + (int64_t)indices[p] * k + c0;                                          \
            for (int c = 0; c < W; ++c) acc[c] += a * x[c];                                             \
        }                                                                                               \
        for (int c = 0; c < W; ++c) y[c0 + c] = acc[c];                                                 \
    }

#define SPLA_CSR_SPMM(NAME, VALUE, INDEX)                                                               \
    void NAME(int64_t begin, int64_t end, int64_t k, const INDEX *restrict indptr,                      \
              const INDEX *restrict indices, const VALUE *restrict data, const VALUE *restrict X,       \
              VALUE *restrict Y) {                                                                      \
        for (int64_t i = begin; i < end; ++i) {                                                         \
            VALUE *y = Y + i * k;                                                                       \
            int64_t c0 = 0;                                                                             \
            for (; c0 + 16 <= k; c0 += 16) SPLA_SPMM_COLUMNS(VALUE, INDEX, 16)                          \
            if (c0 + 8 <= k) { SPLA_SPMM_COLUMNS(VALUE, INDEX, 8) c0 += 8; }                            \
            switch (k - c0) {                                                                           \
                case 7: SPLA_SPMM_COLUMNS(VALUE, INDEX, 7) break;                                       \
                case 6: SPLA_SPMM_COLUMNS(VALUE, INDEX, 6) break;                                       \
                case 5: SPLA_SPMM_COLUMNS(VALUE, INDEX, 5) break;                                       \
                case 4: SPLA_SPMM_COLUMNS(VALUE, INDEX, 4) break;                                       \
                case 3: SPLA_SPMM_COLUMNS(VALUE, INDEX, 3) break;                                       \
                case 2: SPLA_SPMM_COLUMNS(VALUE, INDEX, 2) break;                                       \
                case 1: SPLA_SPMM_COLUMNS(VALUE, INDEX, 1) break;                                       \
                default: break;                                                                         \
            }                                                                                           \
        }                                                                                               \
    }

SPLA_CSR_SPMM(spla_csr_spmm_f32_i32, float, int32_t)
SPLA_CSR_SPMM(spla_csr_spmm_f64_i32, double, int32_t)
SPLA_CSR_SPMM(spla_csr_spmm_f32_i64, float, int64_t)
SPLA_CSR_SPMM(spla_csr_spmm_f64_i64, double, int64_t)
