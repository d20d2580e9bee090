# Leading dimensions that make operands span more than 2^31 floats: the CPU
# backend here (skipped under AddressSanitizer), the GPU in test_64bit_gpu,
# which exits 77 (skipped) without a GPU.
esmm_add_test(test_64bit SOURCES test_64bit.c LIBS CUDA::cudart ARGS cpu)
add_test(NAME test_64bit_gpu COMMAND test_64bit cuda)
set_tests_properties(test_64bit_gpu PROPERTIES SKIP_RETURN_CODE 77)
