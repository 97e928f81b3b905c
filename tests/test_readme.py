"""The README's Python examples run as written (those that need a GPU or MPI on a machine that has them)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from spla import device

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def _needs(code: str) -> str | None:
    if "mpi4py" in code or "spla.distributed" in code:
        return "MPI (run under mpiexec; covered by tests/distributed)"
    if "cupy" in code and not device.gpu_available():
        return "a GPU"
    return None


def test_the_readme_has_examples():
    assert len(BLOCKS) >= 5


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index, tmp_path, monkeypatch):
    code = BLOCKS[index]
    reason = _needs(code)
    if reason:
        pytest.skip(f"example {index} needs {reason}")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, f"README.md example {index}", "exec"), {"__name__": "__readme__"})


def test_readme_console_example_has_the_cli_headings():
    """The headings of the README's `spla spmv` transcript are the ones the CLI prints today."""
    from click.testing import CliRunner

    from spla.cli import main

    console = re.search(r"```console\n\$ spla spmv (\S+)\n(.*?)```", README.read_text(), flags=re.S)
    assert console is not None
    headings = [line.split() for line in console.group(2).splitlines()
                if line.startswith(("load imbalance", "kernel "))]
    assert len(headings) == 2
    result = CliRunner().invoke(main, ["spmv", "gen:poisson2d:32", "--device", "cpu", "--repeat", "1"])
    assert result.exit_code == 0, result.output
    printed = [line.split() for line in result.output.splitlines()]
    for heading in headings:
        assert heading in printed, (heading, result.output)


def test_the_auto_table_names_every_class_its_kernel_and_the_thresholds_as_the_code_has_them():
    """README's "How auto chooses": each class of AUTO_RULE appears as `class` → `kernel` with the
    kernel the rule runs, and each AutoThresholds field quoted as `name` (value) has that value."""
    import dataclasses

    from spla.planning import spmv as planning

    text = README.read_text()
    table = text[text.index("### How auto chooses"):text.index("### Tuning")]
    pairs = dict(re.findall(r"`([a-z0-9-]+)` → `([a-z0-9:]+)`", table))
    assert pairs == planning.AUTO_RULE
    fields = {f.name for f in dataclasses.fields(planning.AutoThresholds)}
    quoted = re.findall(r"`([a-z_]+)` \(([0-9.]+)\)", table)
    assert {name for name, _ in quoted} == fields - {"huge_share", "bitmap_rows"}  # inf, and a switch
    for name, value in quoted:
        assert float(value) == getattr(planning.AUTO, name), name
