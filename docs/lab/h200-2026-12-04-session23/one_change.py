"""The code's rule with one threshold changed at a time to the value fit_auto.py fits on the
re-run corpus (no GPU): every half's geomean and count within 15% beside the code's, so a change
is taken only where the fit half's gain is not a loss on the halves it was not fitted to.

    python3 one_change.py RESULTS... --stats S --near-stats N --change NAME=VALUE ...
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts"))
import fit_auto  # noqa: E402

from spla.planning.spmv import AUTO  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+")
    parser.add_argument("--stats", type=Path)
    parser.add_argument("--near-stats", type=Path)
    parser.add_argument("--change", action="append", default=[],
                        help="NAME=VALUE (repeat; NAME=VALUE,NAME=VALUE for a pair)")
    args = parser.parse_args(argv)
    near = json.loads(args.near_stats.read_text()) if args.near_stats and args.near_stats.is_file() else {}
    items = fit_auto.load(args.results, None, args.stats, near_cache=near)
    rules = {"code": AUTO}
    for change in args.change:
        values = dict(part.split("=") for part in change.split(","))
        rules[change] = dataclasses.replace(AUTO, **{k: type(getattr(AUTO, k))(float(v)) for k, v in values.items()})
    print("\n".join(fit_auto.table(items, rules)))
    print()
    print("\n".join(fit_auto.large_table(items, rules)))
    if args.near_stats is not None:
        args.near_stats.write_text(json.dumps(near, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
