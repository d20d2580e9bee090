/* Matrix Market (.mtx) files as CSR: the coordinate format of the SuiteSparse
 * collection. */
#ifndef ESMM_TOOLS_MTX_H
#define ESMM_TOOLS_MTX_H

#include <stdint.h>

#include "cli_error.h"

/* A sparse matrix in CSR on the host. values is NULL for a `pattern` file
 * (every stored entry is 1). Entries of a row keep the order of the file;
 * repeated (row, column) pairs are kept as separate entries. */
typedef struct {
    int64_t rows, cols, nnz;
    int32_t *row_ptr; /* rows + 1 */
    int32_t *col_idx; /* nnz */
    float *values;    /* nnz, or NULL */
} mtx_csr_t;

/* Reads `%%MatrixMarket matrix coordinate real|integer|pattern
 * general|symmetric|skew-symmetric` (banner words in any case). Comment lines
 * (first non-blank character '%') and blank lines may appear anywhere after
 * the banner. Symmetric and skew-symmetric files are expanded to both
 * triangles: each off-diagonal entry (i, j, v) is followed by its mirror
 * (j, i, v), or (j, i, -v) when skew-symmetric, and the rows are filled by a
 * stable sort, so row r lists, in file order, the entries of row r and the
 * mirrors of the entries of column r. Entries on either side of the diagonal
 * are mirrored alike (a file listing both (i, j) and (j, i) gets each twice;
 * mtx_read_csr_checked can warn of it); a skew-symmetric diagonal entry is an
 * error. Values are anything strtof reads whole, "nan" and "inf" included,
 * except finite text too large for float32 (tiny values round to subnormals
 * or zero); integer values are read as int64 and rounded to float. rows, cols
 * and the expanded entry count must fit in int32; lines other than comments
 * are at most 1024 characters. Returns 0, or -1 with err naming the file, the
 * line and what is wrong (bad header, unsupported complex/hermitian/array,
 * bad size line, index out of range, bad value, truncated file, junk after
 * the entries, unreadable file); *out is then empty. */
int mtx_read_csr(const char *path, mtx_csr_t *out, cli_error_t *err);

/* Asked by mtx_read_csr_checked once the size line is read, before anything
 * that grows with its sizes is allocated: rows and cols as declared, entries
 * the most the matrix can hold once expanded (the declared count; twice it,
 * at most INT32_MAX, for a symmetric or skew-symmetric file, whose
 * off-diagonal entries gain their mirrors). Returns 0 to read on, or -1 with
 * err set to refuse the file. */
typedef int (*mtx_size_check_t)(const void *context, int64_t rows, int64_t cols,
                                int64_t entries, cli_error_t *err);

/* mtx_read_csr, refusing at the size line the sizes that check refuses (the
 * message names the file, the size line and what check said). warning, when
 * not NULL, says what looks wrong in a file that was read (its text is empty
 * when nothing does): a symmetric or skew-symmetric file storing entries
 * above the diagonal, where the format stores none, which is most likely a
 * file listing both triangles, so each off-diagonal value is counted twice. */
int mtx_read_csr_checked(const char *path, mtx_size_check_t check, const void *context,
                         mtx_csr_t *out, cli_error_t *warning, cli_error_t *err);

/* Writes `coordinate real general` (or `pattern` when values is NULL), one-based.
 * Returns 0, or -1 with err set. */
int mtx_write_csr(const char *path, const mtx_csr_t *m, cli_error_t *err);

/* Puts each row's entries in column order, repeated columns keeping their
 * order (cuSPARSE's CSR is sorted); values, when not NULL, move with their
 * columns. Returns how many rows changed, or -1 with err set (out of host
 * memory). */
int64_t mtx_sort_rows(mtx_csr_t *m, cli_error_t *err);

void mtx_csr_free(mtx_csr_t *m);

#endif
