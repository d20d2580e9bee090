# Differential stress of the CSR products: 8000 random problems on the CPU
# backend here; test_stress_csr_gpu runs 2500 on the GPU against the CPU order,
# the float64 reference and cuSPARSE (77, skipped, without one). Any count and
# seed by hand: test_stress_csr cpu|cuda PROBLEMS SEED. -ffp-contract=off as in
# the library, so the in-order float product the test writes out rounds like
# the CPU backend's.
esmm_add_test(test_stress_csr SOURCES test_stress_csr.c LIBS esmm_tools CUDA::cudart CUDA::cusparse m
              ARGS cpu)
target_compile_options(test_stress_csr PRIVATE -ffp-contract=off)
add_test(NAME test_stress_csr_gpu COMMAND test_stress_csr cuda)
set_tests_properties(test_stress_csr_gpu PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
add_test(NAME test_stress_csr_bad_mode COMMAND test_stress_csr gpu 10)
set_tests_properties(test_stress_csr_bad_mode PROPERTIES PASS_REGULAR_EXPRESSION "usage: .*cpu\\|cuda")
