"""Writes the lab variant of staged that reads no values (next_call.sh's uniform step) from the
committed kernels/spmv_staged.cu: each thread reads data[0] once, and each product is that value
times x, so a tile streams its column indices alone. Right only for a matrix whose stored values
are all one number (the A/B runs it on make_pattern.py's pattern twins). Made at run time, so it
is the committed kernel but for the value.

    python3 make_uniform_variant.py OUT.cu
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
HEAD = "// A LAB VARIANT made by make_uniform_variant.py: every value read as data[0] (a matrix of one value).\n"


def main() -> None:
    text = (ROOT / "kernels" / "spmv_staged.cu").read_text()
    warp = "    const int warp = threadIdx.x / spla::WARP_SIZE;\n"
    loads = {"__ldcs(data + base + at) * ": "value * ", "__ldcs(data + k) * ": "value * "}
    if text.count(warp) != 1 or any(text.count(old) != 1 for old in loads):
        sys.exit("kernels/spmv_staged.cu no longer has the lines this variant rewrites")
    text = text.replace(warp, warp + "    const V value = __ldg(data);  // every value (the variant's premise)\n")
    for old, new in loads.items():
        text = text.replace(old, new)
    Path(sys.argv[1]).write_text(HEAD + text)


if __name__ == "__main__":
    main()
