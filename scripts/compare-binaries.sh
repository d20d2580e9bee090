#!/usr/bin/env bash
# Times two builds of the esmm tool against each other on one GPU: for each
# line of ARGS_FILE (esmm bench arguments), runs `esmm bench --kernel
# cublas,esmm LINE --runs RUNS --no-check` with BEFORE, then AFTER, ROUNDS
# times, alternating so that both see the same clocks, and prints esmm's
# median ms of each run and cuBLAS's. JSON of every run goes under $OUT.
#   OUT=dir [RUNS=30] [ROUNDS=2] scripts/compare-binaries.sh BEFORE AFTER ARGS_FILE
set -uo pipefail
[ $# -eq 3 ] || { sed -n '2,7p' "$0"; exit 2; }
before=$1 after=$2 args_file=$3
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
line_no=0
printf '%-70s %-20s %-20s %s\n' "ARGS" "before (ms)" "after (ms)" "cuBLAS (ms)"
while IFS= read -r args || [ -n "$args" ]; do
  [ -z "$args" ] || [[ "$args" == \#* ]] && continue
  line_no=$((line_no + 1))
  declare -A times=()
  cublas=""
  for round in $(seq "$ROUNDS"); do
    for side in before after; do
      bin=$before
      [ "$side" = after ] && bin=$after
      json="$OUT/run-$line_no-$side-$round.json"
      # shellcheck disable=SC2086 # args is a list of bench arguments
      if "$bin" bench --kernel cublas,esmm $args --runs "$RUNS" --no-check --json "$json" \
        >"$OUT/run-$line_no-$side-$round.log" 2>&1; then
        read -r esmm_ms cublas_ms < <(medians "$json")
        times[$side]+="$esmm_ms "
        cublas+="$cublas_ms "
      else
        times[$side]+="failed "
        status=1
      fi
    done
  done
  printf '%-70s %-20s %-20s %s\n' "$args" "${times[before]}" "${times[after]}" "$cublas"
  unset times
done <"$args_file"
exit $status
