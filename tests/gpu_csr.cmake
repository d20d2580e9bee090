# GPU CSR products against the CPU order (bit for bit) and the float64
# reference; exits 77 (skipped) where no CUDA device exists.
esmm_add_test(test_gpu_csr SOURCES test_gpu_csr.c LIBS CUDA::cudart m)
set_tests_properties(test_gpu_csr PROPERTIES TIMEOUT 300)
