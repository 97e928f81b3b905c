"""CG's time an iteration on the GPU with no callback, with spla.linalg.IterationCounter, and with
a plain counting callback (what `spla solve` used before session 29), interleaved in rounds; then
`spla solve --json` on the same problems. 2D Poisson 256^2 (the one-launch loop) and 2048^2 (the
graph replays), b = ones, rtol 1e-8. Every run's x is checked (true residual <= 1.01 rtol).

    PYTHONPATH=. python3 docs/lab/cpu-2026-12-04-session29/time_counter.py --out DIR
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import cupy

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from spla import load  # noqa: E402
from spla.linalg import IterationCounter, cg  # noqa: E402


def run(A, b, b_norm, kind):
    counted = [0]
    if kind == "counter":
        callback = IterationCounter()
    elif kind == "callback":
        callback = lambda xk: counted.__setitem__(0, counted[0] + 1)  # noqa: E731
    else:
        callback = None
    cupy.cuda.get_current_stream().synchronize()
    start = time.perf_counter()
    x, info = cg(A, b, rtol=1e-8, callback=callback)
    cupy.cuda.get_current_stream().synchronize()
    seconds = time.perf_counter() - start
    residual = float(cupy.linalg.norm(b - A @ x)) / b_norm
    iterations = callback.iterations if kind == "counter" else counted[0]
    return seconds, iterations, info, residual


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sizes", default="256,2048", help="N of each 2D Poisson N^2")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    report, ok = {}, True
    for n in (int(v) for v in args.sizes.split(",")):
        A = load(f"gen:poisson2d:{n}").to_device()
        b = cupy.ones(A.n_rows)
        b_norm = float(cupy.linalg.norm(b))

        kinds = ("none", "counter", "callback")
        for kind in kinds:
            run(A, b, b_norm, kind)  # warm-up: kernels, plans, the graph's first capture
        times: dict = {kind: [] for kind in kinds}
        entry: dict = {}
        for _ in range(args.rounds):
            for kind in kinds:
                seconds, iterations, info, residual = run(A, b, b_norm, kind)
                times[kind].append(seconds)
                entry[kind] = {"iterations": iterations, "info": info, "relative_residual": residual}
                ok &= info == 0 and residual <= 1.01e-8
        for kind in kinds:
            entry[kind]["seconds"] = statistics.median(times[kind])
        per = entry["counter"]["seconds"] / max(entry["counter"]["iterations"], 1)
        entry["counter"]["us_per_iteration"] = per * 1e6
        entry["callback"]["us_per_iteration"] = entry["callback"]["seconds"] / entry["callback"]["iterations"] * 1e6
        cli = subprocess.run([sys.executable, "-c", "import sys; from spla.cli import main; main(sys.argv[1:])",
                              "solve", f"gen:poisson2d:{n}", "--device", "gpu", "--json"],
                             capture_output=True, text=True)
        entry["spla_solve"] = json.loads(cli.stdout) if cli.returncode == 0 else {"error": cli.stderr[-2000:]}
        report[f"poisson2d:{n}"] = entry
        print(f"2D Poisson {n}^2: none {entry['none']['seconds'] * 1e3:.2f} ms, counter "
              f"{entry['counter']['seconds'] * 1e3:.2f} ms ({entry['counter']['iterations']} it, "
              f"{entry['counter']['us_per_iteration']:.1f} us/it), callback {entry['callback']['seconds'] * 1e3:.2f} ms "
              f"({entry['callback']['iterations']} it, {entry['callback']['us_per_iteration']:.1f} us/it); "
              f"spla solve {entry['spla_solve'].get('seconds_per_iteration', float('nan')) * 1e6:.1f} us/it",
              flush=True)
    (args.out / "time_counter.json").write_text(json.dumps(report, indent=2, default=float))
    print("checks", "passed" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
