#!/usr/bin/env bash
# Times builds of the esmm tool against each other on one GPU: for each line
# of ARGS_FILE (esmm bench arguments), runs `esmm bench --kernel cublas,esmm
# LINE --runs RUNS --no-check` with each ESMM in turn, ROUNDS times, so that
# all see the same clocks, and prints esmm's median ms of each run per build
# (and cuBLAS's, from the first build's runs). JSON and logs go under $OUT.
#   OUT=dir [RUNS=30] [ROUNDS=2] scripts/compare-binaries.sh ARGS_FILE ESMM...
set -uo pipefail
[ $# -ge 2 ] || { sed -n '2,7p' "$0"; exit 2; }
args_file=$1
shift
OUT=${OUT:-compare-out}
RUNS=${RUNS:-30}
ROUNDS=${ROUNDS:-2}
mkdir -p "$OUT"
status=0
# The esmm row's median and the cuBLAS row's, from one bench's JSON.
medians() {
  python3 -c 'import json,sys
rows = json.load(open(sys.argv[1]))["results"]
ms = {r["kernel"]: r["ms"] for r in rows}
print("%.4f %.4f" % (ms.get("esmm", float("nan")), ms.get("cublas", float("nan"))))' "$1"
}
header="cuBLAS"
for bin in "$@"; do header+=" | $(basename "$bin")"; done
echo "ARGS: $header (ms, one figure per round)"
line_no=0
while IFS= read -r args || [ -n "$args" ]; do
  { [ -z "$args" ] || [[ "$args" == \#* ]]; } && continue
  line_no=$((line_no + 1))
  times=()
  cublas=""
  for round in $(seq "$ROUNDS"); do
    for i in $(seq 0 $(($# - 1))); do
      bin=${*:$((i + 1)):1}
      run="$OUT/run-$line_no-$i-$round"
      # shellcheck disable=SC2086 # args is a list of bench arguments
      if "$bin" bench --kernel cublas,esmm $args --runs "$RUNS" --no-check --json "$run.json" \
        >"$run.log" 2>&1; then
        read -r esmm_ms cublas_ms < <(medians "$run.json")
        times[i]+="$esmm_ms "
        [ "$i" -eq 0 ] && cublas+="$cublas_ms "
      else
        times[i]+="failed "
        status=1
      fi
    done
  done
  row="$args: $cublas"
  for i in $(seq 0 $(($# - 1))); do row+="| ${times[i]}"; done
  echo "$row"
done <"$args_file"
exit $status
