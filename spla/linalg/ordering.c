/* spla.linalg._ordering's loops in C: the greedy colouring (one vertex at a time), the natural
 * order's depth, and a strict triangle's levels.
 *
 * `earlier` (indptr, indices) holds, for each vertex, its neighbours that come first in the
 * visiting order. spla_greedy_color visits the vertices in `order` (a topological order of that
 * graph: every earlier neighbour is visited first) and gives each the smallest colour none of
 * its earlier neighbours has: the colours of the NumPy path, which colours a whole level of that
 * graph at once. `stamp` is scratch of n + 1 entries of -1.
 *
 * spla_natural_depth is the number of levels of that graph when the order is the row index
 * (every earlier neighbour has a smaller index): what decides the "auto" order.
 */
#include <stdint.h>

void spla_greedy_color(int64_t n, const int64_t *order, const int64_t *indptr, const int64_t *indices,
                       int64_t *colors, int64_t *stamp) {
    for (int64_t step = 0; step < n; ++step) {
        const int64_t v = order[step];
        for (int64_t p = indptr[v]; p < indptr[v + 1]; ++p) stamp[colors[indices[p]]] = v;
        int64_t color = 0;
        while (stamp[color] == v) ++color;
        colors[v] = color;
    }
}

int64_t spla_natural_depth(int64_t n, const int64_t *indptr, const int64_t *indices, int64_t *depth) {
    int64_t deepest = 0;
    for (int64_t v = 0; v < n; ++v) {
        int64_t d = 1;
        for (int64_t p = indptr[v]; p < indptr[v + 1]; ++p)
            if (depth[indices[p]] + 1 > d) d = depth[indices[p]] + 1;
        depth[v] = d;
        if (d > deepest) deepest = d;
    }
    return deepest;
}

/* The level of each row of a strict triangle's dependency graph (row i needs every stored
 * (i, k)): 0 without dependencies, else one more than its deepest dependency. `lower`: every k < i,
 * so rows in index order are a topological order; else every k > i, and the reverse is. Returns
 * the number of levels. spla.linalg._ordering.level_sets sorts the rows by it. */
int64_t spla_triangle_levels(int64_t n, const int64_t *indptr, const int64_t *indices, int64_t lower,
                             int64_t *level) {
    int64_t levels = 0;
    for (int64_t step = 0; step < n; ++step) {
        const int64_t i = lower ? step : n - 1 - step;
        int64_t l = 0;
        for (int64_t p = indptr[i]; p < indptr[i + 1]; ++p)
            if (level[indices[p]] + 1 > l) l = level[indices[p]] + 1;
        level[i] = l;
        if (l + 1 > levels) levels = l + 1;
    }
    return levels;
}
