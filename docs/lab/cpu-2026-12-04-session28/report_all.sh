#!/usr/bin/env bash
# After the next calls: every pending rule change reported over every record with its new set in
# (the step each decision asks for before a change is taken), on this machine's CPU.
#
#   bash docs/lab/cpu-2026-12-04-session28/report_all.sh /tmp/next     # the unpacked next.tgz
#
# Writes DIR/reports/{trials,i1,i1_per_call}.txt: the code's rule beside M2's gate, P2 and S1
# (session 27's rule_trial.py) and beside I1 (mid_rows.py), each half's table, the large table and
# every pick that moves. Set 26's matrices are rebuilt here for their mid-row shares.
set -euo pipefail
cd "$(dirname "$0")/../../.."
DIR=${1:?usage: report_all.sh DIR (the unpacked next.tgz)}
LAB=docs/lab/cpu-2026-12-04-session28
mkdir -p "$DIR/reports"
new=$(ls "$DIR"/held-out-2[3-6].json 2>/dev/null || true)
files="$(cat docs/lab/h200-2026-12-05-session26/rule_files.txt) $new"
cp docs/lab/h200-2026-12-03-session8/corpus-stats.json /tmp/stats.json
cp docs/lab/h200-2026-12-04-session19/near-stats.json /tmp/near.json
cp "$LAB/mid-stats.json" /tmp/mid.json
[ -d /tmp/h26 ] || python3 "$LAB/make_held_out_26.py" /tmp/h26 >/dev/null
export PYTHONPATH=$PWD
echo "records: $(echo $files | wc -w) files (new: ${new:-none})"
python3 docs/lab/cpu-2026-12-04-session27/rule_trial.py $files --stats /tmp/stats.json --near-stats /tmp/near.json \
    --trial m2-gate --trial packed-low=0,0.1 --trial structured-rows=41000,16700 > "$DIR/reports/trials.txt"
python3 "$LAB/mid_rows.py" $files --stats /tmp/stats.json --near-stats /tmp/near.json --mid-stats /tmp/mid.json \
    --real shared-matrices --trial mid-rows=0.3 > "$DIR/reports/i1.txt"
python3 "$LAB/mid_rows.py" $files --stats /tmp/stats.json --near-stats /tmp/near.json --mid-stats /tmp/mid.json \
    --real shared-matrices --trial mid-rows=0.3 --measure per-call > "$DIR/reports/i1_per_call.txt"
grep -h "picks move" "$DIR"/reports/*.txt
