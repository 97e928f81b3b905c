"""Session 27's rule_trial.py with one more trial, I1: small irregular matrices whose work sits in
rows of middling length run staged (auto's irregular-mid class) below mid_nnz.

    PYTHONPATH=. python3 mid_rows.py $(cat ../h200-2026-12-05-session26/rule_files.txt) \\
        --stats /tmp/stats.json --near-stats /tmp/near.json --mid-stats /tmp/mid.json \\
        --real shared-matrices --trial mid-rows=0.3 [--trial mid-rows=0.3,any-near] [--trial mid-rows=0.3,both]

Trial mid-rows=S[,any-near][,both]: an irregular matrix that misses irregular-mid only by its size
(nnz under mid_nnz, rows no longer on average than mid_mean, near share under mid_near; with
any-near whatever its near share) joins that class where at least a share S of its nonzeros lie
in rows of MID_ROWS entries; with both, an irregular-mid matrix whose share is under S leaves it
(irregular: adaptive2). The share is computed from the rebuilt matrix (corpus generators, gen:
specs, held-out files, --real for the real matrices) and kept in --mid-stats; a matrix that cannot
be rebuilt keeps the code's class (counted on stderr). Every other trial of rule_trial.py runs as
there.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

import numpy as np

LAB = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(LAB / "cpu-2026-12-04-session27"))
import rule_trial  # noqa: E402
from rule_trial import fit_auto, spmv  # noqa: E402

MID_ROWS = (33, 512)  # rows adaptive2 packs with wide lanes (stream path, up to 256) or a warp each (rows path)
SHARES: dict[str, float] = {}  # id of an item's near() -> the mid-row share of its matrix (filled in main)


def mid_share(A) -> float:
    """The share of A's nonzeros in rows of MID_ROWS entries."""
    lengths = np.diff(np.asarray(A.indptr, dtype=np.int64))
    lo, hi = MID_ROWS
    return float(lengths[(lengths >= lo) & (lengths <= hi)].sum() / max(int(lengths.sum()), 1))


UNKNOWN: set[int] = set()  # near() ids of the matrices a trial asked about without a share


def _mid_rows(cut: float, any_near: bool, both: bool):
    def klass(s, pack, near, t, x_bytes):
        base = rule_trial.CODE_CLASS(s, pack, near, t, x_bytes)
        if both and base == "irregular-mid":
            share = SHARES.get(id(near))
            if share is None:
                UNKNOWN.add(id(near))
                return base
            return base if share >= cut else "irregular"
        if base not in ("irregular", "irregular-short") or s.nnz >= t.mid_nnz:
            return base
        # the code's class with mid_nnz lowered to this matrix's size, where its mid rows carry the work
        lowered = dataclasses.replace(t, mid_nnz=s.nnz, mid_near=2.0 if any_near else t.mid_near)
        moved = rule_trial.CODE_CLASS(s, pack, near, lowered, x_bytes)
        if moved != "irregular-mid":
            return base
        share = SHARES.get(id(near))
        if share is None:
            UNKNOWN.add(id(near))
            return base
        return moved if share >= cut else base
    return klass


def trial(text: str):
    name, _, value = text.partition("=")
    if name == "mid-rows" and value:
        cut, *rest = value.split(",")
        if not set(rest) <= {"any-near", "both"}:
            raise argparse.ArgumentTypeError(f"mid-rows=S[,any-near][,both], not {text!r}")
        return text, {"matrix_class": _mid_rows(float(cut), "any-near" in rest, "both" in rest)}
    return rule_trial.trial(text)


def fill_shares(paths, stats_path: Path, near_path: Path, mid_path: Path, real: Path | None) -> None:
    """SHARES for every item the trial may ask about (irregular, under large_nnz): from --mid-stats,
    else computed on the rebuilt matrix and added there."""
    cache = json.loads(mid_path.read_text()) if mid_path.is_file() else {}
    records = {}
    for path in paths:
        for record in fit_auto.read_records(path):
            if record.get("status") == "ok":
                records[record["name"]] = record
    near = json.loads(near_path.read_text()) if near_path.is_file() else {}
    items = fit_auto.load(paths, None, stats_path, near_cache=near)
    for item in items:
        s = item["stats"]
        if s.nnz >= spmv.AUTO.large_nnz or not fit_auto._class(item, spmv.AUTO).startswith("irregular"):
            continue
        try:
            share = fit_auto.cached_from_matrix(records[item["name"]], real, cache, "mid-row share", mid_share)
        except Exception as exc:  # noqa: BLE001  (a held-out file not on this machine)
            print(f"  no mid-row share for {item['name']}: {exc}", file=sys.stderr)
            continue
        if share is not None:
            SHARES[item["name"]] = share
    mid_path.write_text(json.dumps(cache, indent=1, sort_keys=True))


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    own = argparse.ArgumentParser(add_help=False)
    own.add_argument("--mid-stats", type=Path, required=True)
    own.add_argument("--real", type=Path)
    ours, rest = own.parse_known_args(argv)
    peek = argparse.ArgumentParser(add_help=False)
    peek.add_argument("results", nargs="+")
    peek.add_argument("--stats", type=Path, required=True)
    peek.add_argument("--near-stats", type=Path, required=True)
    seen, _ = peek.parse_known_args(rest)
    fill_shares(seen.results, seen.stats, seen.near_stats, ours.mid_stats, ours.real)
    # rule_trial builds its items afresh: key the shares by each new item's near() (its only
    # per-matrix handle that reaches matrix_class)
    load = fit_auto.load

    def load_keyed(*args, **kwargs):
        items = load(*args, **kwargs)
        for item in items:
            if item["name"] in SHARES:
                SHARES[id(item["near"])] = SHARES[item["name"]]
        return items

    fit_auto.load = load_keyed
    rule_trial.trial = trial
    status = rule_trial.main(rest)
    if UNKNOWN:
        print(f"{len(UNKNOWN)} (matrix, dtype) runs kept the code's class: no mid-row share", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
