# Zero skipping: every path against the dense path bit for bit and against
# float64, NaN/Inf in zero slices, the planner's reports, the pattern API and
# the caller's workspace. test_sparse runs on whatever backend is present (the
# CPU backend without a GPU); test_gpu_sparse needs a GPU and exits 77
# (skipped) where there is none.
esmm_add_test(test_sparse SOURCES test_sparse.c LIBS CUDA::cudart m)
# 10-17 s in the plain build, 160-170 s in the sanitizer build (make
# sanitize-test), which a loaded machine stretched past 300.
set_tests_properties(test_sparse PROPERTIES TIMEOUT 900)
esmm_add_test(test_gpu_sparse SOURCES test_gpu_sparse.c LIBS CUDA::cudart m)
set_tests_properties(test_gpu_sparse PROPERTIES TIMEOUT 300)
