# CSR products on the CPU backend: every case bit for bit against the float
# product in the documented order and against the float64 reference; argument
# errors; the validator against broken CSR inputs; the stable transpose.
# -ffp-contract=off as in the library, so the in-order float product the
# test writes out rounds like the backend's.
esmm_add_test(test_csr_cpu SOURCES test_csr_cpu.c LIBS m)
target_compile_options(test_csr_cpu PRIVATE -ffp-contract=off)
set_tests_properties(test_csr_cpu PROPERTIES TIMEOUT 300)
