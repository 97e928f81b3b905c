"""Session 58, call 2's rule for dia's remainder (written before the run): a try replaces the committed kernel if
its bits equal the library's on every run, its geomean speed over s57 is at least 1.01x and no run is below 0.97x;
of two that pass, the higher geomean. Prints each try's figures, then the label taken (or "none") last.

    python3 decide.py dia_ab.json
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

records = json.loads(Path(sys.argv[1]).read_text())["records"]
passed = {}
for label in records[0]["speed_over_s57"]:
    speeds = [r["speed_over_s57"][label] for r in records]
    same = all(r["same_bits"][label] for r in records)
    geomean = math.exp(sum(map(math.log, speeds)) / len(speeds))
    ok = same and geomean >= 1.01 and min(speeds) >= 0.97
    print(f"{label}: geomean {geomean:.3f}x over s57, worst {min(speeds):.3f}, best {max(speeds):.3f}, "
          f"same bits {same}: {'passes' if ok else 'fails'}")
    if ok:
        passed[label] = geomean
print(max(passed, key=passed.get) if passed else "none")
