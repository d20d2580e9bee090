# Differential stress of esmm_sgemm: 2000 random problems on the CPU backend
# here; test_stress_gpu runs 2000 on the GPU, cuBLAS beside esmm (77,
# skipped, without one). Any count and seed by hand:
# test_stress cpu|cuda PROBLEMS SEED.
esmm_add_test(test_stress SOURCES test_stress.c LIBS CUDA::cudart CUDA::cublas ARGS cpu)
add_test(NAME test_stress_gpu COMMAND test_stress cuda)
set_tests_properties(test_stress_gpu PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
# A count that is not a positive integer is refused with the usage, not run as zero problems.
add_test(NAME test_stress_bad_count COMMAND test_stress cpu 12abc)
set_tests_properties(test_stress_bad_count PROPERTIES PASS_REGULAR_EXPRESSION "usage: .*cpu\\|cuda")
