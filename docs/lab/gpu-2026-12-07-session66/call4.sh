#!/usr/bin/env bash
# Session 66's call 4, prepared for the next session (predictions in this folder's README, written before any run):
# on an H200 only, fresh set 67 first (session 55's call5.sh); then fresh set 73 for a dia floor that reads the row
# length (dia_floor.py: dia from 250 x mean rows, fitted on sets 64-72): the six diagonal corpus families at eight
# sizes (6K-400K nonzeros, rows/mean 30-1,000 across them) and banded matrices of half-widths 1, 3, 6 and 12 at
# 1,500-12,000 rows, seed 29, k = 2, 4, 8, 16, both dtypes, every candidate timed by the tuner. Stops by DEADLINE.
set -u
cd "$(dirname "$0")/../../.."
# shellcheck source=docs/lab/gpu-2026-12-07-session66/h200_first.sh
source docs/lab/gpu-2026-12-07-session66/h200_first.sh
# shellcheck source=docs/lab/gpu-2026-12-07-session66/diag_set.sh
source docs/lab/gpu-2026-12-07-session66/diag_set.sh
diag_set "set 73" 29 /tmp/c4/set73 "6e3 1.2e4 2.5e4 6e4 1.3e5 2.3e5 2.8e5 4e5" "1 3 6 12" "1500 3000 6000 12000"
tar -C /tmp -czf $OUT/c4.tgz c4
