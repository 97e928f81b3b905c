#!/usr/bin/env bash
# The held-out matrices whose staged records predate staged's list cut of 128
# (../h200-2026-12-04-session24/stale_after_long128.txt), written again at the paths their records
# name, so a re-run's record replaces the old one. Each is drawn again from its recipe (the
# generators' random state depends on what else they made first): the same shape, not the same
# bits. Run from this folder with PYTHONPATH at the repository root:
#   bash make_stale.sh [PART]    PART: small (sets x, 3-small, 12-small) or large (the rest), default both
set -eu
lab=..
part=${1:-all}
if [ "$part" != large ]; then
  mkdir -p /tmp/hx && python3 $lab/h200-2026-12-04-session18/make_held_out.py /tmp/hx
  (cd $lab/h200-2026-12-04-session19 && python3 make_held_out_large.py /tmp/h3 bimodal-2-40-small)
  (cd $lab/h200-2026-12-04-session23 && python3 make_held_out_12.py /tmp/h12 preferential-small short-wide-2k)
fi
if [ "$part" != small ]; then
  (cd $lab/h200-2026-12-04-session19 && python3 make_held_out_large.py /tmp/h2 bimodal-2-40 rmat-45-22-22-11 \
    && python3 make_held_out_large.py /tmp/h3 rmat-55-20-20-5 trimodal-2-12-48 \
    && python3 make_held_out_large.py /tmp/h5 rmat-transposed \
    && python3 make_held_out_large.py /tmp/h8 rows-30-50-over-5M \
    && python3 make_held_out_large.py /tmp/h9 powerlaw-degree-sorted uniform-1-64-over-3M \
    && python3 make_held_out_large.py /tmp/hl banded-random-4-44 bimodal-4-96 rmat-70-12-12-6 short-wide-1500x16M)
  (cd $lab/h200-2026-12-04-session20 && python3 make_held_out_10.py /tmp/h10 banded-random-10-90 powerlaw-3M-avg20 rmat-60-15-15-10)
  (cd $lab/h200-2026-12-04-session23 && python3 make_held_out_12.py /tmp/h12 preferential-8 rows-40-60-local)
fi
