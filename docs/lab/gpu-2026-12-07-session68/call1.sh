#!/usr/bin/env bash
# Session 68, call 1 (predictions in this folder's README, written before the run): on an H200 only, fresh set 67
# first (h200_first.sh); then fresh set 75, long bands only: gen:banded of half-widths 10, 14, 19 and 24 (21-49
# nonzeros a row) at 6,000-30,000 rows, k = 2, 4, 8, 16, both dtypes, every candidate timed by the tuner and the
# library's rule re-timed beside cuSPARSE SpMM. It checks dia's floor past the 33-a-row bands it was fitted on, and
# session 67's regk exception for long rows at k <= 4 (long_bands.py), fitted on sets 64-74, on matrices it never saw.
set -u
cd "$(dirname "$0")/../../.."
# shellcheck source=docs/lab/gpu-2026-12-07-session66/h200_first.sh
source docs/lab/gpu-2026-12-07-session66/h200_first.sh
# shellcheck source=docs/lab/gpu-2026-12-07-session66/diag_set.sh
source docs/lab/gpu-2026-12-07-session66/diag_set.sh
BANDS_S=300 diag_set "set 75" 37 /tmp/c1/set75 "" "10 14 19 24" "6000 10000 16000 24000 30000"
tar -C /tmp -czf $OUT/c1.tgz c1
