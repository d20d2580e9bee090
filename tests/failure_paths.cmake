# The handle after a failure, and handles that do not leak: the CPU backend
# here, the GPU in test_failure_paths_gpu, which exits 77 (skipped) without a GPU.
esmm_add_test(test_failure_paths SOURCES test_failure_paths.c LIBS CUDA::cudart ARGS cpu)
add_test(NAME test_failure_paths_gpu COMMAND test_failure_paths cuda)
# Its leak check reads the device's free memory, which other GPU tests running
# at the same time would move: it runs alone.
set_tests_properties(test_failure_paths_gpu PROPERTIES SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)
