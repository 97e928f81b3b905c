#!/usr/bin/env bash
# One call on the GPU machine: GPU tests, then the benchmarks, results to $OUT.
#
#   scripts/gpu_check.sh [tests] [spmv] [gemm] [spmm] [solvers] [suite] [load] [hotpath] [corpus]
#                        [precond] [amgprofile] [spgemm] [distributed] [quick]
#   scripts/gpu_check.sh fingerprint      the hash of the sources that env.txt names, and nothing else
#                                         (default: tests spmv gemm spmm solvers suite)
# Narrower runs, through the environment:
#   TESTS_K="segmented"                    pytest -k filter for the tests step
#   SPMV_ARGS="--only weblike --extra segmented:4"   more arguments for bench_spmv.py
#   PRECOND_ARGS="--parts amg,amg_iterations"        more arguments for bench_precond.py
#   PROFILE_SOURCE=gen:... PROFILE_KERNEL=segmented   what the profile step (ncu) reads
#
# Run through the device tool from the checkout root, carrying the real matrices packed
# (`bash scripts/device_matrices.sh pack` makes shared-matrices.tar.xz; the tree and a plain copy
# of the matrices no longer fit the tool's 64 MiB) and the wheels:
#   run(command="bash scripts/gpu_check.sh", carry=["shared-matrices.tar.xz", ".whl"])
# The device tool brings back at most 8 files, so everything is written under
# one folder and packed into $OUT/results.tgz, plus the summary log.
set -u -o pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
# The device copy's .git is not re-sent with the tree, so its HEAD can be stale: the tree that ran
# is named by a hash of its sources instead. `bash scripts/gpu_check.sh fingerprint` prints the
# same hash here, to match a result to a commit or a working tree (LC_ALL=C: the order of the
# files must not depend on the locale, which differs between the two machines).
fingerprint() {
  find spla kernels scripts -type f \( -name '*.py' -o -name '*.cu' -o -name '*.cuh' -o -name '*.sh' \) -print0 \
    | LC_ALL=C sort -z | xargs -0 cat | sha256sum | cut -c1-16
}
if [ "${1:-}" = fingerprint ]; then fingerprint; exit 0; fi
# wheels the device lacks (pyamg, pytest-xdist, pytest-timeout), carried in .whl/ (see the device notes)
if compgen -G ".whl/*.whl" >/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=$PWD:/tmp/site
fi
OUT=${OUT:-$PWD/gpu-out}
RES=$(mktemp -d)/results
mkdir -p "$OUT" "$RES"
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(tests spmv gemm spmm solvers suite)
quick=""
for s in "${steps[@]}"; do [ "$s" = quick ] && quick="--quick"; done
# shellcheck source=scripts/device_matrices.sh
source scripts/device_matrices.sh unpack
real=""
[ -d shared-matrices ] && real="--real shared-matrices"

log() { echo "== $(date +%H:%M:%S) $*" | tee -a "$RES/summary.log"; }
run_step() {  # name, timeout seconds, command...
  local name=$1 limit=$2; shift 2
  log "$name: $*"
  timeout "$limit" "$@" >"$RES/$name.log" 2>&1
  local rc=$?
  tail -n 40 "$RES/$name.log"
  log "$name: exit $rc"
  # after every step, so a run cut short still brings back what it measured
  tar -C "$(dirname "$RES")" -czf "$OUT/results.tgz" results
  cp "$RES/summary.log" "$OUT/" 2>/dev/null
}

{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.total --format=csv
  python3 -c 'import cupy, numpy, scipy; print("cupy", cupy.__version__, "numpy", numpy.__version__, "scipy", scipy.__version__)'
  echo "sources $(fingerprint) (bash scripts/gpu_check.sh fingerprint)"; } >"$RES/env.txt" 2>&1
cat "$RES/env.txt"

for s in "${steps[@]}"; do
  case $s in
    # The wgmma kernel runs in a process of its own first: a fault there would
    # poison the CUDA context of every test after it. The rest run on 8 workers
    # (pytest-xdist): much of a GPU test's time is the host-side reference.
    tests)   select="not wgmma"
             if [ -n "${TESTS_K:-}" ]; then
               select="not wgmma and ($TESTS_K)"
             else
               run_step tests_wgmma 90 python3 -m pytest -m gpu -q -rfE -x -p no:cacheprovider tests/backends/test_gemm_cuda.py -k wgmma
             fi
             run_step tests "${TESTS_LIMIT:-270}" python3 -m pytest -m gpu -q -rfE -p no:cacheprovider --continue-on-collection-errors \
                 --timeout=120 --durations=25 -n "${TESTS_WORKERS:-8}" -k "$select" tests
             # A worker that dies takes its test with it (a segfault inside cupyx's SpGEMM, now and then,
             # under many workers: sessions 18, 22 and 39). Each such test runs once more alone, so the
             # summary says whether it fails by itself; the crash stays counted in the tests step.
             mapfile -t crashed < <(grep -o "worker 'gw[0-9]*' crashed while running '[^']*'" "$RES/tests.log" \
                                      | sed "s/.*running '//; s/'\$//" | sort -u)
             if [ ${#crashed[@]} -gt 0 ]; then
               run_step tests_crashed_alone 120 python3 -m pytest -m gpu -q -rfE -p no:cacheprovider --timeout=120 \
                   "${crashed[@]}"
             fi ;;
    # shellcheck disable=SC2086  # SPMV_ARGS is a list of words
    spmv)    run_step bench_spmv "${SPMV_LIMIT:-300}" python3 scripts/bench_spmv.py --out "$RES" $real $quick ${SPMV_ARGS:-} ;;
    gemm)    run_step bench_gemm 150 python3 scripts/bench_gemm.py --out "$RES" $quick ;;
    spmm)    run_step bench_spmm 180 python3 scripts/bench_spmm.py --out "$RES" $quick ;;
    solvers) run_step bench_solvers 150 python3 scripts/bench_solvers.py --out "$RES" $quick ;;
    load)    run_step bench_load 200 python3 scripts/bench_load.py --out "$RES" ;;
    hotpath) run_step hot_path 90 python3 scripts/hot_path.py --k 8 --json "$RES/hot_path.json" ;;
    corpus)  run_step bench_corpus 420 python3 scripts/bench_corpus.py --out "$RES/corpus" ${CORPUS_ARGS:-} ;;
    # one rank: the distributed layer's overhead over spla.spmv / spla.linalg.cg (issue 18), at the
    # library's check_every (both CGs replay graphs) and at a host read every iteration (no graphs)
    distributed) run_step bench_distributed 150 env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
                 python3 scripts/bench_distributed.py --device gpu gen:poisson2d:256 gen:poisson2d:1024 \
                 gen:poisson3d:96 gen:poisson2d:2048
                 run_step bench_distributed_check1 150 env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
                 python3 scripts/bench_distributed.py --device gpu --check-every 1 gen:poisson2d:256 \
                 gen:poisson2d:1024 gen:poisson3d:96 gen:poisson2d:2048 ;;
    # shellcheck disable=SC2086  # PRECOND_ARGS is a list of words
    precond) run_step bench_precond "${PRECOND_LIMIT:-420}" python3 scripts/bench_precond.py --out "$RES" $quick \
                 ${PRECOND_ARGS:-} ;;
    # where the GPU AMG set-up's time goes (PyTorch's CUPTI trace: device busy time vs wall)
    amgprofile) run_step amg_profile 120 python3 scripts/profile_amg_setup.py --side "${AMG_SIDE:-2048}" \
                 --json "$RES/amg_profile.json" ;;
    spgemm)  run_step bench_spgemm 120 python3 scripts/bench_spgemm.py --out "$RES" $quick ;;
    profile) run_step profile 180 ncu --clock-control none -k "regex:${PROFILE_KERNEL:-segmented}" -s 1 -c 1 \
                 --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
                 --section WarpStateStats --section SchedulerStats \
                 python3 scripts/profile_spmv.py "${PROFILE_SOURCE:-gen:powerlaw:16000000:8:34000}" \
                 --kernel "${PROFILE_KERNEL:-segmented}" ;;
    suite)   run_step suite_report 300 python3 scripts/suite_report.py suite:generated --device gpu --repeat 30 \
                 --no-spy --out "$RES/suite" ;;
    quick)   ;;
    *) log "unknown step $s" ;;
  esac
done
tar -C "$(dirname "$RES")" -czf "$OUT/results.tgz" results
cp "$RES/summary.log" "$OUT/summary.log"
