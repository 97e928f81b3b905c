# Sourced by a device call script (from the checkout root, $OUT set): start the clock, define `left N` (seconds up
# to N before DEADLINE, default 560, from the start) and run fresh set 67 first where the card is an H200 (session
# 55's call5.sh: the run issue 17 waits on; it fits an H100, so an H200 may not be asked for, only taken when lent).
export PYTHONPATH=$PWD
start=$SECONDS
left() { local l=$(( ${DEADLINE:-560} - (SECONDS - start) )); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
# `whole_suite N`: the whole GPU suite (scripts/gpu_check.sh tests) into $OUT/t within `left N` seconds
whole_suite() {
  local limit; limit=$(left "$1"); mkdir -p "$OUT/t"
  OUT=$OUT/t TESTS_LIMIT=$(( limit - 20 )) timeout "$limit" bash scripts/gpu_check.sh tests >/tmp/tests-call.log 2>&1
  echo "tests: exit $?, $(( SECONDS - start )) s"; grep -E "passed|failed|exit" "$OUT/t/summary.log" /tmp/tests-call.log | tail -6
}
card=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$card"
echo "sources $(bash scripts/gpu_check.sh fingerprint)"
case "$card" in
  *H200*)
    RMAT=0 LIMIT=170 bash docs/lab/cpu-2026-12-06-session55/call5.sh >$OUT/set67-call.log 2>&1
    echo "set67: exit $?"; grep -E "exit|x cuSPARSE|geomean" $OUT/set67-call.log ;;
  *) echo "set 67 not run: not an H200" ;;
esac
