#!/usr/bin/env bash
# The next session's device calls, written in session 27 (no device was lent) and not yet run:
# the GPU suite, then held-out sets 23 (M2), 24 (S1, with the detection timing), 25 (P2) and 26
# (I1, added in session 28), each benchmarked beside the lean cuSPARSE call, adaptive2's rows
# path against a block a row (a1, added in session 28), and Nsight Compute on float64 narrow
# staged (ncu64). Predictions and decisions: this folder's README,
# ../h200-2026-12-05-session26/README.md (set 23) and ../cpu-2026-12-04-session28/README.md (set
# 26, A1; its verdicts.py scores them all). Results go under /tmp/next, packed into $OUT/next.tgz
# after every step, so a call cut short still brings back what it measured.
#
#   run(command="bash docs/lab/cpu-2026-12-04-session27/next_call.sh tests s24 s23",
#       carry=[".whl", "shared-matrices"])          # about 470 s
#   run(command="bash docs/lab/cpu-2026-12-04-session27/next_call.sh s25 s26 a1", ...)   # about 450 s
#   run(command="bash docs/lab/cpu-2026-12-04-session27/next_call.sh ncu64 counter", ...)   # about 120 s
# (counter, added in session 29: cg's time an iteration with spla.linalg.IterationCounter against
# a plain callback; prediction in ../cpu-2026-12-04-session29/README.md)
set -u -o pipefail
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
HERE=docs/lab/cpu-2026-12-04-session27
R=/tmp/next
mkdir -p "$R" "${OUT:=$PWD/next-out}"
source scripts/device_matrices.sh unpack  # carry shared-matrices.tar.xz (session 36)
pack() { tar -C /tmp -czf "$OUT/next.tgz" next; }
echo "sources $(bash scripts/gpu_check.sh fingerprint) (the tree that ran: bash scripts/gpu_check.sh fingerprint)" | tee "$R/sources.txt"
step() {  # name, command...: the command's output to $R/name.log, its tail and exit status to the call's
  local name=$1; shift
  echo "== $(date +%H:%M:%S) $name: $*"
  # a step that hangs must not take the call's later steps with it (exit 124: stopped at the limit)
  timeout -k 10 "${STEP_LIMIT_S:-420}" "$@" >"$R/$name.log" 2>&1
  local rc=$?
  [ -n "${STEP_QUIET:-}" ] || tail -n 6 "$R/$name.log"  # STEP_QUIET=1: a blind run's figures stay unread
  echo "== $(date +%H:%M:%S) $name: exit $rc"
  pack
}
sources() { ls "$1"/*.npz | paste -sd, -; }
# session 45: kernels/spmv_rle.cu as committed (0) or session 45's preload variant at PRELOAD=$1
RLE_COMMITTED=$(cat kernels/spmv_rle.cu)
use_rle() {
  if [ "$1" = 0 ]; then printf '%s\n' "$RLE_COMMITTED" >kernels/spmv_rle.cu
  else sed "s/^#define PRELOAD 4$/#define PRELOAD $1/" docs/lab/h200-2026-12-06-session45/spmv_rle_regs.cu >kernels/spmv_rle.cu; fi
}
# session 39: ab_kernel.py on adaptive2 against variants of BATCH_V, over the given small matrices, then over
# the larger corpus and real ones that guard the 10M plans (steps NAME-small and NAME-large).
# batch_ab NAME "SMALL SOURCES" BUDGET_S VARIANT...
BATCH_V=docs/lab/cpu-2026-12-05-session39/spmv_adaptive2_batch.cu
BATCH_GUARD="corpus:multimodal:2e6 corpus:empty-rows:1e6 corpus:rmat-graph500:1e6 corpus:powerlaw-heavy:1e7
  corpus:hub-rows:1e7 shared-matrices/wiki-Vote.mtx.gz shared-matrices/ca-HepPh.mtx.gz
  shared-matrices/Groebner_id2003_aug.mtx.gz shared-matrices/vsp_model1_crew1_cr42_south31.mtx.gz
  shared-matrices/p2p-Gnutella31.mtx.gz"
batch_ab() {
  local name=$1 small=$2 budget=$3 part src; shift 3
  local variants=(--variant committed=) v
  for v in "$@"; do variants+=(--variant "$v"); done
  for part in small large; do
    if [ $part = small ]; then src=$small; else src=$BATCH_GUARD; fi
    step "$name-$part" python3 scripts/ab_kernel.py $src --kernel adaptive2 --dtype float32 float64 "${variants[@]}" \
         --rounds 3 --budget "$budget" --out "$R/$name-$part"
  done
}
# the l2 step's counts: L2 sectors, DRAM bytes and L1 sectors of global loads, to put in bytes a nonzero
L2_METRICS=lts__t_sectors.sum,lts__t_sectors_srcunit_tex_op_read.sum,dram__bytes_read.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sector_hit_rate.pct

for s in "$@"; do
  case $s in
    tests) step tests env TESTS_WORKERS=12 TESTS_LIMIT=200 OUT="$R/tests" bash scripts/gpu_check.sh tests ;;
    s23)   step make23 python3 docs/lab/h200-2026-12-05-session26/make_held_out_23.py /tmp/h23
           step bench23 python3 scripts/bench_corpus.py --out "$R/held-out-23" --scale none \
                --sources "$(sources /tmp/h23)" --budget-min 3 ;;
    s24)   step make24 python3 "$HERE/make_held_out_24.py" /tmp/h24
           step detection python3 "$HERE/time_detection.py" shared-matrices/delaunay_n16.mtx.gz \
                shared-matrices/luxembourg_osm.mtx.gz /tmp/h24/line3-300k.npz /tmp/h24/stencil13-2d-240.npz
           step bench24 python3 scripts/bench_corpus.py --out "$R/held-out-24" --scale none \
                --sources "$(sources /tmp/h24)" --budget-min 2 ;;
    s25)   step make25 python3 "$HERE/make_held_out_25.py" /tmp/h25
           step bench25 python3 scripts/bench_corpus.py --out "$R/held-out-25" --scale none \
                --sources "$(sources /tmp/h25)" --budget-min 3 ;;
    s26)   step make26 python3 docs/lab/cpu-2026-12-04-session28/make_held_out_26.py /tmp/h26
           # gen:rmat:15:8:seed=44: its record (session 18) timed staged in two launches
           step bench26 python3 scripts/bench_corpus.py --out "$R/held-out-26" --scale none \
                --sources "$(sources /tmp/h26),gen:rmat:15:8:seed=44" --budget-min 2 ;;
    a1)    [ -d /tmp/h26 ] || step make26 python3 docs/lab/cpu-2026-12-04-session28/make_held_out_26.py /tmp/h26
           step a1 python3 docs/lab/cpu-2026-12-04-session28/ab_rows_path.py \
                $(cat docs/lab/cpu-2026-12-04-session28/a1_sources.txt) /tmp/h26/*.npz --out "$R/a1" ;;
    ncu64) for n in off on; do  # float64 narrow against plain staged on knn-window@40M (README: N5)
             step "ncu-narrow-$n" ncu --clock-control none -k 'regex:spla_spmv_staged(_narrow)?(<|$)' -s 1 -c 1 \
                  --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
                  --section Occupancy python3 "$HERE/profile_narrow.py" --narrow "$n" --dtype float64
           done ;;
    counter) step counter python3 docs/lab/cpu-2026-12-04-session29/time_counter.py --out "$R/counter" ;;
    # added in session 31 (../h200-2026-12-05-session31/README.md): the real matrices re-run with S1
    # and A1 taken, and where staged and the lean cuSPARSE call spend their time on three large
    # irregular float32 matrices (L2 or DRAM)
    real)  step real python3 scripts/bench_corpus.py --out "$R/real" --scale none --real shared-matrices \
                --budget-min 4 ;;
    l2)    for m in random-width knn-window powerlaw-mid; do
             step "l2-$m-staged" ncu --clock-control none -k 'regex:spla_spmv_staged(_narrow)?(<|$)' -s 1 -c 1 \
                  --section SpeedOfLight --section MemoryWorkloadAnalysis --metrics "$L2_METRICS" \
                  python3 scripts/profile_spmv.py "corpus:$m:4e7" --kernel staged
             step "l2-$m-cusparse" ncu --clock-control none -k 'regex:csrmv|spmv|SpMV' -s 2 -c 2 \
                  --section SpeedOfLight --section MemoryWorkloadAnalysis --metrics "$L2_METRICS" \
                  python3 scripts/profile_spmv.py "corpus:$m:4e7" --kernel cusparse:1
           done ;;
    # (session 31's sorted step, staged over tiles in column order, ran in session 32; its switch
    # segmented.STAGED_SORTED was removed in session 34)
    # session 32: where a fresh copy's dia detection spends (../h200-2026-12-05-session32/README.md, "Next")
    steps) [ -d /tmp/h24 ] || step make24 python3 "$HERE/make_held_out_24.py" /tmp/h24
           step steps python3 docs/lab/h200-2026-12-05-session32/detection_steps.py shared-matrices/delaunay_n16.mtx.gz \
                /tmp/h24/line3-300k.npz /tmp/h24/stencil13-2d-240.npz gen:poisson2d:1000 ;;
    # session 33: staged's bank offsets (../h200-2026-12-05-session33/README.md): held-out set 27 and
    # four earlier matrices of one row length, the committed kernel against the one before, in turns
    # (call 4 added a third variant, wrap=file:$S33/spmv_staged_wrap.cu, since taken into kernels/)
    ab27)  S33=docs/lab/h200-2026-12-05-session33
           [ -d /tmp/h27 ] || step make27 python3 "$S33/make_held_out_27.py" /tmp/h27
           step make-old sh -c "python3 docs/lab/h200-2026-12-04-session20/make_held_out_10.py /tmp/h10 rows-12-over-30k &&
                python3 docs/lab/h200-2026-12-04-session24/make_held_out_18.py /tmp/h18 rows-32-exactly-over-2M &&
                python3 docs/lab/h200-2026-12-05-session26/make_held_out_20.py /tmp/h20 knn-32-window-8k &&
                python3 docs/lab/h200-2026-12-05-session26/make_held_out_22.py /tmp/h22 runs-4x8-local-3000"
           old="/tmp/h10/rows-12-over-30k.npz /tmp/h18/rows-32-exactly-over-2M.npz /tmp/h20/knn-32-window-8k.npz /tmp/h22/runs-4x8-local-3000.npz"
           for pair in float32:staged:16 float64:staged:8; do
             step "ab27-${pair%%:*}" python3 scripts/ab_kernel.py /tmp/h27/*.npz $old --kernel "${pair#*:}" \
                  --dtype "${pair%%:*}" --variant committed= --variant "before=file:$S33/spmv_staged_before.cu" \
                  --rounds 3 --out "$R/ab27-${pair%%:*}"
           done ;;
    # session 33, call 5: the taken kernel against the one before on six irregular corpus matrices
    abcorpus) for pair in float32:staged:16 float64:staged:8; do
             step "abcorpus-${pair%%:*}" python3 scripts/ab_kernel.py corpus:powerlaw-mid:4e7 corpus:rmat-graph500:4e7 \
                  corpus:random-width:4e7 corpus:bimodal:4e7 corpus:multimodal:4e7 corpus:knn-window:4e7 \
                  --kernel "${pair#*:}" --dtype "${pair%%:*}" --variant committed= \
                  --variant "before=file:docs/lab/h200-2026-12-05-session33/spmv_staged_before.cu" \
                  --rounds 3 --out "$R/abcorpus-${pair%%:*}"
           done ;;
    # session 33: M2 again on a fresh set with staged's bank offsets (bench records every kernel; the
    # rule is replayed on the CPU with rule_trial.py --trial m2-gate)
    bench28) step make28 python3 docs/lab/h200-2026-12-05-session33/make_held_out_28.py /tmp/h28
           step bench28 python3 scripts/bench_corpus.py --out "$R/held-out-28" --scale none \
                --sources "$(sources /tmp/h28)" --budget-min 2 ;;
    # session 33: float32's packed class (segmented) re-run with staged's bank offsets, for P3: the kNN
    # windows and rows of one length that the class was fitted around, both corpus families at 10M and
    # 40M (subsets of a set draw from their maker's generator in a new order: the same shapes, not the
    # same bits, and their records replace the old ones in a replay)
    packed) L=docs/lab
           step makepacked sh -c "python3 $L/h200-2026-12-04-session24/make_held_out_18.py /tmp/h18 knn-48-window-5k &&
                python3 $L/h200-2026-12-05-session26/make_held_out_20.py /tmp/h20 knn-32-window-8k stencil27-window-shuffled &&
                python3 $L/cpu-2026-12-04-session27/make_held_out_25.py /tmp/h25 knn-24-window-12k rows-40-exactly-local-10000 &&
                python3 $L/h200-2026-12-04-session19/make_held_out_large.py /tmp/hp knn-15 kron-600x5000"
           step benchpacked python3 scripts/bench_corpus.py --out "$R/packed-rerun" --scale 1e7,4e7 \
                --families knn-window,zipf-columns --dtypes float32 --budget-min 4 --sources \
                "/tmp/h18/knn-48-window-5k.npz,/tmp/h20/knn-32-window-8k.npz,/tmp/h20/stencil27-window-shuffled.npz,/tmp/h25/knn-24-window-12k.npz,/tmp/h25/rows-40-exactly-local-10000.npz,/tmp/hp/knn-15.npz,/tmp/hp/kron-600x5000.npz" ;;
    # session 33: R1-R2, columns relabelled by count (the L1 model's lead for the large irregular target)
    relabel) step relabel python3 docs/lab/h200-2026-12-05-session33/relabel_trial.py /tmp/rl corpus:rmat-skewed:4e7 \
                  corpus:rmat-graph500:4e7 corpus:powerlaw-mid:4e7 corpus:bimodal:4e7 corpus:random-width:4e7 \
                  corpus:knn-window:4e7
           step benchrelabel python3 scripts/bench_corpus.py --out "$R/relabel" --scale none --dtypes float32 \
                --sources "$(sources /tmp/rl)" --budget-min 5 ;;
    # session 33: the corpus families whose rows are all of one even length, re-run with the bank offsets
    # (../h200-2026-12-05-session33/stale_records.txt lists every stale record; these replace the corpus's)
    stale) step stale python3 scripts/bench_corpus.py --out "$R/corpus-even-rows" --scale 3e5,1e6,2e6,1e7,4e7 \
                --families random-uniform,tall-skinny,zipf-columns --budget-min 5 ;;
    bench27) [ -d /tmp/h27 ] || step make27 python3 docs/lab/h200-2026-12-05-session33/make_held_out_27.py /tmp/h27
           step bench27 python3 scripts/bench_corpus.py --out "$R/held-out-27" --scale none \
                --sources "$(sources /tmp/h27)" --budget-min 2 ;;
    # session 34 (../cpu-2026-12-05-session34/README.md, G1-G2): staged reading no values, on pattern
    # twins of corpus matrices (a lab variant of the kernel, right for matrices of one value only)
    uniform) S34=docs/lab/cpu-2026-12-05-session34
           python3 "$S34/make_uniform_variant.py" "$S34/spmv_staged_uniform.cu" || exit 2
           step makepattern python3 "$S34/make_pattern.py" /tmp/pat corpus:knn-window:4e7 corpus:banded-fixed:4e7 \
                corpus:random-width:4e7 corpus:rmat-graph500:4e7 corpus:powerlaw-mid:4e7 corpus:bimodal:4e7 \
                corpus:knn-window:1e7 corpus:rmat-mild:1e7
           for pair in float32:staged:16 float64:staged:8; do
             step "uniform-${pair%%:*}" python3 scripts/ab_kernel.py /tmp/pat/*.npz --kernel "${pair#*:}" \
                  --dtype "${pair%%:*}" --variant committed= --variant "uniform=file:$S34/spmv_staged_uniform.cu" \
                  --rounds 3 --out "$R/uniform-${pair%%:*}"
           done ;;
    # session 34: the same on branch lab/uniform-staged (check it out before the call), where staged
    # has _uniform entries behind segmented.STAGED_UNIFORM: the switch off and on, beside cuSPARSE
    uniform-switch) S34=docs/lab/cpu-2026-12-05-session34
           [ -d /tmp/pat ] || step makepattern python3 "$S34/make_pattern.py" /tmp/pat corpus:knn-window:4e7 \
                corpus:banded-fixed:4e7 corpus:random-width:4e7 corpus:rmat-graph500:4e7 corpus:powerlaw-mid:4e7 \
                corpus:bimodal:4e7 corpus:knn-window:1e7 corpus:rmat-mild:1e7
           step uniform-switch python3 docs/lab/h200-2026-12-05-session26/ab_switch.py /tmp/pat/*.npz \
                --switch segmented.STAGED_UNIFORM --modes "values=()" "uniform=('float32','float64')" \
                --others --auto --out "$R/uniform-switch.json" ;;
    # session 36 (../cpu-2026-12-05-session36/README.md): P4, float32's packed class split by the
    # window of x a staged tile reads (replayed on the CPU with rule_trial.py --trial tile-span=12288)
    bench29) S36=docs/lab/cpu-2026-12-05-session36
           [ -d /tmp/h29 ] || step make29 python3 "$S36/make_held_out_29.py" /tmp/h29
           step bench29 python3 scripts/bench_corpus.py --out "$R/held-out-29" --scale none \
                --sources "$(sources /tmp/h29)" --budget-min 2 ;;
    # session 36, U1: one-value staged against auto's segmented on fresh float32 pattern matrices
    pattern29) S36=docs/lab/cpu-2026-12-05-session36
           [ -d /tmp/h29 ] || step make29 python3 "$S36/make_held_out_29.py" /tmp/h29
           step makepattern29 python3 docs/lab/cpu-2026-12-05-session34/make_pattern.py /tmp/pat29 \
                corpus:zipf-columns:4e7 corpus:random-uniform:4e7 /tmp/h29/normal-20-28-sigma-6000.npz \
                /tmp/h29/blocks-24-32768.npz /tmp/h29/normal-12-16-sigma-12000.npz /tmp/h29/blocks-48-65536.npz
           step pattern29 python3 docs/lab/h200-2026-12-05-session26/ab_switch.py /tmp/pat29/*.npz \
                --switch segmented.STAGED_UNIFORM --modes "values=()" "uniform=('float32','float64')" \
                --dtype float32 --others segmented --auto --out "$R/pattern29.json" ;;
    # session 38 (../cpu-2026-12-05-session38/README.md, M3): the medium class's runs of columns
    # (vector today) against staged, on fresh set 30 ...
    bench30) S38=docs/lab/cpu-2026-12-05-session38
           [ -d /tmp/h30 ] || step make30 python3 "$S38/make_held_out_30.py" /tmp/h30
           step bench30 python3 scripts/bench_corpus.py --out "$R/held-out-30" --scale none \
                --sources "$(sources /tmp/h30)" --budget-min 4 ;;
    # ... and on the records of the class that predate staged's bank offsets (session 33): sets 22
    # and 23 rebuilt whole (the same seeds and order, so the same matrices) and the corpus's block-sparse
    runs38) [ -d /tmp/h22 ] || step make22 python3 docs/lab/h200-2026-12-05-session26/make_held_out_22.py /tmp/h22
           [ -d /tmp/h23 ] || step make23 python3 docs/lab/h200-2026-12-05-session26/make_held_out_23.py /tmp/h23
           step runs38 python3 scripts/bench_corpus.py --out "$R/runs-rerun" --scale 1e7,4e7 --families block-sparse \
                --sources /tmp/h22/runs-4x8-local-3000.npz,/tmp/h22/runs-2x16-local-1000.npz,/tmp/h23/runs-3x12-local-2000.npz,/tmp/h23/runs-6x4-local-5000.npz \
                --budget-min 3 ;;
    # ... and float64's staged picks whose records predate the bank offsets (session 37's floor list:
    # knn-32-window-8k 0.91, knn-32-window-20k 0.94, knn-48-window-5k and rows-32-exactly-over-2M 0.97-0.98)
    knn38) S24=docs/lab/h200-2026-12-04-session24 S26=docs/lab/h200-2026-12-05-session26
           [ -d /tmp/h17 ] || step make17 python3 "$S24/make_held_out_17.py" /tmp/h17
           [ -d /tmp/h18 ] || step make18 python3 "$S24/make_held_out_18.py" /tmp/h18
           [ -d /tmp/h20 ] || step make20 python3 "$S26/make_held_out_20.py" /tmp/h20
           step knn38 python3 scripts/bench_corpus.py --out "$R/knn-rerun" --scale none --dtypes float64 \
                --sources /tmp/h17/knn-32-window-20k.npz,/tmp/h18/knn-48-window-5k.npz,/tmp/h18/rows-32-exactly-over-2M.npz,/tmp/h20/knn-32-window-8k.npz \
                --budget-min 3 ;;
    # session 38, P5: float32's packed class whose tiles read no line of x twice, on fresh set 31
    bench31) S38=docs/lab/cpu-2026-12-05-session38
           [ -d /tmp/h31 ] || step make31 python3 "$S38/make_held_out_31.py" /tmp/h31
           step bench31 python3 scripts/bench_corpus.py --out "$R/held-out-31" --scale none --dtypes float32 \
                --sources "$(sources /tmp/h31)" --budget-min 4 ;;
    # session 38, I2 (not run in session 38): small irregular matrices of short rows, staged against adaptive2
    bench32) S38=docs/lab/cpu-2026-12-05-session38
           [ -d /tmp/h32 ] || step make32 python3 "$S38/make_held_out_32.py" /tmp/h32
           step bench32 python3 scripts/bench_corpus.py --out "$R/held-out-32" --scale none \
                --sources "$(sources /tmp/h32)" --budget-min 3 ;;
    # session 39, O1 (../cpu-2026-12-05-session39/README.md): adaptive2's heavy descriptors first or in
    # row order, crossed with adaptive's kernel; the matrices the lead came from, then fresh set 33
    order39) S39=docs/lab/cpu-2026-12-05-session39
           [ -d /tmp/h26 ] || step make26 python3 docs/lab/cpu-2026-12-04-session28/make_held_out_26.py /tmp/h26
           [ -d /tmp/h32 ] || step make32 python3 docs/lab/cpu-2026-12-05-session38/make_held_out_32.py /tmp/h32
           [ -d /tmp/h33 ] || step make33 python3 "$S39/make_held_out_33.py" /tmp/h33
           step order-report python3 "$S39/ab_order.py" /tmp/h33/*.npz corpus:powerlaw-heavy:1e7 corpus:hub-rows:1e7 \
                --out "$R/order-report"
           step order-lead python3 "$S39/ab_order.py" /tmp/h26/*.npz /tmp/h32/*.npz gen:powerlaw:30000:8:seed=43 \
                gen:blockdense:100000:50:1000:0.9:seed=40 gen:blockdense:60000:10:800:0.7:seed=80 gen:rmat:15:8:seed=44 \
                --out "$R/order-lead" ;;
    # session 39: held-out records whose adaptive2 times predate A1 (session 31's small plans) and
    # later kernel changes: set 26 (timed at 1e3248e, before A1 was taken), session 18's generated
    # held-out matrices (held-out-call4), session 25's (held-out-19) and set 12's preferential-small; these replace them in a replay
    refresh39) [ -d /tmp/h26 ] || step make26 python3 docs/lab/cpu-2026-12-04-session28/make_held_out_26.py /tmp/h26
           step make12 python3 docs/lab/h200-2026-12-04-session23/make_held_out_12.py /tmp/h12 preferential-small
           step refresh39 python3 scripts/bench_corpus.py --out "$R/held-out-refresh" --scale none --budget-min 5 \
                --sources "$(sources /tmp/h26),/tmp/h12/preferential-small.npz,gen:powerlaw:250000:8:seed=31,gen:powerlaw:120000:10:seed=32,gen:powerlaw:500000:3:seed=33,gen:rmat:18:6:seed=34,gen:rmat:17:20:seed=35,gen:rmat:19:5:seed=36,gen:hugerows:400000:40:10000:seed=37,gen:blockdense:300000:150:3000:0.6:seed=38,gen:hugerows:200000:10:30000:seed=39,gen:blockdense:100000:50:1000:0.9:seed=40,gen:random:200000:8:seed=41,gen:powerlaw:30000:8:seed=43,gen:rmat:15:8:seed=44,gen:powerlaw:1500000:6:seed=45,gen:powerlaw:45000:9:seed=71,gen:powerlaw:90000:7:seed=72,gen:powerlaw:60000:12:seed=73,gen:powerlaw:110000:8:seed=77,gen:rmat:15:12:seed=74,gen:rmat:16:10:seed=75,gen:rmat:15:24:seed=76,gen:rmat:17:6:seed=79,gen:blockdense:60000:10:800:0.7:seed=80,gen:hugerows:80000:6:8000:seed=81" ;;
    # session 39, B1-B2 (../cpu-2026-12-05-session39/README.md): adaptive2's loads in predicated batches,
    # four variants of the kernel file against the committed one, in turns beside cuSPARSE
    batch39) [ -d /tmp/h26 ] || step make26 python3 docs/lab/cpu-2026-12-04-session28/make_held_out_26.py /tmp/h26
           [ -d /tmp/h32 ] || step make32 python3 docs/lab/cpu-2026-12-05-session38/make_held_out_32.py /tmp/h32
           [ -d /tmp/h33 ] || step make33 python3 docs/lab/cpu-2026-12-05-session39/make_held_out_33.py /tmp/h33
           batch_ab batch "/tmp/h26/*.npz /tmp/h32/*.npz /tmp/h33/*.npz" 0.03 "b8=file:$BATCH_V -DSPLA_AB_BATCH=8" \
                "b16=file:$BATCH_V -DSPLA_AB_BATCH=16" "s8=file:$BATCH_V -DSPLA_AB_STREAM_BATCH=8" \
                "b8s8=file:$BATCH_V -DSPLA_AB_BATCH=8 -DSPLA_AB_STREAM_BATCH=8" ;;
    # session 39, B2': s8 by device time (ab_kernel.py's new figure), decided on fresh set 34
    batch39b) [ -d /tmp/h34 ] || step make34 python3 docs/lab/cpu-2026-12-05-session39/make_held_out_34.py /tmp/h34
           batch_ab batch34 "/tmp/h34/*.npz" 0.02 "s8=file:$BATCH_V -DSPLA_AB_STREAM_BATCH=8" \
                "b8=file:$BATCH_V -DSPLA_AB_BATCH=8" "b8s8=file:$BATCH_V -DSPLA_AB_BATCH=8 -DSPLA_AB_STREAM_BATCH=8" ;;
    # session 39, B3 (written for the next session): batches of 4 held to float32's 32 registers, fresh set 35
    batch40) [ -d /tmp/h35 ] || step make35 python3 docs/lab/cpu-2026-12-05-session39/make_held_out_35.py /tmp/h35
           batch_ab batch35 "/tmp/h35/*.npz" 0.02 \
                "b4s4m8=file:$BATCH_V -DSPLA_AB_BATCH=4 -DSPLA_AB_STREAM_BATCH=4 -DSPLA_AB_MIN_BLOCKS=8" \
                "b8=file:$BATCH_V -DSPLA_AB_BATCH=8" "s8=file:$BATCH_V -DSPLA_AB_STREAM_BATCH=8" ;;
    # session 40, P1 (../cpu-2026-12-05-session40/README.md): dia's palette entry against its values entry,
    # on the corpus's stencils (constant coefficients), then what the palette costs once a matrix
    palette40) STENCILS="corpus:stencil5:4e7 corpus:stencil7:4e7 corpus:stencil9:4e7 corpus:stencil25:4e7
                 corpus:stencil27:4e7 corpus:stencil5:2e8 corpus:stencil27:2e8 corpus:stencil7:2e6"
           # shellcheck disable=SC2086  # STENCILS is a list of words
           step palette-ab python3 docs/lab/h200-2026-12-05-session26/ab_switch.py $STENCILS --switch dia.PALETTE_DTYPES \
                --modes "values=()" "palette=('float32','float64')" --kernel dia --others staged --auto \
                --rounds 3 --out "$R/palette-ab.json"
           # shellcheck disable=SC2086
           step palette-cost python3 docs/lab/cpu-2026-12-05-session40/palette_cost.py $STENCILS ;;
    # session 40, P2: the palette over the values on a ladder of sizes (fit: stencil7, stencil27; report: the
    # others), its table in shared memory or read through the read-only cache, and the detection's cost
    palette40b) LADDER=$(for f in stencil7 stencil27 stencil5 stencil9 stencil25; do for n in 4e6 1e7 2e7; do
                   echo -n "corpus:$f:$n "; done; done)
           # shellcheck disable=SC2086  # LADDER is a list of words
           step palette-ladder python3 docs/lab/h200-2026-12-05-session26/ab_switch.py $LADDER corpus:stencil7:2e6 \
                --switch dia.PALETTE_DTYPES --modes "values=()" "palette=('float32','float64')" --kernel dia \
                --others --rounds 3 --out "$R/palette-ladder.json"
           # shellcheck disable=SC2086
           step palette-table python3 scripts/ab_kernel.py corpus:stencil7:2e6 corpus:stencil27:2e6 $LADDER \
                corpus:stencil27:4e7 --kernel dia --dtype float32 float64 --variant shared= \
                --variant ldg=-DSPLA_DIA_TABLE_LDG=1 --rounds 3 --budget 0.02 --out "$R/palette-table"
           step palette-cost python3 docs/lab/cpu-2026-12-05-session40/palette_cost.py corpus:stencil7:2e6 \
                corpus:stencil27:4e7 corpus:stencil5:2e8 corpus:stencil27:2e8 ;;
    # session 40, after P2: the detection's cost once it codes in chunks (P2c), and the launcher's rule at work
    palette40c) step palette-cost-chunked python3 docs/lab/cpu-2026-12-05-session40/palette_cost.py corpus:stencil7:2e6 \
                corpus:stencil7:4e6 corpus:stencil27:1e7 corpus:stencil27:4e7 corpus:stencil5:2e8 corpus:stencil27:2e8
           step palette-rule python3 docs/lab/h200-2026-12-05-session26/ab_switch.py corpus:stencil7:4e6 \
                corpus:stencil9:4e6 corpus:stencil27:1e7 --switch dia.PALETTE_DTYPES --modes "values=()" \
                "palette=('float32','float64')" --kernel dia --others --auto --rounds 3 --out "$R/palette-rule.json" ;;
    # session 40, the final rule (dia.PALETTE_MIN_BYTES = 128 MB) on the issue's large stencils, auto against the lean call
    palette40d) step palette-final python3 docs/lab/h200-2026-12-05-session26/ab_switch.py corpus:stencil5:4e7 \
                corpus:stencil27:4e7 corpus:stencil25:4e7 corpus:stencil27:2e7 corpus:stencil5:2e8 corpus:stencil27:2e8 \
                --switch dia.PALETTE_DTYPES --modes "values=()" "palette=('float32','float64')" --kernel dia \
                --others staged --auto --rounds 3 --out "$R/palette-final.json" ;;
    # session 41: the palette found in one kernel beside session 40's chunked passes (P3a-b), and the rule at
    # the speed cuts (25 MB float32, 16 MB float64) on stencils on both sides of them (P3c)
    palette41) step palette-cost2 python3 docs/lab/cpu-2026-12-05-session41/palette_cost2.py corpus:stencil7:2e6 \
                corpus:stencil7:4e6 corpus:stencil27:1e7 corpus:stencil27:2e7 corpus:stencil27:4e7 corpus:stencil5:2e8 \
                corpus:stencil27:2e8 ;;
    palette41b) step palette-rule41 python3 docs/lab/h200-2026-12-05-session26/ab_switch.py corpus:stencil7:2e6 \
                corpus:stencil5:4e6 corpus:stencil9:4e6 corpus:stencil25:1e7 corpus:stencil7:1e7 corpus:stencil27:2e7 \
                --switch dia.PALETTE_DTYPES --modes "values=()" "palette=('float32','float64')" --kernel dia \
                --others --auto --rounds 3 --out "$R/palette-rule41.json" ;;
    palette41c) step palette-steps python3 docs/lab/cpu-2026-12-05-session41/palette_steps.py corpus:stencil7:2e6
           step palette-steps32 python3 docs/lab/cpu-2026-12-05-session41/palette_steps.py corpus:stencil7:4e6 \
                --dtype float32 ;;
    # session 41, call 3: the detection with a strided sample and one table, and where the palette pays its
    # detection back within 100 calls (fit: stencil7, stencil27; report: stencil5, stencil9, stencil25)
    palette41d) LADDER=$(for f in stencil7 stencil27 stencil5 stencil9 stencil25; do for n in 2e6 3e6 4e6 6e6 8e6 1.2e7 1.6e7; do
                   echo -n "corpus:$f:$n "; done; done)
           # shellcheck disable=SC2086  # LADDER is a list of words
           step palette-ladder41 python3 docs/lab/cpu-2026-12-05-session41/palette_cost2.py $LADDER \
                --json "$R/palette-ladder41.json" ;;
    # session 41, call 4: the committed rule (38 MB touched) with auto, on stencils of sizes the ladder had not
    palette41e) step palette-rule41e python3 docs/lab/h200-2026-12-05-session26/ab_switch.py corpus:stencil5:5e6 \
                corpus:stencil25:5e6 corpus:stencil7:5e6 corpus:stencil9:7e6 corpus:stencil9:8.5e6 corpus:stencil27:1e7 \
                --switch dia.PALETTE_DTYPES --modes "values=()" "palette=('float32','float64')" --kernel dia \
                --others --auto --rounds 3 --out "$R/palette-rule41e.json" ;;
    # session 41, call 5: staged's palette over its values' entry on palette twins (P6), and its detection's cost
    palette41f) S41=docs/lab/cpu-2026-12-05-session41
           BIG="random-uniform knn-window random-width bimodal powerlaw-mid rmat-graph500"
           [ -d /tmp/pal41 ] || step makepalette41 bash -c "python3 $S41/make_palette.py /tmp/pal41 3 \
                $(for f in $BIG; do echo -n "corpus:$f:4e7 "; done) && python3 $S41/make_palette.py /tmp/pal41 200 \
                corpus:random-uniform:4e7 corpus:powerlaw-mid:4e7 corpus:rmat-graph500:4e7 && \
                python3 $S41/make_palette.py /tmp/pal41 3 corpus:random-uniform:1e6 corpus:random-uniform:4e6 \
                corpus:random-uniform:1e7 corpus:powerlaw-mid:1e6 corpus:powerlaw-mid:4e6 corpus:powerlaw-mid:1e7"
           step palette-staged python3 docs/lab/h200-2026-12-05-session26/ab_switch.py /tmp/pal41/*.npz \
                --switch segmented.STAGED_PALETTE_MIN_BYTES --modes "values=1000000000000000000" "palette=0" \
                --kernel staged --others --auto --rounds 3 --out "$R/palette-staged.json"
           step palette-staged-cost python3 $S41/staged_palette_cost.py /tmp/pal41/*.npz --json "$R/palette-staged-cost.json" ;;
    # session 41, call 6: staged's float64 cut (90 MB touched) on twins of other families near it (P7)
    palette41g) S41=docs/lab/cpu-2026-12-05-session41
           step makepalette41g python3 $S41/make_palette.py /tmp/pal41g 3 corpus:knn-window:6e6 corpus:knn-window:8e6 \
                corpus:knn-window:1.2e7 corpus:bimodal:6e6 corpus:bimodal:8e6 corpus:bimodal:1.2e7 corpus:rmat-graph500:6e6 \
                corpus:rmat-graph500:8e6 corpus:rmat-graph500:1.2e7
           step palette-staged-cut python3 docs/lab/h200-2026-12-05-session26/ab_switch.py /tmp/pal41g/*.npz --dtype float64 \
                --switch segmented.STAGED_PALETTE_MIN_BYTES --modes "values=1000000000000000000" "palette=0" \
                --kernel staged --others --auto --rounds 3 --out "$R/palette-staged-cut.json"
           step palette-staged-cut-cost python3 $S41/staged_palette_cost.py /tmp/pal41g/*.npz --dtype float64 \
                --json "$R/palette-staged-cut-cost.json" ;;
    # session 42: staged's palette table copied as dia's (P1), the stencil target with dia's palette (P2),
    # GEMM's shared tile copy against the files before it (P3)
    table42) S41=docs/lab/cpu-2026-12-05-session41 S42=docs/lab/cpu-2026-12-05-session42
           step maketable42 python3 $S41/make_palette.py /tmp/pal42 3 corpus:powerlaw-mid:4e7 corpus:random-uniform:4e7 \
                corpus:knn-window:4e7 corpus:rmat-graph500:1.6e7 corpus:powerlaw-mid:4e6
           step table42 python3 $S42/old_table.py /tmp/pal42/*.npz --rounds 3 --out "$R/table42.json" ;;
    # the corpus's constant-coefficient stencils re-run whole with dia's palette, so the replay over every record has it (P4)
    stencils42) step stencils42 python3 scripts/bench_corpus.py --out "$R/corpus-stencils-palette" --scale 1e7,4e7 \
                --families stencil5,stencil7,stencil9,stencil25,stencil27 --budget-min 4 ;;
    gemm42) step gemm42 python3 docs/lab/cpu-2026-12-05-session42/gemm_ab.py --rounds 3 --out "$R/gemm42.json" ;;
    stencil42) step stencil42 python3 docs/lab/cpu-2026-12-05-session42/stencil_target.py corpus:stencil5:5e7 \
                corpus:stencil27:5e7 corpus:stencil5:1e8 corpus:stencil27:1e8 --rounds 3 --out "$R/stencil42.json" ;;
    # session 43: the float32 BiCGSTAB count the suite met (../h100-2026-12-05-session43/README.md)
    orders43) step solvers43 python3 -m pytest -m gpu -q -rfE -p no:cacheprovider tests/linalg/test_solvers.py
              step orders43 python3 docs/lab/h100-2026-12-05-session43/bicgstab_orders.py ;;
    gemm43) step gemm43 python3 docs/lab/cpu-2026-12-05-session42/gemm_ab.py --rounds 3 --out "$R/gemm43.json" ;;
    # session 44: the rle kernel on held-out set 36 and set 30's runs (R1), and its variants (R2); predictions
    # in ../cpu-2026-12-05-session44/README.md
    turns44) S44=docs/lab/cpu-2026-12-05-session44
           step make36 python3 "$S44/make_held_out_36.py" /tmp/h36
           # rle beside staged on every matrix, the controls too (bench_corpus times rle only where auto would look)
           step turns36 python3 scripts/time_turns.py /tmp/h36/*.npz --kernels staged,rle,cusparse:2 \
                --dtype float32 float64 --rounds 3 --budget 0.05 --out "$R/turns36" ;;
    # session 44, after call 1: set 37 tests auto's cut at runs of 6.5 (R3 in ../cpu-2026-12-05-session44/README.md)
    turns37) step make37 python3 docs/lab/cpu-2026-12-05-session44/make_held_out_37.py /tmp/h37
           step turns37 python3 scripts/time_turns.py /tmp/h37/*.npz --kernels staged,rle,cusparse:2 \
                --dtype float32 float64 --rounds 3 --budget 0.05 --out "$R/turns37" ;;
    bench44) [ -f /tmp/h36/runs-10x2-local-2000.npz ] ||
             step make36 python3 docs/lab/cpu-2026-12-05-session44/make_held_out_36.py /tmp/h36
           STEP_LIMIT_S=240 step bench36 python3 scripts/bench_corpus.py --out "$R/held-out-36" --scale none \
                --budget-min 3 --sources "$(for m in runs-4x6-local-2000 blocks-6x6-5 runs-3x12-scattered \
                runs-2x32-local-5000 runs-6x4-local-2000 blocks-3x3-9 runs-8x3-local-2000 blocks-2x2-12 \
                runs-10x2-local-2000; do echo /tmp/h36/$m.npz; done | paste -sd, -)" ;;
    rle30) step make30 python3 docs/lab/cpu-2026-12-05-session38/make_held_out_30.py /tmp/h30 runs-3x8-local-2000 \
                runs-4x16-local-20000 runs-6x12-local-4000 blocks-16x16-3 blocks-4x4-6 aligned-runs-4x8-local-3000
           STEP_LIMIT_S=300 step bench30 python3 scripts/bench_corpus.py --out "$R/held-out-30-rle" --scale none \
                --sources "$(sources /tmp/h30)" --budget-min 4 ;;
    rleab44) S44=docs/lab/cpu-2026-12-05-session44
           [ -f /tmp/h36/blocks-6x6-5.npz ] || step make36ab python3 "$S44/make_held_out_36.py" /tmp/h36 \
                runs-4x6-local-2000 runs-3x12-scattered blocks-6x6-5
           step rleab44 python3 scripts/ab_kernel.py /tmp/h36/runs-4x6-local-2000.npz /tmp/h36/runs-3x12-scattered.npz \
                /tmp/h36/blocks-6x6-5.npz corpus:block-sparse:4e7 --kernel rle --dtype float32 float64 \
                --variant committed= --variant "bounds=file:$S44/spmv_rle_bounds.cu" \
                --variant "plain=file:$S44/spmv_rle_plain.cu" --rounds 3 --out "$R/rleab44" ;;
    # session 45: rle's runs in registers (R4 in ../h200-2026-12-06-session45/README.md): the variant against the
    # committed kernel on sets 36, 37 and four of set 30, then each preload swapped in and timed beside staged in turns
    regs45) S45=docs/lab/h200-2026-12-06-session45
           [ -d /tmp/h36 ] || step make36 python3 docs/lab/cpu-2026-12-05-session44/make_held_out_36.py /tmp/h36
           [ -d /tmp/h37 ] || step make37 python3 docs/lab/cpu-2026-12-05-session44/make_held_out_37.py /tmp/h37
           [ -d /tmp/h30 ] || step make30 python3 docs/lab/cpu-2026-12-05-session38/make_held_out_30.py /tmp/h30 \
                runs-3x8-local-2000 runs-6x12-local-4000 blocks-16x16-3 aligned-runs-4x8-local-3000
           h30="/tmp/h30/runs-3x8-local-2000.npz /tmp/h30/runs-6x12-local-4000.npz /tmp/h30/blocks-16x16-3.npz
                /tmp/h30/aligned-runs-4x8-local-3000.npz"
           step regs45 python3 scripts/ab_kernel.py /tmp/h36/*.npz /tmp/h37/*.npz $h30 --kernel rle \
                --dtype float32 float64 --variant committed= --variant "regs4=file:$S45/spmv_rle_regs.cu -DPRELOAD=4" \
                --variant "regs8=file:$S45/spmv_rle_regs.cu -DPRELOAD=8" --rounds 3 --out "$R/regs45"
           for P in ${PRELOADS-4 8}; do  # PRELOADS=8: the turns under one preload only; PRELOADS= none (a call short of time)
             use_rle $P
             step "turns45-regs$P" python3 scripts/time_turns.py /tmp/h36/*.npz /tmp/h37/*.npz $h30 \
                  --kernels staged,rle:2,rle:4,rle:8,cusparse:2 --dtype float32 float64 --rounds 3 --budget 0.05 --out "$R/turns45-regs$P"
           done
           use_rle 0 ;;
    # session 45: set 38, the test of the cut read off call 3 (R5): staged and rle in turns under each kernel. Its
    # log is not echoed (the cut is chosen and committed before set 38 is read)
    turns38) STEP_QUIET=1 step make38 python3 docs/lab/h200-2026-12-06-session45/make_held_out_38.py /tmp/h38
           for P in 0 ${PRELOADS-4 8}; do
             use_rle $P
             lanes=rle:2,rle:4,rle:8; [ $P = 0 ] && lanes=rle
             STEP_QUIET=1 STEP_LIMIT_S=300 step "turns38-$P" python3 scripts/time_turns.py /tmp/h38/*.npz \
                  --kernels "staged,$lanes,cusparse:2" --dtype float32 float64 --rounds 3 --budget 0.05 \
                  --out "$R/turns38-$P"
           done
           use_rle 0 ;;
    # session 46 (../h200-2026-12-06-session46/README.md): set 39, blind, the test of rle's width and cut (D1-D3)
    # read off the lanes46 step; lanes46 times the committed kernel at every width on sets 30, 36, 37 and 38
    turns39) STEP_QUIET=1 step make39 python3 docs/lab/h200-2026-12-06-session46/make_held_out_39.py /tmp/h39
           STEP_QUIET=1 STEP_LIMIT_S=300 step turns39 python3 scripts/time_turns.py /tmp/h39/*.npz \
                --kernels staged,rle:2,rle:4,rle:8,rle:16,cusparse:2 --dtype float32 float64 --rounds 3 --budget 0.05 \
                --out "$R/turns39" ;;
    lanes46) h30="/tmp/h30/runs-3x8-local-2000.npz /tmp/h30/runs-6x12-local-4000.npz /tmp/h30/blocks-16x16-3.npz
                /tmp/h30/aligned-runs-4x8-local-3000.npz"
           files=""
           for n in ${LANES_SETS:-36 37 38 30}; do  # LANES_SETS: the fitting sets to time (a call short of time)
             case $n in
               30) [ -d /tmp/h30 ] || step make30 python3 docs/lab/cpu-2026-12-05-session38/make_held_out_30.py /tmp/h30 \
                        runs-3x8-local-2000 runs-6x12-local-4000 blocks-16x16-3 aligned-runs-4x8-local-3000
                   files="$files $h30" ;;
               36|37) [ -d /tmp/h$n ] || step make$n python3 docs/lab/cpu-2026-12-05-session44/make_held_out_$n.py /tmp/h$n
                   files="$files /tmp/h$n/*.npz" ;;
               38) [ -d /tmp/h38 ] || step make38 python3 docs/lab/h200-2026-12-06-session45/make_held_out_38.py /tmp/h38
                   files="$files /tmp/h38/*.npz" ;;
             esac
           done
           STEP_LIMIT_S=300 step lanes46 python3 scripts/time_turns.py $files --kernels staged,rle:2,rle:4,rle:8,rle:16,cusparse:2 \
                --dtype float32 float64 --rounds 3 --budget 0.05 --out "$R/lanes46" ;;
    # session 46: where rle loses to staged on set 38 in float64 (runs-2x12) and where it wins (runs-4x20), under Nsight
    # Compute (prediction in ../h200-2026-12-06-session46/README.md, N1)
    ncu46) [ -f /tmp/h38/runs-4x20-scattered.npz ] || step make38 python3 docs/lab/h200-2026-12-06-session45/make_held_out_38.py \
                /tmp/h38 runs-2x12-local-4000 runs-4x20-scattered
           for m in runs-2x12-local-4000 runs-4x20-scattered; do
             for k in rle staged; do
               step "ncu46-$m-$k" ncu --clock-control none -k "regex:spla_spmv_$k(_narrow)?(<|\$)" -s 1 -c 1 \
                    --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
                    --metrics "$L2_METRICS" python3 scripts/profile_spmv.py "/tmp/h38/$m.npz" --kernel $k --dtype float64
             done
           done ;;
    # session 47: rle at 2 and 4 lanes in float32 under Nsight Compute, where 4 wins (runs-2x16) and where 2 does
    # (blocks-20x20); prediction W0 in ../h100-2026-12-06-session47/README.md
    ncu47) [ -d /tmp/h39 ] || step make39 python3 docs/lab/h200-2026-12-06-session46/make_held_out_39.py /tmp/h39
           for m in runs-2x16-local-6000 blocks-20x20-2; do
             for k in rle:2 rle:4; do
               step "ncu47-$m-${k/:/}" ncu --clock-control none -k "regex:spla_spmv_rle(_narrow)?(<|\$)" -s 1 -c 1 \
                    --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
                    --metrics "$L2_METRICS,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,smsp__inst_executed.sum" \
                    python3 scripts/profile_spmv.py "/tmp/h39/$m.npz" --kernel $k --dtype float32
             done
           done ;;
    # session 47: fresh set 40, rle at every width beside staged (prediction W1 in ../h100-2026-12-06-session47/README.md)
    turns40) STEP_QUIET=1 step make40 python3 docs/lab/h100-2026-12-06-session47/make_held_out_40.py /tmp/h40
           STEP_QUIET=1 STEP_LIMIT_S=300 step turns40 python3 scripts/time_turns.py /tmp/h40/*.npz \
                --kernels staged,rle:2,rle:4,rle:8,rle:16,cusparse:2 --dtype float32 float64 --rounds 3 --budget 0.05 \
                --out "$R/turns40" ;;
    # session 48: fresh set 41, float32 only, the test of W2 (float32 rle's width; ../h100-2026-12-06-session48/README.md)
    turns41) STEP_QUIET=1 step make41 python3 docs/lab/h100-2026-12-06-session48/make_held_out_41.py /tmp/h41
           STEP_QUIET=1 STEP_LIMIT_S=300 step turns41 python3 scripts/time_turns.py /tmp/h41/*.npz \
                --kernels staged,rle:2,rle:4,rle:8,cusparse:2 --dtype float32 --rounds 3 --budget 0.05 \
                --out "$R/turns41" ;;
    # session 48: set 42, rows of exactly L entries (B1), RLE_ROTATE against the committed rle (B2), and ncu on the
    # bank conflicts of exact-32 against exact-30 (predictions in ../h100-2026-12-06-session48/README.md)
    turns42) [ -d /tmp/h42 ] || STEP_QUIET=1 step make42 python3 docs/lab/h100-2026-12-06-session48/make_held_out_42.py /tmp/h42
           STEP_QUIET=1 STEP_LIMIT_S=300 step turns42 python3 scripts/time_turns.py /tmp/h42/*.npz \
                --kernels staged,rle:2,rle:4,rle:8,cusparse:2 --dtype float32 --rounds 3 --budget 0.05 \
                --out "$R/turns42" ;;
    ab48)  [ -d /tmp/h42 ] || STEP_QUIET=1 step make42 python3 docs/lab/h100-2026-12-06-session48/make_held_out_42.py /tmp/h42
           [ -d /tmp/h41 ] || STEP_QUIET=1 step make41 python3 docs/lab/h100-2026-12-06-session48/make_held_out_41.py /tmp/h41 \
                aligned-runs-2x16-local-5000 sliding-2x16-jitter3 runs-2x19-local-4000 runs-3x11-local-900 blocks-17x17-2
           for k in rle:2 rle:4; do
             STEP_QUIET=1 STEP_LIMIT_S=400 step "ab48-${k/:/}" python3 scripts/ab_kernel.py /tmp/h42/*.npz \
                  /tmp/h41/{aligned-runs-2x16-local-5000,sliding-2x16-jitter3,runs-2x19-local-4000,runs-3x11-local-900,blocks-17x17-2}.npz \
                  --kernel $k --dtype float32 float64 --variant committed= --variant rotate=-DRLE_ROTATE=1 \
                  --rounds 3 --budget 0.05 --out "$R/ab48-${k/:/}"
           done ;;
    ncu48) [ -d /tmp/h42 ] || STEP_QUIET=1 step make42 python3 docs/lab/h100-2026-12-06-session48/make_held_out_42.py /tmp/h42
           ncu --query-metrics --chip gh100 >"$R/ncu48-metrics.txt" 2>&1
           extra=""
           for m in l1tex__data_bank_conflicts_pipe_lsu_mem_global_op_ld l1tex__data_pipe_lsu_wavefronts_mem_lg_cmd_read \
                    l1tex__data_pipe_lsu_wavefronts_mem_lg; do
             grep -qw "$m" "$R/ncu48-metrics.txt" && extra="$extra,$m.sum"
           done
           for m in exact-32-as-16+16 exact-30-as-15+15; do
             step "ncu48-$m-rle2" ncu --clock-control none -k "regex:spla_spmv_rle(_narrow)?(<|\$)" -s 1 -c 1 \
                  --section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
                  --metrics "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum$extra" \
                  python3 scripts/profile_spmv.py "/tmp/h42/$m.npz" --kernel rle:2 --dtype float32
           done ;;
    # session 48: B3, the rotation in float32 only, on fresh set 43; the bank conflicts of exact-32 and exact-30 read
    # directly (../h100-2026-12-06-session48/README.md)
    ab43)  STEP_QUIET=1 step make43 python3 docs/lab/h100-2026-12-06-session48/make_held_out_43.py /tmp/h43
           for k in rle rle:4 rle:8; do
             STEP_QUIET=1 STEP_LIMIT_S=400 step "ab43-${k/:/}" python3 scripts/ab_kernel.py /tmp/h43/*.npz \
                  --kernel $k --dtype float32 --variant committed= --variant rotate32=-DRLE_ROTATE=2 \
                  --rounds 3 --budget 0.05 --out "$R/ab43-${k/:/}"
           done ;;
    ncu48b) [ -f /tmp/h42/exact-30-as-15+15.npz ] || step make42b python3 docs/lab/h100-2026-12-06-session48/make_held_out_42.py /tmp/h42 \
                exact-32-as-16+16 exact-30-as-15+15
           for m in exact-32-as-16+16 exact-30-as-15+15; do
             step "ncu48b-$m-rle2" ncu --clock-control none -k "regex:spla_spmv_rle(_narrow)?(<|\$)" -s 1 -c 1 \
                  --metrics "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_gds_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_lgds.sum,gpu__time_duration.sum" \
                  python3 scripts/profile_spmv.py "/tmp/h42/$m.npz" --kernel rle:2 --dtype float32
           done ;;
    # session 48: B4, the float32 rotation where a warp piles on one bank, against the plain order, on fresh set 44
    ab44)  STEP_QUIET=1 step make44 python3 docs/lab/h100-2026-12-06-session48/make_held_out_44.py /tmp/h44
           for k in rle rle:4 rle:8; do
             STEP_QUIET=1 STEP_LIMIT_S=400 step "ab44-${k/:/}" python3 scripts/ab_kernel.py /tmp/h44/*.npz \
                  --kernel $k --dtype float32 --variant committed= \
                  --variant inorder=file:docs/lab/h100-2026-12-06-session48/spmv_rle_inorder.cu --rounds 3 --budget 0.05 \
                  --out "$R/ab44-${k/:/}"
           done ;;
    # session 48: B5, the rotated loads as an entry of their own, against the plain loads in both entries, set 45
    ab45)  STEP_QUIET=1 step make45 python3 docs/lab/h100-2026-12-06-session48/make_held_out_45.py /tmp/h45
           for k in rle rle:4 rle:8; do
             STEP_QUIET=1 STEP_LIMIT_S=400 step "ab45-${k/:/}" python3 scripts/ab_kernel.py /tmp/h45/*.npz \
                  --kernel $k --dtype float32 --variant committed= \
                  --variant plain=file:docs/lab/h100-2026-12-06-session48/spmv_rle_plain_entries.cu --rounds 3 --budget 0.05 \
                  --out "$R/ab45-${k/:/}"
           done ;;
    # session 48: set 41 again under the kept rle (rotated entry where rle.rotates says), float32, information
    turns41b) [ -d /tmp/h41 ] || STEP_QUIET=1 step make41 python3 docs/lab/h100-2026-12-06-session48/make_held_out_41.py /tmp/h41
           STEP_LIMIT_S=300 step turns41b python3 scripts/time_turns.py /tmp/h41/*.npz \
                --kernels staged,rle,rle:4,cusparse:2 --dtype float32 --rounds 3 --budget 0.05 --out "$R/turns41b" ;;
    # session 49: band's rotated loads on fresh set 46 (blind): the tree against plain loads in both entries, at
    # band's width and at 2, 4 and 8 lanes; then auto, staged and band beside the lean cuSPARSE pair (information)
    ab46)  [ -d /tmp/h46 ] || STEP_QUIET=1 step make46 python3 docs/lab/h100-2026-12-06-session49/make_held_out_46.py /tmp/h46
           for k in band band:2 band:4 band:8; do
             STEP_QUIET=1 STEP_LIMIT_S=300 step "ab46-${k/:/}" python3 scripts/ab_kernel.py /tmp/h46/*.npz \
                  --kernel $k --dtype float32 --variant committed= \
                  --variant plain=file:docs/lab/h100-2026-12-06-session49/spmv_band_plain_entries.cu --rounds 3 \
                  --budget 0.05 --out "$R/ab46-${k/:/}"
           done ;;
    turns46) [ -d /tmp/h46 ] || STEP_QUIET=1 step make46 python3 docs/lab/h100-2026-12-06-session49/make_held_out_46.py /tmp/h46
           STEP_QUIET=1 STEP_LIMIT_S=300 step turns46 python3 scripts/time_turns.py /tmp/h46/*.npz \
                --kernels auto,staged,band,cusparse:2 --dtype float32 --rounds 3 --budget 0.05 --out "$R/turns46" ;;
    # session 49, R2: band's rotated loads in both entries (float64 too) against the tree, at band's width, blind
    ab46b) [ -d /tmp/h46 ] || STEP_QUIET=1 step make46 python3 docs/lab/h100-2026-12-06-session49/make_held_out_46.py /tmp/h46
           STEP_QUIET=1 STEP_LIMIT_S=300 step ab46b python3 scripts/ab_kernel.py /tmp/h46/*.npz --kernel band \
                --dtype float32 float64 --variant committed= \
                --variant rotall=file:docs/lab/h100-2026-12-06-session49/spmv_band_rotate_all.cu --rounds 3 \
                --budget 0.05 --out "$R/ab46b" ;;
    # session 49: the float32 rle width of set 41's rows of 30-45 that do not repeat, twice as many rounds, to see
    # whether session 48's calls 2 and 7 disagree by noise (information)
    widths41) [ -d /tmp/h41 ] || STEP_QUIET=1 step make41 python3 docs/lab/h100-2026-12-06-session48/make_held_out_41.py /tmp/h41
           STEP_LIMIT_S=300 step widths41 python3 scripts/time_turns.py /tmp/h41/runs-2x16-local-9000.npz \
                /tmp/h41/aligned-runs-2x16-local-5000.npz /tmp/h41/runs-2x17-scattered.npz /tmp/h41/runs-3x11-local-900.npz \
                --kernels rle:2,rle:4,staged --dtype float32 --rounds 7 --budget 0.05 --out "$R/widths41" ;;
    # session 49, W3: float32 rle at 4 lanes where rows of 29+ rarely repeat, on fresh set 47 (blind)
    turns47) [ -d /tmp/h47 ] || STEP_QUIET=1 step make47 python3 docs/lab/h100-2026-12-06-session49/make_held_out_47.py /tmp/h47
           STEP_QUIET=1 STEP_LIMIT_S=400 step turns47 python3 scripts/time_turns.py /tmp/h47/*.npz \
                --kernels rle,rle:2,rle:4,staged,cusparse:2 --dtype float32 --rounds 5 --budget 0.05 --out "$R/turns47" ;;
    # session 49, M1: do vector and warp lose to rows that start on one L1 bank? probe set 48 (information)
    probe48) [ -d /tmp/h48 ] || STEP_QUIET=1 step make48 python3 docs/lab/h100-2026-12-06-session49/make_probe_48.py /tmp/h48
           STEP_LIMIT_S=400 step probe48 python3 scripts/time_turns.py /tmp/h48/*.npz \
                --kernels auto,vector:2,vector:4,vector:8,warp:2,warp:4,staged,cusparse:2 --dtype float32 float64 \
                --rounds 3 --budget 0.04 --out "$R/probe48" ;;
    # session 49, M2: the medium class's zone (sets 49, to fit, and 50, to test: read only after the rule is written)
    zone49) Z=docs/lab/h100-2026-12-06-session49
           [ -d /tmp/z49 ] || STEP_QUIET=1 step make49 python3 $Z/make_zone_49.py /tmp/z49 fit
           [ -d /tmp/z50 ] || STEP_QUIET=1 step make50 python3 $Z/make_zone_49.py /tmp/z50 test
           STEP_LIMIT_S=240 step zone49 python3 scripts/time_turns.py /tmp/z49/*.npz \
                --kernels auto,vector,staged,segmented,warp,cusparse:2 --dtype float32 float64 --rounds 3 \
                --budget 0.04 --out "$R/zone49"
           STEP_QUIET=1 STEP_LIMIT_S=240 step zone50 python3 scripts/time_turns.py /tmp/z50/*.npz \
                --kernels auto,vector,staged,segmented,warp,cusparse:2 --dtype float32 float64 --rounds 3 \
                --budget 0.04 --out "$R/zone50" ;;
    zone51) Z=docs/lab/h100-2026-12-06-session49
           [ -d /tmp/z51 ] || STEP_QUIET=1 step make51 python3 $Z/make_zone_49.py /tmp/z51 test2
           STEP_QUIET=1 STEP_LIMIT_S=240 step zone51 python3 scripts/time_turns.py /tmp/z51/*.npz \
                --kernels auto,vector,staged,segmented,warp,cusparse:2 --dtype float32 float64 --rounds 3 \
                --budget 0.04 --out "$R/zone51" ;;
    # session 49, V1: vector's width on float32 rows it gives 2 lanes: sets 49 and 51 to fit, set 52 to test (blind)
    widths52) Z=docs/lab/h100-2026-12-06-session49
           [ -d /tmp/z49 ] || STEP_QUIET=1 step make49 python3 $Z/make_zone_49.py /tmp/z49 fit
           [ -d /tmp/z51 ] || STEP_QUIET=1 step make51 python3 $Z/make_zone_49.py /tmp/z51 test2
           [ -d /tmp/z52 ] || STEP_QUIET=1 step make52 python3 $Z/make_zone_49.py /tmp/z52 test3
           STEP_LIMIT_S=200 step widths49 python3 scripts/time_turns.py /tmp/z49/*.npz /tmp/z51/*.npz \
                --kernels auto,vector:2,vector:4,vector:8,warp,staged --dtype float32 --rounds 3 --budget 0.04 \
                --out "$R/widths49"
           STEP_QUIET=1 STEP_LIMIT_S=200 step widths52 python3 scripts/time_turns.py /tmp/z52/*.npz \
                --kernels auto,vector:2,vector:4,vector:8,warp,staged --dtype float32 --rounds 3 --budget 0.04 \
                --out "$R/widths52" ;;
    *)     echo "unknown step $s (tests, s23, s24, s25, s26, a1, ncu64, counter, real, l2, steps, ab27, abcorpus, bench27, bench28, packed, relabel, stale, uniform, uniform-switch, bench29, pattern29, bench30, runs38, knn38, bench31, bench32, order39, refresh39, batch39, batch39b, batch40, palette40, palette40b, palette40c, palette40d, palette41, palette41b, palette41c, palette41d, palette41e, palette41f, palette41g, table42, stencil42, gemm42, stencils42, orders43, gemm43, turns44, turns37, bench44, rle30, rleab44, regs45, turns38, turns39, lanes46, ncu46, ncu47, turns40, turns41, turns42, ab48, ncu48, ab43, ncu48b, ab44, ab45, turns41b, ab46, turns46, ab46b, widths41, turns47, probe48, zone49, zone51, widths52)"; exit 2 ;;
  esac
done
