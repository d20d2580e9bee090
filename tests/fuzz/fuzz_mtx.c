/* libFuzzer harness: the Matrix Market reader on arbitrary bytes. A file it
 * accepts must give valid CSR (checked by the library's validator). */
#define _POSIX_C_SOURCE 200809L /* getpid */
#include <stdint.h>
#include <stdlib.h>

#include "esmm.h"
#include "fuzz_input.h"
#include "mtx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static esmm_handle_t cpu;
    if (cpu == NULL && esmm_create(&cpu, ESMM_BACKEND_CPU) != ESMM_STATUS_SUCCESS)
        abort();
    const char *path = fuzz_input_file(data, size);
    if (path == NULL)
        return 0;
    mtx_csr_t m;
    cli_error_t err;
    if (mtx_read_csr(path, &m, &err) == 0) {
        if (esmm_csr_validate(cpu, m.rows, m.cols, m.nnz, m.row_ptr, m.col_idx) !=
            ESMM_STATUS_SUCCESS)
            abort(); /* the reader produced CSR the library refuses */
        mtx_csr_free(&m);
    }
    return 0;
}
