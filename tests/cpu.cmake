# CPU backend: blocked SGEMM vs the float64 reference, skip-GEMM vs dense bit
# for bit, pattern extraction vs its per-element definition.
esmm_add_test(test_cpu_gemm SOURCES test_cpu_gemm.c LIBS m)
esmm_add_test(test_cpu_patterns SOURCES test_cpu_patterns.c LIBS m)
