/* Differential stress of esmm_sgemm: random problems (shapes from 1 to a
 * few hundred, primes among them; both ops; alpha/beta; padded leading
 * dimensions; block or element zeros at densities 0..1; NaN/Inf now and
 * then), each through the planner and every kernel of the backend. The
 * paths that share the dense kernel's order (the planner, the skipping
 * kernels; on the CPU every kernel) must give its bits; every kernel must
 * match a float64 reference (NaN where it has NaN). On the GPU cuBLAS runs
 * each problem too: it must match the reference, and esmm_sgemm must agree
 * with it within the rounding bound of both.
 *   test_stress cpu|cuda [problems [seed]]   (cuda exits 77 without a GPU) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>

#include "check.h"
#include "cuda/cuda_backend.h" /* ESMM_PLAN_COPY_COST, ESMM_PLAN_COPY_AT_MOST */
#include "esmm.h"
#include "test_support.h"
#include "test_support_cuda.h"

static const int64_t PRIMES[] = {1, 2, 3, 7, 13, 31, 37, 61, 127, 131, 257, 263};

typedef struct {
    esmm_operation_t op_a, op_b;
    int64_t m, n, k, lda, ldb, ldc;
    float alpha, beta;
    int64_t a_len, b_len, c_len;
    float *a, *b, *c0;
} problem_t;

static int64_t pick_size(uint64_t *rng, int64_t most)
{
    switch (rng_below(rng, 3)) {
    case 0: return PRIMES[rng_below(rng, (int64_t)COUNT_OF(PRIMES))];
    case 1: return 1 + rng_below(rng, 64);
    default: return 1 + rng_below(rng, most);
    }
}

/* Fills rows x cols (leading dimension ld) with nonzeros, zero blocks or
 * elements at the given density, and now and then a NaN or an Inf. */
static void fill(uint64_t *rng, float *x, int64_t rows, int64_t cols, int64_t ld, double density)
{
    const int blocks = rng_below(rng, 2) == 0;
    const int64_t br = 32, bc = 8;
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++)
            x[i * ld + j] = nonzero_value(rng);
    if (blocks) {
        for (int64_t i0 = 0; i0 < rows; i0 += br)
            for (int64_t j0 = 0; j0 < cols; j0 += bc)
                if (rng_uniform(rng) >= density)
                    for (int64_t i = i0; i < min_i64(rows, i0 + br); i++)
                        for (int64_t j = j0; j < min_i64(cols, j0 + bc); j++)
                            x[i * ld + j] = 0.0f;
    } else {
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++)
                if (rng_uniform(rng) >= density)
                    x[i * ld + j] = 0.0f;
    }
    if (rows > 0 && cols > 0 && rng_below(rng, 10) == 0)
        x[rng_below(rng, rows) * ld + rng_below(rng, cols)] = rng_below(rng, 2) ? NAN : -INFINITY;
}

static problem_t make_problem(uint64_t *rng, int64_t most)
{
    static const double densities[] = {0.0, 0.125, 0.5, 1.0};
    static const float alphas[] = {1.0f, -0.5f, 2.0f, 0.0f}, betas[] = {0.0f, 0.0f, 1.0f, -2.0f};
    problem_t p;
    p.op_a = (esmm_operation_t)rng_below(rng, 2);
    p.op_b = (esmm_operation_t)rng_below(rng, 2);
    p.m = pick_size(rng, most), p.n = pick_size(rng, most), p.k = pick_size(rng, most);
    /* Now and then one side of C past the copy rule's edge, the other two
     * small: on the GPU the paths then read k-major copies of an operand along
     * k, among them the copies the extraction writes. */
    if (rng_below(rng, 16) == 0) {
        const int64_t edge = (int64_t)ceil(ESMM_PLAN_COPY_COST / ESMM_PLAN_COPY_AT_MOST);
        const int64_t wide = edge + rng_below(rng, 640), small = 64;
        const int m_wide = rng_below(rng, 2) == 0;
        p.m = m_wide ? wide : 1 + rng_below(rng, small);
        p.n = m_wide ? 1 + rng_below(rng, small) : wide;
        p.k = 1 + rng_below(rng, small);
    }
    const int64_t a_rows = p.op_a == ESMM_OP_N ? p.m : p.k, a_cols = p.op_a == ESMM_OP_N ? p.k : p.m;
    const int64_t b_rows = p.op_b == ESMM_OP_N ? p.k : p.n, b_cols = p.op_b == ESMM_OP_N ? p.n : p.k;
    p.lda = a_cols + rng_below(rng, 6), p.ldb = b_cols + rng_below(rng, 6);
    p.ldc = p.n + rng_below(rng, 6);
    p.alpha = alphas[rng_below(rng, 4)], p.beta = betas[rng_below(rng, 4)];
    p.a_len = a_rows * p.lda, p.b_len = b_rows * p.ldb, p.c_len = p.m * p.ldc;
    p.a = host_alloc(max_i64(p.a_len, 1), sizeof(float));
    p.b = host_alloc(max_i64(p.b_len, 1), sizeof(float));
    p.c0 = host_alloc(max_i64(p.c_len, 1), sizeof(float));
    fill(rng, p.a, a_rows, a_cols, p.lda, densities[rng_below(rng, 4)]);
    fill(rng, p.b, b_rows, b_cols, p.ldb, densities[rng_below(rng, 4)]);
    for (int64_t i = 0; i < p.c_len; i++)
        p.c0[i] = nonzero_value(rng);
    return p;
}

static float at_a(const problem_t *p, int64_t i, int64_t kk)
{
    return p->op_a == ESMM_OP_N ? p->a[i * p->lda + kk] : p->a[kk * p->lda + i];
}

static float at_b(const problem_t *p, int64_t kk, int64_t j)
{
    return p->op_b == ESMM_OP_N ? p->b[kk * p->ldb + j] : p->b[j * p->ldb + kk];
}

/* Allowed error in units of the terms' size: k + 4 roundings of float. */
static double tolerance(const problem_t *p)
{
    return 2.0 * (double)(p->k + 4) * 5.96e-8;
}

/* The float64 product and, per element, the size of its terms. */
typedef struct {
    double *want, *scale; /* m x n */
} reference_t;

static reference_t float64_reference(const problem_t *p)
{
    reference_t r;
    r.want = host_alloc(max_i64(p->m * p->n, 1), sizeof(double));
    r.scale = host_alloc(max_i64(p->m * p->n, 1), sizeof(double));
    for (int64_t i = 0; i < p->m; i++)
        for (int64_t j = 0; j < p->n; j++) {
            double want = 0.0, scale = 0.0;
            if (p->alpha != 0.0f)
                for (int64_t kk = 0; kk < p->k; kk++) {
                    const double t = (double)at_a(p, i, kk) * at_b(p, kk, j);
                    want += t;
                    scale += fabs(t);
                }
            want *= p->alpha, scale *= fabs(p->alpha);
            if (p->beta != 0.0f) {
                want += (double)p->beta * p->c0[i * p->ldc + j];
                scale += fabs((double)p->beta * p->c0[i * p->ldc + j]);
            }
            r.want[i * p->n + j] = want;
            r.scale[i * p->n + j] = scale > 0.0 ? scale : 1.0;
        }
    return r;
}

/* How far got is from want (float64 values, or another result), in units of
 * the reference's terms' size; INFINITY when a NaN or Inf is where none
 * belongs or missing. */
static double worst_distance(const problem_t *p, const reference_t *ref, const float *got,
                             const float *other)
{
    double worst = 0.0;
    for (int64_t i = 0; i < p->m; i++)
        for (int64_t j = 0; j < p->n; j++) {
            const double want = other ? (double)other[i * p->ldc + j] : ref->want[i * p->n + j];
            const float g = got[i * p->ldc + j];
            if (isnan(want) || isnan(g) || isinf(want) || isinf(g)) {
                const int same = (isnan(want) && written_nan(g)) || ((double)g == want);
                if (!same)
                    return INFINITY;
                continue;
            }
            const double e = fabs((double)g - want) / ref->scale[i * p->n + j];
            worst = e > worst ? e : worst;
        }
    return worst;
}

static double worst_error(const problem_t *p, const reference_t *ref, const float *got)
{
    return worst_distance(p, ref, got, NULL);
}

static int same_bits(const problem_t *p, const float *x, const float *y)
{
    for (int64_t i = 0; i < p->m; i++)
        for (int64_t j = 0; j < p->n; j++) {
            const float u = x[i * p->ldc + j], v = y[i * p->ldc + j];
            if (!(written_nan(u) && written_nan(v)) && float_bits(u) != float_bits(v))
                return 0;
        }
    return 1;
}

typedef struct {
    int cuda;
    esmm_handle_t h;
    float *d_a, *d_b, *d_c; /* device copies (cuda) */
    cublasHandle_t cublas;  /* cuda */
} runner_t;

/* Runs kernel (NULL: the planner) on p from a fresh copy of C into got. */
static esmm_status_t run(runner_t *r, const problem_t *p, const char *kernel, float *got)
{
    const float *a = p->a, *b = p->b;
    float *c = got;
    memcpy(got, p->c0, (size_t)max_i64(p->c_len, 1) * sizeof(float));
    if (r->cuda) {
        a = r->d_a, b = r->d_b, c = r->d_c;
        device_upload(r->d_c, p->c0, (size_t)max_i64(p->c_len, 1) * sizeof(float));
    }
    esmm_status_t st =
        kernel == NULL
            ? esmm_sgemm(r->h, p->op_a, p->op_b, p->m, p->n, p->k, &p->alpha, a, p->lda, b,
                         p->ldb, &p->beta, c, p->ldc)
            : esmm_sgemm_kernel(r->h, kernel, p->op_a, p->op_b, p->m, p->n, p->k, &p->alpha, a,
                                p->lda, b, p->ldb, &p->beta, c, p->ldc);
    if (r->cuda)
        device_download(got, r->d_c, (size_t)max_i64(p->c_len, 1) * sizeof(float));
    return st;
}

/* cuBLAS on p (row-major, as C^T = op(B)^T op(A)^T in column-major terms)
 * from a fresh copy of C into got. */
static int run_cublas(runner_t *r, const problem_t *p, float *got)
{
    device_upload(r->d_c, p->c0, (size_t)max_i64(p->c_len, 1) * sizeof(float));
    const cublasOperation_t op_a = p->op_a == ESMM_OP_N ? CUBLAS_OP_N : CUBLAS_OP_T;
    const cublasOperation_t op_b = p->op_b == ESMM_OP_N ? CUBLAS_OP_N : CUBLAS_OP_T;
    const cublasStatus_t st =
        cublasSgemm(r->cublas, op_b, op_a, (int)p->n, (int)p->m, (int)p->k, &p->alpha, r->d_b,
                    (int)p->ldb, r->d_a, (int)p->lda, &p->beta, r->d_c, (int)p->ldc);
    device_download(got, r->d_c, (size_t)max_i64(p->c_len, 1) * sizeof(float));
    return st == CUBLAS_STATUS_SUCCESS;
}

/* Whether the kernel sums in the dense kernel's order (so must match its bits). */
static int ordered_like_dense(int cuda, const char *kernel)
{
    if (!cuda)
        return 1;
    return kernel == NULL || strcmp(kernel, "pipelined") == 0 || strncmp(kernel, "sparse-", 7) == 0;
}

int main(int argc, char **argv)
{
    stress_args_t args;
    if (stress_parse_args(argc, argv, 2000, 2000, 0x57E55u, &args) != 0)
        return 1;
    const int cuda = args.cuda;
    const int64_t problems = args.problems;
    uint64_t rng = args.seed;
    if (cuda && !cuda_device_present("the GPU stress run"))
        return check_finish();
    runner_t r = {cuda, NULL, NULL, NULL, NULL, NULL};
    CHECK(esmm_create(&r.h, cuda ? ESMM_BACKEND_CUDA : ESMM_BACKEND_CPU) == ESMM_STATUS_SUCCESS,
          "esmm_create");
    if (r.h == NULL)
        return check_finish();
    /* Plans every product, however small: the planned paths are what this covers. */
    CHECK(esmm_set_min_planned_work(r.h, 0) == ESMM_STATUS_SUCCESS, "esmm_set_min_planned_work");
    if (cuda) {
        /* FP32 arithmetic only: no TF32 whatever the environment says. */
        CHECK(cublasCreate(&r.cublas) == CUBLAS_STATUS_SUCCESS &&
                  cublasSetMathMode(r.cublas, CUBLAS_PEDANTIC_MATH) == CUBLAS_STATUS_SUCCESS,
              "cuBLAS could not be set up: no baseline to compare with");
        if (r.cublas == NULL)
            return check_finish();
    }
    const int kernels = esmm_kernel_count(r.h);
    const char *dense = cuda ? "pipelined" : "cpu";
    int64_t runs = 0, mismatched = 0, cublas_runs = 0;
    for (int64_t t = 0; t < problems; t++) {
        problem_t p = make_problem(&rng, cuda ? 700 : 200);
        if (cuda) {
            r.d_a = device_alloc((size_t)max_i64(p.a_len, 1) * sizeof(float));
            r.d_b = device_alloc((size_t)max_i64(p.b_len, 1) * sizeof(float));
            r.d_c = device_alloc((size_t)max_i64(p.c_len, 1) * sizeof(float));
            device_upload(r.d_a, p.a, (size_t)max_i64(p.a_len, 1) * sizeof(float));
            device_upload(r.d_b, p.b, (size_t)max_i64(p.b_len, 1) * sizeof(float));
        }
        const reference_t ref = float64_reference(&p);
        float *dense_bits = host_alloc(max_i64(p.c_len, 1), sizeof(float));
        float *got = host_alloc(max_i64(p.c_len, 1), sizeof(float));
        float *planned = host_alloc(max_i64(p.c_len, 1), sizeof(float));
        esmm_status_t st = run(&r, &p, dense, dense_bits);
        int bad = st != ESMM_STATUS_SUCCESS;
        double worst = worst_error(&p, &ref, dense_bits);
        bad |= !(worst <= tolerance(&p));
        for (int i = -1; i < kernels && !bad; i++) {
            const char *kernel = i < 0 ? NULL : esmm_kernel_name(r.h, i);
            float *out = kernel == NULL ? planned : got;
            st = run(&r, &p, kernel, out);
            runs++;
            const int ok =
                st == ESMM_STATUS_SUCCESS &&
                (ordered_like_dense(cuda, kernel) ? same_bits(&p, out, dense_bits)
                                                  : worst_error(&p, &ref, out) <= tolerance(&p));
            if (!ok) {
                bad = 1;
                fprintf(stderr, "problem %lld: %s differs\n", (long long)t,
                        kernel ? kernel : "esmm_sgemm");
            }
        }
        if (cuda && !bad) {
            /* Each of the two within the bound of the reference, so at most
             * twice the bound apart. */
            cublas_runs++;
            if (!run_cublas(&r, &p, got) || !(worst_error(&p, &ref, got) <= tolerance(&p)) ||
                !(worst_distance(&p, &ref, planned, got) <= 2.0 * tolerance(&p))) {
                bad = 1;
                fprintf(stderr, "problem %lld: esmm_sgemm and cuBLAS disagree\n", (long long)t);
            }
        }
        if (bad) {
            mismatched++;
            CHECK(0, "problem %lld: op %s%s m %lld n %lld k %lld ld %lld/%lld/%lld alpha %g beta %g "
                     "(dense error %g)",
                  (long long)t, op_label(p.op_a), op_label(p.op_b), (long long)p.m,
                  (long long)p.n, (long long)p.k, (long long)p.lda, (long long)p.ldb,
                  (long long)p.ldc, (double)p.alpha, (double)p.beta, worst);
        }
        free(dense_bits), free(got), free(planned), free(ref.want), free(ref.scale);
        free(p.a), free(p.b), free(p.c0);
        if (cuda) {
            device_free(r.d_a), device_free(r.d_b), device_free(r.d_c);
        }
    }
    printf("stress: %lld problems, %lld kernel runs, %lld cuBLAS comparisons, %lld mismatched\n",
           (long long)problems, (long long)runs, (long long)cublas_runs, (long long)mismatched);
    CHECK(mismatched == 0, "%lld of %lld problems mismatched", (long long)mismatched,
          (long long)problems);
    if (r.cublas != NULL)
        cublasDestroy(r.cublas);
    esmm_destroy(r.h);
    return check_finish();
}
