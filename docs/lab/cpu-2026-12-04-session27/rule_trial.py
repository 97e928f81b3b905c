"""The code's auto rule beside trial rules that are not thresholds of AutoThresholds (a new
condition, a new class, the structured kernels' gate), over every benchmark record (no GPU):
each half's table, the large matrices over the lean cuSPARSE call, and every (matrix, dtype)
whose pick moves, with the share of the best kernel it ran at before and after.

    PYTHONPATH=. python3 rule_trial.py $(cat ../h200-2026-12-05-session26/rule_files.txt) \\
        --stats /tmp/stats.json --near-stats /tmp/near.json --trial m2 [--measure per-call]

Trials:
  m2-gate   session 26's M2a/b: the regular-large classes' gate (near share under
            regular_near) widened to a near share under 0.45 where rows average at most 128
            nonzeros (staged's thread cut)
  m2-runs   session 26's M2c: medium matrices whose columns run consecutively (near share at
            least 0.75) run warp
  m2        both
  packed-low=N,C  float32 packed rows (regular-large-packed: segmented) run staged from a near
            share of N (the code: packed_near = 0.05) where row lengths vary (cv at least C)
  structured-from=N   auto looks for dia and band from N nonzeros (the code: AUTO_MIN_NNZ = 2^20,
            set from the kernels' design, never measured below it)
  structured-rows=D,B auto looks for dia from D rows and band from B rows, at any size
  tile-span=C  (session 36) AutoThresholds.packed_span = C: float32 packed rows (segmented) run
            staged where the median column span of a staged tile (4,096 nonzeros) is at most C;
            the spans come from --spans (../cpu-2026-12-05-session36/row_spans.py's output), and
            records without one keep the packed class under every rule
  m3        (session 38) medium matrices of large regular rows that average more than short_mean
            and at most 128 (staged's thread cut) over an x larger than staged_x_bytes run staged
            (the class regular-large) at any near share: the runs of columns
  packed-lines=L  (session 38) AutoThresholds.packed_lines = L: float32 packed rows (segmented) run
            staged where a sampled tile reads at least L distinct lines of x (inf: never, the rule
            before P5); lines come from the records or --spans
  mid-nnz=N  (session 38) AutoThresholds.mid_nnz = N: smaller irregular matrices from N nonzeros
            whose columns are rarely close run staged (the code: 296,491, fitted per call and device)
  i2=N,M    (session 38) irregular matrices (auto: adaptive2) from N nonzeros whose rows average at
            most M and whose columns are rarely close (near share under mid_near) run staged, as
            irregular-mid does from mid_nnz
  runs-any-x  (session 49) float32 medium matrices from large_nnz nonzeros of rows averaging more than
            short_mean and at most 128 run staged (the runs class) over any x, not only over one larger than
            staged_x_bytes
  medium-near=N  (session 49) float32 medium matrices from large_nnz nonzeros of rows of at most 128 on
            average over an x larger than cached_x_bytes run staged (the runs class) where their near share
            is under N
  local-near=N  (session 38) AutoThresholds.local_near = N: large regular rows of at most 128 on
            average take the regular-large classes (staged) below a near share of N (the code: 0.45;
            above 1, at any near share: the runs of columns of auto's medium class)
A trial patches spla.planning.spmv (matrix_class, AUTO_RULE, STRUCTURES) for this process only:
fit_auto.picked reads them at each call.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT))
import fit_auto  # noqa: E402

from spla.planning import dia, spmv  # noqa: E402

CODE_CLASS = spmv.matrix_class
M2_NEAR = 0.45       # the widened gate ...
M2_MEAN = 128.0      # ... for rows no longer on average than a staged thread sums
RUNS_NEAR = 0.75     # medium rows whose neighbouring columns are this often close: runs of columns

# the new class runs warp, and a structured kernel (dia, band) first where the matrix has one, as
# its parent class "medium" does
spmv.AUTO_RULE["medium-runs"] = "warp"
spmv.STRUCTURED_CLASSES = (*spmv.STRUCTURED_CLASSES, "medium-runs")


def _gate(s, pack, near, t, x_bytes):
    klass = CODE_CLASS(s, pack, near, t, x_bytes)
    if (klass.startswith(("short", "medium")) and s.mean <= M2_MEAN and s.nnz >= t.large_nnz
            and x_bytes > t.cached_x_bytes and near() < M2_NEAR):
        # the code's regular-large sub-classes, with regular_near widened
        return CODE_CLASS(s, pack, near, dataclasses.replace(t, regular_near=M2_NEAR), x_bytes)
    return klass


def _runs(s, pack, near, t, x_bytes, base=CODE_CLASS):
    klass = base(s, pack, near, t, x_bytes)
    return "medium-runs" if klass == "medium" and near() >= RUNS_NEAR else klass


def _m2(s, pack, near, t, x_bytes):
    return _runs(s, pack, near, t, x_bytes, base=_gate)


def _m3(s, pack, near, t, x_bytes, **span):
    klass = CODE_CLASS(s, pack, near, t, x_bytes, **span)
    if (klass == "medium" and s.nnz >= t.large_nnz and x_bytes > t.staged_x_bytes
            and s.mean <= M2_MEAN and s.cv <= t.irregular_cv):
        return "regular-large"
    return klass


def _runs_any_x(s, pack, near, t, x_bytes, **tiles):
    """(session 49, M2) float32 medium matrices of the runs class's size and rows run it (staged) over any x, not
    only over an x larger than staged_x_bytes (probe set 48's rows of 31-33 over 1 MB of x ran staged 1.15-1.35x
    vector)."""
    klass = CODE_CLASS(s, pack, near, t, x_bytes, **tiles)
    if (klass == "medium" and pack >= 4 and s.nnz >= t.large_nnz and s.mean <= segmented_row()
            and not (s.mean <= t.short_mean and s.max <= t.short_max)):
        return "runs"
    return klass


def _medium_near(cut: float):
    """(session 49, M2) float32 medium matrices from large_nnz nonzeros of rows of at most 128 on average over an x
    larger than cached_x_bytes run staged (the runs class) where their near share is under ``cut`` (set 49: vector's
    2 lanes lost 0.72x on rows of 32 over about 1 MB of x)."""
    def klass(s, pack, near, t, x_bytes, **tiles):
        base = CODE_CLASS(s, pack, near, t, x_bytes, **tiles)
        if (base == "medium" and pack >= 4 and s.nnz >= t.large_nnz and x_bytes > t.cached_x_bytes
                and s.mean <= segmented_row() and near() < cut):
            return "runs"
        return base
    return klass


def segmented_row() -> int:
    from spla.planning import segmented
    return segmented.STAGED_THREAD_ROW


def _i2(min_nnz: float, max_mean: float):
    def klass(s, pack, near, t, x_bytes, **tiles):
        base = CODE_CLASS(s, pack, near, t, x_bytes, **tiles)
        if base == "irregular" and s.nnz >= min_nnz and s.mean <= max_mean and near() < t.mid_near:
            return "irregular-mid"
        return base
    return klass


def _packed_low(near_cut: float, cv_cut: float):
    """Packed rows (segmented) go to staged from a near share of near_cut where their lengths vary
    (cv at least cv_cut): the code's packed_near, lowered for rows that are not all one length."""
    def klass(s, pack, near, t, x_bytes):
        base = CODE_CLASS(s, pack, near, t, x_bytes)
        if base == "regular-large-packed" and s.cv >= cv_cut and near() >= near_cut:
            return "regular-large"
        return base
    return klass


def _structures(considers):
    """spmv.STRUCTURES with each module's auto_considers replaced by considers[name]."""
    return {name: types.SimpleNamespace(auto_considers=considers[name], applies=module.applies)
            for name, module in spmv.STRUCTURES.items()}


def trial(text: str) -> tuple[str, dict]:
    """(name, {attribute of spla.planning.spmv: value while the trial runs})."""
    name, _, value = text.partition("=")
    if name in ("m2-gate", "m2-runs", "m2") and not value:
        return text, {"matrix_class": {"m2-gate": _gate, "m2-runs": _runs, "m2": _m2}[name]}
    if name == "m3" and not value:
        return text, {"matrix_class": _m3}
    if name == "runs-any-x" and not value:
        return text, {"matrix_class": _runs_any_x}
    if name == "medium-near" and value:
        return text, {"matrix_class": _medium_near(float(value))}
    if name == "packed-low" and value:
        near_cut, cv_cut = (float(v) for v in value.split(","))
        return text, {"matrix_class": _packed_low(near_cut, cv_cut)}
    if name == "tile-span" and value:
        return text, {"AUTO": dataclasses.replace(spmv.AUTO, packed_span=float(value))}
    if name == "packed-lines" and value:
        return text, {"AUTO": dataclasses.replace(spmv.AUTO, packed_lines=float(value))}
    if name == "i2" and value:
        min_nnz, max_mean = (float(v) for v in value.split(","))
        return text, {"matrix_class": _i2(min_nnz, max_mean)}
    if name == "mid-nnz" and value:
        return text, {"AUTO": dataclasses.replace(spmv.AUTO, mid_nnz=int(float(value)))}
    if name == "local-near" and value:
        return text, {"AUTO": dataclasses.replace(spmv.AUTO, local_near=float(value))}
    if name == "structured-from" and value:
        n = int(float(value))
        return text, {"STRUCTURES": _structures({
            "dia": lambda s: s.nnz >= n and dia.worth_detecting(s),
            "band": lambda s: s.nnz >= n})}
    if name == "structured-rows" and value:
        d, b = (int(float(v)) for v in value.split(","))
        return text, {"STRUCTURES": _structures({
            "dia": lambda s: s.n_rows >= d and dia.worth_detecting(s),
            "band": lambda s: s.n_rows >= b})}
    raise argparse.ArgumentTypeError(f"unknown trial {text!r} (see --help)")


@contextlib.contextmanager
def patched(changes: dict):
    saved = {name: getattr(spmv, name) for name in changes}
    for name, value in changes.items():
        setattr(spmv, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(spmv, name, value)


def picks(items, changes: dict):
    """Each item's (pick, quality) with the trial's changes in place."""
    with patched(changes):
        return [(fit_auto.picked(i, spmv.AUTO), fit_auto.quality(i, spmv.AUTO)) for i in items]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("results", nargs="+")
    parser.add_argument("--stats", type=Path)
    parser.add_argument("--near-stats", type=Path)
    parser.add_argument("--trial", action="append", type=trial, required=True)
    parser.add_argument("--measure", choices=("device", "per-call"), default="device")
    parser.add_argument("--spans", type=Path, help="row_spans.py's output, for tile-span=C")
    args = parser.parse_args(argv)
    near = json.loads(args.near_stats.read_text()) if args.near_stats and args.near_stats.is_file() else {}
    items = fit_auto.load(args.results, None, args.stats, "device_us" if args.measure == "device" else "per_call_us",
                          near_cache=near, spans=fit_auto.read_spans(args.spans))
    rules = {"code": {}, **dict(args.trial)}
    for table in (fit_auto.table, fit_auto.large_table):
        for n, (label, changes) in enumerate(rules.items()):
            with patched(changes):  # the tables score each rule's picks through spmv's patched names
                lines = table(items, {label: spmv.AUTO}, args.measure)
            print("\n".join(lines if n == 0 else lines[2:]))
        print()
    code = picks(items, {})
    for label, changes in args.trial:
        moved = [(i, a, b) for i, a, b in zip(items, code, picks(items, changes)) if a[0] != b[0]]
        print(f"{label}: {len(moved)} picks move (share of the best kernel, before -> after)")
        for i, (old, q_old), (new, q_new) in sorted(moved, key=lambda m: m[2][1] - m[1][1]):
            print(f"  {i['name']} {i['dtype']} ({i['half']}, {i['stats'].n_rows:,} rows, mean {i['stats'].mean:.1f}, "
                  f"near {i['near']():.2f}): {old} {q_old:.2f} -> {new} {q_new:.2f}")
    if args.near_stats is not None:
        args.near_stats.write_text(json.dumps(near, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
