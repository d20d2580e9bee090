#!/usr/bin/env bash
# On a machine with a GPU: build for it, run the whole test suite (GPU tests
# included), then the dense-ladder benchmark, the top kernel under all four op
# combinations, and the zero-skipping sweeps (the target table and speedup
# against density), dead channels on the union path, linear-layer products
# with the weights' pattern keeping its copy, the CSR target sweep
# against cuSPARSE, and the Python
# package's tests and real-data example against this build's libesmm (PyTorch,
# CuPy and scikit-learn from the machine), and on request (PARTS=sanitize, it
# takes long) compute-sanitizer's four tools over the GPU test programs,
# the CLI on four NT products and short stress runs (SANITIZE_PROBLEMS each,
# 40 by default; SANITIZE_TOOLS picks tools). Everything is logged under
# $OUT. PARTS picks what runs after the build (default: all but sanitize).
#   OUT=dir [PARTS="tests ladder ops sweeps union keepcopy csr python sanitize"] [GPU_NAME=h100] scripts/gpu-check.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-gpu-check-out}
BUILD=${BUILD:-build-gpu}
mkdir -p "$OUT"
status=0
PARTS=${PARTS:-tests ladder ops sweeps union keepcopy csr python}
wants() { [[ " $PARTS " == *" $1 "* ]]; }

nvidia-smi >"$OUT/build.log" 2>&1 || true
# Results are named after the GPU that made them (h100-esmm.json, h200-esmm.json):
# the model in nvidia-smi's name, or GPU_NAME.
model=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 |
  grep -oiE '[a-z]+[0-9]{2,}' | head -1 | tr '[:upper:]' '[:lower:]')
GPU_NAME=${GPU_NAME:-${model:-gpu}}
# The device copy of the tree may have no .git: pass ESMM_COMMIT from outside.
export ESMM_COMMIT=${ESMM_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}

{ cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DESMM_PTXAS_VERBOSE=ON -DESMM_BUILD_TESTS=ON \
    -DESMM_BUILD_TOOLS=ON &&
  cmake --build "$BUILD" -j "$(nproc)"; } >>"$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }
grep -E "spill|registers" "$OUT/build.log" | sort | uniq -c | sort -rn | head -5

esmm="$BUILD/tools/esmm"
"$esmm" info | tee "$OUT/bench.log"
if wants tests; then
  (cd "$BUILD" && ctest --output-on-failure -j 4) >"$OUT/test.log" 2>&1 || status=1
  grep -E "tests passed|tests failed|Failed|\*\*\*" "$OUT/test.log"
  # A failure's own output, on the console too (the log may not come back).
  [ $status -eq 0 ] || (cd "$BUILD" && ctest --rerun-failed --output-on-failure 2>&1 | tail -60)
fi
if wants ladder; then
  "$esmm" bench --kernel all --size 4096 --reference cpu --json "$OUT/$GPU_NAME-ladder.json" \
    >>"$OUT/bench.log" 2>&1 || status=1
  tail -14 "$OUT/bench.log"
fi
if wants ops; then
  for ops in "N T" "T N" "T T"; do
    # shellcheck disable=SC2086 # $ops is the two ops
    set -- $ops
    "$esmm" bench --kernel pipelined --size 4096 --transa "$1" --transb "$2" \
      --json "$OUT/ops-$1$2.json" 2>&1 | tail -3 || status=1
  done
  python3 scripts/merge_results.py "$OUT/$GPU_NAME-pipelined-ops.json" "$OUT"/ops-*.json 2>/dev/null
  rm -f "$OUT"/ops-*.json
fi
if wants sweeps; then
  "$esmm" bench --sweep targets --json "$OUT/$GPU_NAME-esmm.json" >"$OUT/sweep.log" 2>&1 || status=1
  "$esmm" bench --sweep density --size 4096 --cached-b --json "$OUT/$GPU_NAME-density.json" \
    >>"$OUT/sweep.log" 2>&1 || status=1
  tail -40 "$OUT/sweep.log"
fi
if wants union; then
  # Dead channels (every strip zero at the k a pattern leaves out): the union
  # path beside the pair warps and the dense kernel.
  for p in "--pattern-a 10101010" "--pattern-a 10001000" "--pattern-a 11111100" \
           "--pattern 11110000" "--pattern-a 10101010 --transa T"; do
    # shellcheck disable=SC2086 # $p is a list of bench arguments
    "$esmm" bench --kernel cublas,pipelined,sparse-a,sparse-union,esmm --size 4096 $p \
      --runs 20 --no-check --json "$OUT/union-$(echo "$p" | tr -d ' -').json" 2>&1 | tail -6 ||
      status=1
  done
  python3 scripts/merge_results.py "$OUT/$GPU_NAME-union.json" "$OUT"/union-*.json 2>/dev/null
  rm -f "$OUT"/union-*.json
fi
if wants keepcopy; then
  # Linear-layer products (x @ W^T) with W's pattern extracted per call,
  # cached, and cached keeping W's copy (README item 17).
  for s in "--m 512" "--m 256" "--m 1024" "--m 1797 --n 2048 --k 2048" "--size 2048" \
           "--size 4096" "--m 512 --density-b 0.25" "--size 4096 --density-b 0.25"; do
    for v in "" "--cached-b" "--cached-b --keep-copy"; do
      # shellcheck disable=SC2086 # $s and $v are lists of bench arguments
      "$esmm" bench $s --transb T --kernel cublas,esmm $v --runs 20 --no-check --skip-stats \
        --json "$OUT/keepcopy-$(echo "$s$v" | tr -d ' -').json" 2>&1 | grep -E "^(cublas|esmm)" ||
        status=1
    done
  done
  python3 scripts/merge_results.py "$OUT/$GPU_NAME-keep-copy.json" "$OUT"/keepcopy-*.json 2>/dev/null
  rm -f "$OUT"/keepcopy-*.json
fi
if wants csr; then
  "$esmm" bench --op csrmm --sweep csr-targets --json "$OUT/$GPU_NAME-spmm.json" \
    >"$OUT/csr.log" 2>&1 || status=1
  tail -60 "$OUT/csr.log"
fi
if wants python; then
  export ESMM_LIBRARY=$PWD/$BUILD/src/libesmm.so PYTHONPATH=$PWD/python
  python3 -m pytest -q python/tests >"$OUT/python-test.log" 2>&1 || status=1
  tail -3 "$OUT/python-test.log"
  python3 examples/mlp_real_data.py 2>&1 | tee "$OUT/mlp-real-data.txt" || status=1
fi
if wants sanitize; then
  # memcheck (out-of-bounds and misaligned accesses, leaks), racecheck
  # (shared-memory hazards), synccheck (barrier misuse), initcheck (reads of
  # uninitialised device memory); any error fails. Each tool runs the GPU
  # test programs and short differential stress runs (every kernel on random
  # shapes); racecheck, too slow for the full sparse and GEMM programs (past
  # 9 minutes each), checks those kernels through the stress runs alone.
  stress_runs=("test_stress cuda ${SANITIZE_PROBLEMS:-40}" "test_stress_csr cuda ${SANITIZE_PROBLEMS:-40}")
  for tool in ${SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck}; do
    programs=(test_gpu_patterns test_gpu_csr "${stress_runs[@]}")
    [ "$tool" = racecheck ] || programs+=(test_gpu_sparse test_gpu_gemm)
    for t in "${programs[@]}"; do
      log="$OUT/sanitize-$tool-${t%% *}.log"
      # initcheck serialises stream work: the test then skips its asynchrony check.
      serialized=()
      [ "$tool" = initcheck ] && serialized=(ESMM_TEST_SERIALIZED=1)
      # shellcheck disable=SC2086 # $t is a program and its arguments
      # The baselines' kernels are not checked: racecheck reports shared-memory
      # hazards inside cuSPARSE's own csrmv_v3_kernel.
      (cd "$BUILD/tests" && env "${serialized[@]}" compute-sanitizer --tool "$tool" \
        --kernel-name-exclude kns=cusparse --error-exitcode 99 --print-limit 20 ./$t) \
        >"$log" 2>&1 || status=1
      echo "$tool $t: $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tail -1) ($(grep -E "passed, |^stress" "$log" | tail -2 | tr '\n' ' '))"
    done
    # The CLI over NT products past 2^32 multiply-adds, one per skipping
    # form (warp lists, pair warps either way, strip warps), checked against
    # the CPU backend; its own buffers are checked too.
    product=0
    for p in "--m 1031 --n 601 --k 7001 --density-a 0.25 --density-b 0.25" \
             "--m 1031 --n 601 --k 7001 --density-a 0.125" "--m 601 --n 1031 --k 7001 --density-b 0.125" \
             "--m 300 --n 8192 --k 2049 --density-a 0.25 --density-b 0.25"; do
      product=$((product + 1))
      # A log per product, so a failing one's stays beside the others'.
      log="$OUT/sanitize-$tool-cli-$product.log"
      # shellcheck disable=SC2086 # $p is a list of bench arguments
      compute-sanitizer --tool "$tool" --kernel-name-exclude kns=cublas --error-exitcode 99 \
        --print-limit 20 "$esmm" bench $p --transb T --kernel esmm --runs 1 --warmup 0 \
        --reference cpu >"$log" 2>&1 || status=1
      echo "$tool cli $p: $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tail -1) ($(grep -E "^esmm {2,}" "$log" | tr -s ' ' | cut -d' ' -f8-9))"
    done
  done
fi
exit $status
