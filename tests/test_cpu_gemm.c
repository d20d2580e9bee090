/* CPU backend GEMM: the blocked SGEMM against the float64 reference with a
 * worst-case rounding bound, and the skip-GEMM against the dense path bit for
 * bit (NaN/Inf included). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cpu/cpu_backend.h"
#include "test_support.h"

/* Uniform in [-1, 1), a multiple of 2^-23. */
static float rng_unit(uint64_t *state)
{
    return (float)((int64_t)(rng_next(state) >> 40) - (1 << 23)) / (float)(1 << 23);
}

/* True with probability p. */
static int rng_chance(uint64_t *state, double p)
{
    return rng_uniform(state) < p;
}

/* A stored row-major matrix. Row padding past `cols` holds NaN, so reading it
 * poisons a result and writing it is caught by comparing the whole buffer. */
typedef struct {
    int64_t rows, cols, ld;
    float *v;
} matrix_t;

static matrix_t matrix_new(int64_t rows, int64_t cols, int64_t pad)
{
    matrix_t x = {rows, cols, cols + pad, NULL};
    int64_t count = rows * x.ld > 0 ? rows * x.ld : 1;
    x.v = host_alloc(count, sizeof(float));
    for (int64_t i = 0; i < count; i++)
        x.v[i] = NAN;
    return x;
}

/* The storage of op(X) for an op(X) of op_rows x op_cols. */
static matrix_t operand_new(esmm_operation_t op, int64_t op_rows, int64_t op_cols, int64_t pad)
{
    return op == ESMM_OP_N ? matrix_new(op_rows, op_cols, pad) : matrix_new(op_cols, op_rows, pad);
}

static matrix_t matrix_copy(const matrix_t *x)
{
    matrix_t y = matrix_new(x->rows, x->cols, x->ld - x->cols);
    memcpy(y.v, x->v, (size_t)(x->rows * x->ld > 0 ? x->rows * x->ld : 1) * sizeof(float));
    return y;
}

static void matrix_free(matrix_t *x)
{
    free(x->v);
    x->v = NULL;
}

/* Element (i, j) of op(X). */
static float *op_at(const matrix_t *x, esmm_operation_t op, int64_t i, int64_t j)
{
    return op == ESMM_OP_N ? &x->v[i * x->ld + j] : &x->v[j * x->ld + i];
}

static void fill_random(matrix_t *x, uint64_t *rng)
{
    for (int64_t i = 0; i < x->rows; i++)
        for (int64_t j = 0; j < x->cols; j++)
            x->v[i * x->ld + j] = rng_unit(rng);
}

/* |x| elementwise, padding included (NaN stays NaN). */
static matrix_t matrix_abs(const matrix_t *x)
{
    matrix_t y = matrix_copy(x);
    for (int64_t i = 0; i < x->rows * x->ld; i++)
        y.v[i] = fabsf(y.v[i]);
    return y;
}

static esmm_gemm_problem_t problem(esmm_operation_t op_a, esmm_operation_t op_b, int64_t m,
                                   int64_t n, int64_t k, float alpha, const matrix_t *a,
                                   const matrix_t *b, float beta, matrix_t *c)
{
    esmm_gemm_problem_t p = {op_a, op_b, m, n, k, alpha, beta, a->v, a->ld, b->v, b->ld, c->v, c->ld};
    return p;
}

/* Same float, any written NaN matching any other (payloads may differ). */
static int same_float(float x, float y)
{
    return (written_nan(x) && written_nan(y)) || memcmp(&x, &y, sizeof x) == 0;
}

/* Index of the first element of the two buffers that differ, or -1. */
static int64_t first_difference(const matrix_t *x, const matrix_t *y)
{
    for (int64_t i = 0; i < x->rows * x->ld; i++)
        if (!same_float(x->v[i], y->v[i]))
            return i;
    return -1;
}

/* gamma_n = n u / (1 - n u), u = 2^-24: the classic bound on the relative
 * error of n chained float roundings. */
static double gamma_n(int64_t n)
{
    const double u = FLT_EPSILON / 2.0;
    return (double)n * u / (1.0 - (double)n * u);
}

/* sgemm vs the float64 reference. Recursive summation of k products gives
 * |acc - sum| <= gamma_k sum|a||b|; alpha*acc, beta*c and their sum add at most
 * two more roundings, so |C - exact| <= gamma_{k+2} (|alpha| sum|a||b| + |beta||c|).
 * The reference's own error (double) is bounded by (k+2) DBL_EPSILON of the
 * same quantity, which the same reference computes on |A|, |B|, |C|.
 * Returns the largest error / bound seen, to show how tight the bound is. */
static double check_accuracy(int64_t m, int64_t n, int64_t k, esmm_operation_t op_a,
                           esmm_operation_t op_b, float alpha, float beta, int64_t pad,
                           uint64_t seed)
{
    uint64_t rng = seed;
    matrix_t a = operand_new(op_a, m, k, pad), b = operand_new(op_b, k, n, pad);
    matrix_t c = matrix_new(m, n, pad);
    fill_random(&a, &rng);
    fill_random(&b, &rng);
    if (beta != 0.0f)
        fill_random(&c, &rng); /* else C stays all NaN: it must be ignored */
    matrix_t c_before = matrix_copy(&c);
    matrix_t a_abs = matrix_abs(&a), b_abs = matrix_abs(&b), c_abs = matrix_abs(&c);

    double *ref = host_alloc(m * n, sizeof(double));
    double *bound = host_alloc(m * n, sizeof(double));
    esmm_gemm_problem_t p = problem(op_a, op_b, m, n, k, alpha, &a, &b, beta, &c);
    esmm_gemm_problem_t p_abs =
        problem(op_a, op_b, m, n, k, fabsf(alpha), &a_abs, &b_abs, fabsf(beta), &c_abs);
    esmm_cpu_reference_gemm(&p, ref, n);
    esmm_cpu_reference_gemm(&p_abs, bound, n);

    esmm_status_t st = esmm_cpu_sgemm(&p);
    CHECK(st == ESMM_STATUS_SUCCESS, "sgemm %ldx%ldx%ld %s%s: status %d", (long)m, (long)n,
          (long)k, op_label(op_a), op_label(op_b), (int)st);

    const double relative = gamma_n(k + 2) + (double)(k + 2) * DBL_EPSILON;
    int64_t bad = 0, bad_i = 0, bad_j = 0;
    double worst_ratio = 0.0;
    for (int64_t i = 0; i < m; i++) {
        for (int64_t j = 0; j < n; j++) {
            double err = fabs((double)c.v[i * c.ld + j] - ref[i * n + j]);
            double tol = relative * bound[i * n + j];
            if (!(err <= tol)) {
                if (bad++ == 0) {
                    bad_i = i;
                    bad_j = j;
                }
            } else if (tol > 0.0 && err / tol > worst_ratio) {
                worst_ratio = err / tol;
            }
        }
    }
    CHECK(bad == 0,
          "sgemm %ldx%ldx%ld %s%s alpha=%g beta=%g pad=%ld: %ld elements off, first (%ld,%ld): "
          "got %.9g want %.17g bound %.3g",
          (long)m, (long)n, (long)k, op_label(op_a), op_label(op_b), alpha, beta, (long)pad,
          (long)bad, (long)bad_i, (long)bad_j, bad ? c.v[bad_i * c.ld + bad_j] : 0.0f,
          bad ? ref[bad_i * n + bad_j] : 0.0, bad ? relative * bound[bad_i * n + bad_j] : 0.0);

    int64_t padding_changed = 0;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = n; j < c.ld; j++)
            padding_changed += !same_float(c.v[i * c.ld + j], c_before.v[i * c.ld + j]);
    CHECK(padding_changed == 0, "sgemm %ldx%ldx%ld: %ld padding elements of C written", (long)m,
          (long)n, (long)k, (long)padding_changed);

    free(ref);
    free(bound);
    matrix_free(&a);
    matrix_free(&b);
    matrix_free(&c);
    matrix_free(&c_before);
    matrix_free(&a_abs);
    matrix_free(&b_abs);
    matrix_free(&c_abs);
    return worst_ratio;
}

static void test_accuracy(void)
{
    static const int64_t shapes[][3] = {
        {1, 1, 1},    {7, 13, 11},  {31, 37, 41}, {97, 89, 67}, {5, 3, 1},    {33, 65, 1},
        {1, 1, 300},  {1, 200, 1},  {200, 1, 1},  {129, 3, 70}, {3, 150, 40}, {64, 64, 64},
        {100, 31, 257}, {257, 130, 33}, {32, 32, 129}, {63, 95, 500}, {65, 97, 1031},
        {1, 2, 20001}, {37, 3, 8193}, /* k packed in several chunks, the last one partial */
    };
    static const float alpha_beta[][2] = {{1.0f, 0.0f}, {-0.5f, 2.0f}, {1.25f, 1.0f}};
    uint64_t seed = 1;
    double worst_ratio = 0.0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int ops = 0; ops < 4; ops++)
            for (size_t ab = 0; ab < sizeof alpha_beta / sizeof alpha_beta[0]; ab++)
                for (int64_t pad = 0; pad <= 3; pad += 3)
                    worst_ratio = fmax(worst_ratio,
                                       check_accuracy(shapes[s][0], shapes[s][1], shapes[s][2],
                                                      (esmm_operation_t)(ops & 1),
                                                      (esmm_operation_t)(ops >> 1),
                                                      alpha_beta[ab][0], alpha_beta[ab][1], pad,
                                                      seed++));
    printf("sgemm vs reference: largest error / bound %.3f\n", worst_ratio);
}

/* Small integers make every rounding exact: both sgemm and the reference must
 * give the hand-computed result, for all four ops. */
static void test_exact_small(void)
{
    static const float a_rows[2][3] = {{1, 2, 3}, {4, 5, 6}};
    static const float b_rows[3][2] = {{7, 8}, {9, 10}, {11, 12}};
    /* 2 * [[58, 64], [139, 154]] - 1 * [[1, 2], [3, 4]] */
    static const float expected[2][2] = {{115, 126}, {275, 304}};
    for (int ops = 0; ops < 4; ops++) {
        esmm_operation_t op_a = (esmm_operation_t)(ops & 1), op_b = (esmm_operation_t)(ops >> 1);
        matrix_t a = operand_new(op_a, 2, 3, 1), b = operand_new(op_b, 3, 2, 2);
        matrix_t c = matrix_new(2, 2, 1);
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 3; j++)
                *op_at(&a, op_a, i, j) = a_rows[i][j];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 2; j++)
                *op_at(&b, op_b, i, j) = b_rows[i][j];
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 2; j++)
                c.v[i * c.ld + j] = (float)(2 * i + j + 1);
        esmm_gemm_problem_t p = problem(op_a, op_b, 2, 2, 3, 2.0f, &a, &b, -1.0f, &c);
        double ref[4];
        esmm_cpu_reference_gemm(&p, ref, 2);
        CHECK(esmm_cpu_sgemm(&p) == ESMM_STATUS_SUCCESS, "exact %s%s: status", op_label(op_a),
              op_label(op_b));
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 2; j++) {
                CHECK(ref[i * 2 + j] == expected[i][j], "reference %s%s (%d,%d): %g want %g",
                      op_label(op_a), op_label(op_b), i, j, ref[i * 2 + j], expected[i][j]);
                CHECK(c.v[i * c.ld + j] == expected[i][j], "sgemm %s%s (%d,%d): %g want %g",
                      op_label(op_a), op_label(op_b), i, j, c.v[i * c.ld + j], expected[i][j]);
            }
        matrix_free(&a);
        matrix_free(&b);
        matrix_free(&c);
    }
}

/* BLAS corner cases: empty C, k == 0, alpha == 0 with NaN operands. */
static void test_degenerate(void)
{
    float one = 1.0f, nan_value = NAN;
    float c_values[6] = {1, 2, 3, 4, 5, 6};
    esmm_gemm_problem_t p = {ESMM_OP_N, ESMM_OP_N, 0, 3, 4, 1.0f, 0.0f,
                             &one, 4, &one, 3, NULL, 3};
    CHECK(esmm_cpu_sgemm(&p) == ESMM_STATUS_SUCCESS, "m == 0 is a no-op");
    p.m = 2;
    p.n = 0;
    CHECK(esmm_cpu_sgemm(&p) == ESMM_STATUS_SUCCESS, "n == 0 is a no-op");

    esmm_gemm_problem_t q = {ESMM_OP_N, ESMM_OP_N, 2, 3, 0, 1.0f, 2.0f,
                             &nan_value, 1, &nan_value, 3, c_values, 3};
    CHECK(esmm_cpu_sgemm(&q) == ESMM_STATUS_SUCCESS && c_values[0] == 2.0f &&
              c_values[5] == 12.0f,
          "k == 0 gives beta * C (got %g, %g)", c_values[0], c_values[5]);
    q.k = 1;
    q.alpha = 0.0f;
    q.beta = -1.0f;
    CHECK(esmm_cpu_sgemm(&q) == ESMM_STATUS_SUCCESS && c_values[0] == -2.0f &&
              c_values[5] == -12.0f,
          "alpha == 0 reads neither A nor B (got %g, %g)", c_values[0], c_values[5]);
    for (int i = 0; i < 6; i++)
        c_values[i] = NAN;
    q.beta = 0.0f;
    CHECK(esmm_cpu_sgemm(&q) == ESMM_STATUS_SUCCESS && c_values[0] == 0.0f &&
              c_values[5] == 0.0f,
          "alpha == 0, beta == 0 ignores a NaN C (got %g, %g)", c_values[0], c_values[5]);
}

/* A size whose packing buffers cannot exist: a status, not a crash. Nothing is
 * read before the buffers are allocated, so one float stands for A and B. */
static void test_alloc_failure(void)
{
    float x = 1.0f, c = 0.0f;
    const int64_t huge_m = INT64_MAX / 4, k = 8192;
    esmm_gemm_problem_t p = {ESMM_OP_N, ESMM_OP_N, huge_m, 1, k, 1.0f, 0.0f,
                             &x, k, &x, 1, &c, 1};
    esmm_status_t st = esmm_cpu_sgemm(&p);
    CHECK(st == ESMM_STATUS_ALLOC_FAILED, "m = %lld: status %d, want ALLOC_FAILED",
          (long long)huge_m, (int)st);
}

/* ---- skip-GEMM ---- */

typedef enum { ZEROS_STRIPS, ZEROS_ELEMENTS, ZEROS_ALL_A, ZEROS_ALL_B, ZEROS_SINGLE } zero_style_t;

static float zero_value(uint64_t *rng)
{
    return rng_chance(rng, 0.5) ? -0.0f : 0.0f;
}

/* Zeroes column kk of op(A) over the rows of strip s. */
static void zero_a_strip_column(matrix_t *a, esmm_operation_t op, int64_t m, int64_t s,
                                int64_t kk, uint64_t *rng)
{
    for (int64_t i = s * 32; i < m && i < s * 32 + 32; i++)
        *op_at(a, op, i, kk) = zero_value(rng);
}

/* Zeroes row kk of op(B) over the columns [j0, j1). */
static void zero_b_row(matrix_t *b, esmm_operation_t op, int64_t kk, int64_t j0, int64_t j1,
                       uint64_t *rng)
{
    for (int64_t j = j0; j < j1; j++)
        *op_at(b, op, kk, j) = zero_value(rng);
}

/* Zero structure the masks can exploit, in op(A) (m x k) and op(B) (k x n). */
static void apply_zeros(zero_style_t style, matrix_t *a, esmm_operation_t op_a, matrix_t *b,
                        esmm_operation_t op_b, int64_t m, int64_t n, int64_t k, uint64_t *rng)
{
    switch (style) {
    case ZEROS_STRIPS:
        for (int64_t s = 0; s * 32 < m; s++)
            for (int64_t kk = 0; kk < k; kk++)
                if (rng_chance(rng, 0.6))
                    zero_a_strip_column(a, op_a, m, s, kk, rng);
        for (int64_t kk = 0; kk < k; kk++) {
            if (rng_chance(rng, 0.2)) {
                zero_b_row(b, op_b, kk, 0, n, rng);
                continue;
            }
            for (int64_t t = 0; t * 32 < n; t++)
                if (rng_chance(rng, 0.6))
                    zero_b_row(b, op_b, kk, t * 32, t * 32 + 32 < n ? t * 32 + 32 : n, rng);
        }
        break;
    case ZEROS_ELEMENTS:
        for (int64_t i = 0; i < m; i++)
            for (int64_t kk = 0; kk < k; kk++)
                if (rng_chance(rng, 0.8))
                    *op_at(a, op_a, i, kk) = zero_value(rng);
        for (int64_t kk = 0; kk < k; kk++)
            for (int64_t j = 0; j < n; j++)
                if (rng_chance(rng, 0.8))
                    *op_at(b, op_b, kk, j) = zero_value(rng);
        break;
    case ZEROS_ALL_A:
        for (int64_t s = 0; s * 32 < m; s++)
            for (int64_t kk = 0; kk < k; kk++)
                zero_a_strip_column(a, op_a, m, s, kk, rng);
        break;
    case ZEROS_ALL_B:
        for (int64_t kk = 0; kk < k; kk++)
            zero_b_row(b, op_b, kk, 0, n, rng);
        break;
    case ZEROS_SINGLE: {
        float keep_a = *op_at(a, op_a, m - 1, k / 2), keep_b = *op_at(b, op_b, k / 2, 0);
        apply_zeros(ZEROS_ALL_A, a, op_a, b, op_b, m, n, k, rng);
        apply_zeros(ZEROS_ALL_B, a, op_a, b, op_b, m, n, k, rng);
        *op_at(a, op_a, m - 1, k / 2) = keep_a;
        *op_at(b, op_b, k / 2, 0) = keep_b;
        break;
    }
    }
}

/* NaN/Inf where the other operand is zero: the masks' zero bits alone would
 * skip them, and dense gives NaN there (0 * Inf, 0 * NaN). */
static void plant_nonfinite(matrix_t *a, esmm_operation_t op_a, matrix_t *b,
                            esmm_operation_t op_b, int64_t m, int64_t n, int64_t k, uint64_t *rng)
{
    static const float specials[] = {NAN, INFINITY, -INFINITY};
    for (int round = 0; round < 3; round++) {
        float special = specials[round];
        int64_t kk = rng_below(rng, k);
        zero_a_strip_column(a, op_a, m, rng_below(rng, (m + 31) / 32), kk, rng);
        *op_at(b, op_b, kk, rng_below(rng, n)) = special;

        kk = rng_below(rng, k);
        zero_b_row(b, op_b, kk, 0, n, rng);
        *op_at(a, op_a, rng_below(rng, m), kk) = special;
    }
}

static int64_t count_nan(const matrix_t *c, int64_t m, int64_t n)
{
    int64_t count = 0;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++)
            count += isnan(c->v[i * c->ld + j]) != 0;
    return count;
}

static esmm_strip_masks_t extract_pattern(int is_a, esmm_operation_t op, const matrix_t *x, int64_t rows,
                                      int64_t k)
{
    esmm_strip_masks_t pattern;
    if (esmm_strip_masks_alloc(&pattern, rows, k) != ESMM_STATUS_SUCCESS) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    if (is_a)
        esmm_cpu_extract_a(op, x->v, x->ld, rows, k, &pattern);
    else
        esmm_cpu_extract_b(op, x->v, x->ld, k, rows, &pattern);
    return pattern;
}

static const char *const zero_style_names[] = {"strips", "elements", "all-zero A", "all-zero B",
                                               "single nonzero"};

/* Dense, then each skip mode on a copy of the same C: equal bit for bit over
 * the whole buffer, padding included. */
static void check_skip_case(int64_t m, int64_t n, int64_t k, esmm_operation_t op_a,
                       esmm_operation_t op_b, int64_t pad, zero_style_t style, int nonfinite,
                       uint64_t seed)
{
    uint64_t rng = seed;
    matrix_t a = operand_new(op_a, m, k, pad), b = operand_new(op_b, k, n, pad);
    matrix_t c = matrix_new(m, n, pad);
    fill_random(&a, &rng);
    fill_random(&b, &rng);
    fill_random(&c, &rng);
    apply_zeros(style, &a, op_a, &b, op_b, m, n, k, &rng);
    if (nonfinite)
        plant_nonfinite(&a, op_a, &b, op_b, m, n, k, &rng);
    const float alpha = 1.5f, beta = seed % 2 ? 0.0f : 0.75f;

    matrix_t dense = matrix_copy(&c);
    esmm_gemm_problem_t p = problem(op_a, op_b, m, n, k, alpha, &a, &b, beta, &dense);
    CHECK(esmm_cpu_sgemm(&p) == ESMM_STATUS_SUCCESS, "dense status");
    if (nonfinite)
        CHECK(count_nan(&dense, m, n) > 0, "planted NaN/Inf must reach the dense result");

    esmm_strip_masks_t pa = extract_pattern(1, op_a, &a, m, k);
    esmm_strip_masks_t pb = extract_pattern(0, op_b, &b, n, k);
    static const esmm_skip_mode_t modes[] = {ESMM_SKIP_A, ESMM_SKIP_B, ESMM_SKIP_JOINT};
    static const char *const mode_names[] = {"A", "B", "joint"};
    for (int i = 0; i < 3; i++) {
        esmm_skip_mode_t mode = modes[i];
        matrix_t skip = matrix_copy(&c);
        p.c = skip.v;
        /* As the API does: only the patterns the mode uses. */
        esmm_status_t st = esmm_cpu_skip_sgemm(
            &p, mode, mode == ESMM_SKIP_B ? NULL : &pa, mode == ESMM_SKIP_A ? NULL : &pb);
        int64_t diff = first_difference(&dense, &skip);
        CHECK(st == ESMM_STATUS_SUCCESS && diff < 0,
              "skip-%s %ldx%ldx%ld %s%s pad=%ld %s%s seed=%llu: status %d, first difference at "
              "%ld (dense %.9g, skip %.9g)",
              mode_names[i], (long)m, (long)n, (long)k, op_label(op_a), op_label(op_b), (long)pad,
              zero_style_names[style], nonfinite ? " +NaN/Inf" : "", (unsigned long long)seed,
              (int)st, (long)diff, diff < 0 ? 0.0f : dense.v[diff], diff < 0 ? 0.0f : skip.v[diff]);
        matrix_free(&skip);
    }
    esmm_strip_masks_free(&pa);
    esmm_strip_masks_free(&pb);
    matrix_free(&a);
    matrix_free(&b);
    matrix_free(&c);
    matrix_free(&dense);
}

static void test_skip_matches_dense(void)
{
    static const int64_t shapes[][3] = {
        {1, 1, 1},   {7, 13, 11},  {31, 37, 41}, {97, 89, 67},  {64, 64, 300},
        {33, 65, 130}, {100, 3, 257}, {5, 200, 17}, {1, 40, 9},    {40, 70, 700},
        {5, 33, 16390}, /* masks read at each chunk's offset */
    };
    uint64_t seed = 1000;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int ops = 0; ops < 4; ops++)
            for (int64_t pad = 0; pad <= 3; pad += 3)
                for (int style = ZEROS_STRIPS; style <= ZEROS_SINGLE; style++)
                    for (int nonfinite = 0; nonfinite <= 1; nonfinite++)
                        for (int rep = 0; rep < (style <= ZEROS_ELEMENTS ? 2 : 1); rep++)
                            check_skip_case(shapes[s][0], shapes[s][1], shapes[s][2],
                                       (esmm_operation_t)(ops & 1), (esmm_operation_t)(ops >> 1),
                                       pad, (zero_style_t)style, nonfinite, seed++);
    /* k past one packed chunk: the masks are read at each chunk's offset. */
    for (int ops = 0; ops < 4; ops++)
        for (int style = ZEROS_STRIPS; style <= ZEROS_SINGLE; style += ZEROS_SINGLE)
            for (int nonfinite = 0; nonfinite <= 1; nonfinite++)
                check_skip_case(5, 20, 8200, (esmm_operation_t)(ops & 1),
                                (esmm_operation_t)(ops >> 1), 1, (zero_style_t)style, nonfinite,
                                seed++);
}

/* The masks are really used: a pattern claiming op(A) all zero (B finite)
 * leaves C = alpha * 0 + beta * C even though A is not zero. */
static void test_skip_uses_masks(void)
{
    const int64_t m = 45, n = 38, k = 29;
    uint64_t rng = 77;
    matrix_t a = operand_new(ESMM_OP_N, m, k, 0), b = operand_new(ESMM_OP_N, k, n, 0);
    matrix_t c = matrix_new(m, n, 0);
    fill_random(&a, &rng);
    fill_random(&b, &rng);
    fill_random(&c, &rng);
    matrix_t c_before = matrix_copy(&c);
    esmm_strip_masks_t pa;
    CHECK(esmm_strip_masks_alloc(&pa, m, k) == ESMM_STATUS_SUCCESS, "pattern alloc");
    esmm_gemm_problem_t p = problem(ESMM_OP_N, ESMM_OP_N, m, n, k, 2.0f, &a, &b, 0.5f, &c);
    CHECK(esmm_cpu_skip_sgemm(&p, ESMM_SKIP_A, &pa, NULL) == ESMM_STATUS_SUCCESS, "status");
    int64_t wrong = 0;
    for (int64_t i = 0; i < m * n; i++)
        wrong += !same_float(c.v[i], 2.0f * 0.0f + 0.5f * c_before.v[i]);
    CHECK(wrong == 0, "all-zero A mask: %ld elements computed anyway", (long)wrong);

    /* A pattern of the wrong size, or a missing one, is refused. */
    esmm_strip_masks_t small;
    CHECK(esmm_strip_masks_alloc(&small, m - 32, k) == ESMM_STATUS_SUCCESS, "pattern alloc");
    CHECK(esmm_cpu_skip_sgemm(&p, ESMM_SKIP_A, &small, NULL) == ESMM_STATUS_INVALID_VALUE,
          "mismatched pattern refused");
    CHECK(esmm_cpu_skip_sgemm(&p, ESMM_SKIP_JOINT, &pa, NULL) == ESMM_STATUS_INVALID_VALUE,
          "missing B pattern refused");
    CHECK(esmm_cpu_skip_sgemm(&p, (esmm_skip_mode_t)7, &pa, &pa) == ESMM_STATUS_INVALID_VALUE,
          "unknown mode refused");
    esmm_strip_masks_free(&small);
    esmm_strip_masks_free(&pa);
    matrix_free(&a);
    matrix_free(&b);
    matrix_free(&c);
    matrix_free(&c_before);
}

int main(void)
{
    test_exact_small();
    test_degenerate();
    test_alloc_failure();
    test_accuracy();
    test_skip_matches_dense();
    test_skip_uses_masks();
    return check_finish();
}
