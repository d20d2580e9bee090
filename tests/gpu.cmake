# GPU correctness of every CUDA kernel and of esmm_sgemm; exits 77 (skipped)
# where no CUDA device exists.
esmm_add_test(test_gpu_gemm SOURCES test_gpu_gemm.c LIBS CUDA::cudart)
set_tests_properties(test_gpu_gemm PROPERTIES TIMEOUT 300)
