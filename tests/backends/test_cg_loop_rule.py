"""CgLoop's grid rule (spla.backends.cuda.solvers.loop_blocks_per_sm), checked without a GPU."""

from __future__ import annotations

import pytest

from spla.backends.cuda import solvers


def test_small_systems_get_small_grids(monkeypatch):
    sizes = [1, 2**16, 2**17, 2**17 + 1, 2**18, 2**20, 2**20 + 1, 2**22]
    blocks = [solvers.loop_blocks_per_sm(n) for n in sizes]
    assert blocks == sorted(blocks), "more rows never get fewer blocks an SM"
    assert blocks[0] == solvers.CG_LOOP_BLOCKS[0][1] and blocks[-1] == solvers.CG_LOOP_BLOCKS_LARGE
    for rows, per_sm in solvers.CG_LOOP_BLOCKS:  # each bound belongs to its own entry
        assert solvers.loop_blocks_per_sm(rows) == per_sm
    monkeypatch.setattr(solvers, "CG_LOOP_BLOCKS_PER_SM", 3)
    assert {solvers.loop_blocks_per_sm(n) for n in sizes} == {3}


@pytest.mark.parametrize("blocks", [1, 33, 64, 1056])
def test_the_barrier_has_a_line_for_each_group_of_32(blocks):
    words = solvers.barrier_words(blocks)
    assert words % 32 == 0 and words // 32 == 2 + -(-blocks // 32)
