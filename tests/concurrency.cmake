# Handles used at once from several host threads: the CPU backend here, the
# GPU (a stream per thread) in test_concurrency_gpu, which exits 77 (skipped)
# without a GPU.
find_package(Threads REQUIRED)
esmm_add_test(test_concurrency SOURCES test_concurrency.c LIBS CUDA::cudart Threads::Threads
              ARGS cpu)
add_test(NAME test_concurrency_gpu COMMAND test_concurrency cuda)
set_tests_properties(test_concurrency_gpu PROPERTIES SKIP_RETURN_CODE 77)
