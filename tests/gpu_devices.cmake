# Handles, patterns and CSR descriptors of one GPU used while another is
# current; exits 77 (skipped) with fewer than two CUDA devices.
esmm_add_test(test_gpu_devices SOURCES test_gpu_devices.c LIBS CUDA::cudart)
set_tests_properties(test_gpu_devices PROPERTIES TIMEOUT 120)
