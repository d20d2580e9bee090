#!/usr/bin/env bash
# On a machine with a GPU: build for it, run the whole test suite (GPU tests
# included) and the dense-ladder benchmark. Everything is logged under $OUT.
#   OUT=dir scripts/gpu-check.sh [extra esmm bench arguments]
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-gpu-check-out}
BUILD=${BUILD:-build-gpu}
mkdir -p "$OUT"
status=0

nvidia-smi >"$OUT/nvidia-smi.txt" 2>&1 || true
git rev-parse --short HEAD >"$OUT/commit.txt" 2>/dev/null || echo unknown >"$OUT/commit.txt"
export ESMM_COMMIT=${ESMM_COMMIT:-$(cat "$OUT/commit.txt")}

{ cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DESMM_PTXAS_VERBOSE=ON &&
  cmake --build "$BUILD" -j "$(nproc)"; } >"$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }

(cd "$BUILD" && ctest --output-on-failure -j 4) >"$OUT/test.log" 2>&1 || status=1
tail -25 "$OUT/test.log"

"$BUILD/tools/esmm" info | tee "$OUT/info.txt"
"$BUILD/tools/esmm" bench --kernel all --size 4096 --json "$OUT/h100-ladder.json" "$@" \
  2>&1 | tee "$OUT/bench.log" || status=1
exit $status
