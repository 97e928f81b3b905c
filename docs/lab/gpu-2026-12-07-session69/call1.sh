#!/usr/bin/env bash
# Session 69, call 1 (predictions 1-4 in this folder's README, written before the run): on an H200 only, fresh set
# 67 first (h200_first.sh); the whole GPU suite on today's sources (session 68's rename inside rule_kernel never
# ran there); then fresh set 77, which judges reach.py's candidate for regk on long diagonal rows: gen:banded of
# half-widths 15, 18 and 23 (31, 37, 47 nonzeros a row) at 14,000, 19,000, 26,000, 34,000 and 40,000 rows, k = 2,
# 4, 8, 16, both dtypes, every candidate timed by the tuner and the rule beside cuSPARSE SpMM. Stops by DEADLINE.
set -u
cd "$(dirname "$0")/../../.."
# shellcheck source=docs/lab/gpu-2026-12-07-session66/h200_first.sh
source docs/lab/gpu-2026-12-07-session66/h200_first.sh
whole_suite 220
# shellcheck source=docs/lab/gpu-2026-12-07-session66/diag_set.sh
source docs/lab/gpu-2026-12-07-session66/diag_set.sh
BANDS_S=170 diag_set "set 77" 43 /tmp/c1/set77 "" "15 18 23" "14000 19000 26000 34000 40000"
tar -C /tmp -czf $OUT/c1.tgz c1
