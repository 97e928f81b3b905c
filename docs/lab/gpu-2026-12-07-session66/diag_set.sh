# Sourced after h200_first.sh (which defines `left` and `start`): `diag_set NAME SEED DIR "SIZES" "WIDTHS" "ROWS"`
# times a fresh set for dia's floor: the six diagonal corpus families at each size (nonzeros), then gen:banded of
# each half-width at each row count; k = 2, 4, 8, 16, both dtypes, every candidate by the tuner and the rule beside
# cuSPARSE (session 64's tuned_spmm.py), each step within what `left` allows (the bands BANDS_S seconds at most,
# default 150). Used by call4.sh and sessions 67-68's.
diag_set() {
  local name=$1 seed=$2 dir=$3 sizes=$4 widths=$5 rows=$6 nnz limit specs
  local diag="stencil5 stencil7 stencil9 stencil27 stencil25 banded-fixed"
  for nnz in $sizes; do
    limit=$(left 45); [ "$limit" -lt 15 ] && { echo "$name $nnz: not run, no time left"; continue; }
    mkdir -p "$dir/$nnz"
    FAMILIES="$diag" SEED=$seed KS="2 4 8 16" timeout "$limit" python3 docs/lab/gpu-2026-12-07-session64/tuned_spmm.py \
        "$dir/$nnz" "$nnz" >"$dir/$nnz/tuned_spmm.log" 2>&1
    echo "$name $nnz: exit $?, $(grep -c "k=" "$dir/$nnz/tuned_spmm.log") lines, $(( SECONDS - start )) s"
  done
  # shellcheck disable=SC2086  # widths and rows are word lists
  specs=$(for w in $widths; do for n in $rows; do printf "gen:banded:%s:%s " "$n" "$w"; done; done)
  limit=$(left "${BANDS_S:-150}")
  mkdir -p "$dir/bands"
  [ "$limit" -ge 15 ] && SPECS="$specs" KS="2 4 8 16" timeout "$limit" python3 \
      docs/lab/gpu-2026-12-07-session64/tuned_spmm.py "$dir/bands" >"$dir/bands/tuned_spmm.log" 2>&1
  echo "$name bands: $(grep -c "k=" "$dir/bands/tuned_spmm.log" 2>/dev/null) lines, $(( SECONDS - start )) s"
}
