"""The ``spla`` command line (click).

Each command family lives in its own module here and registers itself on
:data:`main`. Errors a user can cause (:class:`spla.SplaError`) print as one
line on stderr with a non-zero exit code, never a traceback.
"""

from __future__ import annotations

import importlib
import sys

import click

from .. import cuda
from ..errors import SplaError


class SplaGroup(click.Group):
    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except SplaError as exc:
            click.echo(f"spla: error: {exc}", err=True)
            sys.exit(exc.exit_code)
        except click.UsageError as exc:
            # click's own usage text is three lines; keep every bad argument to one
            command = f"spla {exc.ctx.command_path.split(' ', 1)[1]}" if exc.ctx and " " in exc.ctx.command_path \
                else "spla"
            click.echo(f"spla: error: {exc.format_message()} (see `{command} --help`)", err=True)
            sys.exit(exc.exit_code)
        except FileNotFoundError as exc:
            click.echo(f"spla: error: {exc.filename or exc}: no such file", err=True)
            sys.exit(2)
        except KeyboardInterrupt:
            click.echo("spla: interrupted", err=True)
            sys.exit(130)
        except MemoryError as exc:
            if cuda.is_out_of_memory(exc):  # CuPy's error is a MemoryError too: the GPU line below
                error = cuda.device_memory_error(exc, "computation")
                click.echo(f"spla: error: {error}", err=True)
                sys.exit(error.exit_code)
            # an allocation no estimate foresaw (host memory): one line, not a NumPy traceback
            detail = str(exc).split("\n")[0][:200]
            click.echo(f"spla: error: out of host memory ({detail or type(exc).__name__}); try a smaller "
                       f"matrix, or free memory", err=True)
            sys.exit(1)
        except Exception as exc:
            # a GPU allocation that no size check foresaw: one line with the sizes, not a CUDA traceback
            if not cuda.is_out_of_memory(exc):
                raise
            error = cuda.device_memory_error(exc, "computation")
            click.echo(f"spla: error: {error}", err=True)
            sys.exit(error.exit_code)


@click.group(cls=SplaGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="spla")
def main():
    """spla: sparse-first linear algebra on the GPU (CUDA) and the CPU (SciPy).

    SOURCE arguments accept a Matrix Market file (.mtx, .mtx.gz), a SNAP edge
    list (.txt), or a generator spec such as gen:weblike, gen:poisson2d:1024
    or gen:random:100000:16 (see `spla generate --help`).
    """


# One module per command family; each adds its commands to `main`.
COMMAND_MODULES = ["spmv", "solve", "spmm", "gemm", "matrices"]

for _name in COMMAND_MODULES:
    importlib.import_module(f"{__name__}.{_name}")
