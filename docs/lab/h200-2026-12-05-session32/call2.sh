#!/usr/bin/env bash
# Session 32, call 2 (predictions in README.md, written before the run): the detection passes'
# cost on the GPU (S1d again, with kernels/detect_structure.cu), then the GPU suite on the tree with
# S1 re-applied (branch s1-retake). Results under /tmp/call2, packed into $OUT/call2.tgz after
# each step.
#   run(command="bash docs/lab/h200-2026-12-05-session32/call2.sh", carry=[".whl", "shared-matrices"])
set -u -o pipefail
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
R=/tmp/call2
mkdir -p "$R" "${OUT:=$PWD/call2-out}"
pack() { tar -C /tmp -czf "$OUT/call2.tgz" call2; }
step() {
  local name=$1; shift
  echo "== $(date +%H:%M:%S) $name: $*"
  timeout -k 10 "${STEP_LIMIT_S:-200}" "$@" >"$R/$name.log" 2>&1
  local rc=$?
  tail -n 8 "$R/$name.log"
  echo "== $(date +%H:%M:%S) $name: exit $rc"
  pack
}
step make24 python3 docs/lab/cpu-2026-12-04-session27/make_held_out_24.py /tmp/h24
step detection python3 docs/lab/cpu-2026-12-04-session27/time_detection.py shared-matrices/delaunay_n16.mtx.gz \
     shared-matrices/luxembourg_osm.mtx.gz /tmp/h24/line3-300k.npz /tmp/h24/stencil13-2d-240.npz \
     /tmp/h24/stencil19-3d-36.npz /tmp/h24/triangular-band-40-35k.npz gen:poisson2d:1000
step tests env TESTS_WORKERS=12 TESTS_LIMIT=200 OUT="$R/tests" bash scripts/gpu_check.sh tests
