"""GPU memory errors without a GPU: a pretend device with 1 MiB free."""


from __future__ import annotations

import pytest
from click.testing import CliRunner

import spla
from spla import DeviceMemoryError, device
from spla import io as spla_io
from spla.cli import main

WIDE = 2**31 + 5  # a dimension no int32 can index


# ===================================================================== GPU memory, without a GPU
class _FakeCupy:
    """Just enough of a cupy module for to_device to reach its memory check."""

    class ndarray:  # noqa: N801 - nothing is ever one of these
        pass

    class cuda:  # noqa: N801 - mirrors cupy.cuda
        class memory:  # noqa: N801
            class OutOfMemoryError(MemoryError):
                pass

    @staticmethod
    def asarray(a):
        raise _FakeCupy.cuda.memory.OutOfMemoryError(int(a.nbytes) + (1 << 40), 0)


@pytest.fixture
def tiny_gpu(monkeypatch):
    """A pretend GPU with 1 MiB free (no CUDA needed)."""
    for module in (device,):
        monkeypatch.setattr(module, "require_cupy", lambda: _FakeCupy)
        monkeypatch.setattr(module, "_import_cupy", lambda: _FakeCupy)
        monkeypatch.setattr(module, "free_device_memory", lambda: 1 << 20)
    return _FakeCupy


def test_to_device_refuses_a_matrix_larger_than_free_memory(tiny_gpu):
    A = spla.load("gen:random:20000:16")
    with pytest.raises(DeviceMemoryError) as caught:
        A.to_device()
    message = str(caught.value)
    assert f"{A.nbytes / 2**30:.2f} GiB" in message and "0.00 GiB is free" in message
    assert "--device cpu" in message
    assert caught.value.needed == A.nbytes and caught.value.free == 1 << 20


def test_out_of_memory_during_the_copy_becomes_device_memory_error(tiny_gpu, monkeypatch):
    for module in (device,):  # the check passes, the copy fails
        monkeypatch.setattr(module, "free_device_memory", lambda: 1 << 50)
    A = spla.load("gen:random:100:4")
    with pytest.raises(DeviceMemoryError, match="--device cpu"):
        A.to_device()


def test_cli_prints_device_memory_errors_as_one_line(tiny_gpu, monkeypatch):
    from spla.bench import report

    monkeypatch.setattr(report, "device_name", lambda device: "pretend GPU")
    result = CliRunner().invoke(main, ["spmv", "gen:random:20000:16", "--device", "gpu", "--kernel", "scalar"])
    assert result.exit_code == 1, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "GiB" in lines[0] and "--device cpu" in lines[0], result.stderr


def test_cli_turns_a_cuda_out_of_memory_traceback_into_one_line(tiny_gpu, monkeypatch):
    def boom(*args, **kwargs):
        raise _FakeCupy.cuda.memory.OutOfMemoryError(3 << 30, 0)

    monkeypatch.setattr(spla_io, "load", boom)
    result = CliRunner().invoke(main, ["info", "gen:random:10:2"])
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "3.00 GiB" in lines[0] and "--device cpu" in lines[0], result.stderr


