#include "csr_workload.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cpu/cpu_backend.h"
#include "generate.h"

/* W's weights come from GENERATE_STREAM_A (W is the left operand, like A);
 * its columns from a stream of their own. */
#define STREAM_W_COLUMNS 4

static void *allocate(int64_t count, size_t size, const char *what, cli_error_t *err)
{
    double bytes = (double)count * (double)size;
    void *p = bytes < 0x1.0p62 ? malloc(count > 0 ? (size_t)count * size : 1) : NULL;
    if (p == NULL)
        cli_error_set(err, "out of host memory allocating %s (%.1f MiB)", what, bytes / 0x1.0p20);
    return p;
}

/* The splitmix64 step: a seeded stream for W's column draws. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int compare_int32(const void *x, const void *y)
{
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return (a > b) - (a < b);
}

/* Picks `count` distinct columns of [0, cols) uniformly (Floyd's sampling:
 * one draw per column, whatever the fill), in increasing order. marks is
 * cols bytes of zeros, and zeros again on return. */
static void sample_columns(uint64_t *state, int64_t cols, int64_t count, unsigned char *marks,
                           int32_t *out)
{
    int64_t taken = 0;
    for (int64_t j = cols - count; j < cols; j++) {
        int64_t t = (int64_t)(next_random(state) % (uint64_t)(j + 1));
        int64_t pick = marks[t] ? j : t;
        marks[pick] = 1;
        out[taken++] = (int32_t)pick;
    }
    for (int64_t e = 0; e < count; e++)
        marks[out[e]] = 0;
    qsort(out, (size_t)count, sizeof *out, compare_int32);
}

static int generate_w(const csr_case_t *c, mtx_csr_t *w, cli_error_t *err)
{
    const int64_t rows = c->rows, cols = c->cols, per_row = c->nnz_per_row;
    w->rows = rows;
    w->cols = cols;
    w->nnz = rows * per_row;
    unsigned char *marks = calloc((size_t)cols, 1);
    w->row_ptr = allocate(rows + 1, sizeof(int32_t), "W's row pointers", err);
    w->col_idx = allocate(w->nnz, sizeof(int32_t), "W's column indices", err);
    if (!c->homogeneous)
        w->values = allocate(w->nnz, sizeof(float), "W's values", err);
    if (marks == NULL || w->row_ptr == NULL || w->col_idx == NULL ||
        (!c->homogeneous && w->values == NULL)) {
        free(marks);
        return marks == NULL ? cli_error_set(err, "out of host memory") : -1;
    }
    for (int64_t i = 0; i <= rows; i++)
        w->row_ptr[i] = (int32_t)(i * per_row);
    for (int64_t i = 0; i < rows; i++) {
        uint64_t state = c->seed ^ ((uint64_t)STREAM_W_COLUMNS << 56) ^ (uint64_t)i * 0xd1b54a32d192ed03ULL;
        int32_t *columns = w->col_idx + i * per_row;
        sample_columns(&state, cols, per_row, marks, columns);
        for (int64_t e = 0; e < per_row && w->values != NULL; e++)
            w->values[i * per_row + e] =
                generate_dense_value(c->seed, GENERATE_STREAM_A, i, columns[e], cols);
    }
    free(marks);
    return 0;
}

/* Refuses a workload whose buffers (with the reference's) cannot fit here:
 * W of rows rows and nnz entries, B k x n, C m x n. */
static int check_host_memory(int64_t m, int64_t n, int64_t k, int64_t rows, int64_t nnz,
                             cli_error_t *err)
{
    double mn = (double)m * (double)n, kn = (double)k * (double)n;
    /* W, |W|; B, |B|; C0, the result copy, the runner's C; reference and scale. */
    double bytes = 12.0 * (double)nnz + 4.0 * (double)rows + 8.0 * kn + 12.0 * mn + 16.0 * mn;
    double memory = 0.0;
    if (bench_host_memory_fits(bytes, &memory))
        return 0;
    return cli_error_set(err, "m=%" PRId64 " n=%" PRId64 " k=%" PRId64 " with %" PRId64
                              " stored entries needs %.1f GiB of host memory; this machine has "
                              "%.1f GiB", m, n, k, nnz, bytes / 0x1.0p30, memory / 0x1.0p30);
}

/* The sizes W's file declares, checked at its size line so that a W too large
 * for this machine is refused before it is built. */
static int check_declared_w(const void *context, int64_t rows, int64_t cols, int64_t entries,
                            cli_error_t *err)
{
    const csr_case_t *c = context;
    const bool n_op = c->transpose == ESMM_OP_N;
    /* Where B's file settles n, it is not known yet: 1 is the least it can be. */
    const int64_t n = c->n > 0 ? c->n : 1;
    return check_host_memory(n_op ? rows : cols, n, n_op ? cols : rows, rows, entries, err);
}

static int load_w(const csr_case_t *c, csr_workload_t *wl, cli_error_t *err)
{
    mtx_csr_t *w = &wl->w;
    cli_error_t warning;
    if (mtx_read_csr_checked(c->w_path, check_declared_w, c, w, &warning, err) != 0)
        return -1;
    if (warning.text[0] != '\0')
        fprintf(stderr, "esmm bench: warning: %s\n", warning.text);
    if (w->rows < 1 || w->cols < 1)
        return cli_error_set(err, "%s: W is %" PRId64 " x %" PRId64 ": nothing to multiply",
                             c->w_path, w->rows, w->cols);
    /* A pattern file's entries are all 1: a homogeneous W. */
    if (w->values == NULL) {
        wl->homogeneous = true;
        wl->weight = c->homogeneous ? c->weight : 1.0f;
    } else if (c->homogeneous) {
        free(w->values);
        w->values = NULL;
    }
    wl->sorted_rows = mtx_sort_rows(w, err);
    return wl->sorted_rows < 0 ? -1 : 0;
}

/* Settles n from the case and B's file and checks that B is k x n. */
static int settle_b_shape(const csr_case_t *c, csr_workload_t *wl, cli_error_t *err)
{
    const char *op_text = c->transpose == ESMM_OP_T ? "W^T" : "W";
    if (c->b_path == NULL) {
        wl->n = c->n;
        return 0;
    }
    const npy_matrix_t *f = &wl->b_file;
    if (c->op == BENCH_OP_CSRMV) {
        if ((f->rows == wl->k && f->cols == 1) || (f->rows == 1 && f->cols == wl->k)) {
            wl->n = 1;
            return 0;
        }
        return cli_error_set(err, "%s: x is %" PRId64 " x %" PRId64 ", but op(W) = %s is %" PRId64
                                  " x %" PRId64 ", so x must have %" PRId64 " elements (%" PRId64
                                  " x 1 or 1 x %" PRId64 ")",
                             c->b_path, f->rows, f->cols, op_text, wl->m, wl->k, wl->k, wl->k,
                             wl->k);
    }
    if (f->rows != wl->k)
        return cli_error_set(err, "%s: B is %" PRId64 " x %" PRId64 ", but op(W) = %s is %" PRId64
                                  " x %" PRId64 ", so B must have %" PRId64 " rows",
                             c->b_path, f->rows, f->cols, op_text, wl->m, wl->k, wl->k);
    if (c->n > 0 && f->cols != c->n)
        return cli_error_set(err, "%s: B has %" PRId64 " columns, but --n is %" PRId64, c->b_path,
                             f->cols, c->n);
    wl->n = f->cols;
    return 0;
}

static void describe_w(const csr_case_t *c, csr_workload_t *wl)
{
    char weights[64];
    if (wl->homogeneous)
        snprintf(weights, sizeof weights, "one shared weight %g", (double)wl->weight);
    else
        snprintf(weights, sizeof weights, "per-entry weights");
    const mtx_csr_t *w = &wl->w;
    if (c->w_path != NULL)
        snprintf(wl->w_source, sizeof wl->w_source,
                 "from %s: %" PRId64 " x %" PRId64 ", %" PRId64 " entries (%.1f per row), %s%s",
                 c->w_path, w->rows, w->cols, w->nnz, (double)w->nnz / (double)w->rows, weights,
                 wl->sorted_rows > 0 ? "; rows put in column order" : "");
    else
        snprintf(wl->w_source, sizeof wl->w_source,
                 "%" PRId64 " x %" PRId64 ", %" PRId64 " entries per row at distinct uniform "
                 "random columns, %s",
                 w->rows, w->cols, c->nnz_per_row, weights);
}

/* Nonzero fraction of B and the products the stored entries meet that are
 * not known to be zero. */
static int count_useful(csr_workload_t *wl, const csr_case_t *c, cli_error_t *err)
{
    int64_t *row_nonzeros = allocate(wl->k, sizeof(int64_t), "counts", err);
    if (row_nonzeros == NULL)
        return -1;
    operand_view_t view_b = operand_view_b((float *)wl->b, ESMM_OP_N, wl->k, wl->n);
    count_nonzeros_per_k(&view_b, row_nonzeros);
    double nonzeros = 0.0, useful = 0.0;
    for (int64_t kk = 0; kk < wl->k; kk++)
        nonzeros += (double)row_nonzeros[kk];
    const mtx_csr_t *w = &wl->w;
    for (int64_t i = 0; i < w->rows; i++)
        for (int64_t e = w->row_ptr[i]; e < w->row_ptr[i + 1]; e++)
            /* op(W)'s entry meets row col_idx[e] of B (N) or row i (T). */
            useful += (double)row_nonzeros[c->transpose == ESMM_OP_N ? w->col_idx[e] : i];
    free(row_nonzeros);
    wl->nonzero_b = wl->k * wl->n > 0 ? nonzeros / ((double)wl->k * (double)wl->n) : 0.0;
    wl->useful_products = useful;
    return 0;
}

static int make_b_and_c0(const csr_case_t *c, csr_workload_t *wl, cli_error_t *err)
{
    if (c->b_path == NULL) {
        wl->b_generated = allocate(wl->k * wl->n, sizeof(float), "B", err);
        if (wl->b_generated == NULL)
            return -1;
        operand_view_t view = operand_view_b(wl->b_generated, ESMM_OP_N, wl->k, wl->n);
        generator_t random = {GENERATOR_RANDOM, "", 1.0, 1.0 - c->b_density};
        generate_operand(&view, &random, c->seed, GENERATE_STREAM_B);
        wl->b = wl->b_generated;
        snprintf(wl->b_source, sizeof wl->b_source,
                 "%" PRId64 " x %" PRId64 ", each element nonzero with probability %g "
                 "(uniform in (-1, 1)), exact zeros elsewhere",
                 wl->k, wl->n, c->b_density);
    } else {
        wl->b = wl->b_file.data;
        snprintf(wl->b_source, sizeof wl->b_source, "from %s", c->b_path);
    }
    if (c->beta != 0.0f) {
        wl->c0 = allocate(wl->m * wl->n, sizeof(float), "C", err);
        if (wl->c0 == NULL)
            return -1;
        operand_view_t view_c = {wl->c0, wl->n, wl->m, wl->n, true};
        generator_t dense = {GENERATOR_DENSE, "", 1.0, 0.0};
        generate_operand(&view_c, &dense, c->seed, GENERATE_STREAM_C);
    }
    return count_useful(wl, c, err);
}

int csr_workload_build(const csr_case_t *c, csr_workload_t *wl, cli_error_t *err)
{
    memset(wl, 0, sizeof *wl);
    wl->homogeneous = c->homogeneous;
    wl->weight = c->weight;
    /* A generated W too large for this machine is refused before it is
     * built, as a file's is at its size line. */
    if (c->w_path == NULL &&
        check_declared_w(c, c->rows, c->cols, c->rows * c->nnz_per_row, err) != 0)
        return ESMM_EXIT_RUNTIME;
    if ((c->w_path != NULL ? load_w(c, wl, err) : generate_w(c, &wl->w, err)) != 0)
        return ESMM_EXIT_RUNTIME;
    if (c->b_path != NULL &&
        npy_load_operand(c->b_path, c->op == BENCH_OP_CSRMV ? "x" : "B", &wl->b_file, err) != 0)
        return ESMM_EXIT_RUNTIME;
    wl->m = c->transpose == ESMM_OP_N ? wl->w.rows : wl->w.cols;
    wl->k = c->transpose == ESMM_OP_N ? wl->w.cols : wl->w.rows;
    if (settle_b_shape(c, wl, err) != 0)
        return ESMM_EXIT_USAGE;
    describe_w(c, wl);
    if (check_host_memory(wl->m, wl->n, wl->k, wl->w.rows, wl->w.nnz, err) != 0 ||
        make_b_and_c0(c, wl, err) != 0)
        return ESMM_EXIT_RUNTIME;
    return ESMM_EXIT_OK;
}

void csr_workload_free(csr_workload_t *wl)
{
    mtx_csr_free(&wl->w);
    npy_matrix_free(&wl->b_file);
    free(wl->b_generated);
    free(wl->c0);
    memset(wl, 0, sizeof *wl);
}

csr_problem_t csr_workload_problem(const csr_workload_t *wl, const csr_case_t *c,
                                   esmm_handle_t handle)
{
    const mtx_csr_t *w = &wl->w;
    csr_problem_t p = {handle,    c->op,      c->transpose, w->rows,   w->cols,  w->nnz,
                       w->row_ptr, w->col_idx, w->values,    wl->weight, wl->m,   wl->n,
                       wl->k,      c->alpha,   c->beta,      wl->b,     wl->c0};
    return p;
}

static esmm_csrmm_problem_t library_problem(const csr_problem_t *p, const float *values,
                                            float value, const float *b, float alpha, float beta,
                                            float *c)
{
    esmm_csrmm_problem_t q = {
        p->transpose,
        {p->rows, p->cols, p->nnz, p->row_ptr, p->col_idx, values, value},
        p->m, p->n, p->k, alpha, beta, b, p->n, c, p->n};
    return q;
}

int csr_reference_compute(const csr_problem_t *p, float *scratch_c, csr_reference_t *ref,
                          cli_error_t *err)
{
    memset(ref, 0, sizeof *ref);
    ref->count = p->m * p->n;
    ref->ref = allocate(ref->count, sizeof(double), "the reference", err);
    ref->scale = allocate(ref->count, sizeof(double), "the error scale", err);
    float *abs_values = p->values != NULL ? allocate(p->nnz, sizeof(float), "|W|", err) : NULL;
    float *abs_b = allocate(p->k * p->n, sizeof(float), "|B|", err);
    if (ref->ref == NULL || ref->scale == NULL || abs_b == NULL ||
        (p->values != NULL && abs_values == NULL)) {
        free(abs_values);
        free(abs_b);
        csr_reference_free(ref);
        return -1;
    }
    float *c = p->c0 != NULL ? (float *)p->c0 : scratch_c;
    esmm_csrmm_problem_t q = library_problem(p, p->values, p->value, p->b, p->alpha, p->beta, c);
    esmm_cpu_reference_csrmm(&q, ref->ref, p->n);

    /* The same product over magnitudes gives sum |alpha w b| per element. */
    for (int64_t e = 0; abs_values != NULL && e < p->nnz; e++)
        abs_values[e] = fabsf(p->values[e]);
    for (int64_t i = 0; i < p->k * p->n; i++)
        abs_b[i] = fabsf(p->b[i]);
    q = library_problem(p, abs_values, fabsf(p->value), abs_b, fabsf(p->alpha), 0.0f, c);
    esmm_cpu_reference_csrmm(&q, ref->scale, p->n);
    for (int64_t i = 0; p->c0 != NULL && i < ref->count; i++)
        ref->scale[i] += fabs((double)p->beta * (double)p->c0[i]);
    free(abs_values);
    free(abs_b);
    return 0;
}

void csr_reference_free(csr_reference_t *ref)
{
    free(ref->ref);
    free(ref->scale);
    ref->ref = ref->scale = NULL;
}

static double element_error(double want, double scale, float got)
{
    if (isnan(want) || isnan(got))
        return isnan(want) && isnan(got) ? 0.0 : INFINITY;
    if (fabs(want) > FLT_MAX || isinf(got))
        return isinf(got) && fabs(want) > FLT_MAX && (got > 0.0f) == (want > 0.0) ? 0.0 : INFINITY;
    double difference = fabs((double)got - want);
    if (difference == 0.0)
        return 0.0;
    return scale > 0.0 ? difference / scale : INFINITY;
}

double csr_max_error(const csr_reference_t *ref, const float *x)
{
    double worst = 0.0;
    for (int64_t i = 0; i < ref->count; i++) {
        double e = element_error(ref->ref[i], ref->scale[i], x[i]);
        if (e > worst)
            worst = e;
    }
    return worst;
}
