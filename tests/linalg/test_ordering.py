"""Greedy multicolouring and level sets against plain-loop references (host only)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from precond_systems import graph_laplacian, poisson2d, poisson3d

from spla.errors import InputError
from spla.linalg import _ordering, level_sets
from spla.linalg._ordering import color_permutation, greedy_coloring, smallest_missing, symmetric_pattern


def sequential_greedy(A, visit=None):
    """Textbook greedy colouring of A + A^T, one vertex at a time in the order ``visit``."""
    A = sp.csr_matrix(A)
    n = A.shape[0]
    neighbours = [set() for _ in range(n)]
    rows, cols = A.nonzero()
    for i, j in zip(rows.tolist(), cols.tolist()):
        if i != j:
            neighbours[i].add(j)
            neighbours[j].add(i)
    colors = [-1] * n
    for vertex in (range(n) if visit is None else visit):
        taken = {colors[j] for j in neighbours[vertex]}
        color = 0
        while color in taken:
            color += 1
        colors[vertex] = color
    return np.array(colors)


def assert_valid_coloring(A, colors):
    coo = sp.coo_matrix(A)
    off = coo.row != coo.col
    assert colors.shape == (A.shape[0],)
    assert np.all(colors[coo.row[off]] != colors[coo.col[off]]), "two coupled rows share a colour"
    assert set(np.unique(colors).tolist()) == set(range(int(colors.max()) + 1)), "a colour is skipped"


def _random_nonsymmetric(rng, n, density):
    return (sp.random(n, n, density=density, random_state=rng, format="csr") + sp.eye(n)).tocsr()


def _clique_and_tail(size=70, tail=40):
    """A clique of ``size`` vertices (``size`` colours: past the 62 of one bit mask) and a path."""
    n = size + tail
    dense = np.zeros((n, n))
    dense[:size, :size] = 1.0
    for i in range(size - 1, n - 1):
        dense[i, i + 1] = 1.0
    return sp.csr_matrix(dense + np.eye(n))


@pytest.mark.parametrize("case", ["random-sparse", "random-denser", "poisson2d", "poisson3d", "graph", "clique"])
def test_natural_greedy_equals_the_sequential_loop(rng, case):
    A = {"random-sparse": lambda: _random_nonsymmetric(rng, 300, 0.01),
         "random-denser": lambda: _random_nonsymmetric(rng, 200, 0.08),
         "poisson2d": lambda: poisson2d(17),
         "poisson3d": lambda: poisson3d(6),
         "graph": lambda: graph_laplacian(500),
         "clique": _clique_and_tail}[case]()
    colors = greedy_coloring(A, order="natural")
    assert_valid_coloring(A, colors)
    assert np.array_equal(colors, sequential_greedy(A))
    if case.startswith("poisson"):  # red-black: the parity of the grid coordinates
        assert colors.max() == 1
    if case == "clique":
        assert colors.max() + 1 == 70


def test_random_order_is_the_greedy_in_that_order_and_is_reproducible(rng):
    A = _random_nonsymmetric(rng, 400, 0.01)
    colors = greedy_coloring(A, order="random")
    assert_valid_coloring(A, colors)
    assert np.array_equal(colors, greedy_coloring(A, order="random"))
    rank = np.random.default_rng(_ordering.RANDOM_ORDER_SEED).permutation(400)
    assert np.array_equal(colors, sequential_greedy(A, visit=np.argsort(rank)))


def test_auto_leaves_natural_order_on_a_deep_chain():
    n = 3000  # natural greedy's graph is n levels deep, past max(MIN_NATURAL_LEVEL_CAP, n / 256)
    chain = sp.diags([np.ones(n - 1), np.ones(n)], [-1, 0], format="csr")
    natural = greedy_coloring(chain, order="natural")
    assert natural.max() == 1
    auto = greedy_coloring(chain)
    assert_valid_coloring(chain, auto)
    assert np.array_equal(auto, greedy_coloring(chain, order="random"))
    grid = poisson2d(30)  # 59 levels: natural
    assert np.array_equal(greedy_coloring(grid), greedy_coloring(grid, order="natural"))


def test_smallest_missing_against_a_loop(rng):
    segments = 300
    counts = rng.integers(0, 8, size=segments)
    segment = np.repeat(np.arange(segments), counts)
    for high in (5, 61, 62, 130):  # one bit mask, its last bit, and the sorted path past it
        values = rng.integers(0, high + 1, size=segment.size)
        want = [min(set(range(counts[s] + 2)) - set(values[segment == s].tolist())) for s in range(segments)]
        assert smallest_missing(segment, values, segments).tolist() == want
    assert smallest_missing(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), 4).tolist() == [0] * 4


def test_color_permutation_groups_rows_by_colour():
    colors = np.array([2, 0, 1, 0, 2, 2, 1])
    permutation, color_ptr = color_permutation(colors)
    assert permutation.tolist() == [1, 3, 2, 6, 0, 4, 5]
    assert color_ptr.tolist() == [0, 2, 4, 7]


def test_coloured_reordering_makes_each_colours_block_diagonal(rng):
    A = _random_nonsymmetric(rng, 250, 0.02)
    permutation, color_ptr = color_permutation(greedy_coloring(A))
    B = A[permutation][:, permutation].toarray()
    for c in range(color_ptr.size - 1):
        block = B[color_ptr[c]:color_ptr[c + 1], color_ptr[c]:color_ptr[c + 1]]
        assert np.count_nonzero(block - np.diag(np.diag(block))) == 0
    lower = sp.tril(sp.csr_matrix(B), k=-1, format="csr")
    assert level_sets(lower)[1].size - 1 <= color_ptr.size - 1


def test_level_sets_stop_at_max_levels():
    chain = sp.diags([np.ones(9)], [-1], shape=(10, 10), format="csr")
    assert level_sets(chain, max_levels=9) is None
    order, level_ptr = level_sets(chain, max_levels=10)
    assert order.tolist() == list(range(10)) and level_ptr.size == 11


def test_symmetric_pattern_and_bad_input():
    A = sp.csr_matrix(np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 0.0], [0.0, 3.0, 1.0]]))
    assert symmetric_pattern(A).toarray().tolist() == [[False, False, True], [False, False, True],
                                                       [True, True, False]]
    with pytest.raises(InputError, match="square"):
        greedy_coloring(sp.random(3, 4, density=0.5, format="csr"))
    with pytest.raises(InputError, match="order"):
        greedy_coloring(A, order="largest-first")
    assert greedy_coloring(sp.eye(5, format="csr")).tolist() == [0] * 5


@pytest.mark.parametrize("order", ["natural", "random", "auto"])
def test_the_compiled_colouring_gives_the_numpy_colours(monkeypatch, rng, order):
    from spla.io import native

    if native.greedy_colorer() is None:
        pytest.skip(f"no C compiler here ({native.status()})")
    n = 3000  # a chain deep enough that "auto" leaves natural order, beside ones that keep it
    cases = [_random_nonsymmetric(rng, 300, 0.02), poisson2d(20), poisson3d(7), graph_laplacian(400),
             _clique_and_tail(), sp.diags([np.ones(n - 1), np.ones(n)], [-1, 0], format="csr")]
    compiled = [greedy_coloring(A, order=order) for A in cases]
    monkeypatch.setenv(native.NATIVE_ENV, "off")
    assert native.greedy_colorer() is None
    for A, colors in zip(cases, compiled):
        assert np.array_equal(colors, greedy_coloring(A, order=order))
        assert_valid_coloring(A, colors)


def test_level_sets_in_c_equal_the_frontier_sweep(monkeypatch, rng):
    from spla.io import native

    if native.triangle_leveler() is None:
        pytest.skip(f"no C compiler here ({native.status()})")
    n = 400
    R = sp.random(n, n, density=0.02, format="csr", random_state=rng)
    chain = sp.diags([np.ones(n - 1)], [-1], format="csr")  # n levels
    cases = [sp.tril(R, k=-1, format="csr"), sp.triu(R, k=1, format="csr"), sp.tril(poisson2d(15), k=-1, format="csr"),
             chain, sp.csr_matrix((n, n))]
    compiled = [level_sets(T) for T in cases]
    assert level_sets(chain, max_levels=n) is not None and level_sets(chain, max_levels=n - 1) is None
    assert _ordering._triangle_levels_in_c(R) is None  # neither triangle: the frontier sweep
    monkeypatch.setenv(native.NATIVE_ENV, "off")
    for T, (order, level_ptr) in zip(cases, compiled):
        want_order, want_ptr = level_sets(T)
        assert np.array_equal(order, want_order) and np.array_equal(level_ptr, want_ptr)
    assert level_sets(chain, max_levels=n - 1) is None
