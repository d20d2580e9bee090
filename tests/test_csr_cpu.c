/*
 * CSR products on the CPU backend, through the public API: every case against
 * the float64 reference under a rounding bound and, bit for bit, against the
 * float product written out in the documented order (C's padding included,
 * which must stay untouched). Then the argument errors, the validator against
 * a table of broken and valid CSR inputs, and the stable transpose.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cpu/cpu_backend.h"
#include "csr_support.h"
#include "esmm.h"
#include "test_support.h"

static esmm_handle_t handle;

/* The entry point a case goes through. */
typedef enum {
    CALL_MM,      /* esmm_scsrmm */
    CALL_KERNEL,  /* esmm_scsrmm_kernel(..., "cpu", ...) */
    CALL_PREPARED, /* esmm_csr_prepare(op), then esmm_scsrmm */
    CALL_MV       /* esmm_scsrmv: n == 1, no padding */
} call_t;

static const char *call_label(call_t call)
{
    static const char *const labels[] = {"scsrmm", "scsrmm_kernel(cpu)", "prepare+scsrmm",
                                         "scsrmv"};
    return labels[call];
}

typedef struct {
    const char *label;
    csr_spec_t w;
    int64_t n;
    double b_density;
    int64_t ldb_pad, ldc_pad;
    float alpha, beta;
    int nonfinite_weights; /* every 5th per-entry weight NaN or Inf, alternately */
} csr_case_t;

/* One product through the API on the descriptor d. */
static esmm_status_t call_product(call_t call, esmm_csr_t d, esmm_operation_t op, int64_t n,
                                  float alpha, const float *b, int64_t ldb, float beta, float *c,
                                  int64_t ldc)
{
    switch (call) {
    case CALL_KERNEL:
        return esmm_scsrmm_kernel(handle, "cpu", op, d, n, &alpha, b, ldb, &beta, c, ldc);
    case CALL_PREPARED: {
        const esmm_status_t st = esmm_csr_prepare(handle, d, op);
        if (st != ESMM_STATUS_SUCCESS)
            return st;
        return esmm_scsrmm(handle, op, d, n, &alpha, b, ldb, &beta, c, ldc);
    }
    case CALL_MV:
        return esmm_scsrmv(handle, op, d, &alpha, b, &beta, c);
    case CALL_MM:
        break;
    }
    return esmm_scsrmm(handle, op, d, n, &alpha, b, ldb, &beta, c, ldc);
}

static esmm_csr_t csr_descriptor(const host_csr_t *w)
{
    esmm_csr_t d = NULL;
    const esmm_status_t st = esmm_csr_create(handle, w->rows, w->cols, w->nnz, w->row_ptr,
                                             w->col_idx, w->values, w->value, &d);
    CHECK(st == ESMM_STATUS_SUCCESS && d != NULL, "esmm_csr_create %ldx%ld nnz %ld: status %d",
          (long)w->rows, (long)w->cols, (long)w->nnz, (int)st);
    return d;
}

/* C's starting contents, m x ldc: random where beta reads it, the poison NaN
 * where beta == 0 must ignore it, and poison in the padding always. */
static float *c_generate(int64_t m, int64_t n, int64_t ldc, float beta, uint64_t seed)
{
    uint64_t rng = seed;
    float *c = host_alloc(m * ldc, sizeof *c);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < ldc; j++)
            c[i * ldc + j] = j < n && beta != 0.0f ? nonzero_value(&rng) : poison_value();
    return c;
}

static float *copy_floats(const float *x, int64_t count)
{
    float *y = host_alloc(count, sizeof *y);
    memcpy(y, x, (size_t)max_i64(count, 0) * sizeof *y);
    return y;
}

/* Index of the first element of two m x ldc buffers that differ, or -1:
 * inside the m x n product the same bits or both NaN (a NaN's sign and
 * payload depend on which operand of a commutative addition the compiler put
 * first), in the padding the very same bits. */
static int64_t first_difference(const float *x, const float *y, int64_t m, int64_t n,
                                int64_t ldc)
{
    for (int64_t i = 0; i < m * ldc; i++) {
        const int both_nan = i % ldc < n && written_nan(x[i]) && written_nan(y[i]);
        if (!both_nan && float_bits(x[i]) != float_bits(y[i]))
            return i;
    }
    return -1;
}

/* The case's product through `call`: bit for bit against csr_float_product
 * (padding of C untouched) and within the bound of the float64 reference. */
static void run_case(const csr_case_t *tc, esmm_operation_t op, call_t call)
{
    host_csr_t w = csr_generate(&tc->w);
    for (int64_t e = 0; tc->nonfinite_weights && w.values != NULL && e < w.nnz; e += 5)
        w.values[e] = (e / 5) % 2 ? INFINITY : NAN;
    const int64_t m = csr_op_rows(&w, op), k = csr_op_cols(&w, op), n = tc->n;
    const int64_t ldb = n + tc->ldb_pad, ldc = n + tc->ldc_pad;
    float *b = dense_generate(k, n, ldb, tc->b_density, tc->w.seed ^ 0xB0B0u);
    float *c_in = c_generate(m, n, ldc, tc->beta, tc->w.seed ^ 0xC0C0u);
    float *c = copy_floats(c_in, m * ldc);
    float *expected = copy_floats(c_in, m * ldc);
    csr_float_product(&w, op, n, tc->alpha, b, ldb, tc->beta, expected, ldc);

    esmm_csr_t d = csr_descriptor(&w);
    const esmm_status_t st = call_product(call, d, op, n, tc->alpha, b, ldb, tc->beta, c, ldc);
    char label[200];
    snprintf(label, sizeof label, "%s, %s %s (%ldx%ld nnz %ld, n %ld, alpha %g beta %g)",
             tc->label, call_label(call), op_label(op), (long)w.rows, (long)w.cols, (long)w.nnz,
             (long)n, (double)tc->alpha, (double)tc->beta);
    CHECK(st == ESMM_STATUS_SUCCESS, "%s: status %d", label, (int)st);

    const int64_t diff = first_difference(c, expected, m, n, ldc);
    CHECK(diff < 0, "%s: bits differ from the in-order float product at (%ld,%ld)%s: got %a want %a",
          label, diff < 0 ? 0L : (long)(diff / ldc), diff < 0 ? 0L : (long)(diff % ldc),
          diff >= 0 && diff % ldc >= n ? " (padding)" : "", diff < 0 ? 0.0 : (double)c[diff],
          diff < 0 ? 0.0 : (double)expected[diff]);
    const csr_mismatch_t off =
        csr_reference_compare(&w, op, n, tc->alpha, b, ldb, tc->beta, c_in, ldc, c);
    CHECK(off.bad == 0,
          "%s: %ld elements off the float64 reference, first (%ld,%ld): got %.9g want %.17g "
          "tolerance %.3g",
          label, (long)off.bad, (long)(off.bad ? off.first / n : 0),
          (long)(off.bad ? off.first % n : 0), (double)off.got, off.want, off.tolerance);

    esmm_csr_destroy(d);
    csr_free(&w);
    free(b);
    free(c_in);
    free(c);
    free(expected);
}

static void test_products(void)
{
    const int64_t nine[] = {9, 0, 3, 0, 12, 1, 0, 7, 2};
    const csr_case_t cases[] = {
        {"primes", {.rows = 97, .cols = 89, .nnz_per_row = 7}, 13, 0.3, 0, 0, 1.0f, 0.0f, 0},
        {"primes, alpha/beta, padded", {.rows = 101, .cols = 103, .nnz_per_row = 11}, 17, 0.5,
         3, 5, -0.5f, 2.0f, 0},
        {"empty rows", {.rows = 40, .cols = 50, .nnz_per_row = 6, .empty_stride = 3}, 9, 0.4, 0,
         0, 1.25f, 1.0f, 0},
        {"explicit row counts", {.rows = 9, .cols = 13, .row_counts = nine}, 5, 0.7, 1, 0, 1.0f,
         -1.0f, 0},
        {"a row with every column", {.rows = 33, .cols = 45, .nnz_per_row = 4,
                                     .flags = CSR_GEN_FULL_ROW}, 7, 0.6, 0, 0, 1.0f, 0.0f, 0},
        {"full row, empty rows, unsorted", {.rows = 31, .cols = 29, .nnz_per_row = 5,
                                            .empty_stride = 2,
                                            .flags = CSR_GEN_FULL_ROW | CSR_GEN_UNSORTED},
         11, 0.5, 2, 2, 0.75f, 0.5f, 0},
        {"nnz = 0", {.rows = 20, .cols = 30}, 5, 0.5, 0, 0, 1.0f, 0.5f, 0},
        {"nnz = 0, beta = 0", {.rows = 20, .cols = 30}, 5, 0.5, 0, 1, 1.0f, 0.0f, 0},
        {"one row", {.rows = 1, .cols = 50, .nnz_per_row = 20}, 6, 0.5, 0, 0, 1.0f, 0.0f, 0},
        {"one column", {.rows = 50, .cols = 1, .nnz_per_row = 1, .empty_stride = 4}, 6, 0.5, 0,
         0, 1.0f, 1.0f, 0},
        {"n = 1", {.rows = 60, .cols = 70, .nnz_per_row = 9}, 1, 0.5, 0, 0, 1.0f, 0.0f, 0},
        {"n = 1, beta", {.rows = 61, .cols = 59, .nnz_per_row = 9, .empty_stride = 5}, 1, 0.3,
         0, 0, -2.0f, 0.25f, 0},
        {"1 x 1", {.rows = 1, .cols = 1, .nnz_per_row = 1}, 1, 1.0, 0, 0, 1.0f, 0.0f, 0},
        {"no columns", {.rows = 5, .cols = 0, .nnz_per_row = 3}, 3, 0.5, 0, 0, 1.0f, 2.0f, 0},
        {"no rows", {.rows = 0, .cols = 5}, 3, 0.5, 0, 0, 1.0f, 2.0f, 0},
        {"unsorted columns", {.rows = 64, .cols = 80, .nnz_per_row = 12,
                              .flags = CSR_GEN_UNSORTED}, 16, 0.5, 0, 0, 1.0f, 0.0f, 0},
        {"duplicates", {.rows = 50, .cols = 20, .nnz_per_row = 15, .flags = CSR_GEN_DUPLICATES},
         8, 0.5, 0, 0, 1.0f, 1.0f, 0},
        {"duplicates, unsorted, more entries than columns",
         {.rows = 23, .cols = 7, .nnz_per_row = 19,
          .flags = CSR_GEN_DUPLICATES | CSR_GEN_UNSORTED}, 5, 0.6, 1, 1, 1.5f, 0.0f, 0},
        {"B without zeros", {.rows = 47, .cols = 53, .nnz_per_row = 10}, 19, 1.0, 0, 0, 1.0f,
         0.0f, 0},
        {"B all zeros", {.rows = 47, .cols = 53, .nnz_per_row = 10}, 19, 0.0, 0, 0, 1.0f, 3.0f,
         0},
        {"alpha = 0", {.rows = 37, .cols = 41, .nnz_per_row = 8}, 7, 0.5, 0, 2, 0.0f, 0.75f, 0},
        {"alpha = 0, beta = 0", {.rows = 37, .cols = 41, .nnz_per_row = 8}, 7, 0.5, 0, 2, 0.0f,
         0.0f, 0},
        {"padded ldb and ldc", {.rows = 43, .cols = 38, .nnz_per_row = 6}, 10, 0.5, 4, 7, 1.0f,
         -1.0f, 0},
        {"homogeneous", {.rows = 70, .cols = 60, .nnz_per_row = 9,
                         .flags = CSR_GEN_HOMOGENEOUS, .value = 0.75f}, 12, 0.4, 0, 0, 1.0f,
         0.0f, 0},
        {"homogeneous, unsorted duplicates, empty rows",
         {.rows = 45, .cols = 25, .nnz_per_row = 9, .empty_stride = 4,
          .flags = CSR_GEN_HOMOGENEOUS | CSR_GEN_UNSORTED | CSR_GEN_DUPLICATES,
          .value = -1.5f}, 6, 0.5, 1, 3, 2.0f, 0.5f, 0},
        {"NaN/Inf weights, B all zeros", {.rows = 30, .cols = 40, .nnz_per_row = 6}, 5, 0.0, 0,
         0, 1.0f, 0.0f, 1},
        {"NaN/Inf weights, sparse B", {.rows = 30, .cols = 40, .nnz_per_row = 6,
                                       .empty_stride = 7}, 5, 0.1, 0, 1, 1.0f, 1.0f, 1},
        {"homogeneous NaN", {.rows = 30, .cols = 40, .nnz_per_row = 3, .empty_stride = 3,
                             .flags = CSR_GEN_HOMOGENEOUS, .value = NAN}, 4, 0.2, 0, 0, 1.0f,
         0.5f, 0},
        {"homogeneous Inf, B all zeros", {.rows = 30, .cols = 40, .nnz_per_row = 3,
                                          .empty_stride = 3, .flags = CSR_GEN_HOMOGENEOUS,
                                          .value = INFINITY}, 4, 0.0, 0, 0, 1.0f, 0.0f, 0},
        {"n wider than one column block", {.rows = 30, .cols = 40, .nnz_per_row = 10}, 300,
         0.5, 1, 3, 1.0f, 1.0f, 0},
        {"parallel rows", {.rows = 313, .cols = 509, .nnz_per_row = 60, .empty_stride = 11,
                           .flags = CSR_GEN_FULL_ROW}, 67, 0.1, 0, 0, 1.0f, 0.0f, 0},
        {"parallel matrix-vector", {.rows = 3001, .cols = 2999, .nnz_per_row = 400,
                                    .flags = CSR_GEN_UNSORTED}, 1, 0.1, 0, 0, 1.0f, -0.5f, 0},
    };
    static const esmm_operation_t ops[] = {ESMM_OP_N, ESMM_OP_T};
    static const call_t calls[] = {CALL_MM, CALL_KERNEL, CALL_PREPARED, CALL_MV};
    for (size_t ci = 0; ci < COUNT_OF(cases); ci++) {
        csr_case_t tc = cases[ci];
        tc.w.seed = 1000 + ci;
        for (size_t oi = 0; oi < COUNT_OF(ops); oi++)
            for (size_t li = 0; li < COUNT_OF(calls); li++)
                if (calls[li] != CALL_MV || (tc.n == 1 && tc.ldb_pad == 0 && tc.ldc_pad == 0))
                    run_case(&tc, ops[oi], calls[li]);
    }
}

/* esmm_csr_prepare(T) must not change the bits of T products: the same data
 * through one descriptor unprepared and one prepared (twice, as after the
 * arrays changed), with the full-size workload's shape in small. */
static void test_prepare_same_bits(void)
{
    const csr_spec_t spec = {.rows = 400, .cols = 300, .nnz_per_row = 25, .empty_stride = 9,
                             .flags = CSR_GEN_UNSORTED | CSR_GEN_DUPLICATES, .seed = 77};
    host_csr_t w = csr_generate(&spec);
    const int64_t n = 32, m = w.cols, k = w.rows;
    float *b = dense_generate(k, n, n, 0.1, 78);
    float *c_plain = c_generate(m, n, n, 1.0f, 79);
    float *c_prepared = copy_floats(c_plain, m * n);
    esmm_csr_t plain = csr_descriptor(&w), prepared = csr_descriptor(&w);
    const float alpha = 1.5f, beta = 1.0f;
    esmm_status_t st = esmm_scsrmm(handle, ESMM_OP_T, plain, n, &alpha, b, n, &beta, c_plain, n);
    CHECK(st == ESMM_STATUS_SUCCESS, "unprepared T: status %d", (int)st);
    st = esmm_csr_prepare(handle, prepared, ESMM_OP_T);
    CHECK(st == ESMM_STATUS_SUCCESS, "prepare T: status %d", (int)st);
    st = esmm_csr_prepare(handle, prepared, ESMM_OP_T);
    CHECK(st == ESMM_STATUS_SUCCESS, "prepare T again: status %d", (int)st);
    st = esmm_csr_prepare(handle, prepared, ESMM_OP_N);
    CHECK(st == ESMM_STATUS_SUCCESS, "prepare N: status %d", (int)st);
    st = esmm_scsrmm(handle, ESMM_OP_T, prepared, n, &alpha, b, n, &beta, c_prepared, n);
    CHECK(st == ESMM_STATUS_SUCCESS, "prepared T: status %d", (int)st);
    CHECK(first_difference(c_plain, c_prepared, m, n, n) < 0,
          "prepared T differs from unprepared T");
    esmm_csr_destroy(plain);
    esmm_csr_destroy(prepared);
    csr_free(&w);
    free(b);
    free(c_plain);
    free(c_prepared);
}

/* The matrix-vector products of the reference size (square, so x
 * and y have one length for N and T) give the in-order bits; the second of
 * two calls is timed for the log (the first starts the thread team), not
 * checked: speed is the benchmark's to judge. */
static void test_matvec_size(void)
{
    const csr_spec_t spec = {.rows = 10000, .cols = 10000, .nnz_per_row = 200, .seed = 4};
    host_csr_t w = csr_generate(&spec);
    float *x = dense_generate(w.cols, 1, 1, 0.1, 5);
    float *y = host_alloc(w.rows, sizeof *y);
    float *expected = host_alloc(w.rows, sizeof *expected);
    esmm_csr_t d = csr_descriptor(&w);
    const float alpha = 1.0f, beta = 0.0f;
    static const esmm_operation_t ops[] = {ESMM_OP_N, ESMM_OP_T};
    for (size_t oi = 0; oi < COUNT_OF(ops); oi++) {
        csr_float_product(&w, ops[oi], 1, alpha, x, 1, beta, expected, 1);
        /* Both calls checked, y poisoned before each. */
        for (int call = 0; call < 2; call++) {
            for (int64_t i = 0; i < w.rows; i++)
                y[i] = poison_value();
            const double start = now_seconds();
            const esmm_status_t st = esmm_scsrmv(handle, ops[oi], d, &alpha, x, &beta, y);
            const double ms = 1e3 * (now_seconds() - start);
            if (call == 1)
                printf("scsrmv %s 10000x10000, 200 per row: %.2f ms\n", op_label(ops[oi]), ms);
            CHECK(st == ESMM_STATUS_SUCCESS, "scsrmv %s, call %d: status %d", op_label(ops[oi]),
                  call, (int)st);
            CHECK(first_difference(y, expected, w.rows, 1, 1) < 0,
                  "scsrmv %s 10000x10000, call %d: bits differ from the in-order float product",
                  op_label(ops[oi]), call);
        }
    }
    esmm_csr_destroy(d);
    csr_free(&w);
    free(x);
    free(y);
    free(expected);
}

/* Every misuse returns its status and leaves C as it was; the handle still
 * works afterwards. */
static void test_argument_errors(void)
{
    const int32_t row_ptr[] = {0, 1, 2}, col_idx[] = {0, 1};
    const float values[] = {1.0f, 2.0f}, b[] = {1.0f, 2.0f, 3.0f, 4.0f};
    const float one = 1.0f, zero = 0.0f;
    float c[4] = {5.0f, 6.0f, 7.0f, 8.0f};
    const esmm_operation_t bad_op = (esmm_operation_t)2;
    esmm_csr_t d = NULL;
    CHECK(esmm_csr_create(handle, 2, 2, 2, row_ptr, col_idx, values, 0.0f, &d) ==
              ESMM_STATUS_SUCCESS, "esmm_csr_create 2x2");
    const esmm_status_t bad = ESMM_STATUS_INVALID_VALUE, none = ESMM_STATUS_NOT_INITIALIZED;
    const struct {
        const char *call;
        esmm_status_t got, want;
    } table[] = {
        {"scsrmm NULL handle", esmm_scsrmm(NULL, ESMM_OP_N, d, 2, &one, b, 2, &zero, c, 2), none},
        {"scsrmm_kernel NULL handle",
         esmm_scsrmm_kernel(NULL, "cpu", ESMM_OP_N, d, 2, &one, b, 2, &zero, c, 2), none},
        {"scsrmv NULL handle", esmm_scsrmv(NULL, ESMM_OP_N, d, &one, b, &zero, c), none},
        {"csr_prepare NULL handle", esmm_csr_prepare(NULL, d, ESMM_OP_T), none},
        {"csr_validate NULL handle", esmm_csr_validate(NULL, 2, 2, 2, row_ptr, col_idx), none},
        {"scsrmm NULL alpha", esmm_scsrmm(handle, ESMM_OP_N, d, 2, NULL, b, 2, &zero, c, 2), bad},
        {"scsrmm NULL beta", esmm_scsrmm(handle, ESMM_OP_N, d, 2, &one, b, 2, NULL, c, 2), bad},
        {"scsrmv NULL alpha", esmm_scsrmv(handle, ESMM_OP_N, d, NULL, b, &zero, c), bad},
        {"scsrmv NULL beta", esmm_scsrmv(handle, ESMM_OP_T, d, &one, b, NULL, c), bad},
        {"scsrmm bad op", esmm_scsrmm(handle, bad_op, d, 2, &one, b, 2, &zero, c, 2), bad},
        {"scsrmv bad op", esmm_scsrmv(handle, bad_op, d, &one, b, &zero, c), bad},
        {"csr_prepare bad op", esmm_csr_prepare(handle, d, bad_op), bad},
        {"scsrmm n < 0", esmm_scsrmm(handle, ESMM_OP_N, d, -1, &one, b, 2, &zero, c, 2), bad},
        {"scsrmm ldb < n", esmm_scsrmm(handle, ESMM_OP_N, d, 2, &one, b, 1, &zero, c, 2), bad},
        {"scsrmm ldc < n", esmm_scsrmm(handle, ESMM_OP_T, d, 2, &one, b, 2, &zero, c, 1), bad},
        {"scsrmm ldb = 0, n = 0", esmm_scsrmm(handle, ESMM_OP_N, d, 0, &one, b, 0, &zero, c, 1),
         bad},
        {"scsrmm NULL C", esmm_scsrmm(handle, ESMM_OP_N, d, 2, &one, b, 2, &zero, NULL, 2), bad},
        {"scsrmv NULL y", esmm_scsrmv(handle, ESMM_OP_N, d, &one, b, &zero, NULL), bad},
        {"scsrmm NULL B", esmm_scsrmm(handle, ESMM_OP_N, d, 2, &one, NULL, 2, &zero, c, 2), bad},
        {"scsrmm NULL descriptor",
         esmm_scsrmm(handle, ESMM_OP_N, NULL, 2, &one, b, 2, &zero, c, 2), bad},
        {"scsrmv NULL descriptor", esmm_scsrmv(handle, ESMM_OP_N, NULL, &one, b, &zero, c), bad},
        {"csr_prepare NULL descriptor", esmm_csr_prepare(handle, NULL, ESMM_OP_T), bad},
        {"scsrmm_kernel unknown name",
         esmm_scsrmm_kernel(handle, "csr-dense-b", ESMM_OP_N, d, 2, &one, b, 2, &zero, c, 2),
         bad},
        {"scsrmm_kernel empty name",
         esmm_scsrmm_kernel(handle, "", ESMM_OP_N, d, 2, &one, b, 2, &zero, c, 2), bad},
        {"scsrmm_kernel NULL name",
         esmm_scsrmm_kernel(handle, NULL, ESMM_OP_N, d, 2, &one, b, 2, &zero, c, 2), bad},
        {"csr_destroy NULL", esmm_csr_destroy(NULL), ESMM_STATUS_SUCCESS},
        {"n = 0 with NULL B and C",
         esmm_scsrmm(handle, ESMM_OP_N, d, 0, &one, NULL, 1, &zero, NULL, 1), ESMM_STATUS_SUCCESS},
    };
    for (size_t i = 0; i < COUNT_OF(table); i++)
        CHECK(table[i].got == table[i].want, "%s: status %d, want %d", table[i].call,
              (int)table[i].got, (int)table[i].want);
    CHECK(c[0] == 5.0f && c[1] == 6.0f && c[2] == 7.0f && c[3] == 8.0f,
          "a rejected call wrote C");

    /* esmm_csr_create: each bad size or pointer, with *W set to NULL. */
    const int64_t too_big = (int64_t)INT32_MAX + 1;
    const struct {
        const char *what;
        int64_t rows, cols, nnz;
        const int32_t *row_ptr, *col_idx;
        esmm_status_t want;
    } creates[] = {
        {"rows < 0", -1, 2, 2, row_ptr, col_idx, bad},
        {"cols < 0", 2, -1, 2, row_ptr, col_idx, bad},
        {"nnz < 0", 2, 2, -1, row_ptr, col_idx, bad},
        {"rows > INT32_MAX", too_big, 2, 2, row_ptr, col_idx, bad},
        {"cols > INT32_MAX", 2, too_big, 2, row_ptr, col_idx, bad},
        {"nnz > INT32_MAX", 2, 2, too_big, row_ptr, col_idx, bad},
        {"NULL row_ptr", 2, 2, 2, NULL, col_idx, bad},
        {"NULL col_idx, nnz > 0", 2, 2, 2, row_ptr, NULL, bad},
        {"NULL col_idx, nnz = 0", 0, 2, 0, row_ptr, NULL, ESMM_STATUS_SUCCESS},
    };
    for (size_t i = 0; i < COUNT_OF(creates); i++) {
        esmm_csr_t out = d; /* any non-NULL value: a failure must clear it */
        const esmm_status_t st = esmm_csr_create(handle, creates[i].rows, creates[i].cols,
                                                 creates[i].nnz, creates[i].row_ptr,
                                                 creates[i].col_idx, values, 0.0f, &out);
        CHECK(st == creates[i].want, "esmm_csr_create %s: status %d, want %d", creates[i].what,
              (int)st, (int)creates[i].want);
        CHECK((st == ESMM_STATUS_SUCCESS) == (out != NULL && out != d),
              "esmm_csr_create %s: descriptor %s", creates[i].what,
              out == NULL ? "NULL" : "set");
        if (st == ESMM_STATUS_SUCCESS)
            esmm_csr_destroy(out);
    }
    esmm_csr_t cleared = d;
    CHECK(esmm_csr_create(NULL, 2, 2, 2, row_ptr, col_idx, values, 0.0f, &cleared) == none &&
              cleared == NULL, "esmm_csr_create NULL handle");
    CHECK(esmm_csr_create(handle, 2, 2, 2, row_ptr, col_idx, values, 0.0f, NULL) == bad,
          "esmm_csr_create NULL descriptor pointer");
    esmm_csr_destroy(d);

    /* The handle still works: W = diag(1, 2), B = [1 2; 3 4]. */
    CHECK(esmm_csr_create(handle, 2, 2, 2, row_ptr, col_idx, values, 0.0f, &d) ==
              ESMM_STATUS_SUCCESS, "esmm_csr_create 2x2 again");
    const esmm_status_t st = esmm_scsrmm(handle, ESMM_OP_N, d, 2, &one, b, 2, &zero, c, 2);
    CHECK(st == ESMM_STATUS_SUCCESS && c[0] == 1.0f && c[1] == 2.0f && c[2] == 6.0f &&
              c[3] == 8.0f, "product after the errors: status %d, C = %g %g %g %g", (int)st,
          (double)c[0], (double)c[1], (double)c[2], (double)c[3]);
    esmm_csr_destroy(d);

    /* The compressed-B workspace: 0 for negative sizes, SIZE_MAX (not a
     * wrapped product) for sizes no product takes, grows with B otherwise. */
    CHECK(esmm_csrmm_workspace_size(-1, 4) == 0 && esmm_csrmm_workspace_size(4, -1) == 0,
          "esmm_csrmm_workspace_size of a negative size should be 0");
    CHECK(esmm_csrmm_workspace_size((int64_t)INT32_MAX + 1, 1) == SIZE_MAX &&
              esmm_csrmm_workspace_size(1 << 30, INT64_MAX / 2) == SIZE_MAX &&
              esmm_csrmm_workspace_size(INT32_MAX, INT64_MAX) == SIZE_MAX &&
              esmm_csrmm_workspace_size(1, ((int64_t)1 << 57) - 129) == SIZE_MAX,
          "esmm_csrmm_workspace_size past the accepted sizes should be SIZE_MAX");
    /* The compressed nonzeros' positions are int: B of 2^31 slots at most. */
    CHECK(esmm_csrmm_workspace_size(1 << 26, 2) < SIZE_MAX &&
              esmm_csrmm_workspace_size((1 << 26) + 1, 2) == SIZE_MAX &&
              esmm_csrmm_workspace_size(1 << 24, 65) < SIZE_MAX &&
              esmm_csrmm_workspace_size((1 << 24) + 1, 65) == SIZE_MAX,
          "esmm_csrmm_workspace_size where compressed positions pass INT32_MAX should be "
          "SIZE_MAX");
    const size_t small = esmm_csrmm_workspace_size(100, 128);
    CHECK(small >= 100 * 128 * sizeof(float) && small < SIZE_MAX &&
              esmm_csrmm_workspace_size(1000, 128) > small,
          "esmm_csrmm_workspace_size(100, 128) = %zu", small);
}

/* A CSR input to validate. The arrays are copied into allocations of exactly
 * rows + 1 and nnz elements (where those are small and not negative), so a
 * read past them shows under valgrind or a sanitizer. */
typedef struct {
    const char *what;
    int64_t rows, cols, nnz;
    int32_t row_ptr[6];
    int32_t col_idx[6];
    int null_row_ptr, null_col_idx;
    esmm_status_t want;
} validate_case_t;

static int32_t *exact_copy(const int32_t *src, int64_t count, int null)
{
    if (null)
        return NULL;
    const int64_t n = count >= 0 && count <= 6 ? count : 6;
    int32_t *dst = host_alloc(n, sizeof *dst);
    memcpy(dst, src, (size_t)n * sizeof *dst);
    return dst;
}

static void test_validate(void)
{
    const esmm_status_t bad = ESMM_STATUS_INVALID_VALUE, ok = ESMM_STATUS_SUCCESS;
    const int64_t too_big = (int64_t)INT32_MAX + 1;
    static const validate_case_t broken_and_valid[] = {
        {"row_ptr[0] = 1", 2, 3, 2, {1, 1, 2}, {0, 1}, 0, 0, ESMM_STATUS_INVALID_VALUE},
        {"row_ptr[0] < 0", 2, 3, 2, {-1, 1, 2}, {0, 1}, 0, 0, ESMM_STATUS_INVALID_VALUE},
        {"decreasing pointers", 3, 3, 3, {0, 2, 1, 3}, {0, 1, 2}, 0, 0,
         ESMM_STATUS_INVALID_VALUE},
        {"negative pointer inside", 3, 3, 2, {0, -5, 1, 2}, {0, 1}, 0, 0,
         ESMM_STATUS_INVALID_VALUE},
        {"pointer > nnz inside", 3, 3, 3, {0, 4, 3, 3}, {0, 1, 2}, 0, 0,
         ESMM_STATUS_INVALID_VALUE},
        {"pointer INT32_MAX inside", 3, 3, 3, {0, INT32_MAX, 3, 3}, {0, 1, 2}, 0, 0,
         ESMM_STATUS_INVALID_VALUE},
        {"last pointer > nnz", 2, 3, 2, {0, 1, 3}, {0, 1}, 0, 0, ESMM_STATUS_INVALID_VALUE},
        {"last pointer < nnz", 2, 3, 3, {0, 1, 2}, {0, 1, 2}, 0, 0, ESMM_STATUS_INVALID_VALUE},
        {"rows = 0, nnz = 1", 0, 3, 1, {0}, {0}, 0, 0, ESMM_STATUS_INVALID_VALUE},
        {"negative column", 2, 3, 3, {0, 2, 3}, {0, -1, 2}, 0, 0, ESMM_STATUS_INVALID_VALUE},
        {"column = cols", 2, 3, 3, {0, 2, 3}, {0, 1, 3}, 0, 0, ESMM_STATUS_INVALID_VALUE},
        {"column INT32_MAX", 2, 3, 3, {0, 2, 3}, {INT32_MAX, 1, 2}, 0, 0,
         ESMM_STATUS_INVALID_VALUE},
        {"cols = 0, nnz > 0", 2, 0, 1, {0, 1, 1}, {0}, 0, 0, ESMM_STATUS_INVALID_VALUE},
        {"nnz < 0", 2, 3, -1, {0, 0, 0}, {0}, 0, 0, ESMM_STATUS_INVALID_VALUE},
        {"rows < 0", -1, 3, 0, {0}, {0}, 0, 0, ESMM_STATUS_INVALID_VALUE},
        {"cols < 0", 1, -1, 0, {0, 0}, {0}, 0, 0, ESMM_STATUS_INVALID_VALUE},
        {"NULL row_ptr", 2, 3, 0, {0}, {0}, 1, 0, ESMM_STATUS_INVALID_VALUE},
        {"NULL col_idx, nnz > 0", 2, 3, 2, {0, 1, 2}, {0}, 0, 1, ESMM_STATUS_INVALID_VALUE},
        {"valid: rows = 0", 0, 3, 0, {0}, {0}, 0, 1, ESMM_STATUS_SUCCESS},
        {"valid: rows = cols = 0", 0, 0, 0, {0}, {0}, 0, 1, ESMM_STATUS_SUCCESS},
        {"valid: nnz = 0", 3, 4, 0, {0, 0, 0, 0}, {0}, 0, 1, ESMM_STATUS_SUCCESS},
        {"valid: cols = 0, nnz = 0", 2, 0, 0, {0, 0, 0}, {0}, 0, 1, ESMM_STATUS_SUCCESS},
        {"valid: empty rows", 4, 3, 3, {0, 0, 2, 2, 3}, {2, 0, 1}, 0, 0, ESMM_STATUS_SUCCESS},
        {"valid: unsorted and repeated columns", 2, 3, 5, {0, 3, 5}, {2, 0, 2, 1, 1}, 0, 0,
         ESMM_STATUS_SUCCESS},
        {"valid: every column", 1, 5, 5, {0, 5}, {4, 3, 2, 1, 0}, 0, 0, ESMM_STATUS_SUCCESS},
    };
    for (size_t i = 0; i < COUNT_OF(broken_and_valid); i++) {
        const validate_case_t *vc = &broken_and_valid[i];
        int32_t *row_ptr = exact_copy(vc->row_ptr, vc->rows + 1, vc->null_row_ptr);
        int32_t *col_idx = exact_copy(vc->col_idx, vc->nnz, vc->null_col_idx);
        const esmm_status_t api =
            esmm_csr_validate(handle, vc->rows, vc->cols, vc->nnz, row_ptr, col_idx);
        const esmm_csr_view_t view = {vc->rows, vc->cols, vc->nnz, row_ptr, col_idx, NULL, 0.0f};
        const esmm_status_t backend = esmm_cpu_csr_validate(&view);
        CHECK(api == vc->want && backend == vc->want,
              "validate %s: esmm_csr_validate %d, esmm_cpu_csr_validate %d, want %d", vc->what,
              (int)api, (int)backend, (int)vc->want);
        /* esmm_csr_prepare(T) checks the arrays before placing the transpose
         * by them (the sanitizer build catches a write past it). */
        esmm_csr_t d = NULL;
        if (esmm_csr_create(handle, vc->rows, vc->cols, vc->nnz, row_ptr, col_idx, NULL, 1.0f,
                            &d) == ok) {
            const esmm_status_t prepared = esmm_csr_prepare(handle, d, ESMM_OP_T);
            CHECK(prepared == vc->want, "prepare %s: esmm_csr_prepare(T) %d, want %d", vc->what,
                  (int)prepared, (int)vc->want);
            CHECK(esmm_csr_destroy(d) == ok, "prepare %s: esmm_csr_destroy", vc->what);
        }
        free(row_ptr);
        free(col_idx);
    }
    /* Sizes past int32 are rejected before any array is read. */
    const int32_t tiny[1] = {0};
    CHECK(esmm_csr_validate(handle, too_big, 3, 0, tiny, tiny) == bad, "validate rows too big");
    CHECK(esmm_csr_validate(handle, 0, too_big, 0, tiny, tiny) == bad, "validate cols too big");
    CHECK(esmm_csr_validate(handle, 0, 3, too_big, tiny, tiny) == bad, "validate nnz too big");

    /* Generated matrices are valid, with their quirks. */
    const csr_spec_t specs[] = {
        {.rows = 50, .cols = 40, .nnz_per_row = 8, .empty_stride = 3, .flags = CSR_GEN_FULL_ROW},
        {.rows = 30, .cols = 9, .nnz_per_row = 20,
         .flags = CSR_GEN_DUPLICATES | CSR_GEN_UNSORTED | CSR_GEN_HOMOGENEOUS},
    };
    for (size_t i = 0; i < COUNT_OF(specs); i++) {
        host_csr_t w = csr_generate(&specs[i]);
        CHECK(esmm_csr_validate(handle, w.rows, w.cols, w.nnz, w.row_ptr, w.col_idx) == ok,
              "validate generated matrix %zu", i);
        csr_free(&w);
    }
}

/* esmm_cpu_csr_transpose against the definition: transposed row c lists, by
 * increasing row of W and storage order within a row, every entry of column c. */
static void test_transpose(void)
{
    const csr_spec_t specs[] = {
        {.rows = 37, .cols = 23, .nnz_per_row = 6, .empty_stride = 4,
         .flags = CSR_GEN_UNSORTED | CSR_GEN_DUPLICATES, .seed = 11},
        {.rows = 19, .cols = 31, .nnz_per_row = 3, .flags = CSR_GEN_FULL_ROW | CSR_GEN_HOMOGENEOUS,
         .value = 2.0f, .seed = 12},
        {.rows = 5, .cols = 8, .seed = 13},
        {.rows = 0, .cols = 4, .seed = 14},
        {.rows = 4, .cols = 0, .seed = 15},
    };
    for (size_t i = 0; i < COUNT_OF(specs); i++) {
        host_csr_t w = csr_generate(&specs[i]);
        const esmm_csr_view_t view = {w.rows, w.cols, w.nnz, w.row_ptr, w.col_idx, w.values,
                                      w.value};
        int32_t *t_row_ptr = host_alloc(w.cols + 1, sizeof *t_row_ptr);
        int32_t *t_col_idx = host_alloc(w.nnz, sizeof *t_col_idx);
        float *t_values = w.values != NULL ? host_alloc(w.nnz, sizeof *t_values) : NULL;
        esmm_cpu_csr_transpose(&view, t_row_ptr, t_col_idx, t_values);
        int64_t bad = 0, slot = 0;
        for (int64_t c = 0; c < w.cols; c++) {
            bad += t_row_ptr[c] != slot;
            for (int64_t r = 0; r < w.rows; r++) {
                for (int64_t e = w.row_ptr[r]; e < w.row_ptr[r + 1]; e++) {
                    if (w.col_idx[e] != c)
                        continue;
                    bad += slot >= w.nnz || t_col_idx[slot] != r ||
                           (t_values != NULL && float_bits(t_values[slot]) !=
                                                    float_bits(w.values[e]));
                    slot++;
                }
            }
        }
        bad += slot != w.nnz || t_row_ptr[w.cols] != w.nnz;
        CHECK(bad == 0, "transpose of spec %zu (%ldx%ld nnz %ld): %ld differences", i,
              (long)w.rows, (long)w.cols, (long)w.nnz, (long)bad);
        free(t_row_ptr);
        free(t_col_idx);
        free(t_values);
        csr_free(&w);
    }
}

/* esmm_get_last_info after CSR products (esmm.h): the kernel and the path,
 * no densities, no masks; a refused call leaves the report as it was. */
static void test_last_info(void)
{
    const int32_t row_ptr[] = {0, 1, 2}, col_idx[] = {1, 0};
    const float values[] = {2.0f, 3.0f}, x[] = {1.0f, 1.0f}, a[] = {1.0f, 0.0f, 0.0f, 1.0f};
    const float one = 1.0f, zero = 0.0f;
    float y[4];
    esmm_csr_t w = NULL;
    CHECK(esmm_csr_create(handle, 2, 2, 2, row_ptr, col_idx, values, 0.0f, &w) ==
              ESMM_STATUS_SUCCESS, "esmm_csr_create 2x2");
    esmm_info_t gemm, info;
    CHECK(esmm_sgemm(handle, ESMM_OP_N, ESMM_OP_N, 2, 2, 2, &one, a, 2, a, 2, &zero, y, 2) ==
                  ESMM_STATUS_SUCCESS &&
              esmm_get_last_info(handle, &gemm) == ESMM_STATUS_SUCCESS,
          "esmm_sgemm and its report");
    CHECK(esmm_scsrmv(handle, ESMM_OP_N, w, NULL, x, &zero, y) == ESMM_STATUS_INVALID_VALUE &&
              esmm_get_last_info(handle, &info) == ESMM_STATUS_SUCCESS &&
              info.path == gemm.path && info.kernel != NULL && gemm.kernel != NULL &&
              strcmp(info.kernel, gemm.kernel) == 0 && info.density_a == gemm.density_a,
          "a refused CSR call leaves the sgemm's report");
    CHECK(esmm_scsrmv(handle, ESMM_OP_N, w, &one, x, &zero, y) == ESMM_STATUS_SUCCESS &&
              esmm_get_last_info(handle, &info) == ESMM_STATUS_SUCCESS &&
              info.path == ESMM_PATH_DENSE && info.kernel != NULL &&
              strcmp(info.kernel, "cpu") == 0 && info.density_a < 0.0 && info.density_b < 0.0 &&
              info.masks == ESMM_MASKS_NONE,
          "esmm_scsrmv's report: path %d, kernel %s, densities %g / %g, masks %d",
          (int)info.path, info.kernel ? info.kernel : "(null)", info.density_a, info.density_b,
          (int)info.masks);
    CHECK(esmm_scsrmm(handle, ESMM_OP_N, w, 2, &zero, a, 2, &zero, y, 2) == ESMM_STATUS_SUCCESS &&
              esmm_get_last_info(handle, &info) == ESMM_STATUS_SUCCESS &&
              info.path == ESMM_PATH_NONE,
          "esmm_scsrmm with alpha = 0 reports nothing multiplied (path %d)", (int)info.path);
    esmm_csr_destroy(w);
}

int main(void)
{
    const esmm_status_t st = esmm_create(&handle, ESMM_BACKEND_CPU);
    CHECK(st == ESMM_STATUS_SUCCESS, "esmm_create(CPU): status %d", (int)st);
    if (st != ESMM_STATUS_SUCCESS)
        return check_finish();
    test_products();
    test_prepare_same_bits();
    test_matvec_size();
    test_argument_errors();
    test_validate();
    test_transpose();
    test_last_info();
    esmm_destroy(handle);
    return check_finish();
}
