#!/usr/bin/env bash
# Session 55, call 5 (predictions in this folder's README, "Call 5", written before the run): fresh set 67 (100-160M
# nonzeros) timed, auto beside blocked and staged and the lean cuSPARSE pair, 3 rounds in turns, both dtypes. The
# R-MAT graph takes longest to write, so it is written beside the others' timing and timed last.
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
R=/tmp/next
mkdir -p $R
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/device.txt
make=docs/lab/cpu-2026-12-06-session55/make_fresh_67.py
# RMAT=0 leaves the R-MAT graph out (a call with little device time left)
rmat=""
if [ "${RMAT:-1}" = 1 ]; then python3 $make /tmp/f67 rmat-24-8-graph500 >$R/make67-rmat.log 2>&1 & rmat=$!; fi
python3 $make /tmp/f67 stencil27-3d-180 bimodal-4-100-8M banded-random-20-80 short-wide-2000x40M \
    uniform-graph-30M-deg4 powerlaw-transposed-20M-6 >$R/make67.log 2>&1
cat $R/make67.log
turns() {  # out, limit, files...
  local out=$1 limit=$2; shift 2
  timeout -k 10 "$limit" python3 scripts/time_turns.py "$@" --kernels auto,blocked,staged,cusparse:2 \
      --dtype float32 float64 --rounds 3 --budget 0.03 --out $R/$out >$R/$out.log 2>&1
  echo "$out: exit $?"
  grep -E "npz|x cuSPARSE" $R/$out.log
  tar -C /tmp -czf "$OUT/next.tgz" next
}
turns set67 ${LIMIT:-240} $(ls /tmp/f67/*.npz | grep -v rmat)
[ "${RMAT:-1}" = 1 ] || exit 0
wait $rmat
cat $R/make67-rmat.log
turns set67-rmat 60 /tmp/f67/rmat-24-8-graph500.npz
