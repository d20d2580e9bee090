/* libFuzzer harness: the Matrix Market reader on arbitrary bytes. A file it
 * accepts must give valid CSR (checked by the library's validator). */
#define _POSIX_C_SOURCE 200809L /* getpid */
#include <stdint.h>
#include <stdlib.h>

#include "esmm.h"
#include "fuzz_input.h"
#include "mtx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A size line may declare up to INT32_MAX rows, whose row pointers alone take
 * 8 GiB: the harness refuses, at the size line, rows past what its memory
 * limit holds, as the tool refuses what the GPU cannot (csr_workload.c). */
#define HARNESS_MAX_ROWS (1 << 24)

static int fits_harness(const void *context, int64_t rows, int64_t cols, int64_t entries,
                        cli_error_t *err)
{
    (void)context;
    (void)cols;
    (void)entries;
    if (rows <= HARNESS_MAX_ROWS)
        return 0;
    snprintf(err->text, sizeof err->text, "more than %d rows", HARNESS_MAX_ROWS);
    return -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static esmm_handle_t cpu;
    if (cpu == NULL && esmm_create(&cpu, ESMM_BACKEND_CPU) != ESMM_STATUS_SUCCESS)
        abort();
    const char *path = fuzz_input_file(data, size);
    if (path == NULL)
        return 0;
    mtx_csr_t m;
    cli_error_t warning, err;
    if (mtx_read_csr_checked(path, fits_harness, NULL, &m, &warning, &err) == 0) {
        if (esmm_csr_validate(cpu, m.rows, m.cols, m.nnz, m.row_ptr, m.col_idx) !=
            ESMM_STATUS_SUCCESS)
            abort(); /* the reader produced CSR the library refuses */
        mtx_csr_free(&m);
    }
    return 0;
}
