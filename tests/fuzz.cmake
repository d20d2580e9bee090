# libFuzzer harnesses of every parser of outside input (tests/fuzz/: .npy,
# Matrix Market, CSR arrays through the validator, the tool's arguments),
# built with clang when it has libFuzzer, with ASan and UBSan. The suite runs
# each for ESMM_FUZZ_SECONDS from the committed seeds (tests/fuzz/corpus/X);
# longer on demand, e.g.
#   build/tests/fuzz_npy -max_total_time=600 build/tests/fuzz_corpus/npy tests/fuzz/corpus/npy
# A crash leaves its input in build/tests/fuzz_artifacts/. Without such a
# clang the tests report skipped.
set(ESMM_FUZZ_SECONDS 10 CACHE STRING "seconds each fuzz harness runs in the test suite")
set(ESMM_FUZZ_HARNESSES npy mtx csr cli)

find_program(ESMM_CLANG NAMES clang clang-19 clang-18 clang-17 clang-16 clang-15 clang-14)
set(esmm_fuzz_works FALSE)
if(ESMM_CLANG)
  set(probe ${CMAKE_CURRENT_BINARY_DIR}/fuzz_probe.c)
  file(WRITE ${probe} "#include <stddef.h>\n#include <stdint.h>\n"
                      "int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);\n"
                      "int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)\n"
                      "{ (void)d; (void)n; return 0; }\n")
  execute_process(COMMAND ${ESMM_CLANG} -fsanitize=fuzzer,address,undefined ${probe}
                          -o ${CMAKE_CURRENT_BINARY_DIR}/fuzz_probe
                  RESULT_VARIABLE probe_status OUTPUT_QUIET ERROR_QUIET)
  if(probe_status EQUAL 0)
    set(esmm_fuzz_works TRUE)
  endif()
endif()

if(NOT esmm_fuzz_works)
  foreach(harness ${ESMM_FUZZ_HARNESSES})
    add_test(NAME fuzz_${harness}
             COMMAND sh -c "echo 'no clang with libFuzzer: fuzz_${harness} not built'; exit 77")
    set_tests_properties(fuzz_${harness} PROPERTIES SKIP_RETURN_CODE 77)
  endforeach()
  return()
endif()

# The tool's and the library's C sources, compiled again by clang with the
# instrumentation (so coverage guides the fuzzer into them too); the
# library's CUDA objects come from the build here.
file(GLOB esmm_fuzz_tool_sources ${PROJECT_SOURCE_DIR}/tools/*.c ${PROJECT_SOURCE_DIR}/src/api/*.c
     ${PROJECT_SOURCE_DIR}/src/cpu/*.c ${PROJECT_SOURCE_DIR}/src/patterns/*.c
     ${PROJECT_SOURCE_DIR}/src/plan/*.c)
list(REMOVE_ITEM esmm_fuzz_tool_sources ${PROJECT_SOURCE_DIR}/tools/main.c)
set(esmm_fuzz_flags -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
    -fopenmp -I${PROJECT_SOURCE_DIR}/include -I${PROJECT_SOURCE_DIR}/src
    -I${PROJECT_SOURCE_DIR}/tools -I${CMAKE_CURRENT_SOURCE_DIR}/fuzz)
foreach(dir ${CUDAToolkit_INCLUDE_DIRS})
  list(APPEND esmm_fuzz_flags -I${dir})
endforeach()
set(esmm_fuzz_libs $<TARGET_FILE:esmm_static> -L${CUDAToolkit_LIBRARY_DIR} -lcublas -lcusparse
    -lcudart -lstdc++ -lm -ldl -lpthread -lrt)

foreach(harness ${ESMM_FUZZ_HARNESSES})
  set(out ${CMAKE_CURRENT_BINARY_DIR}/fuzz_${harness})
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${ESMM_CLANG} ${esmm_fuzz_flags} ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_${harness}.c
            ${esmm_fuzz_tool_sources} ${esmm_fuzz_libs} -o ${out}
    DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_${harness}.c
            ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_input.h ${esmm_fuzz_tool_sources} esmm_static
    COMMENT "Building the fuzz harness fuzz_${harness} (clang, libFuzzer)"
    VERBATIM)
  add_custom_target(fuzz_${harness}_build ALL DEPENDS ${out})
  file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/fuzz_corpus/${harness}
                      ${CMAKE_CURRENT_BINARY_DIR}/fuzz_artifacts)
  add_test(NAME fuzz_${harness}
           COMMAND ${out} -max_total_time=${ESMM_FUZZ_SECONDS} -seed=1 -timeout=10
                   -rss_limit_mb=2048 -print_final_stats=1
                   -artifact_prefix=${CMAKE_CURRENT_BINARY_DIR}/fuzz_artifacts/${harness}-
                   ${CMAKE_CURRENT_BINARY_DIR}/fuzz_corpus/${harness}
                   ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus/${harness})
  # Huge sizes in a header must be refused before they are allocated; a
  # refused allocation is then not a crash.
  set_tests_properties(fuzz_${harness} PROPERTIES
                       ENVIRONMENT "ASAN_OPTIONS=allocator_may_return_null=1")
endforeach()
