#include <stdint.h>
#include <stdlib.h>
#include <string.h>
typedef int32_t I; typedef double V;
/* out_indptr zeroed by the caller, n_cols + 1 */
int64_t tr(int64_t n_rows, int64_t n_cols, const I *indptr, const I *indices, const V *data,
           I *out_indptr, I *out_indices, V *out_data, int shift) {
    int64_t nnz = indptr[n_rows];
    for (int64_t p = 0; p < nnz; ++p) out_indptr[indices[p] + 1]++;
    for (int64_t c = 0; c < n_cols; ++c) out_indptr[c + 1] += out_indptr[c];
    int64_t n_buckets = ((n_cols - 1) >> shift) + 1;
    int64_t *next = malloc(sizeof(int64_t) * (n_buckets + 1));
    I *cols = malloc(sizeof(I) * nnz), *rows = malloc(sizeof(I) * nnz);
    V *vals = malloc(sizeof(V) * nnz);
    if (!next || !cols || !rows || !vals) { free(next); free(cols); free(rows); free(vals); return -1; }
    for (int64_t b = 0; b < n_buckets; ++b) next[b] = out_indptr[b << shift];
    for (int64_t i = 0; i < n_rows; ++i)
        for (I p = indptr[i]; p < indptr[i + 1]; ++p) {
            int64_t at = next[indices[p] >> shift]++;
            cols[at] = indices[p]; rows[at] = (I)i; vals[at] = data[p];
        }
    I *fill = malloc(sizeof(I) * n_cols);
    memcpy(fill, out_indptr, sizeof(I) * n_cols);
    for (int64_t q = 0; q < nnz; ++q) {
        I at = fill[cols[q]]++;
        out_indices[at] = rows[q]; out_data[at] = vals[q];
    }
    free(fill); free(next); free(cols); free(rows); free(vals);
    return 0;
}
int64_t naive(int64_t n_rows, int64_t n_cols, const I *indptr, const I *indices, const V *data,
           I *out_indptr, I *out_indices, V *out_data, int shift) {
    int64_t nnz = indptr[n_rows];
    for (int64_t p = 0; p < nnz; ++p) out_indptr[indices[p] + 1]++;
    for (int64_t c = 0; c < n_cols; ++c) out_indptr[c + 1] += out_indptr[c];
    I *fill = malloc(sizeof(I) * n_cols);
    memcpy(fill, out_indptr, sizeof(I) * n_cols);
    for (int64_t i = 0; i < n_rows; ++i)
        for (I p = indptr[i]; p < indptr[i + 1]; ++p) {
            I at = fill[indices[p]]++;
            out_indices[at] = (I)i; out_data[at] = data[p];
        }
    free(fill);
    return 0;
}
