"""A small catalogue of test systems for the preconditioner tests (SciPy only).

Imported by the tests in this folder as ``from precond_systems import ...`` (pytest's
prepend import mode puts this folder on sys.path).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def _line(n):
    return sp.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1], format="csr")


def poisson2d(n):
    T, eye = _line(n), sp.eye(n, format="csr")
    return (sp.kron(eye, T) + sp.kron(T, eye)).tocsr()


def poisson3d(n):
    T, eye = _line(n), sp.eye(n, format="csr")
    return (sp.kron(sp.kron(eye, eye), T) + sp.kron(sp.kron(eye, T), eye) + sp.kron(sp.kron(T, eye), eye)).tocsr()


def anisotropic2d(n, epsilon=0.01):
    """-eps u_xx - u_yy: strong coupling along one axis only."""
    T, eye = _line(n), sp.eye(n, format="csr")
    return (epsilon * sp.kron(eye, T) + sp.kron(T, eye)).tocsr()


def jumping2d(n, jump=1e2):
    """-div(k grad u) on an n x n cell grid, k = jump in a central square and 1 elsewhere (Dirichlet)."""
    k = np.ones((n, n))
    k[n // 4: 3 * n // 4, n // 4: 3 * n // 4] = jump
    index = np.arange(n * n).reshape(n, n)
    rows, cols, vals = [], [], []
    for a, b in ((index[:, :-1], index[:, 1:]), (index[:-1, :], index[1:, :])):
        ka, kb = k.ravel()[a.ravel()], k.ravel()[b.ravel()]
        w = 2 * ka * kb / (ka + kb)  # harmonic mean across the face
        rows += [a.ravel(), b.ravel()]
        cols += [b.ravel(), a.ravel()]
        vals += [-w, -w]
    off = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n * n, n * n))
    boundary = np.zeros((n, n))
    boundary[0, :] += 2 * k[0, :]
    boundary[-1, :] += 2 * k[-1, :]
    boundary[:, 0] += 2 * k[:, 0]
    boundary[:, -1] += 2 * k[:, -1]
    diagonal = -np.asarray(off.sum(axis=1)).ravel() + boundary.ravel()
    return (off + sp.diags(diagonal)).tocsr()


def graph_laplacian(n, degree=6, shift=1e-2, seed=7):
    """L + shift I for a random undirected graph with about n * degree / 2 edges."""
    rng = np.random.default_rng(seed)
    edges = rng.integers(0, n, size=(n * degree // 2, 2))
    edges = edges[edges[:, 0] != edges[:, 1]]
    W = sp.csr_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])), shape=(n, n))
    W = ((W + W.T) > 0).astype(np.float64)
    laplacian = sp.diags(np.asarray(W.sum(axis=1)).ravel()) - W
    return (laplacian + shift * sp.eye(n)).tocsr()


def convection_diffusion2d(n, peclet=20.0):
    """-Laplace u + c . grad u, first-order upwind: nonsymmetric, diagonally dominant."""
    h = 1.0 / (n + 1)
    T, eye = _line(n), sp.eye(n, format="csr")
    upwind = sp.diags([-np.ones(n - 1), np.ones(n)], [-1, 0], format="csr")  # backward difference
    convection = peclet * h * (sp.kron(eye, upwind) + 0.5 * sp.kron(upwind, eye))
    return (sp.kron(eye, T) + sp.kron(T, eye) + convection).tocsr()


SPD_SYSTEMS = {
    "poisson2d": lambda: poisson2d(20),
    "poisson3d": lambda: poisson3d(8),
    "anisotropic2d": lambda: anisotropic2d(20),
    "jumping2d": lambda: jumping2d(20),
    "graph_laplacian": lambda: graph_laplacian(400),
}
NONSYMMETRIC_SYSTEMS = {
    "convection_diffusion2d": lambda: convection_diffusion2d(20),
}
