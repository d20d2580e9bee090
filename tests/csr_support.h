/* Host-side helpers the CSR tests share (no CUDA): a CSR matrix on the host
 * and its seeded generator, dense operands with a chosen density of nonzeros,
 * the float product in the order the CPU backend documents (bit-exact
 * expectations), and the comparison with the float64 reference under a
 * rounding bound. */
#ifndef ESMM_TEST_CSR_SUPPORT_H
#define ESMM_TEST_CSR_SUPPORT_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "cpu/cpu_backend.h"
#include "esmm.h"
#include "test_support.h"

/* W (rows x cols) in CSR on the host; values == NULL means every stored entry
 * weighs `value` (the esmm_csr_create convention). col_idx and values always
 * point to an allocation, even when nnz == 0. */
typedef struct {
    int64_t rows, cols, nnz;
    int32_t *row_ptr; /* rows + 1 */
    int32_t *col_idx; /* nnz */
    float *values;    /* nnz, or NULL */
    float value;
} host_csr_t;

/* Generator options (csr_spec_t.flags). */
enum {
    CSR_GEN_UNSORTED = 1u,    /* columns within a row in random order (else increasing) */
    CSR_GEN_DUPLICATES = 2u,  /* columns drawn with replacement, and every row of two or
                                 more entries repeats one (row, column) pair */
    CSR_GEN_FULL_ROW = 4u,    /* row rows / 2 holds every column once */
    CSR_GEN_HOMOGENEOUS = 8u  /* values NULL: every entry weighs `value` */
};

/* What csr_generate builds. A row holds nnz_per_row entries (row_counts[i]
 * when row_counts is not NULL), at most cols of them without duplicates;
 * empty_stride > 0 empties rows 0, s, 2s, ... (the full row excepted).
 * Per-entry weights are random and nonzero (nonzero_value). */
typedef struct {
    int64_t rows, cols;
    int64_t nnz_per_row;
    const int64_t *row_counts;
    int64_t empty_stride;
    unsigned flags;
    float value; /* the shared weight with CSR_GEN_HOMOGENEOUS, taken as given */
    uint64_t seed;
} csr_spec_t;

static inline int csr_compare_int32(const void *x, const void *y)
{
    const int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return (a > b) - (a < b);
}

/* Entries row i of spec gets. */
static inline int64_t csr_spec_row_count(const csr_spec_t *spec, int64_t i)
{
    if ((spec->flags & CSR_GEN_FULL_ROW) && i == spec->rows / 2)
        return spec->cols;
    if (spec->cols == 0 || (spec->empty_stride > 0 && i % spec->empty_stride == 0))
        return 0;
    const int64_t count = spec->row_counts != NULL ? spec->row_counts[i] : spec->nnz_per_row;
    return (spec->flags & CSR_GEN_DUPLICATES) ? count : min_i64(count, spec->cols);
}

/* A random W as spec describes, reproducible from spec->seed. */
static inline host_csr_t csr_generate(const csr_spec_t *spec)
{
    uint64_t rng = spec->seed;
    host_csr_t w = {spec->rows, spec->cols, 0, NULL, NULL, NULL, spec->value};
    w.row_ptr = host_alloc(w.rows + 1, sizeof *w.row_ptr);
    w.row_ptr[0] = 0;
    for (int64_t i = 0; i < w.rows; i++)
        w.row_ptr[i + 1] = w.row_ptr[i] + (int32_t)csr_spec_row_count(spec, i);
    w.nnz = w.row_ptr[w.rows];
    w.col_idx = host_alloc(w.nnz, sizeof *w.col_idx);
    /* Distinct columns by a partial Fisher-Yates shuffle of `pool`: any
     * starting permutation gives a uniform draw, so the pool carries over
     * from row to row. */
    int32_t *pool = host_alloc(w.cols, sizeof *pool);
    for (int64_t c = 0; c < w.cols; c++)
        pool[c] = (int32_t)c;
    for (int64_t i = 0; i < w.rows; i++) {
        int32_t *row = w.col_idx + w.row_ptr[i];
        const int64_t count = w.row_ptr[i + 1] - w.row_ptr[i];
        const int full = (spec->flags & CSR_GEN_FULL_ROW) && i == w.rows / 2;
        if ((spec->flags & CSR_GEN_DUPLICATES) && !full) {
            for (int64_t e = 0; e < count; e++)
                row[e] = (int32_t)rng_below(&rng, w.cols);
            if (count >= 2)
                row[count - 1] = row[rng_below(&rng, count - 1)];
        } else {
            for (int64_t e = 0; e < count; e++) {
                const int64_t pick = e + rng_below(&rng, w.cols - e);
                const int32_t chosen = pool[pick];
                pool[pick] = pool[e];
                pool[e] = chosen;
                row[e] = chosen;
            }
        }
        if (!(spec->flags & CSR_GEN_UNSORTED))
            qsort(row, (size_t)count, sizeof *row, csr_compare_int32);
    }
    free(pool);
    if (!(spec->flags & CSR_GEN_HOMOGENEOUS)) {
        w.values = host_alloc(w.nnz, sizeof *w.values);
        for (int64_t e = 0; e < w.nnz; e++)
            w.values[e] = nonzero_value(&rng);
    }
    return w;
}

static inline void csr_free(host_csr_t *w)
{
    free(w->row_ptr);
    free(w->col_idx);
    free(w->values);
    *w = (host_csr_t){0};
}

/* rows x cols, row-major with leading dimension ld >= cols: each element
 * nonzero (nonzero_value) with probability `density`, else exactly +0 (so 0
 * gives all zeros and 1 none). The padding past cols holds the poison NaN:
 * a product that reads it shows. Free with free(). */
static inline float *dense_generate(int64_t rows, int64_t cols, int64_t ld, double density,
                                    uint64_t seed)
{
    uint64_t rng = seed;
    float *x = host_alloc(rows * ld, sizeof *x);
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < ld; j++)
            x[i * ld + j] = j >= cols ? poison_value()
                            : rng_uniform(&rng) < density ? nonzero_value(&rng)
                                                           : 0.0f;
    return x;
}

/* op(W) is m x k. */
static inline int64_t csr_op_rows(const host_csr_t *w, esmm_operation_t op)
{
    return op == ESMM_OP_N ? w->rows : w->cols;
}

static inline int64_t csr_op_cols(const host_csr_t *w, esmm_operation_t op)
{
    return op == ESMM_OP_N ? w->cols : w->rows;
}

static inline float csr_weight_at(const host_csr_t *w, int64_t e)
{
    return w->values != NULL ? w->values[e] : w->value;
}

/* The most stored entries summed into one element of op(W) * B: the longest
 * row (N) or the most populated column (T). */
static inline int64_t csr_max_terms(const host_csr_t *w, esmm_operation_t op)
{
    int64_t most = 0;
    if (op == ESMM_OP_N) {
        for (int64_t i = 0; i < w->rows; i++)
            most = max_i64(most, (int64_t)w->row_ptr[i + 1] - w->row_ptr[i]);
        return most;
    }
    int64_t *count = calloc((size_t)max_i64(w->cols, 1), sizeof *count);
    if (count == NULL)
        return w->nnz;
    for (int64_t e = 0; e < w->nnz; e++)
        most = max_i64(most, ++count[w->col_idx[e]]);
    free(count);
    return most;
}

/*
 * C = alpha * op(W) * B + beta * C in place (m x n, ldc), written out as
 * directly as possible in the order and arithmetic the CPU backend
 * documents: per element one float acc = acc + w * b over W's stored entries
 * (N: along the row; T: by increasing row of W, storage order within a row),
 * then alpha * acc, plus beta * C when beta != 0. No product (k == 0,
 * nnz == 0 or alpha == 0) gives beta * C, zeros when beta == 0. Compile
 * without FMA contraction.
 */
static inline void csr_float_product(const host_csr_t *w, esmm_operation_t op, int64_t n,
                                     float alpha, const float *b, int64_t ldb, float beta,
                                     float *c, int64_t ldc)
{
    const int64_t m = csr_op_rows(w, op), k = csr_op_cols(w, op);
    const int multiply = k > 0 && w->nnz > 0 && alpha != 0.0f;
    float *acc = calloc((size_t)max_i64(m * n, 1), sizeof *acc);
    if (acc == NULL) {
        CHECK(0, "out of host memory");
        exit(check_finish());
    }
    /* T scatters W's rows in increasing order: each element of C sees its
     * entries by increasing row of W, storage order within a row. */
    for (int64_t r = 0; multiply && r < w->rows; r++) {
        for (int64_t e = w->row_ptr[r]; e < w->row_ptr[r + 1]; e++) {
            const float weight = csr_weight_at(w, e);
            const int64_t out_row = op == ESMM_OP_N ? r : w->col_idx[e];
            const int64_t b_row = op == ESMM_OP_N ? w->col_idx[e] : r;
            for (int64_t j = 0; j < n; j++)
                acc[out_row * n + j] = acc[out_row * n + j] + weight * b[b_row * ldb + j];
        }
    }
    for (int64_t i = 0; i < m; i++) {
        for (int64_t j = 0; j < n; j++) {
            float *out = &c[i * ldc + j];
            if (!multiply)
                *out = beta == 0.0f ? 0.0f : beta * *out;
            else if (beta == 0.0f)
                *out = alpha * acc[i * n + j];
            else
                *out = alpha * acc[i * n + j] + beta * *out;
        }
    }
    free(acc);
}

/* The float64 reference of C = alpha * op(W) * B + beta * c_in (m x n,
 * esmm_cpu_reference_csrmm) and its rounding bound. A float sum of K products
 * is within gamma_K * sum |w b| of the exact sum, and alpha * acc and the
 * beta * C addition add two roundings: element (i, j) may be off by
 * relative * magnitude[i * n + j], gamma_{K+2} times (|alpha| sum |w b| +
 * |beta c|) with K = csr_max_terms, that sum computed by the same reference
 * on |W|, |B|, |C| (its own double error is far below the slack added). NaN
 * and Inf must appear exactly where the reference has them. */
typedef struct {
    double *want;      /* m x n */
    double *magnitude; /* m x n */
    double relative;
} csr_reference_t;

static inline csr_reference_t csr_reference_make(const host_csr_t *w, esmm_operation_t op,
                                                 int64_t n, float alpha, const float *b,
                                                 int64_t ldb, float beta, const float *c_in,
                                                 int64_t ldc)
{
    const int64_t m = csr_op_rows(w, op), k = csr_op_cols(w, op);
    csr_reference_t ref;
    ref.want = host_alloc(m * n, sizeof *ref.want);
    ref.magnitude = host_alloc(m * n, sizeof *ref.magnitude);
    float *abs_values = w->values != NULL ? host_alloc(w->nnz, sizeof *abs_values) : NULL;
    float *abs_b = host_alloc(k * ldb, sizeof *abs_b);
    float *abs_c = host_alloc(m * ldc, sizeof *abs_c);
    for (int64_t e = 0; abs_values != NULL && e < w->nnz; e++)
        abs_values[e] = fabsf(w->values[e]);
    for (int64_t i = 0; i < k * ldb; i++)
        abs_b[i] = fabsf(b[i]);
    for (int64_t i = 0; i < m * ldc; i++)
        abs_c[i] = fabsf(c_in[i]);
    const esmm_csr_view_t view = {w->rows, w->cols, w->nnz, w->row_ptr, w->col_idx, w->values,
                                  w->value};
    const esmm_csr_view_t abs_view = {w->rows, w->cols, w->nnz, w->row_ptr, w->col_idx,
                                      abs_values, fabsf(w->value)};
    const esmm_csrmm_problem_t p = {op, view, m, n, k, alpha, beta, b, ldb, (float *)c_in, ldc};
    const esmm_csrmm_problem_t p_abs = {op, abs_view, m, n, k, fabsf(alpha), fabsf(beta),
                                        abs_b, ldb, abs_c, ldc};
    esmm_cpu_reference_csrmm(&p, ref.want, n);
    esmm_cpu_reference_csrmm(&p_abs, ref.magnitude, n);
    const double u = FLT_EPSILON / 2.0;
    const double terms = (double)(csr_max_terms(w, op) + 2);
    ref.relative = terms * u / (1.0 - terms * u) + terms * DBL_EPSILON;
    free(abs_values);
    free(abs_b);
    free(abs_c);
    return ref;
}

static inline void csr_reference_free(csr_reference_t *ref)
{
    free(ref->want);
    free(ref->magnitude);
}

/* What csr_reference_compare found: how many elements are off, and the
 * first of them (row-major index into m x n). */
typedef struct {
    int64_t bad;
    int64_t first;
    float got;
    double want, tolerance;
} csr_mismatch_t;

/* got (m x n, ldc) against csr_reference_make's reference and bound. */
static inline csr_mismatch_t csr_reference_compare(const host_csr_t *w, esmm_operation_t op,
                                                   int64_t n, float alpha, const float *b,
                                                   int64_t ldb, float beta, const float *c_in,
                                                   int64_t ldc, const float *got)
{
    const int64_t m = csr_op_rows(w, op);
    csr_mismatch_t result = {0, -1, 0.0f, 0.0, 0.0};
    csr_reference_t ref = csr_reference_make(w, op, n, alpha, b, ldb, beta, c_in, ldc);
    for (int64_t i = 0; i < m; i++) {
        for (int64_t j = 0; j < n; j++) {
            const double tolerance = ref.relative * ref.magnitude[i * n + j];
            if (close_enough(got[i * ldc + j], ref.want[i * n + j], tolerance))
                continue;
            if (result.bad++ == 0)
                result = (csr_mismatch_t){1, i * n + j, got[i * ldc + j], ref.want[i * n + j],
                                          tolerance};
        }
    }
    csr_reference_free(&ref);
    return result;
}

#endif
