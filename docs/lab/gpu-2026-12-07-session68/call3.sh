#!/usr/bin/env bash
# Session 68, call 3 (predictions in this folder's README, written before the run): on an H200 only, fresh set 67
# first (h200_first.sh); the whole GPU suite on the sources with regk on long diagonal rows at k <= 4; then fresh
# set 76, the exception's second held-out check with the library's rule re-timed beside cuSPARSE SpMM: gen:banded
# of half-widths 11, 16 and 21 (23, 33, 43 nonzeros a row) at 7,000, 12,000, 18,000 and 22,000 rows, k = 2, 4, 8,
# 16, both dtypes, every candidate timed by the tuner. Stops by DEADLINE.
set -u
cd "$(dirname "$0")/../../.."
# shellcheck source=docs/lab/gpu-2026-12-07-session66/h200_first.sh
source docs/lab/gpu-2026-12-07-session66/h200_first.sh
whole_suite 220
# shellcheck source=docs/lab/gpu-2026-12-07-session66/diag_set.sh
source docs/lab/gpu-2026-12-07-session66/diag_set.sh
BANDS_S=200 diag_set "set 76" 41 /tmp/c3/set76 "" "11 16 21" "7000 12000 18000 22000"
tar -C /tmp -czf $OUT/c3.tgz c3
