# The API misuse table: CPU backend always, CUDA backend too where a GPU exists.
esmm_add_test(test_api SOURCES test_api.c LIBS CUDA::cudart)
set_tests_properties(test_api PROPERTIES TIMEOUT 120)
