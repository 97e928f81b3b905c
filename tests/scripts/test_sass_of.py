"""scripts/sass_of.py: the diff of two dumps (any machine) and one dump (where nvcc and cuobjdump are)."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "sass_of.py"
spec = importlib.util.spec_from_file_location("sass_of", SCRIPT)
sass_of = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sass_of)


def _function(*lines: str) -> str:
    """cuobjdump's layout: an address comment, the instruction, its encoding."""
    return "\n".join(f"        /*{16 * i:04x}*/                   {line} /* 0x000fe200078e00ff */"
                     for i, line in enumerate(lines)) + "\n"


def test_diff_tells_reordered_registers_from_moved_loads(tmp_path):
    before, after = tmp_path / "before", tmp_path / "after"
    before.mkdir(), after.mkdir()
    same = _function("S2R R0, SR_TID.X ;", "@P0 LDG.E.64 R2, desc[UR4][R2.64] ;", "EXIT ;")
    (before / "same.sass").write_text(same)
    (after / "same.sass").write_text(same.replace("/*0010*/", "/*0010*/ "))  # spacing only
    (before / "renamed.sass").write_text(_function("IMAD R4, R0, 0x4, RZ ;", "LDG.E R5, desc[UR4][R4.64] ;",
                                                   "FFMA R6, R5, R5, R6 ;"))
    (after / "renamed.sass").write_text(_function("LEA R7, R0, RZ, 0x2 ;", "LDG.E R8, desc[UR4][R7.64] ;",
                                                  "FFMA R6, R8, R8, R6 ;", "NOP ;"))
    (before / "moved.sass").write_text(_function("LDG.E R5, desc[UR4][R4.64] ;", "STS [R1], R5 ;"))
    (after / "moved.sass").write_text(_function("LDG.E R5, desc[UR4][R4.64] ;", "@!P1 LDG.E R6, desc[UR4][R4.64] ;",
                                                "STS [R1], R5 ;"))
    (before / "gone.sass").write_text(same)
    (after / "new.sass").write_text(same)
    lines = sass_of.diff(before, after)
    assert "changed, same memory and math instructions: renamed (3 -> 4 instructions)" in lines
    assert "changed: moved (2 -> 3 instructions; LDG 1 -> 2)" in lines
    assert "only before: gone" in lines and "only after: new" in lines
    assert lines[-1] == ("1 identical, 1 changed with the same memory and math instructions, 1 changed in them, "
                         "1 only before, 1 only after")


def test_an_unknown_kernel_file_is_refused_with_the_known_ones():
    with pytest.raises(SystemExit, match="not a declared kernel file: nope.cu .*spmv_scalar.cu"):
        sass_of.sources(["nope.cu"])


def _cuobjdump():
    try:
        return sass_of.find_cuobjdump(None)
    except SystemExit:
        return None


@pytest.mark.skipif(shutil.which("nvcc") is None or _cuobjdump() is None, reason="needs nvcc and cuobjdump")
def test_a_dump_has_every_declared_function_and_matches_itself(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    assert sass_of.main(["dump", str(first), "spmv_scalar.cu"]) == 0
    (source,) = sass_of.sources(["spmv_scalar.cu"])
    assert len(list(first.glob("*.sass"))) == len(source.names) > 0
    assert sass_of.main(["dump", str(second), "spmv_scalar.cu"]) == 0
    assert sass_of.diff(first, second)[-1].startswith(f"{len(source.names)} identical, 0 changed")
