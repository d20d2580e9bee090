/* NumPy .npy files holding 2-D float32 matrices.
 *
 * Loading accepts format versions 1.0, 2.0 and 3.0 with dtype '<f4' and a
 * 2-D shape. Fortran-order (column-major) files are accepted and transposed
 * on load, so the result is always row-major. Anything else is refused with a
 * message that names the file and what was found. */
#ifndef ESMM_TOOLS_NPY_H
#define ESMM_TOOLS_NPY_H

#include <stdint.h>

#include "cli_error.h"

typedef enum {
    NPY_OK = 0,
    NPY_ERR_IO,        /* cannot open, read or write the file */
    NPY_ERR_MAGIC,     /* not a .npy file (too short or bad magic string) */
    NPY_ERR_VERSION,   /* format version other than 1.0, 2.0, 3.0 */
    NPY_ERR_HEADER,    /* the header dictionary is malformed */
    NPY_ERR_DTYPE,     /* dtype other than '<f4' */
    NPY_ERR_RANK,      /* not 2-D */
    NPY_ERR_SHAPE,     /* a dimension or the byte count overflows */
    NPY_ERR_TRUNCATED, /* fewer data bytes than the shape needs */
    NPY_ERR_TRAILING,  /* more data bytes than the shape needs */
    NPY_ERR_ALLOC      /* the matrix does not fit in memory */
} npy_status_t;

typedef struct {
    int64_t rows, cols;
    float *data; /* rows x cols, row-major, leading dimension cols */
} npy_matrix_t;

/* On failure *out is left empty ({0, 0, NULL}) and err says why. A shape
 * with a 0 in it loads as a matrix with no element. */
npy_status_t npy_load_f32(const char *path, npy_matrix_t *out, cli_error_t *err);

/* npy_load_f32 for an operand of a product, which needs at least one row and
 * one column: a file holding no element is refused too, as bad input data
 * ("PATH: OPERAND is empty (R x C)"). Returns 0, or -1 with err set and *out
 * left empty. */
int npy_load_operand(const char *path, const char *operand, npy_matrix_t *out, cli_error_t *err);

/* Writes rows x cols of a row-major matrix with leading dimension ld as
 * '<f4', C order, format 1.0 (data may be NULL when rows or cols is 0). */
npy_status_t npy_save_f32(const char *path, const float *data, int64_t rows, int64_t cols,
                          int64_t ld, cli_error_t *err);

void npy_matrix_free(npy_matrix_t *m);

#endif
