# GPU pattern extraction against the CPU extraction, byte for byte; exits 77
# (skipped) where no CUDA device exists.
esmm_add_test(test_gpu_patterns SOURCES test_gpu_patterns.c LIBS CUDA::cudart)
set_tests_properties(test_gpu_patterns PROPERTIES TIMEOUT 300)
