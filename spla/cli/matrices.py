"""``spla fetch`` (catalogue downloads) and ``spla generate`` (synthetic matrices to .mtx)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import click

from ..errors import InputError
from ..io import catalog, generators
from . import main


def _present(entry, folder: Path) -> str:
    for candidate in (folder / entry.file_name, folder / (entry.file_name + ".gz")):
        if candidate.is_file():
            return candidate.name
    if (folder / f"{entry.name}.tar.gz.part").is_file():
        return "partial"
    return ""


def _list_catalogue(folder: Path, as_json: bool) -> None:
    rows = [{**entry.as_dict(), "present": _present(entry, folder)} for entry in catalog.entries()]
    if as_json:
        click.echo(json.dumps({"dir": str(folder), "matrices": rows}, indent=1))
        return
    header = f"{'name':<18} {'group':<11} {'rows':>10} {'cols':>10} {'nnz':>12}  {'symmetry':<9} {'kind':<28} present"
    click.echo(header)
    click.echo("-" * len(header))
    for row in rows:
        kind = row["kind"][:28]
        click.echo(f"{row['name']:<18} {row['group']:<11} {row['rows']:>10,} {row['cols']:>10,} {row['nnz']:>12,}  "
                   f"{row['symmetry']:<9} {kind:<28} {row['present'] or '-'}")
    have = sum(1 for row in rows if row["present"] and row["present"] != "partial")
    click.echo(f"{have} of {len(rows)} present in {folder}/; suites: "
               + ", ".join(sorted({s for row in rows for s in row['suites']})))


@main.command("fetch")
@click.argument("names", nargs=-1, metavar="NAME|GROUP/NAME|URL...")
@click.option("--dir", "folder", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder to download into.  [default: $SPLA_MATRICES or ./matrices]")
@click.option("--list", "list_only", is_flag=True, help="Show the catalogue and which matrices are present.")
@click.option("--suite", default=None, help="Fetch every matrix of a catalogue suite (williams, snap, graphs, large).")
@click.option("--force", is_flag=True, help="Fetch again even if NAME.mtx is present (a kept NAME.tar.gz is reused).")
@click.option("--keep-archive", is_flag=True, help="Keep NAME.tar.gz after unpacking.")
@click.option("--no-verify", is_flag=True, help="Accept a header that disagrees with the catalogue.")
@click.option("--timeout", type=click.FloatRange(min=1), default=60, show_default=True,
              help="Seconds without data before the connection counts as lost (it is then resumed).")
@click.option("--json", "as_json", is_flag=True, help="With --list: print the catalogue as JSON.")
def fetch_command(names, folder, list_only, suite, force, keep_archive, no_verify, timeout, as_json):
    """Download SuiteSparse matrices into DIR/NAME.mtx.

    NAME is a catalogue name (web-Google), GROUP/NAME (SNAP/web-Google) or the
    URL of a Matrix Market .tar.gz. The download shows progress, resumes a
    partial DIR/NAME.tar.gz.part, checks the size and the header's rows,
    cols and entry count against the catalogue, and unpacks atomically:
    nothing half-written is left on failure or Ctrl-C. Without the network
    each catalogue entry names a generated stand-in (see --list --json,
    field stand_in), e.g. `spla spmv gen:weblike` for web-Google.
    """
    from ..io.fetch import fetch

    folder = catalog.matrices_dir(folder)
    if list_only:
        _list_catalogue(folder, as_json)
        return
    targets = list(names)
    if suite:
        targets += [entry.name for entry in catalog.default_catalog().suite(suite)]
    if not targets:
        raise InputError("name a matrix to fetch (e.g. `spla fetch web-Google`), --suite williams, or use --list")
    for position, target in enumerate(targets, 1):
        if len(targets) > 1:
            click.echo(f"[{position}/{len(targets)}] {target}", err=True)
        path = fetch(target, folder, force=force, keep_archive=keep_archive, verify=not no_verify,
                     timeout=timeout)
        click.echo(str(path))


GENERATE_HELP = ("Kinds and their arguments (a final :seed=S picks the random stream, "
                 "default 0; :dtype=float32 stores float32 values):\n\n\b\n" + generators.usage())


@main.command("generate", epilog=GENERATE_HELP)
@click.argument("kind")
@click.argument("args", nargs=-1)
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="The file to write: .mtx (Matrix Market), .mtx.gz (compressed) or .npz (spla's binary "
                   "format). Each reads back as the same matrix.")
@click.option("--seed", type=click.IntRange(min=0), default=None, help="Random seed (default 0; same as :seed=S).")
def generate_command(kind, args, out, seed):
    """Write a synthetic matrix to a Matrix Market (.mtx, .mtx.gz) or .npz file.

    Either `spla generate KIND ARG...` (`spla generate poisson2d 1024 --out
    p.mtx`) or a full spec (`spla generate gen:random:100000:16 --out r.mtx`).
    The same spec and seed give the same matrix on every machine; any
    command taking a SOURCE also accepts the spec directly, without a file.
    """
    from ..io import file_kind, save_npz
    from ..io.mmio import write_mtx

    written_as = file_kind(out)
    if written_as != "mtx" and written_as != "npz":
        what = "is read back as a SNAP edge list (pattern only)" if written_as == "snap" else \
            "is not a type spla reads"
        raise InputError(f"{out}: a {out.suffix or 'suffix-less'} file {what}; write .mtx, .mtx.gz or .npz")
    spec = kind if generators.is_spec(kind) else ":".join([generators.PREFIX + kind, *args])
    if generators.is_spec(kind) and args:
        raise InputError(f"give either a spec ({kind}) or KIND ARGS..., not both (extra: {' '.join(args)})")
    start = time.perf_counter()
    A = generators.from_spec(spec, seed=seed)
    built = time.perf_counter() - start
    if out.parent and not out.parent.exists():
        raise InputError(f"{out}: the folder {out.parent} does not exist")
    label = spec if seed is None else f"{spec} (seed {seed})"
    if written_as == "npz":
        save_npz(out, A)
    else:
        write_mtx(out, A, comment=f" generated by spla: {label}")
    click.echo(f"wrote {out}: {A.n_rows:,} x {A.n_cols:,}, nnz {A.nnz:,} ({label}; built in {built:.2f} s, "
               f"written in {time.perf_counter() - start - built:.2f} s)")
