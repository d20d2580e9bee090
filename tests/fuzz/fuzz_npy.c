/* libFuzzer harness: the .npy reader on arbitrary bytes. A file it accepts
 * must hold exactly rows x cols readable floats. */
#define _POSIX_C_SOURCE 200809L /* getpid */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_input.h"
#include "npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_input_file(data, size);
    if (path == NULL)
        return 0;
    npy_matrix_t m;
    cli_error_t err;
    if (npy_load_f32(path, &m, &err) == NPY_OK) {
        volatile float sum = 0.0f;
        for (int64_t i = 0; i < m.rows * m.cols; i++)
            sum += m.data[i];
        (void)sum;
        npy_matrix_free(&m);
    } else if (m.data != NULL || m.rows != 0 || m.cols != 0) {
        abort(); /* a refusal leaves the matrix empty */
    }
    return 0;
}
