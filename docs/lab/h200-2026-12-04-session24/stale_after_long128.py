"""Which recorded runs still hold staged's time from before its list cut moved from 32 to 128
(b688e03): the last record of each (matrix, dtype) among the files named in rule_files.txt, not
re-run since (corpus-40M-long128, held-out-13-long128, held-out-17), whose rows reach past 32
(longest over 32) while averaging 8 or more. A list for the next session to re-run (no GPU).

    python3 stale_after_long128.py rule_files.txt > stale_after_long128.txt
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts"))
from fit_auto import read_records  # noqa: E402  (plain or gzipped records)

RE_RUN = {"corpus-40M-long128.json.gz", "held-out-13-long128.json.gz", "held-out-17.json.gz"}


def main(argv) -> int:
    root = Path(__file__).resolve().parents[3]
    latest: dict = {}
    for name in Path(argv[0]).read_text().split():
        for record in read_records(root / name):
            if record.get("status") == "ok":
                latest[record["name"], record["dtype"]] = (Path(name), record)
    stale: dict[str, set] = {}
    for (matrix, _), (path, record) in latest.items():
        stats = record.get("row_stats")
        if path.name in RE_RUN or not stats:
            continue
        if stats["max"] > 32 and stats["mean"] >= 8:
            stale.setdefault(f"{path.parent.name}/{path.name}", set()).add(matrix)
    for path, matrices in sorted(stale.items()):
        print(f"{path} ({len(matrices)}): {', '.join(sorted(matrices))}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
