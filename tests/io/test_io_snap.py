"""SNAP edge lists against networkx / a direct construction."""

from __future__ import annotations

import gzip

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from spla import MatrixFormatError
from spla.io.snap import read_snap

HEADER = "# Directed graph (each unordered pair of nodes is saved once): test.txt\n# Nodes: 5 Edges: 4\n" \
         "# FromNodeId\tToNodeId\n"


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_bytes(gzip.compress(text.encode()) if name.endswith(".gz") else text.encode())
    return path


@pytest.mark.parametrize("name", ["g.txt", "g.txt.gz"])
def test_random_graph_matches_networkx(tmp_path, rng, name):
    n, m = 200, 1500
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    text = HEADER + "".join(f"{a}\t{b}\n" for a, b in zip(src, dst))
    A, info = read_snap(write(tmp_path, name, text))
    size = int(max(src.max(), dst.max())) + 1
    graph = nx.DiGraph()
    graph.add_nodes_from(range(size))
    graph.add_edges_from(zip(src.tolist(), dst.tolist()))
    ref = nx.to_scipy_sparse_array(graph, nodelist=range(size), format="csr")
    assert A.shape == (size, size)
    np.testing.assert_array_equal(A.to_scipy().toarray(), ref.toarray())
    assert info["edges_in_file"] == m
    assert info["duplicates_merged"] == m - graph.number_of_edges() and info["duplicates_summed"] == 0
    assert info["parser"] == "numpy.fromstring"


def test_noncontiguous_ids_keep_their_numbers(tmp_path):
    A, _ = read_snap(write(tmp_path, "g.txt", "# c\n3 10\n10 3\n"))
    assert A.shape == (11, 11)  # max id + 1; ids 0..2 and 4..9 are empty rows
    assert A.nnz == 2 and A.to_scipy()[3, 10] == 1 and A.to_scipy()[10, 3] == 1


def test_duplicates_collapse_to_one_and_self_loops_kept(tmp_path):
    A, info = read_snap(write(tmp_path, "g.txt", "0 1\n0 1\n0 1\n2 2\n"))
    np.testing.assert_array_equal(A.to_scipy().toarray(), [[0, 1, 0], [0, 0, 0], [0, 0, 1]])
    assert info["duplicates_merged"] == 2 and info["duplicates_summed"] == 0


def test_spaces_tabs_crlf_blank_and_inner_comments(tmp_path):
    A, info = read_snap(write(tmp_path, "g.txt", "#h\r\n0  1\r\n\r\n# mid\r\n 1\t\t2 \r\n"))
    assert info["parser"] == "spla line scanner"
    expected = sp.csr_matrix(([1.0, 1.0], ([0, 1], [1, 2])), shape=(3, 3)).toarray()
    np.testing.assert_array_equal(A.to_scipy().toarray(), expected)


def test_only_comments_is_an_empty_matrix(tmp_path):
    A, info = read_snap(write(tmp_path, "g.txt", "# nothing here\n"))
    assert A.shape == (0, 0) and A.nnz == 0 and info["comments"] == ["nothing here"]


@pytest.mark.parametrize("text, line, words", [
    ("# h\n0 1\n-1 2\n", 3, "source node id '-1' is negative"),
    ("0 1\n1 2 3\n", 2, "expected 2 fields"),
    ("0 1\n5\n", 2, "expected 2 fields"),
    ("# a\n# b\n0 x\n", 3, "destination node id 'x' is not a non-negative integer"),
    ("0 1.5\n", 1, "not a non-negative integer"),
])
def test_bad_lines_are_named(tmp_path, text, line, words):
    path = write(tmp_path, "bad.txt", text)
    with pytest.raises(MatrixFormatError) as caught:
        read_snap(path)
    assert str(caught.value).startswith(f"{path}:{line}: ")
    assert words in str(caught.value)
