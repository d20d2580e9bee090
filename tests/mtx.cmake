# Matrix Market reader and writer (tools/mtx.c).
esmm_add_test(test_mtx SOURCES test_mtx.c LIBS esmm_tools)
