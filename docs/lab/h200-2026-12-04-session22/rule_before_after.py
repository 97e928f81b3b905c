"""The code's rule with and without session 22's regular-large-packed class, on every record
(fit_auto's tables; no GPU). Arguments as scripts/fit_auto.py's."""
import dataclasses
import json
import math
import sys
from pathlib import Path

import fit_auto

from spla.planning.spmv import AUTO

args = sys.argv[1:]
stats = Path(args[args.index("--stats") + 1])
near_path = Path(args[args.index("--near-stats") + 1])
files = [Path(a) for a in args if a.endswith(".json") and Path(a) not in (stats, near_path)]
near = json.loads(near_path.read_text())
items = fit_auto.load(files, None, stats, "device_us", near)
rules = {"code before session 22": dataclasses.replace(AUTO, packed_mean=math.inf), "code": AUTO}
print("\n".join(fit_auto.table(items, rules)))
print("\n" + "\n".join(fit_auto.large_table(items, rules)))
