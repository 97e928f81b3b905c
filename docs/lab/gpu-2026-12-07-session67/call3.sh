#!/usr/bin/env bash
# Session 67, call 3 (predictions in this folder's README, written before the run): on an H200 only, fresh set 67
# first (h200_first.sh); the whole GPU suite on the sources with dia's floor by the row length; then fresh set 74,
# the floor's second held-out check with the library's rule re-timed beside cuSPARSE SpMM: the six diagonal corpus
# families at six sizes (8K-320K nonzeros, across both floors) and bands of half-widths 2, 5, 9 and 16 at
# 1,000-9,000 rows, seed 31, k = 2, 4, 8, 16, both dtypes, every candidate timed by the tuner. Stops by DEADLINE.
set -u
cd "$(dirname "$0")/../../.."
# shellcheck source=docs/lab/gpu-2026-12-07-session66/h200_first.sh
source docs/lab/gpu-2026-12-07-session66/h200_first.sh
whole_suite 200
# shellcheck source=docs/lab/gpu-2026-12-07-session66/diag_set.sh
source docs/lab/gpu-2026-12-07-session66/diag_set.sh
diag_set "set 74" 31 /tmp/c3/set74 "8e3 2e4 4e4 1.6e5 2e5 3.2e5" "2 5 9 16" "1000 2500 5000 9000"
tar -C /tmp -czf $OUT/c3.tgz c3
