/* ILU(0) on a CSR pattern, in place: the IKJ elimination of spla.linalg._triangular._Elimination.
 *
 * For each row i in order and each of its lower entries (i, k) in column order:
 *     a_ik /= u_kk, then a_im -= a_ik u_km for every stored (i, m) with (k, m) stored, m > k.
 * `where` maps a column of the current row to its position (-1: not stored); it is n entries of
 * -1 on entry and on return. The updates of each entry come in the order the NumPy schedule
 * applies them (k ascending), with the same products and subtractions, so both give the same
 * bits (built with -ffp-contract=off: no fused multiply-adds).
 *
 * Rows must hold sorted, distinct columns and their diagonal at diagonal[i]. A zero pivot turns
 * the entries after it into inf/nan, which the caller checks for; there is no early exit.
 * Returns the number of updates made.
 */
#include <stdint.h>

int64_t spla_ilu0(int64_t n, const int64_t *indptr, const int64_t *indices, const int64_t *diagonal,
                  double *data, int64_t *where) {
    int64_t updates = 0;
    for (int64_t i = 0; i < n; ++i) {
        const int64_t begin = indptr[i], end = indptr[i + 1];
        for (int64_t p = begin; p < end; ++p) where[indices[p]] = p;
        for (int64_t p = begin; p < diagonal[i]; ++p) {
            const int64_t k = indices[p];
            const double multiplier = data[p] / data[diagonal[k]];
            data[p] = multiplier;
            for (int64_t q = diagonal[k] + 1; q < indptr[k + 1]; ++q) {
                const int64_t target = where[indices[q]];
                if (target >= 0) {
                    data[target] -= multiplier * data[q];
                    ++updates;
                }
            }
        }
        for (int64_t p = begin; p < end; ++p) where[indices[p]] = -1;
    }
    return updates;
}
