/* Differential stress of the CSR products: random W (rows and columns from 1
 * to a few hundred, or about 2000 on the GPU, primes among them; empty rows, a
 * full row, nnz = 0; sorted, unsorted and repeated columns; per-entry weights
 * or one shared weight), op N and T, n from 1 up, padded leading dimensions,
 * alpha/beta from a table, B from all zeros to dense, NaN/Inf now and then in
 * B or the weights. Each problem runs through esmm_scsrmm, esmm_scsrmm_kernel
 * with every kernel of the backend, op T before and after esmm_csr_prepare,
 * and esmm_scsrmv when n == 1. The paths that sum in the CPU backend's
 * documented order must give its bits (NaN where it has NaN); every path must
 * match the float64 reference within csr_support.h's rounding bound and leave
 * what lies outside its output alone. On the GPU every result is also
 * compared with cuSPARSE's.
 *   test_stress_csr cpu|cuda [problems [seed]]   (cuda exits 77 without a GPU)
 * A mismatch prints the problem's index and seed: running that many problems
 * with that seed reproduces it. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cusparse.h>

#include "check.h"
#include "csr_support.h"
#include "esmm.h"
#include "mtx.h"
#include "test_support.h"
#include "test_support_cuda.h"

/* Defaults: about 4 s on two CPU cores (under 20 with the sanitizers). The
 * GPU run's problems are larger: its host share (the float64 reference and
 * in-order product) takes a few seconds, the device's about as much again. */
#define CPU_PROBLEMS 8000
#define GPU_PROBLEMS 2500
#define DEFAULT_SEED 0xC5A57E55u

/* Poisoned floats after every output buffer: a write past the end shows. */
#define GUARD 8

/* Multiply-adds (nnz * n) a problem may ask for: keeps the float64 reference,
 * computed on the host for every problem, from dominating the run. */
#define CPU_WORK_CAP 20000000
#define GPU_WORK_CAP 6000000

static const int64_t DIMENSIONS[] = {1, 2, 3, 5, 7, 13, 31, 37, 61, 127, 131, 257, 263,
                                     509, 1021, 1999};
static const int64_t WIDTHS[] = {2, 3, 4, 7, 8, 16, 31, 32, 33, 44, 63, 64, 65, 100, 127, 128,
                                 129, 255, 256, 257, 300};
static const double B_DENSITIES[] = {0.0, 0.05, 0.1, 0.5, 1.0};
static const float ALPHAS[] = {1.0f, -0.5f, 2.0f, 0.0f, 1.5f};
static const float BETAS[] = {0.0f, 0.0f, 1.0f, -2.0f, 0.5f};
static const float SHARED_WEIGHTS[] = {1.0f, -0.5f, 0.75f, -2.0f};

/* Where a problem holds NaN or Inf (problem_t.nonfinite). */
enum { NONFINITE_B = 1, NONFINITE_W = 2 };

typedef struct {
    int64_t index;
    uint64_t seed;
    csr_spec_t spec; /* how W was drawn, for the report */
    int varied_rows; /* row counts drawn per row around spec.nnz_per_row */
    host_csr_t w;
    esmm_operation_t op;
    int64_t m, n, k, ldb, ldc;
    float alpha, beta;
    double b_density;
    unsigned nonfinite;
    float *b;        /* k x ldb, poisoned padding */
    float *c0;       /* m x ldc: what C holds before a product with beta != 0 */
    float *expected; /* m x ldc: the CPU backend's order, csr_float_product */
    float *start;    /* m * ldc + GUARD: C before each matrix product */
    float *x;        /* k + GUARD: column 0 of B, contiguous, for esmm_scsrmv */
    float *y_start;  /* m + GUARD: y before each matrix-vector product */
} problem_t;

typedef struct {
    int64_t runs, cusparse_comparisons, cusparse_refused, mismatched;
} tally_t;

typedef struct {
    int cuda;
    esmm_handle_t h;
    cusparseHandle_t sparse; /* cuda only */
} runner_t;

/* Where one problem's operands live for the backend: the host arrays on the
 * CPU, device copies on CUDA (owned then). */
typedef struct {
    esmm_csr_t W;
    int32_t *row_ptr, *col_idx;
    float *values;
    float *b, *x;
    float *c; /* CUDA: m * ldc or m, whichever is larger, + GUARD */
} operands_t;

typedef enum {
    CALL_MM,     /* esmm_scsrmm */
    CALL_KERNEL, /* esmm_scsrmm_kernel */
    CALL_MV      /* esmm_scsrmv */
} call_t;

typedef struct {
    call_t call;
    const char *kernel; /* CALL_KERNEL */
    int prepared;       /* after esmm_csr_prepare(ESMM_OP_T) */
} path_t;

/* ---- drawing a problem -------------------------------------------------- */

static int64_t pick_dimension(uint64_t *rng, int64_t most)
{
    switch (rng_below(rng, 3)) {
    case 0: {
        int64_t fitting = 0;
        while (fitting < (int64_t)COUNT_OF(DIMENSIONS) && DIMENSIONS[fitting] <= most)
            fitting++;
        return DIMENSIONS[rng_below(rng, fitting)];
    }
    case 1: return 1 + rng_below(rng, 64);
    default: return 1 + rng_below(rng, most);
    }
}

/* Entries per row: none, one, a few, a fraction of the columns, up to all. */
static int64_t pick_per_row(uint64_t *rng, int64_t cols)
{
    switch (rng_below(rng, 10)) {
    case 0: return 0;
    case 1: return 1;
    case 2:
    case 3: return 1 + rng_below(rng, 8);
    case 4:
    case 5: return rng_below(rng, cols / 8 + 1);
    case 6:
    case 7: return rng_below(rng, cols + 1);
    default: return cols;
    }
}

static int64_t pick_width(uint64_t *rng)
{
    switch (rng_below(rng, 4)) {
    case 0: return 1;
    case 1: return WIDTHS[rng_below(rng, (int64_t)COUNT_OF(WIDTHS))];
    default: return 1 + rng_below(rng, 300);
    }
}

static float pick_nonfinite(uint64_t *rng)
{
    switch (rng_below(rng, 3)) {
    case 0: return NAN;
    case 1: return INFINITY;
    default: return -INFINITY;
    }
}

static int64_t leading_dimension(uint64_t *rng, int64_t n)
{
    return n + (rng_below(rng, 4) == 0 ? 1 + rng_below(rng, 7) : 0);
}

/* Problem `index` of the run with `seed`: drawn from its own stream, so it
 * does not depend on what the problems before it drew. */
static problem_t make_problem(uint64_t seed, int64_t index, int cuda)
{
    uint64_t mixer = seed + (uint64_t)index * 0x9E3779B97F4A7C15ull;
    uint64_t rng = rng_next(&mixer);
    const int64_t most = cuda ? 2000 : 300;
    problem_t p;
    memset(&p, 0, sizeof p);
    p.index = index;
    p.seed = seed;

    csr_spec_t *spec = &p.spec;
    spec->rows = pick_dimension(&rng, most);
    spec->cols = pick_dimension(&rng, most);
    spec->nnz_per_row = pick_per_row(&rng, spec->cols);
    spec->empty_stride = rng_below(&rng, 4) == 0 ? 1 + rng_below(&rng, 8) : 0;
    if (rng_below(&rng, 2) == 0)
        spec->flags |= CSR_GEN_UNSORTED;
    if (rng_below(&rng, 4) == 0)
        spec->flags |= CSR_GEN_DUPLICATES;
    if (rng_below(&rng, 4) == 0)
        spec->flags |= CSR_GEN_FULL_ROW;
    if (rng_below(&rng, 4) == 0)
        spec->flags |= CSR_GEN_HOMOGENEOUS;
    spec->value = SHARED_WEIGHTS[rng_below(&rng, (int64_t)COUNT_OF(SHARED_WEIGHTS))];
    spec->seed = rng_next(&rng);
    /* Rows of different lengths: 0 .. twice the mean (more than the columns
     * only with duplicates; the generator caps the others). */
    int64_t *row_counts = NULL;
    p.varied_rows = rng_below(&rng, 3) == 0;
    if (p.varied_rows) {
        row_counts = host_alloc(spec->rows, sizeof *row_counts);
        for (int64_t i = 0; i < spec->rows; i++)
            row_counts[i] = rng_below(&rng, 2 * spec->nnz_per_row + 1);
        spec->row_counts = row_counts;
    }
    p.w = csr_generate(spec);
    spec->row_counts = NULL;
    free(row_counts);

    p.op = (esmm_operation_t)rng_below(&rng, 2);
    p.m = csr_op_rows(&p.w, p.op);
    p.k = csr_op_cols(&p.w, p.op);
    p.n = pick_width(&rng);
    const int64_t cap = cuda ? GPU_WORK_CAP : CPU_WORK_CAP;
    if (p.w.nnz > 0 && p.w.nnz * p.n > cap)
        p.n = max_i64(1, cap / p.w.nnz);
    p.ldb = leading_dimension(&rng, p.n);
    p.ldc = leading_dimension(&rng, p.n);
    p.alpha = ALPHAS[rng_below(&rng, (int64_t)COUNT_OF(ALPHAS))];
    p.beta = BETAS[rng_below(&rng, (int64_t)COUNT_OF(BETAS))];
    p.b_density = B_DENSITIES[rng_below(&rng, (int64_t)COUNT_OF(B_DENSITIES))];
    p.b = dense_generate(p.k, p.n, p.ldb, p.b_density, rng_next(&rng));
    p.c0 = dense_generate(p.m, p.n, p.ldc, 1.0, rng_next(&rng));

    const int64_t where = rng_below(&rng, 12);
    if (where == 0 || where == 2) {
        const int64_t count = 1 + rng_below(&rng, 3);
        for (int64_t t = 0; t < count; t++)
            p.b[rng_below(&rng, p.k) * p.ldb + rng_below(&rng, p.n)] = pick_nonfinite(&rng);
        p.nonfinite |= NONFINITE_B;
    }
    if (where == 1 || where == 2) {
        if (p.w.values == NULL) {
            p.w.value = pick_nonfinite(&rng);
            p.nonfinite |= NONFINITE_W;
        } else if (p.w.nnz > 0) {
            const int64_t count = 1 + rng_below(&rng, 3);
            for (int64_t t = 0; t < count; t++)
                p.w.values[rng_below(&rng, p.w.nnz)] = pick_nonfinite(&rng);
            p.nonfinite |= NONFINITE_W;
        }
    }

    p.expected = host_alloc(p.m * p.ldc, sizeof *p.expected);
    memcpy(p.expected, p.c0, (size_t)(p.m * p.ldc) * sizeof *p.expected);
    csr_float_product(&p.w, p.op, p.n, p.alpha, p.b, p.ldb, p.beta, p.expected, p.ldc);

    /* beta == 0 must ignore C, NaN included: it starts as poison then. */
    p.start = host_alloc(p.m * p.ldc + GUARD, sizeof *p.start);
    p.y_start = host_alloc(p.m + GUARD, sizeof *p.y_start);
    p.x = host_alloc(p.k + GUARD, sizeof *p.x);
    for (int64_t at = 0; at < p.m * p.ldc + GUARD; at++)
        p.start[at] = at < p.m * p.ldc && at % p.ldc < p.n && p.beta != 0.0f ? p.c0[at]
                                                                            : poison_value();
    for (int64_t i = 0; i < p.m + GUARD; i++)
        p.y_start[i] = i < p.m && p.beta != 0.0f ? p.c0[i * p.ldc] : poison_value();
    for (int64_t i = 0; i < p.k + GUARD; i++)
        p.x[i] = i < p.k ? p.b[i * p.ldb] : poison_value();
    return p;
}

static void free_problem(problem_t *p)
{
    csr_free(&p->w);
    free(p->b);
    free(p->c0);
    free(p->expected);
    free(p->start);
    free(p->x);
    free(p->y_start);
}

static const char *nonfinite_label(unsigned where)
{
    switch (where) {
    case 0: return "neither";
    case NONFINITE_B: return "B";
    case NONFINITE_W: return "W";
    default: return "B and W";
    }
}

/* Everything needed to rerun the problem by hand. */
static void describe(const problem_t *p, char *text, size_t size)
{
    const unsigned f = p->spec.flags;
    char weights[48];
    if (p->w.values == NULL)
        snprintf(weights, sizeof weights, "shared weight %g", (double)p->w.value);
    else
        snprintf(weights, sizeof weights, "per-entry weights");
    snprintf(text, size,
             "problem %lld of seed %#llx (rerun: %lld problems with that seed): W %lldx%lld "
             "nnz %lld (%s%lld per row, empty stride %lld, %s%s%s), %s, op %s, n %lld, ldb %lld, "
             "ldc %lld, alpha %g, beta %g, B density %.2f, NaN/Inf in %s",
             (long long)p->index, (unsigned long long)p->seed, (long long)p->index + 1,
             (long long)p->w.rows, (long long)p->w.cols, (long long)p->w.nnz,
             p->varied_rows ? "0 to twice " : "", (long long)p->spec.nnz_per_row,
             (long long)p->spec.empty_stride, f & CSR_GEN_UNSORTED ? "unsorted" : "sorted",
             f & CSR_GEN_DUPLICATES ? ", duplicates" : "", f & CSR_GEN_FULL_ROW ? ", full row" : "",
             weights, op_label(p->op), (long long)p->n, (long long)p->ldb, (long long)p->ldc,
             (double)p->alpha, (double)p->beta, p->b_density, nonfinite_label(p->nonfinite));
}

/* ---- checking one result ------------------------------------------------ */

/* Equal bits, or both NaN (a NaN's payload depends on the hardware). */
static int same_result(float got, float want)
{
    return (written_nan(got) && isnan(want)) || float_bits(got) == float_bits(want);
}

/* Whether element `at` of a result with leading dimension ld is part of the
 * m x n output (the rest, padding and guard, must keep its poison). */
static int is_output(const problem_t *p, int64_t ld, int64_t at)
{
    return at < p->m * ld && at % ld < p->n;
}

/* Whether the path must give the CPU backend's bits. On the CPU every path
 * is that order. On CUDA the gathers are (op N, or T once prepared) for
 * n > 1; n == 1 runs the matrix-vector kernels, which split a row's sum among
 * lanes, and T without prepare scatters with atomics. */
static int in_cpu_order(int cuda, const problem_t *p, const path_t *path)
{
    if (!cuda)
        return 1;
    return p->n > 1 && (p->op == ESMM_OP_N || path->prepared);
}

/* One path's result (leading dimension ld, len elements with the guard)
 * against the start's poison outside the output, the CPU order's bits when
 * `exact`, and the float64 reference. Prints the first element off for each
 * kind; returns 1 when anything is. */
static int check_result(const problem_t *p, const csr_reference_t *ref, const char *path,
                        const float *start, const float *got, int64_t ld, int64_t len, int exact)
{
    int64_t touched = 0, off_order = 0, off_reference = 0;
    int64_t first_touched = -1, first_order = -1, first_reference = -1;
    for (int64_t at = 0; at < len; at++)
        if (!is_output(p, ld, at) && float_bits(got[at]) != float_bits(start[at]) &&
            touched++ == 0)
            first_touched = at;
    for (int64_t i = 0; i < p->m; i++)
        for (int64_t j = 0; j < p->n; j++) {
            const float g = got[i * ld + j];
            if (exact && !same_result(g, p->expected[i * p->ldc + j]) && off_order++ == 0)
                first_order = i * p->n + j;
            const double tolerance = ref->relative * ref->magnitude[i * p->n + j];
            if (!close_enough(g, ref->want[i * p->n + j], tolerance) && off_reference++ == 0)
                first_reference = i * p->n + j;
        }
    if (touched > 0)
        fprintf(stderr, "problem %lld: %s changed %lld elements outside its output, first [%lld]\n",
                (long long)p->index, path, (long long)touched, (long long)first_touched);
    if (off_order > 0) {
        const int64_t i = first_order / p->n, j = first_order % p->n;
        fprintf(stderr,
                "problem %lld: %s: %lld elements differ from the CPU order, first (%lld,%lld): "
                "got %a want %a\n",
                (long long)p->index, path, (long long)off_order, (long long)i, (long long)j,
                (double)got[i * ld + j], (double)p->expected[i * p->ldc + j]);
    }
    if (off_reference > 0) {
        const int64_t i = first_reference / p->n, j = first_reference % p->n;
        fprintf(stderr,
                "problem %lld: %s: %lld elements off the float64 reference, first (%lld,%lld): "
                "got %.9g want %.17g tolerance %.3g\n",
                (long long)p->index, path, (long long)off_reference, (long long)i, (long long)j,
                (double)got[i * ld + j], ref->want[first_reference],
                ref->relative * ref->magnitude[first_reference]);
    }
    return touched > 0 || off_order > 0 || off_reference > 0;
}

/* esmm's result against cuSPARSE's: NaN in the same places, Inf equal, and
 * otherwise within twice the bound (both are within it of the reference). */
static int check_against_cusparse(const problem_t *p, const csr_reference_t *ref,
                                  const char *path, const float *got, int64_t ld,
                                  const float *theirs, int64_t their_ld, const char *routine)
{
    int64_t off = 0, first = -1;
    for (int64_t i = 0; i < p->m; i++)
        for (int64_t j = 0; j < p->n; j++) {
            const float g = got[i * ld + j], t = theirs[i * their_ld + j];
            int agree;
            if (isnan(g) || isnan(t))
                agree = written_nan(g) && isnan(t);
            else if (isinf(g) || isinf(t))
                agree = g == t;
            else
                agree = fabs((double)g - (double)t) <=
                        2.0 * ref->relative * ref->magnitude[i * p->n + j];
            if (!agree && off++ == 0)
                first = i * p->n + j;
        }
    if (off > 0) {
        const int64_t i = first / p->n, j = first % p->n;
        fprintf(stderr,
                "problem %lld: %s and %s disagree on %lld elements, first (%lld,%lld): %.9g "
                "against %.9g\n",
                (long long)p->index, path, routine, (long long)off, (long long)i, (long long)j,
                (double)got[i * ld + j], (double)theirs[i * their_ld + j]);
    }
    return off > 0;
}

/* ---- cuSPARSE (cuda mode only) ------------------------------------------ */

/* W as cuSPARSE takes it: each row's entries by increasing column (cuSPARSE
 * documents CSR as sorted; ties keep storage order) and one weight per entry
 * (it has no shared weight). Repeated (row, column) pairs stay separate
 * entries: summing them first would change where Inf - Inf gives NaN. */
static void csr_for_cusparse(const host_csr_t *w, int32_t *col_idx, float *values)
{
    for (int64_t e = 0; e < w->nnz; e++) {
        col_idx[e] = w->col_idx[e];
        values[e] = csr_weight_at(w, e);
    }
    mtx_csr_t sorted = {w->rows, w->cols, w->nnz, w->row_ptr, col_idx, values};
    cli_error_t err;
    CHECK(mtx_sort_rows(&sorted, &err) >= 0, "sorting W's rows for cuSPARSE: %s", err.text);
}

/* cuSPARSE's C = alpha * op(W) * B + beta * C from C0 into mm_out (m x ldc)
 * and, when n == 1, its y = alpha * op(W) * x + beta * y into mv_out (m),
 * with the same op, alpha and beta, default algorithms and row-major dense
 * operands. C starts from C0 even when beta == 0: that cuSPARSE ignores C
 * then is not what is under test. Returns 0, or 1 after printing the call
 * that failed. */
static int run_cusparse(cusparseHandle_t sparse, const problem_t *p, const operands_t *o,
                        float *mm_out, float *mv_out)
{
    const int64_t nnz_slots = max_i64(p->w.nnz, 1);
    int32_t *col_idx = host_alloc(nnz_slots, sizeof *col_idx);
    float *values = host_alloc(nnz_slots, sizeof *values);
    csr_for_cusparse(&p->w, col_idx, values);
    int32_t *d_col_idx = device_alloc((size_t)nnz_slots * sizeof *d_col_idx);
    float *d_values = device_alloc((size_t)nnz_slots * sizeof *d_values);
    float *d_c = device_alloc((size_t)(p->m * p->ldc) * sizeof *d_c);
    float *d_y = device_alloc((size_t)p->m * sizeof *d_y);
    float *y0 = host_alloc(p->m, sizeof *y0);
    for (int64_t i = 0; i < p->m; i++)
        y0[i] = p->c0[i * p->ldc];
    device_upload(d_col_idx, col_idx, (size_t)p->w.nnz * sizeof *col_idx);
    device_upload(d_values, values, (size_t)p->w.nnz * sizeof *values);
    device_upload(d_c, p->c0, (size_t)(p->m * p->ldc) * sizeof *d_c);
    device_upload(d_y, y0, (size_t)p->m * sizeof *d_y);

    const cusparseOperation_t op =
        p->op == ESMM_OP_T ? CUSPARSE_OPERATION_TRANSPOSE : CUSPARSE_OPERATION_NON_TRANSPOSE;
    cusparseConstSpMatDescr_t w = NULL;
    cusparseConstDnMatDescr_t b = NULL;
    cusparseDnMatDescr_t c = NULL;
    cusparseConstDnVecDescr_t x = NULL;
    cusparseDnVecDescr_t y = NULL;
    void *mm_buffer = NULL, *mv_buffer = NULL;
    size_t bytes = 0;
    const char *step = "cusparseCreateConstCsr";
    cusparseStatus_t s = cusparseCreateConstCsr(&w, p->w.rows, p->w.cols, p->w.nnz, o->row_ptr,
                                                d_col_idx, d_values, CUSPARSE_INDEX_32I,
                                                CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                                CUDA_R_32F);
    if (s == CUSPARSE_STATUS_SUCCESS) {
        step = "cusparseCreateConstDnMat";
        s = cusparseCreateConstDnMat(&b, p->k, p->n, p->ldb, o->b, CUDA_R_32F, CUSPARSE_ORDER_ROW);
    }
    if (s == CUSPARSE_STATUS_SUCCESS) {
        step = "cusparseCreateDnMat";
        s = cusparseCreateDnMat(&c, p->m, p->n, p->ldc, d_c, CUDA_R_32F, CUSPARSE_ORDER_ROW);
    }
    if (s == CUSPARSE_STATUS_SUCCESS) {
        step = "cusparseSpMM_bufferSize";
        s = cusparseSpMM_bufferSize(sparse, op, CUSPARSE_OPERATION_NON_TRANSPOSE, &p->alpha, w, b,
                                    &p->beta, c, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, &bytes);
    }
    if (s == CUSPARSE_STATUS_SUCCESS) {
        mm_buffer = device_alloc(bytes > 0 ? bytes : 1);
        step = "cusparseSpMM";
        s = cusparseSpMM(sparse, op, CUSPARSE_OPERATION_NON_TRANSPOSE, &p->alpha, w, b, &p->beta,
                         c, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, mm_buffer);
    }
    if (s == CUSPARSE_STATUS_SUCCESS && p->n == 1) {
        step = "cusparseCreateConstDnVec";
        s = cusparseCreateConstDnVec(&x, p->k, o->x, CUDA_R_32F);
        if (s == CUSPARSE_STATUS_SUCCESS) {
            step = "cusparseCreateDnVec";
            s = cusparseCreateDnVec(&y, p->m, d_y, CUDA_R_32F);
        }
        if (s == CUSPARSE_STATUS_SUCCESS) {
            step = "cusparseSpMV_bufferSize";
            s = cusparseSpMV_bufferSize(sparse, op, &p->alpha, w, x, &p->beta, y, CUDA_R_32F,
                                        CUSPARSE_SPMV_ALG_DEFAULT, &bytes);
        }
        if (s == CUSPARSE_STATUS_SUCCESS) {
            mv_buffer = device_alloc(bytes > 0 ? bytes : 1);
            step = "cusparseSpMV";
            s = cusparseSpMV(sparse, op, &p->alpha, w, x, &p->beta, y, CUDA_R_32F,
                             CUSPARSE_SPMV_ALG_DEFAULT, mv_buffer);
        }
    }
    cuda_must(cudaDeviceSynchronize(), "cuSPARSE products");
    if (s == CUSPARSE_STATUS_SUCCESS) {
        device_download(mm_out, d_c, (size_t)(p->m * p->ldc) * sizeof *mm_out);
        if (p->n == 1)
            device_download(mv_out, d_y, (size_t)p->m * sizeof *mv_out);
    } else {
        fprintf(stderr, "problem %lld: %s: %s\n", (long long)p->index, step,
                cusparseGetErrorString(s));
    }
    if (y != NULL)
        cusparseDestroyDnVec(y);
    if (x != NULL)
        cusparseDestroyDnVec(x);
    if (c != NULL)
        cusparseDestroyDnMat(c);
    if (b != NULL)
        cusparseDestroyDnMat(b);
    if (w != NULL)
        cusparseDestroySpMat(w);
    if (mm_buffer != NULL)
        device_free(mm_buffer);
    if (mv_buffer != NULL)
        device_free(mv_buffer);
    device_free(d_col_idx);
    device_free(d_values);
    device_free(d_c);
    device_free(d_y);
    free(col_idx);
    free(values);
    free(y0);
    return s != CUSPARSE_STATUS_SUCCESS;
}

/* ---- running esmm ------------------------------------------------------- */

static operands_t make_operands(const runner_t *r, const problem_t *p)
{
    operands_t o = {NULL, p->w.row_ptr, p->w.col_idx, p->w.values, p->b, p->x, NULL};
    if (r->cuda) {
        const int64_t nnz_slots = max_i64(p->w.nnz, 1);
        const int64_t c_len = max_i64(p->m * p->ldc, p->m) + GUARD;
        o.row_ptr = device_alloc((size_t)(p->w.rows + 1) * sizeof *o.row_ptr);
        o.col_idx = device_alloc((size_t)nnz_slots * sizeof *o.col_idx);
        o.values = p->w.values != NULL ? device_alloc((size_t)nnz_slots * sizeof *o.values) : NULL;
        o.b = device_alloc((size_t)(p->k * p->ldb) * sizeof *o.b);
        o.x = device_alloc((size_t)(p->k + GUARD) * sizeof *o.x);
        o.c = device_alloc((size_t)c_len * sizeof *o.c);
        device_upload(o.row_ptr, p->w.row_ptr, (size_t)(p->w.rows + 1) * sizeof *o.row_ptr);
        device_upload(o.col_idx, p->w.col_idx, (size_t)p->w.nnz * sizeof *o.col_idx);
        if (o.values != NULL)
            device_upload(o.values, p->w.values, (size_t)p->w.nnz * sizeof *o.values);
        device_upload(o.b, p->b, (size_t)(p->k * p->ldb) * sizeof *o.b);
        device_upload(o.x, p->x, (size_t)(p->k + GUARD) * sizeof *o.x);
    }
    const esmm_status_t st = esmm_csr_create(r->h, p->w.rows, p->w.cols, p->w.nnz, o.row_ptr,
                                             o.col_idx, o.values, p->w.value, &o.W);
    if (st != ESMM_STATUS_SUCCESS)
        fprintf(stderr, "problem %lld: esmm_csr_create: %s\n", (long long)p->index,
                esmm_status_string(st));
    return o;
}

static void free_operands(const runner_t *r, operands_t *o)
{
    const esmm_status_t st = esmm_csr_destroy(o->W);
    CHECK(st == ESMM_STATUS_SUCCESS, "esmm_csr_destroy: %s", esmm_status_string(st));
    if (r->cuda) {
        device_free(o->row_ptr);
        device_free(o->col_idx);
        if (o->values != NULL)
            device_free(o->values);
        device_free(o->b);
        device_free(o->x);
        device_free(o->c);
    }
}

static void path_label(const path_t *path, char *text, size_t size)
{
    const char *prefix = path->prepared ? "prepared, " : "";
    if (path->call == CALL_KERNEL)
        snprintf(text, size, "%sesmm_scsrmm_kernel(%s)", prefix, path->kernel);
    else
        snprintf(text, size, "%s%s", prefix, path->call == CALL_MV ? "esmm_scsrmv" : "esmm_scsrmm");
}

/* Runs the path from its start (C, or y for esmm_scsrmv) into got. */
static esmm_status_t run_path(const runner_t *r, const problem_t *p, const operands_t *o,
                              const path_t *path, float *got)
{
    const int mv = path->call == CALL_MV;
    const int64_t len = mv ? p->m + GUARD : p->m * p->ldc + GUARD;
    const size_t bytes = (size_t)len * sizeof *got;
    float *c = r->cuda ? o->c : got;
    if (r->cuda)
        device_upload(o->c, mv ? p->y_start : p->start, bytes);
    else
        memcpy(got, mv ? p->y_start : p->start, bytes);
    esmm_status_t st;
    switch (path->call) {
    case CALL_KERNEL:
        st = esmm_scsrmm_kernel(r->h, path->kernel, p->op, o->W, p->n, &p->alpha, o->b, p->ldb,
                                &p->beta, c, p->ldc);
        break;
    case CALL_MV: st = esmm_scsrmv(r->h, p->op, o->W, &p->alpha, o->x, &p->beta, c); break;
    default:
        st = esmm_scsrmm(r->h, p->op, o->W, p->n, &p->alpha, o->b, p->ldb, &p->beta, c, p->ldc);
        break;
    }
    if (r->cuda) {
        cuda_must(cudaDeviceSynchronize(), "a CSR product");
        device_download(got, o->c, bytes);
    }
    return st;
}

/* ---- one problem -------------------------------------------------------- */

static const char *const CPU_KERNELS[] = {"cpu"};
static const char *const CUDA_KERNELS[] = {"csr-dense-b", "csr-sparse-b"};

/* Every path of problem `index`, each checked as far as it can be; the
 * problem counts as mismatched when anything disagreed. */
static void stress_problem(const runner_t *r, uint64_t seed, int64_t index, tally_t *tally)
{
    problem_t p = make_problem(seed, index, r->cuda);
    /* The float64 reference, once per problem for every path's check. */
    csr_reference_t ref =
        csr_reference_make(&p.w, p.op, p.n, p.alpha, p.b, p.ldb, p.beta, p.c0, p.ldc);
    operands_t o = make_operands(r, &p);
    const int created = o.W != NULL;
    int bad = !created;
    float *got = host_alloc(max_i64(p.m * p.ldc, p.m) + GUARD, sizeof *got);

    /* cuSPARSE's results, themselves checked against the reference. It does
     * not promise BLAS's alpha == 0 rule (op(W) and B unread), so where that
     * meets NaN/Inf it is not asked; nor where repeated columns make W hold
     * more entries than rows x cols, which cuSPARSE rejects as invalid. */
    float *theirs_mm = NULL, *theirs_mv = NULL;
    const int cusparse_accepts = p.w.nnz <= p.w.rows * p.w.cols;
    if (r->cuda && created && !cusparse_accepts)
        tally->cusparse_refused++;
    if (r->cuda && created && cusparse_accepts && !(p.alpha == 0.0f && p.nonfinite != 0)) {
        theirs_mm = host_alloc(p.m * p.ldc, sizeof *theirs_mm);
        theirs_mv = host_alloc(p.m, sizeof *theirs_mv);
        if (run_cusparse(r->sparse, &p, &o, theirs_mm, theirs_mv) != 0) {
            bad = 1;
            free(theirs_mm), free(theirs_mv);
            theirs_mm = theirs_mv = NULL;
        } else {
            bad |= check_result(&p, &ref, "cusparseSpMM", p.c0, theirs_mm, p.ldc, 0, 0);
            if (p.n == 1)
                bad |= check_result(&p, &ref, "cusparseSpMV", p.y_start, theirs_mv, 1, 0, 0);
        }
    }

    const char *const *kernels = r->cuda ? CUDA_KERNELS : CPU_KERNELS;
    const int kernel_count = r->cuda ? (int)COUNT_OF(CUDA_KERNELS) : (int)COUNT_OF(CPU_KERNELS);
    for (int prepared = 0; created && prepared <= (p.op == ESMM_OP_T); prepared++) {
        if (prepared) {
            const esmm_status_t st = esmm_csr_prepare(r->h, o.W, ESMM_OP_T);
            if (st != ESMM_STATUS_SUCCESS) {
                fprintf(stderr, "problem %lld: esmm_csr_prepare: %s\n", (long long)p.index,
                        esmm_status_string(st));
                bad = 1;
                break;
            }
        }
        /* esmm_scsrmm, each kernel by name, and esmm_scsrmv for a vector. */
        path_t paths[2 + COUNT_OF(CUDA_KERNELS)];
        int count = 0;
        paths[count++] = (path_t){CALL_MM, NULL, prepared};
        for (int i = 0; i < kernel_count; i++)
            paths[count++] = (path_t){CALL_KERNEL, kernels[i], prepared};
        if (p.n == 1)
            paths[count++] = (path_t){CALL_MV, NULL, prepared};
        for (int i = 0; i < count; i++) {
            const path_t path = paths[i];
            char label[96];
            path_label(&path, label, sizeof label);
            const esmm_status_t st = run_path(r, &p, &o, &path, got);
            tally->runs++;
            if (st != ESMM_STATUS_SUCCESS) {
                fprintf(stderr, "problem %lld: %s: %s\n", (long long)p.index, label,
                        esmm_status_string(st));
                bad = 1;
                continue;
            }
            const int mv = path.call == CALL_MV;
            const int64_t ld = mv ? 1 : p.ldc;
            const int64_t len = mv ? p.m + GUARD : p.m * p.ldc + GUARD;
            bad |= check_result(&p, &ref, label, mv ? p.y_start : p.start, got, ld, len,
                                in_cpu_order(r->cuda, &p, &path));
            if (theirs_mm != NULL) {
                bad |= check_against_cusparse(&p, &ref, label, got, ld, theirs_mm, p.ldc,
                                              "cusparseSpMM");
                tally->cusparse_comparisons++;
            }
            if (theirs_mv != NULL && p.n == 1) {
                bad |= check_against_cusparse(&p, &ref, label, got, ld, theirs_mv, 1,
                                              "cusparseSpMV");
                tally->cusparse_comparisons++;
            }
        }
    }
    if (bad) {
        char text[640];
        describe(&p, text, sizeof text);
        CHECK(0, "%s", text);
        tally->mismatched++;
    }
    free(got);
    free(theirs_mm);
    free(theirs_mv);
    free_operands(r, &o);
    csr_reference_free(&ref);
    free_problem(&p);
}

int main(int argc, char **argv)
{
    stress_args_t args;
    if (stress_parse_args(argc, argv, CPU_PROBLEMS, GPU_PROBLEMS, DEFAULT_SEED, &args) != 0)
        return 1;
    const int cuda = args.cuda;
    const int64_t problems = args.problems;
    const uint64_t seed = args.seed;
    if (cuda && !cuda_device_present("GPU CSR stress run"))
        return check_finish();
    runner_t r = {cuda, NULL, NULL};
    CHECK(esmm_create(&r.h, cuda ? ESMM_BACKEND_CUDA : ESMM_BACKEND_CPU) == ESMM_STATUS_SUCCESS,
          "esmm_create");
    if (r.h == NULL)
        return check_finish();
    if (cuda) {
        /* cuSPARSE is half of what the GPU run checks against: no quiet skip. */
        const cusparseStatus_t s = cusparseCreate(&r.sparse);
        CHECK(s == CUSPARSE_STATUS_SUCCESS, "cusparseCreate: %s (no cuSPARSE comparison possible)",
              cusparseGetErrorString(s));
        if (s != CUSPARSE_STATUS_SUCCESS) {
            esmm_destroy(r.h);
            return check_finish();
        }
    }
    tally_t tally = {0, 0, 0, 0};
    for (int64_t t = 0; t < problems; t++)
        stress_problem(&r, seed, t, &tally);
    printf("stress_csr: %lld problems (seed %#llx), %lld path runs, %lld cuSPARSE comparisons "
           "(%lld problems with nnz > rows x cols not given to it), %lld mismatched\n",
           (long long)problems, (unsigned long long)seed, (long long)tally.runs,
           (long long)tally.cusparse_comparisons, (long long)tally.cusparse_refused,
           (long long)tally.mismatched);
    CHECK(tally.mismatched == 0, "%lld of %lld problems mismatched", (long long)tally.mismatched,
          (long long)problems);
    if (cuda)
        CHECK(cusparseDestroy(r.sparse) == CUSPARSE_STATUS_SUCCESS, "cusparseDestroy");
    CHECK(esmm_destroy(r.h) == ESMM_STATUS_SUCCESS, "esmm_destroy");
    return check_finish();
}
