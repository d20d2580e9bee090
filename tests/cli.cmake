# Tests of the esmm command-line tool.
#
# This file has two roles. Included by tests/CMakeLists.txt it registers the
# tests. Run as `cmake -DESMM=... -DEXPECTED=... -DARGS=a|b|c -P cli.cmake` it
# runs the esmm binary once and checks that it exited with exactly EXPECTED
# (so a crash, which CMake reports as a signal name, never passes), that a
# failing run said why on stderr, that stderr matches STDERR_REGEX and stdout
# STDOUT_REGEX if given, that stderr does not match STDERR_ABSENT_REGEX if
# given, and that JSON_FILE, if given, is a results file in the
# DESIGN.md format whose text matches JSON_REGEX if given.

if(CMAKE_SCRIPT_MODE_FILE)
  string(REPLACE "|" ";" esmm_args "${ARGS}")
  # A results file left by an earlier run must not pass for this one's.
  if(DEFINED JSON_FILE)
    file(REMOVE "${JSON_FILE}")
  endif()
  execute_process(COMMAND "${ESMM}" ${esmm_args}
                  RESULT_VARIABLE exit_code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT "${exit_code}" STREQUAL "${EXPECTED}")
    message(FATAL_ERROR "esmm ${esmm_args}: exit '${exit_code}', expected ${EXPECTED}\n"
                        "stdout:\n${out}\nstderr:\n${err}")
  endif()
  if(NOT EXPECTED EQUAL 0 AND err STREQUAL "")
    message(FATAL_ERROR "esmm ${esmm_args}: exit ${exit_code} without a message on stderr")
  endif()
  if(DEFINED STDERR_REGEX AND NOT err MATCHES "${STDERR_REGEX}")
    message(FATAL_ERROR "esmm ${esmm_args}: stderr does not match '${STDERR_REGEX}':\n${err}")
  endif()
  if(DEFINED STDERR_ABSENT_REGEX AND err MATCHES "${STDERR_ABSENT_REGEX}")
    message(FATAL_ERROR "esmm ${esmm_args}: stderr matches '${STDERR_ABSENT_REGEX}':\n${err}")
  endif()
  if(DEFINED STDOUT_REGEX AND NOT out MATCHES "${STDOUT_REGEX}")
    message(FATAL_ERROR "esmm ${esmm_args}: stdout does not match '${STDOUT_REGEX}':\n${out}")
  endif()
  if(DEFINED JSON_FILE)
    file(READ "${JSON_FILE}" json)
    if(DEFINED JSON_REGEX AND NOT json MATCHES "${JSON_REGEX}")
      message(FATAL_ERROR "${JSON_FILE} does not match '${JSON_REGEX}':\n${json}")
    endif()
    foreach(key device commit date)
      string(JSON value ERROR_VARIABLE json_error GET "${json}" ${key})
      if(json_error)
        message(FATAL_ERROR "${JSON_FILE}: ${json_error}")
      endif()
    endforeach()
    string(JSON count LENGTH "${json}" results)
    if(count LESS 1)
      message(FATAL_ERROR "${JSON_FILE}: no results")
    endif()
    math(EXPR last "${count} - 1")
    foreach(i RANGE ${last})
      foreach(key op kernel m n k generator density_a density_b cached_b ms baseline baseline_ms
                  speedup check)
        string(JSON value ERROR_VARIABLE json_error GET "${json}" results ${i} ${key})
        if(json_error)
          message(FATAL_ERROR "${JSON_FILE}: result ${i}: ${json_error}")
        endif()
      endforeach()
    endforeach()
  endif()
  message(STATUS "esmm ${esmm_args}: exit ${exit_code} as expected\n${out}${err}")
  return()
endif()

esmm_add_test(test_cli SOURCES test_cli.c LIBS esmm_tools)

set(ESMM_CLI_FIXTURES ${CMAKE_CURRENT_BINARY_DIR}/cli_fixtures)
add_test(NAME cli_write_fixtures COMMAND test_cli --write-fixtures ${ESMM_CLI_FIXTURES})
set_tests_properties(cli_write_fixtures PROPERTIES FIXTURES_SETUP esmm_cli_files)

# esmm_cli_test(NAME EXPECTED_EXIT [STDERR regex] [NO_STDERR regex] [STDOUT regex]
#               [JSON file [JSON_REGEX regex]] ARGS arg ...)
function(esmm_cli_test name expected)
  cmake_parse_arguments(T "" "STDERR;NO_STDERR;STDOUT;JSON;JSON_REGEX" "ARGS" ${ARGN})
  string(REPLACE ";" "|" joined "${T_ARGS}")
  set(defines -DESMM=$<TARGET_FILE:esmm_cli> -DEXPECTED=${expected} -DARGS=${joined})
  if(T_STDERR)
    list(APPEND defines -DSTDERR_REGEX=${T_STDERR})
  endif()
  if(T_NO_STDERR)
    list(APPEND defines -DSTDERR_ABSENT_REGEX=${T_NO_STDERR})
  endif()
  if(T_STDOUT)
    list(APPEND defines -DSTDOUT_REGEX=${T_STDOUT})
  endif()
  if(T_JSON)
    list(APPEND defines -DJSON_FILE=${T_JSON})
  endif()
  if(T_JSON_REGEX)
    list(APPEND defines -DJSON_REGEX=${T_JSON_REGEX})
  endif()
  add_test(NAME ${name}
           COMMAND ${CMAKE_COMMAND} ${defines} -P ${CMAKE_CURRENT_SOURCE_DIR}/cli.cmake
           WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  set_tests_properties(${name} PROPERTIES FIXTURES_REQUIRED esmm_cli_files)
endfunction()

# Runs that must succeed (quick on the CPU backend too).
esmm_cli_test(cli_help 0 ARGS --help)
esmm_cli_test(cli_bench_help 0 ARGS bench --help)
esmm_cli_test(cli_info 0 ARGS info)
esmm_cli_test(cli_bench_small 0 ARGS bench --size 64 --runs 3)
esmm_cli_test(cli_bench_json 0 JSON ${CMAKE_CURRENT_BINARY_DIR}/cli_bench.json
              ARGS bench --size 48 --runs 2 --commit test --json ${CMAKE_CURRENT_BINARY_DIR}/cli_bench.json)
esmm_cli_test(cli_bench_patterns 0
              ARGS bench --size 40 --runs 2 --pattern-a 11001100 --pattern-b 10101010)
esmm_cli_test(cli_bench_density_transposed 0
              ARGS bench --m 33 --n 65 --k 17 --transa T --transb T --density-a 0.5 --density-b 0.25
                   --alpha 0.5 --beta -1.5 --runs 2)
esmm_cli_test(cli_bench_random 0 ARGS bench --size 37 --random 0.4 --runs 2 --seed 99)
esmm_cli_test(cli_bench_files 0
              ARGS bench --load-a cli_fixtures/a.npy --load-b cli_fixtures/b.npy --runs 2)

# Zero-skipping statistics, cached B, extraction rows, sweeps, analyze. The
# CPU backend is asked for where the outcome depends on it; the sizes keep
# every run well under a second on two cores.
esmm_cli_test(cli_bench_skip_stats 0 STDOUT "esmm +[0-9.]+.*
 +skip stats: path [a-z]+, kernel"
              ARGS bench --backend cpu --size 40 --runs 2 --kernel cpu-skip-joint,esmm
                   --density-a 0.5 --density-b 0.5 --skip-stats)
esmm_cli_test(cli_bench_cached_b 0 STDOUT "esmm .cached B."
              JSON ${CMAKE_CURRENT_BINARY_DIR}/cli_cached_b.json
              JSON_REGEX "kernel.: .esmm.[^}]*cached_b.: true[^}]*path.: .[a-z]+"
              ARGS bench --size 40 --runs 2 --kernel esmm --cached-b --skip-stats --pattern 11110000
                   --json ${CMAKE_CURRENT_BINARY_DIR}/cli_cached_b.json)
# B's pattern keeping B's copy: the call reads it in place of B (checked
# against the reference like any row).
esmm_cli_test(cli_bench_keep_copy 0 STDOUT "esmm .cached B, copy. +[0-9.]+.*pass"
              JSON ${CMAKE_CURRENT_BINARY_DIR}/cli_keep_copy.json
              JSON_REGEX "cached_b.: true, .copy_kept.: true"
              ARGS bench --size 40 --runs 2 --kernel esmm --cached-b --keep-copy --transb T
                   --density-b 0.5 --json ${CMAKE_CURRENT_BINARY_DIR}/cli_keep_copy.json)
esmm_cli_test(cli_bench_keep_copy_alone 2 STDERR "keeps a copy in B.s cached pattern"
              ARGS bench --size 40 --runs 1 --kernel esmm --keep-copy)
esmm_cli_test(cli_bench_extract_on_cpu 0 STDOUT "extract-a: extraction is timed on the CUDA backend only"
              ARGS bench --backend cpu --size 16 --runs 1 --kernel extract-a,extract-b,esmm)
esmm_cli_test(cli_sweep_density 0 STDOUT "sweep density.*d = 0.0625 .both."
              JSON ${CMAKE_CURRENT_BINARY_DIR}/cli_sweep_density.json
              JSON_REGEX "case.: .d = 0.0625 .both."
              ARGS bench --backend cpu --sweep density --size 24 --runs 1 --cached-b
                   --json ${CMAKE_CURRENT_BINARY_DIR}/cli_sweep_density.json)
# Progress lines go to a terminal only: none here, where stderr is a pipe.
esmm_cli_test(cli_sweep_targets_scaled 0 STDOUT "sweep targets.*random 0.5"
              NO_STDERR "sweep targets .[0-9]+/14."
              JSON ${CMAKE_CURRENT_BINARY_DIR}/cli_sweep_targets.json
              JSON_REGEX "case.: .B only, d = 0.125.[^}]*cached_b.: true"
              ARGS bench --backend cpu --sweep targets --size 16 --runs 1
                   --json ${CMAKE_CURRENT_BINARY_DIR}/cli_sweep_targets.json)
# On a terminal (a pseudo-terminal from util-linux's script) they appear.
find_program(ESMM_SCRIPT script)
if(ESMM_SCRIPT)
  add_test(NAME cli_sweep_progress_on_terminal
           COMMAND ${ESMM_SCRIPT} -qec "$<TARGET_FILE:esmm_cli> bench --backend cpu --sweep density --size 8 --runs 1" /dev/null)
  set_tests_properties(cli_sweep_progress_on_terminal PROPERTIES
                       PASS_REGULAR_EXPRESSION "sweep density \\[9/9\\].*sweep density done")
endif()
esmm_cli_test(cli_sweep_targets_cpu_notice 0 STDOUT "nothing run"
              ARGS bench --backend cpu --sweep targets)
esmm_cli_test(cli_analyze_help 0 STDOUT "usage: esmm analyze" ARGS analyze --help)
esmm_cli_test(cli_analyze_both 0 STDOUT "dead k: +25.00%.*joint slice density.*esmm_sgemm m = 24, n = 28, k = 20: path"
              ARGS analyze cli_fixtures/a.npy cli_fixtures/b.npy --backend cpu)
esmm_cli_test(cli_analyze_transposed 0 STDOUT "op.B. = B.T: k = 20, n = 28"
              ARGS analyze cli_fixtures/a.npy cli_fixtures/bt.npy --transb T --backend cpu)
esmm_cli_test(cli_analyze_a_only 0 STDOUT "dense random op.B., k = 20 x n = 9"
              ARGS analyze cli_fixtures/a.npy --n 9 --backend cpu)
esmm_cli_test(cli_analyze_dense 0 STDOUT "path dense, kernel cpu.*no masks extracted: the dense probe"
              ARGS analyze cli_fixtures/dense.npy --n 9 --backend cpu)
esmm_cli_test(cli_analyze_bench 0 STDOUT "esmm .cached B."
              JSON ${CMAKE_CURRENT_BINARY_DIR}/cli_analyze.json
              JSON_REGEX "generator.: .file."
              ARGS analyze cli_fixtures/a.npy cli_fixtures/b.npy --bench --runs 2 --backend cpu
                   --json ${CMAKE_CURRENT_BINARY_DIR}/cli_analyze.json)

# Bad invocations: a message on stderr and the documented exit code.
esmm_cli_test(cli_no_command 2 ARGS)
esmm_cli_test(cli_unknown_command 2 STDERR "unknown command" ARGS frobnicate)
esmm_cli_test(cli_info_extra_argument 2 ARGS info --bogus)
esmm_cli_test(cli_bench_size_not_a_number 2 STDERR "not an integer" ARGS bench --size abc)
esmm_cli_test(cli_bench_size_negative 2 STDERR "out of range" ARGS bench --size -5)
esmm_cli_test(cli_bench_size_overflow 2 STDERR "out of range" ARGS bench --size 99999999999999999999)
esmm_cli_test(cli_bench_missing_value 2 STDERR "needs a value" ARGS bench --size)
esmm_cli_test(cli_bench_zero_runs 2 ARGS bench --runs 0)
esmm_cli_test(cli_bench_unknown_flag 2 STDERR "unknown option" ARGS bench --frobnicate)
esmm_cli_test(cli_bench_unknown_kernel 2 STDERR "unknown kernel 'nosuch'"
              ARGS bench --size 8 --kernel nosuch)
esmm_cli_test(cli_bench_bad_pattern 2 STDERR "not a pattern" ARGS bench --pattern 0101)
esmm_cli_test(cli_bench_mixed_generators 2 ARGS bench --pattern 11110000 --random 0.5)
esmm_cli_test(cli_bench_files_disagree 2 STDERR "disagree"
              ARGS bench --load-a cli_fixtures/a.npy --load-b cli_fixtures/a.npy)
esmm_cli_test(cli_bench_missing_file 3 STDERR "cannot open" ARGS bench --load-a no-such-file.npy)
# A well-formed file holding no element is bad input data, not a bad command
# line: exit 3 from both commands, without the pointer to the options.
esmm_cli_test(cli_bench_empty_a 3 STDERR "zero_rows.npy: A is empty .0 x 20." NO_STDERR "for the options"
              ARGS bench --backend cpu --load-a cli_fixtures/zero_rows.npy)
esmm_cli_test(cli_bench_empty_b 3 STDERR "zero_rows.npy: B is empty .0 x 20." NO_STDERR "for the options"
              ARGS bench --backend cpu --load-a cli_fixtures/a.npy --load-b cli_fixtures/zero_rows.npy)
esmm_cli_test(cli_bench_not_npy 3 STDERR "not a .npy file"
              ARGS bench --load-a ${CMAKE_CURRENT_SOURCE_DIR}/cli.cmake)
esmm_cli_test(cli_bench_wrong_dtype 3 STDERR "'<f8'" ARGS bench --load-b cli_fixtures/f8.npy)
esmm_cli_test(cli_bench_too_large 3 STDERR "needs [0-9.]+ GiB of [a-z]+ memory" ARGS bench --size 10000000)
esmm_cli_test(cli_bench_unaddressable 3 STDERR "too large" ARGS bench --size 4000000000000000000)
esmm_cli_test(cli_bench_json_unwritable 3 STDERR "cannot create"
              ARGS bench --size 8 --runs 1 --json /nonexistent-dir/out.json)
esmm_cli_test(cli_bench_cached_b_without_esmm 2 STDERR "leaves esmm out"
              ARGS bench --size 8 --kernel cpu --cached-b --backend cpu)
esmm_cli_test(cli_bench_sweep_unknown 2 STDERR "expected targets or density" ARGS bench --sweep fast)
esmm_cli_test(cli_bench_sweep_with_generator 2 STDERR "cannot be used with it"
              ARGS bench --sweep targets --density-a 0.5)
esmm_cli_test(cli_analyze_no_file 2 STDERR "no matrix given" ARGS analyze)
esmm_cli_test(cli_analyze_three_files 2 STDERR "at most two files"
              ARGS analyze cli_fixtures/a.npy cli_fixtures/b.npy cli_fixtures/b.npy)
esmm_cli_test(cli_analyze_disagree 2 STDERR "sizes disagree"
              ARGS analyze cli_fixtures/a.npy cli_fixtures/a.npy --backend cpu)
esmm_cli_test(cli_analyze_no_memory 3 STDERR "host memory"
              ARGS analyze cli_fixtures/a.npy --n 4000000000 --backend cpu)
esmm_cli_test(cli_analyze_missing_file 3 STDERR "cannot open" ARGS analyze no-such-file.npy)
esmm_cli_test(cli_analyze_empty_a 3 STDERR "zero_rows.npy: A is empty .0 x 20." NO_STDERR "for the options"
              ARGS analyze cli_fixtures/zero_rows.npy --backend cpu)
esmm_cli_test(cli_analyze_empty_b 3 STDERR "zero_rows.npy: B is empty .0 x 20." NO_STDERR "for the options"
              ARGS analyze cli_fixtures/a.npy cli_fixtures/zero_rows.npy --backend cpu)
esmm_cli_test(cli_analyze_not_npy 3 STDERR "not a .npy file"
              ARGS analyze ${CMAKE_CURRENT_SOURCE_DIR}/cli.cmake)
esmm_cli_test(cli_analyze_wrong_dtype 3 STDERR "'<f8'"
              ARGS analyze cli_fixtures/a.npy cli_fixtures/f8.npy)
