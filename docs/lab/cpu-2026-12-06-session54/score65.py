"""Set 65 (call 3): per matrix and dtype, blocked over staged measured beside the two models' predictions, and each
rule's kernel (rule65-*.txt, from the host: every pick is a kernel the call timed) over the lean cuSPARSE pair,
geomean per dtype; auto as timed (the library's rule) too. Writes measured65.txt (fit_footprint.py's format).

    python3 score65.py TURNS.json
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

HERE = Path(__file__).parent


def table(path, value):
    return {(f[0], f[1]): value(f) for f in (line.split() for line in open(path)) if len(f) > 2}


def main(turns: str) -> None:
    times: dict = {}
    for r in json.loads(Path(turns).read_text())["results"]:
        if r["status"] == "ok":
            times.setdefault((Path(r["source"]).stem, r["dtype"]), {})[r["kernel"]] = r["ms"]
    old = table(HERE / "gain65.txt", lambda f: float(f[-1]))
    new = table(HERE / "gain65-footprint.txt", lambda f: float(f[-1]))
    rules = {"library": table(HERE / "rule65-library.txt", lambda f: f[2]),
             "footprint": table(HERE / "rule65-footprint.txt", lambda f: f[2])}
    with open(HERE / "measured65.txt", "w") as out:
        for (name, dtype), t in sorted(times.items()):
            print(name, dtype, f"{t['staged'] / t['blocked']:.3f}", "set65-call3", file=out)
    for dtype in ("float32", "float64"):
        print(f"{dtype}: matrix, blocked over staged (predicted: library, footprint), over the lean pair: auto as "
              "timed, library rule, footprint rule, best of blocked and staged")
        logs: dict = {k: [] for k in ("auto", "library", "footprint", "best")}
        for (name, d), t in sorted(times.items()):
            if d != dtype:
                continue
            lean = min(t["cusparse"], t["cusparse:2"])  # the lean pair: the faster of ALG1 and ALG2
            picks = {"auto": t["auto"], "best": min(t["blocked"], t["staged"]),
                     **{k: t[rules[k][(name, d)]] for k in rules}}
            for k, ms in picks.items():
                logs[k].append(math.log(lean / ms))
            print(f"  {name:<36} {t['staged'] / t['blocked']:5.2f} ({old[(name, d)]:.2f}, {new[(name, d)]:.2f})  "
                  + "  ".join(f"{k} {lean / ms:.3f}" for k, ms in picks.items()))
        print("  geomean: " + ", ".join(f"{k} {math.exp(sum(v) / len(v)):.3f} (worst {math.exp(min(v)):.3f})"
                                        for k, v in logs.items()))


if __name__ == "__main__":
    main(sys.argv[1])
