/*
 * CSR products on the CPU.
 *
 * Every row of op(W) is a gather: C(i, :) accumulates w * B(col, :) over the
 * stored entries of row i. ESMM_OP_N gathers along W's own rows; ESMM_OP_T
 * first builds W's stable transpose, whose rows list each column's entries by
 * increasing row of W (storage order within a row), so the same gather sums
 * them in the order cpu_backend.h documents. The transpose costs O(nnz + cols)
 * per call, no more than the product's O(nnz * n), and lets the output rows
 * run in parallel without write conflicts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_backend.h"

/* C columns one row accumulates at a time: 1 KiB of stack, so the
 * accumulators stay in L1 whatever n is. */
enum { COLUMN_BLOCK = 256 };

/* Below this many multiply-adds a product runs on one thread: waking a team
 * costs more than it saves. */
#define PARALLEL_MIN_WORK 1e6

static int64_t min_i64(int64_t x, int64_t y)
{
    return x < y ? x : y;
}

/* Whether the product has terms to sum: otherwise C = beta * C (beta == 0
 * writing zeros), and neither W's arrays nor B are read. */
static int has_products(const esmm_csrmm_problem_t *p)
{
    return p->k > 0 && p->w.nnz > 0 && p->alpha != 0.0f;
}

/* C = alpha * R * B + beta * C, where the rows of R (p->m of them) are the
 * rows of the CSR matrix r: W itself for N, its transpose for T. */
static void gather_rows(const esmm_csr_view_t *r, const esmm_csrmm_problem_t *p)
{
    const int multiply = has_products(p);
    const double work = multiply ? (double)r->nnz * (double)p->n : (double)p->m * (double)p->n;
    /* Rows may hold very different counts (an empty row next to a full one):
     * small dynamic chunks keep the threads evenly loaded. */
#pragma omp parallel for schedule(dynamic, 16) if (work >= PARALLEL_MIN_WORK)
    for (int64_t i = 0; i < p->m; i++) {
        const int64_t begin = multiply ? r->row_ptr[i] : 0;
        const int64_t end = multiply ? r->row_ptr[i + 1] : 0;
        float *c = p->c + i * p->ldc;
        for (int64_t j0 = 0; j0 < p->n; j0 += COLUMN_BLOCK) {
            const int64_t width = min_i64(COLUMN_BLOCK, p->n - j0);
            float acc[COLUMN_BLOCK];
            for (int64_t j = 0; j < width; j++)
                acc[j] = 0.0f;
            for (int64_t e = begin; e < end; e++) {
                const float weight = esmm_csr_weight(r, e);
                const float *b = p->b + (int64_t)r->col_idx[e] * p->ldb + j0;
                for (int64_t j = 0; j < width; j++)
                    acc[j] = acc[j] + weight * b[j];
            }
            for (int64_t j = 0; j < width; j++) {
                float *out = &c[j0 + j];
                if (!multiply)
                    *out = p->beta == 0.0f ? 0.0f : p->beta * *out;
                else if (p->beta == 0.0f)
                    *out = p->alpha * acc[j];
                else
                    *out = p->alpha * acc[j] + p->beta * *out;
            }
        }
    }
}

esmm_status_t esmm_cpu_csrmm(const esmm_csrmm_problem_t *p)
{
    if (p->op != ESMM_OP_N && p->op != ESMM_OP_T)
        return ESMM_STATUS_INVALID_VALUE;
    if (p->m <= 0 || p->n <= 0)
        return ESMM_STATUS_SUCCESS;
    if (p->op == ESMM_OP_N || !has_products(p)) {
        gather_rows(&p->w, p);
        return ESMM_STATUS_SUCCESS;
    }
    const esmm_csr_view_t *w = &p->w;
    int32_t *t_row_ptr = malloc((size_t)(w->cols + 1) * sizeof *t_row_ptr);
    int32_t *t_col_idx = malloc((size_t)w->nnz * sizeof *t_col_idx);
    float *t_values = w->values != NULL ? malloc((size_t)w->nnz * sizeof *t_values) : NULL;
    esmm_status_t st = ESMM_STATUS_ALLOC_FAILED;
    if (t_row_ptr != NULL && t_col_idx != NULL && (w->values == NULL || t_values != NULL)) {
        esmm_cpu_csr_transpose(w, t_row_ptr, t_col_idx, t_values);
        const esmm_csr_view_t transposed = {w->cols, w->rows, w->nnz, t_row_ptr,
                                            t_col_idx, t_values, w->value};
        gather_rows(&transposed, p);
        st = ESMM_STATUS_SUCCESS;
    }
    free(t_row_ptr);
    free(t_col_idx);
    free(t_values);
    return st;
}

void esmm_cpu_reference_csrmm(const esmm_csrmm_problem_t *p, double *out, int64_t ldo)
{
    if (p->m <= 0 || p->n <= 0)
        return;
    const int multiply = has_products(p);
    for (int64_t i = 0; i < p->m; i++)
        for (int64_t j = 0; j < p->n; j++)
            out[i * ldo + j] = 0.0;
    /* Walks W's stored entries row by row: entry (r, col) adds w * B(col, :)
     * to out(r, :) for N and w * B(r, :) to out(col, :) for T. Only N gives
     * every thread its own output rows. */
    const esmm_csr_view_t *w = &p->w;
    const int64_t rows = multiply ? w->rows : 0;
    const int parallel = p->op == ESMM_OP_N && (double)w->nnz * (double)p->n >= PARALLEL_MIN_WORK;
#pragma omp parallel for schedule(dynamic, 16) if (parallel)
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t e = w->row_ptr[r]; e < w->row_ptr[r + 1]; e++) {
            const double weight = (double)esmm_csr_weight(w, e);
            const int64_t col = w->col_idx[e];
            const int64_t dst = p->op == ESMM_OP_N ? r : col;
            const int64_t src = p->op == ESMM_OP_N ? col : r;
            double *row = out + dst * ldo;
            const float *b = p->b + src * p->ldb;
            for (int64_t j = 0; j < p->n; j++)
                row[j] += weight * (double)b[j];
        }
    }
    for (int64_t i = 0; i < p->m; i++) {
        double *row = out + i * ldo;
        const float *c = p->c + i * p->ldc;
        for (int64_t j = 0; j < p->n; j++) {
            const double scaled_c = p->beta == 0.0f ? 0.0 : (double)p->beta * (double)c[j];
            row[j] = multiply ? (double)p->alpha * row[j] + scaled_c : scaled_c;
        }
    }
}

esmm_status_t esmm_cpu_csr_validate(const esmm_csr_view_t *w)
{
    if (w->rows < 0 || w->cols < 0 || w->nnz < 0 || w->rows > INT32_MAX ||
        w->cols > INT32_MAX || w->nnz > INT32_MAX || w->row_ptr == NULL ||
        (w->nnz > 0 && w->col_idx == NULL))
        return ESMM_STATUS_INVALID_VALUE;
    /* First 0, non-decreasing and last nnz keep every pointer in [0, nnz]. */
    if (w->row_ptr[0] != 0 || w->row_ptr[w->rows] != w->nnz)
        return ESMM_STATUS_INVALID_VALUE;
    for (int64_t i = 0; i < w->rows; i++)
        if (w->row_ptr[i + 1] < w->row_ptr[i])
            return ESMM_STATUS_INVALID_VALUE;
    for (int64_t e = 0; e < w->nnz; e++)
        if (w->col_idx[e] < 0 || w->col_idx[e] >= w->cols)
            return ESMM_STATUS_INVALID_VALUE;
    return ESMM_STATUS_SUCCESS;
}

void esmm_cpu_csr_transpose(const esmm_csr_view_t *w, int32_t *t_row_ptr, int32_t *t_col_idx,
                            float *t_values)
{
    /* Counting sort by column. t_row_ptr[c + 1] first counts column c; the
     * prefix sum turns t_row_ptr[c] into column c's first slot; placing the
     * entries by increasing row (storage order within a row) advances it to
     * column c + 1's first slot, so shifting the array one place restores the
     * starts. */
    memset(t_row_ptr, 0, (size_t)(w->cols + 1) * sizeof *t_row_ptr);
    for (int64_t e = 0; e < w->nnz; e++)
        t_row_ptr[w->col_idx[e] + 1]++;
    for (int64_t c = 0; c < w->cols; c++)
        t_row_ptr[c + 1] += t_row_ptr[c];
    for (int64_t r = 0; r < w->rows; r++) {
        for (int64_t e = w->row_ptr[r]; e < w->row_ptr[r + 1]; e++) {
            const int32_t slot = t_row_ptr[w->col_idx[e]]++;
            t_col_idx[slot] = (int32_t)r;
            if (w->values != NULL)
                t_values[slot] = w->values[e];
        }
    }
    for (int64_t c = w->cols; c > 0; c--)
        t_row_ptr[c] = t_row_ptr[c - 1];
    t_row_ptr[0] = 0;
}
