/*
 * The API misuse table and the valid edge calls, run on the CPU backend and,
 * where a GPU exists, on the CUDA backend with device memory. Every bad call
 * must return its documented status, leave C untouched and leave the handle
 * usable; every valid edge call must give exactly what the float64 reference
 * gives (the operands are small integers, so every result is exact in float).
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "check.h"
#include "cpu/cpu_backend.h"
#include "cuda/cuda_backend.h"
#include "esmm.h"
#include "test_support.h"

/* Every operand lives in a buffer of BUF_LEN floats: all the valid layouts
 * used below fit, and a bad call never gets to read them. */
#define BUF_LEN 256

typedef struct {
    esmm_backend_t backend;
    esmm_handle_t handle;
    float *a, *b, *c;   /* backend memory: host on CPU, device on CUDA */
    const char *kernel; /* the backend's first kernel, for esmm_sgemm_kernel */
} fixture_t;

/* The two GEMM entry points: esmm_sgemm, or esmm_sgemm_kernel by name. */
typedef struct {
    int by_name;
    const char *kernel;
} entry_t;

static const char *backend_label(esmm_backend_t backend)
{
    return backend == ESMM_BACKEND_CUDA ? "cuda" : "cpu";
}

static const char *entry_label(const entry_t *e)
{
    if (!e->by_name)
        return "esmm_sgemm";
    return e->kernel != NULL ? e->kernel : "(NULL kernel name)";
}

static int cuda_ok(cudaError_t err, const char *what)
{
    CHECK(err == cudaSuccess, "%s: %s", what, cudaGetErrorString(err));
    return err == cudaSuccess;
}

/* ---- backend memory ----------------------------------------------------- */

static float *buffer_alloc(esmm_backend_t backend)
{
    if (backend == ESMM_BACKEND_CPU)
        return calloc(BUF_LEN, sizeof(float));
    void *p = NULL;
    if (!cuda_ok(cudaMalloc(&p, BUF_LEN * sizeof(float)), "cudaMalloc"))
        return NULL;
    return p;
}

static void buffer_free(esmm_backend_t backend, float *p)
{
    if (backend == ESMM_BACKEND_CPU)
        free(p);
    else if (p != NULL)
        cuda_ok(cudaFree(p), "cudaFree");
}

static void buffer_put(esmm_backend_t backend, float *dst, const float *src)
{
    if (backend == ESMM_BACKEND_CPU)
        memcpy(dst, src, BUF_LEN * sizeof(float));
    else
        cuda_ok(cudaMemcpy(dst, src, BUF_LEN * sizeof(float), cudaMemcpyHostToDevice),
                "cudaMemcpy to device");
}

/* Waits for all queued work first, so an asynchronous fault is reported here. */
static void buffer_get(esmm_backend_t backend, float *dst, const float *src)
{
    if (backend == ESMM_BACKEND_CPU) {
        memcpy(dst, src, BUF_LEN * sizeof(float));
        return;
    }
    cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    cuda_ok(cudaMemcpy(dst, src, BUF_LEN * sizeof(float), cudaMemcpyDeviceToHost),
            "cudaMemcpy to host");
}

/* ---- GEMM calls --------------------------------------------------------- */

/* Bits of gemm_case_t.flags. */
enum {
    NULL_HANDLE = 1u << 0,
    NULL_ALPHA = 1u << 1,
    NULL_A = 1u << 2,
    NULL_B = 1u << 3,
    NULL_BETA = 1u << 4,
    NULL_C = 1u << 5,
    BAD_OP_A = 1u << 6, /* op_a is the raw value bad_op */
    BAD_OP_B = 1u << 7,
    NAN_A = 1u << 8, /* A is all NaN */
    NAN_C = 1u << 9  /* C starts all NaN */
};

typedef struct {
    const char *what;
    unsigned flags;
    int64_t m, n, k;
    /* Added to the smallest valid leading dimension for the case's ops. */
    int64_t lda_delta, ldb_delta, ldc_delta;
    float alpha, beta;
    int bad_op;
    esmm_status_t expected;
} gemm_case_t;

/* The valid call that proves a handle still works after a bad one. */
static const gemm_case_t valid_case = {
    .what = "valid call", .m = 3, .n = 4, .k = 5,
    .lda_delta = 2, .ldb_delta = 1, .ldc_delta = 3,
    .alpha = 2.0f, .beta = -0.5f, .expected = ESMM_STATUS_SUCCESS};

/* Each row runs for all four op combinations and through both entry points. */
static const gemm_case_t misuse_cases[] = {
    {.what = "NULL handle", .flags = NULL_HANDLE, .m = 3, .n = 4, .k = 5,
     .alpha = 1, .beta = 1, .expected = ESMM_STATUS_NOT_INITIALIZED},
    {.what = "NULL handle with every pointer NULL",
     .flags = NULL_HANDLE | NULL_ALPHA | NULL_A | NULL_B | NULL_BETA | NULL_C,
     .m = 3, .n = 4, .k = 5, .expected = ESMM_STATUS_NOT_INITIALIZED},
    {.what = "NULL alpha", .flags = NULL_ALPHA, .m = 3, .n = 4, .k = 5,
     .beta = 1, .expected = ESMM_STATUS_INVALID_VALUE},
    {.what = "NULL beta", .flags = NULL_BETA, .m = 3, .n = 4, .k = 5,
     .alpha = 1, .expected = ESMM_STATUS_INVALID_VALUE},
    {.what = "NULL A", .flags = NULL_A, .m = 3, .n = 4, .k = 5,
     .alpha = 1, .beta = 1, .expected = ESMM_STATUS_INVALID_VALUE},
    {.what = "NULL B", .flags = NULL_B, .m = 3, .n = 4, .k = 5,
     .alpha = 1, .beta = 1, .expected = ESMM_STATUS_INVALID_VALUE},
    {.what = "NULL C", .flags = NULL_C, .m = 3, .n = 4, .k = 5,
     .alpha = 1, .beta = 1, .expected = ESMM_STATUS_INVALID_VALUE},
    {.what = "NULL C with k == 0 (C is still scaled)", .flags = NULL_C, .m = 3, .n = 4,
     .k = 0, .alpha = 1, .beta = 2, .expected = ESMM_STATUS_INVALID_VALUE},
    {.what = "NULL C with alpha == 0 (C is still scaled)", .flags = NULL_C, .m = 3,
     .n = 4, .k = 5, .alpha = 0, .beta = 2, .expected = ESMM_STATUS_INVALID_VALUE},
    {.what = "m = -1", .m = -1, .n = 4, .k = 5, .alpha = 1, .beta = 1,
     .expected = ESMM_STATUS_INVALID_VALUE},
    {.what = "n = -1", .m = 3, .n = -1, .k = 5, .alpha = 1, .beta = 1,
     .expected = ESMM_STATUS_INVALID_VALUE},
    {.what = "k = -1", .m = 3, .n = 4, .k = -1, .alpha = 1, .beta = 1,
     .expected = ESMM_STATUS_INVALID_VALUE},
    {.what = "m = INT64_MIN", .m = INT64_MIN, .n = 4, .k = 5, .alpha = 1, .beta = 1,
     .expected = ESMM_STATUS_INVALID_VALUE},
    {.what = "m = INT64_MAX (offsets overflow)", .m = INT64_MAX, .n = 4, .k = 5,
     .alpha = 1, .beta = 1, .expected = ESMM_STATUS_INVALID_VALUE},
    {.what = "n = INT64_MAX (offsets overflow)", .m = 3, .n = INT64_MAX, .k = 5,
     .alpha = 1, .beta = 1, .expected = ESMM_STATUS_INVALID_VALUE},
    {.what = "lda one shorter than a row", .m = 3, .n = 4, .k = 5, .lda_delta = -1,
     .alpha = 1, .beta = 1, .expected = ESMM_STATUS_INVALID_VALUE},
    {.what = "ldb one shorter than a row", .m = 3, .n = 4, .k = 5, .ldb_delta = -1,
     .alpha = 1, .beta = 1, .expected = ESMM_STATUS_INVALID_VALUE},
    {.what = "ldc one shorter than a row", .m = 3, .n = 4, .k = 5, .ldc_delta = -1,
     .alpha = 1, .beta = 1, .expected = ESMM_STATUS_INVALID_VALUE},
    {.what = "negative lda", .m = 3, .n = 4, .k = 5, .lda_delta = -100,
     .alpha = 1, .beta = 1, .expected = ESMM_STATUS_INVALID_VALUE},
    {.what = "negative ldb", .m = 3, .n = 4, .k = 5, .ldb_delta = -100,
     .alpha = 1, .beta = 1, .expected = ESMM_STATUS_INVALID_VALUE},
    {.what = "negative ldc", .m = 3, .n = 4, .k = 5, .ldc_delta = -100,
     .alpha = 1, .beta = 1, .expected = ESMM_STATUS_INVALID_VALUE},
    {.what = "lda short with m == 0 (checked even for empty problems)", .m = 0, .n = 4,
     .k = 5, .lda_delta = -1, .alpha = 1, .beta = 1, .expected = ESMM_STATUS_INVALID_VALUE},
    {.what = "ldc short with k == 0", .m = 3, .n = 4, .k = 0, .ldc_delta = -1,
     .alpha = 1, .beta = 1, .expected = ESMM_STATUS_INVALID_VALUE},
    {.what = "ldb short with alpha == 0", .m = 3, .n = 4, .k = 5, .ldb_delta = -1,
     .alpha = 0, .beta = 1, .expected = ESMM_STATUS_INVALID_VALUE},
    {.what = "lda whose last offset overflows int64", .m = 3, .n = 4, .k = 5,
     .lda_delta = INT64_MAX / 2, .alpha = 1, .beta = 1, .expected = ESMM_STATUS_INVALID_VALUE},
    {.what = "ldb whose last offset overflows int64", .m = 3, .n = 4, .k = 5,
     .ldb_delta = INT64_MAX / 2, .alpha = 1, .beta = 1, .expected = ESMM_STATUS_INVALID_VALUE},
    {.what = "ldc whose last offset overflows int64", .m = 3, .n = 4, .k = 5,
     .ldc_delta = INT64_MAX / 2, .alpha = 1, .beta = 1, .expected = ESMM_STATUS_INVALID_VALUE},
    {.what = "lda whose last byte offset overflows int64", .m = 3, .n = 4, .k = 5,
     .lda_delta = INT64_MAX / 8, .alpha = 1, .beta = 1, .expected = ESMM_STATUS_INVALID_VALUE},
    {.what = "ldb whose last byte offset overflows int64", .m = 3, .n = 4, .k = 5,
     .ldb_delta = INT64_MAX / 8, .alpha = 1, .beta = 1, .expected = ESMM_STATUS_INVALID_VALUE},
    {.what = "ldc whose last byte offset overflows int64", .m = 3, .n = 4, .k = 5,
     .ldc_delta = INT64_MAX / 8, .alpha = 1, .beta = 1, .expected = ESMM_STATUS_INVALID_VALUE},
    {.what = "op_a = 2", .flags = BAD_OP_A, .bad_op = 2, .m = 3, .n = 4, .k = 5,
     .alpha = 1, .beta = 1, .expected = ESMM_STATUS_INVALID_VALUE},
    {.what = "op_a = 7", .flags = BAD_OP_A, .bad_op = 7, .m = 3, .n = 4, .k = 5,
     .alpha = 1, .beta = 1, .expected = ESMM_STATUS_INVALID_VALUE},
    {.what = "op_b = 7", .flags = BAD_OP_B, .bad_op = 7, .m = 3, .n = 4, .k = 5,
     .alpha = 1, .beta = 1, .expected = ESMM_STATUS_INVALID_VALUE},
    {.what = "op_b = -1", .flags = BAD_OP_B, .bad_op = -1, .m = 3, .n = 4, .k = 5,
     .alpha = 1, .beta = 1, .expected = ESMM_STATUS_INVALID_VALUE},
    {.what = "op_a = 7 with m == 0", .flags = BAD_OP_A, .bad_op = 7, .m = 0, .n = 4,
     .k = 5, .alpha = 1, .beta = 1, .expected = ESMM_STATUS_INVALID_VALUE},
};

/* Valid calls at the edges of the semantics; each must give the reference. */
static const gemm_case_t edge_cases[] = {
    {.what = "m == 0 touches nothing", .m = 0, .n = 4, .k = 5, .alpha = 1, .beta = 2,
     .expected = ESMM_STATUS_SUCCESS},
    {.what = "n == 0 touches nothing", .m = 3, .n = 0, .k = 5, .alpha = 1, .beta = 2,
     .expected = ESMM_STATUS_SUCCESS},
    {.what = "m == n == 0", .m = 0, .n = 0, .k = 5, .alpha = 1, .beta = 0,
     .expected = ESMM_STATUS_SUCCESS},
    {.what = "m == 0 with NULL A, B and C", .flags = NULL_A | NULL_B | NULL_C, .m = 0,
     .n = 4, .k = 5, .alpha = 1, .beta = 2, .expected = ESMM_STATUS_SUCCESS},
    {.what = "n == 0 with NULL A, B and C", .flags = NULL_A | NULL_B | NULL_C, .m = 3,
     .n = 0, .k = 5, .alpha = 1, .beta = 2, .expected = ESMM_STATUS_SUCCESS},
    {.what = "k == 0 gives beta * C", .m = 3, .n = 4, .k = 0, .alpha = 2, .beta = -0.5f,
     .expected = ESMM_STATUS_SUCCESS},
    {.what = "k == 0 with NULL A and B", .flags = NULL_A | NULL_B, .m = 3, .n = 4, .k = 0,
     .alpha = 2, .beta = 3, .expected = ESMM_STATUS_SUCCESS},
    {.what = "k == 0, beta == 0 zeroes a NaN C", .flags = NAN_C, .m = 3, .n = 4, .k = 0,
     .alpha = 1, .beta = 0, .expected = ESMM_STATUS_SUCCESS},
    {.what = "alpha == 0 reads neither A nor B (A is NaN)", .flags = NAN_A, .m = 3, .n = 4,
     .k = 5, .alpha = 0, .beta = -1, .expected = ESMM_STATUS_SUCCESS},
    {.what = "alpha == 0, beta == 0 zeroes a NaN C (A is NaN)", .flags = NAN_A | NAN_C,
     .m = 3, .n = 4, .k = 5, .alpha = 0, .beta = 0, .expected = ESMM_STATUS_SUCCESS},
    {.what = "beta == 0 ignores NaN in C", .flags = NAN_C, .m = 3, .n = 4, .k = 5,
     .alpha = 2, .beta = 0, .expected = ESMM_STATUS_SUCCESS},
    {.what = "beta == 0 ignores NaN in C, tight leading dimensions", .flags = NAN_C,
     .m = 6, .n = 5, .k = 4, .alpha = 1, .beta = 0, .expected = ESMM_STATUS_SUCCESS},
    {.what = "alpha == beta == 1", .m = 3, .n = 4, .k = 5, .alpha = 1, .beta = 1,
     .expected = ESMM_STATUS_SUCCESS},
    {.what = "alpha == -0.5, beta == 2, padded leading dimensions", .m = 5, .n = 3, .k = 6,
     .lda_delta = 3, .ldb_delta = 1, .ldc_delta = 5, .alpha = -0.5f, .beta = 2,
     .expected = ESMM_STATUS_SUCCESS},
    {.what = "m = n = k = 1", .m = 1, .n = 1, .k = 1, .alpha = 2, .beta = 1,
     .expected = ESMM_STATUS_SUCCESS},
    {.what = "k == 1 outer product", .m = 6, .n = 6, .k = 1, .alpha = 1, .beta = 0.5f,
     .expected = ESMM_STATUS_SUCCESS},
    {.what = "one column of C with ldc == 1", .m = 6, .n = 1, .k = 3, .alpha = 1,
     .beta = 1, .expected = ESMM_STATUS_SUCCESS},
};

static int64_t at_least_1(int64_t x)
{
    return x > 1 ? x : 1;
}

/* Small integers in [-3, 3]: every product and sum these tests make is exact
 * in float, so results are compared for equality. */
static void fill_operand(float *x, unsigned seed, int with_nan)
{
    for (unsigned i = 0; i < BUF_LEN; i++)
        x[i] = with_nan ? NAN : (float)((int)((i * 5u + seed) % 7u) - 3);
}

static esmm_status_t call_gemm(esmm_handle_t handle, const entry_t *e, const esmm_gemm_problem_t *p,
                               const float *alpha, const float *beta)
{
    if (e->by_name)
        return esmm_sgemm_kernel(handle, e->kernel, p->op_a, p->op_b, p->m, p->n, p->k, alpha,
                                 p->a, p->lda, p->b, p->ldb, beta, p->c, p->ldc);
    return esmm_sgemm(handle, p->op_a, p->op_b, p->m, p->n, p->k, alpha, p->a, p->lda, p->b,
                      p->ldb, beta, p->c, p->ldc);
}

static void check_handle_usable(const fixture_t *f, esmm_operation_t op_a, esmm_operation_t op_b,
                                const char *after);

/* Runs one table row with the given ops through entry e and checks the status,
 * every element of C's buffer (the result where one is due, the untouched
 * bits everywhere else) and, after a bad call, that the handle still works. */
static void run_gemm_case(const fixture_t *f, const gemm_case_t *t, esmm_operation_t op_a,
                          esmm_operation_t op_b, const entry_t *e)
{
    float host_a[BUF_LEN], host_b[BUF_LEN], host_c[BUF_LEN], got[BUF_LEN], want[BUF_LEN];
    fill_operand(host_a, 1u, (t->flags & NAN_A) != 0);
    fill_operand(host_b, 2u, 0);
    fill_operand(host_c, 4u, (t->flags & NAN_C) != 0);
    buffer_put(f->backend, f->a, host_a);
    buffer_put(f->backend, f->b, host_b);
    buffer_put(f->backend, f->c, host_c);

    esmm_gemm_problem_t p = {
        .op_a = (t->flags & BAD_OP_A) ? (esmm_operation_t)t->bad_op : op_a,
        .op_b = (t->flags & BAD_OP_B) ? (esmm_operation_t)t->bad_op : op_b,
        .m = t->m, .n = t->n, .k = t->k, .alpha = t->alpha, .beta = t->beta,
        .a = (t->flags & NULL_A) ? NULL : f->a,
        .b = (t->flags & NULL_B) ? NULL : f->b,
        .c = (t->flags & NULL_C) ? NULL : f->c};
    p.lda = at_least_1(p.op_a == ESMM_OP_T ? t->m : t->k) + t->lda_delta;
    p.ldb = at_least_1(p.op_b == ESMM_OP_T ? t->k : t->n) + t->ldb_delta;
    p.ldc = at_least_1(t->n) + t->ldc_delta;

    esmm_status_t st = call_gemm((t->flags & NULL_HANDLE) ? NULL : f->handle, e, &p,
                                 (t->flags & NULL_ALPHA) ? NULL : &t->alpha,
                                 (t->flags & NULL_BETA) ? NULL : &t->beta);
    CHECK(st == t->expected, "%s %s op %s%s: %s: returned \"%s\", expected \"%s\"",
          backend_label(f->backend), entry_label(e), op_label(op_a), op_label(op_b), t->what,
          esmm_status_string(st), esmm_status_string(t->expected));
    buffer_get(f->backend, got, f->c);

    memcpy(want, host_c, sizeof want);
    if (t->expected == ESMM_STATUS_SUCCESS && t->m > 0 && t->n > 0) {
        double ref[BUF_LEN];
        esmm_gemm_problem_t host = p;
        host.a = host_a;
        host.b = host_b;
        host.c = host_c;
        if (t->m * t->n > BUF_LEN || (t->m - 1) * p.ldc + t->n > BUF_LEN) {
            CHECK(0, "%s: table row too large for the test buffers", t->what);
            return;
        }
        esmm_cpu_reference_gemm(&host, ref, t->n);
        for (int64_t i = 0; i < t->m; i++)
            for (int64_t j = 0; j < t->n; j++)
                want[i * p.ldc + j] = (float)ref[i * t->n + j];
    }
    int bad = 0, first = -1;
    for (int i = 0; i < BUF_LEN; i++) {
        if (got[i] == want[i] || float_bits(got[i]) == float_bits(want[i]))
            continue;
        if (bad++ == 0)
            first = i;
    }
    CHECK(bad == 0,
          "%s %s op %s%s: %s: %d elements of C's buffer wrong, first [%d] = %g, expected %g",
          backend_label(f->backend), entry_label(e), op_label(op_a), op_label(op_b), t->what, bad,
          first, first >= 0 ? (double)got[first] : 0.0, first >= 0 ? (double)want[first] : 0.0);

    if (t->expected != ESMM_STATUS_SUCCESS)
        check_handle_usable(f, op_a, op_b, t->what);
}

static void check_handle_usable(const fixture_t *f, esmm_operation_t op_a, esmm_operation_t op_b,
                                const char *after)
{
    const entry_t entry = {0, NULL};
    gemm_case_t t = valid_case;
    char what[256];
    snprintf(what, sizeof what, "valid call after \"%s\"", after);
    t.what = what;
    run_gemm_case(f, &t, op_a, op_b, &entry);
}

static const esmm_operation_t all_ops[] = {ESMM_OP_N, ESMM_OP_T};

/* Every row of a table, for every op combination, through both entry points. */
static void run_gemm_table(const fixture_t *f, const gemm_case_t *table, size_t count)
{
    const entry_t entries[] = {{0, NULL}, {1, f->kernel}};
    for (size_t r = 0; r < count; r++)
        for (size_t e = 0; e < sizeof entries / sizeof entries[0]; e++)
            for (int oa = 0; oa < 2; oa++)
                for (int ob = 0; ob < 2; ob++)
                    run_gemm_case(f, &table[r], all_ops[oa], all_ops[ob], &entries[e]);
}

/* ---- esmm_sgemm_kernel names -------------------------------------------- */

typedef enum {
    NAME_NULL,
    NAME_EMPTY,
    NAME_UNKNOWN,
    NAME_WITH_SUFFIX,   /* a valid name with one more character */
    NAME_OTHER_BACKEND, /* a kernel of the other backend */
    NAME_OTHER_SKIPPING, /* a zero-skipping path of the other backend (the GPU's union path) */
} kernel_name_kind_t;

static const struct {
    const char *what;
    kernel_name_kind_t kind;
} kernel_name_cases[] = {
    {"NULL kernel name", NAME_NULL},
    {"empty kernel name", NAME_EMPTY},
    {"unknown kernel name", NAME_UNKNOWN},
    {"valid kernel name with a suffix", NAME_WITH_SUFFIX},
    {"kernel name of the other backend", NAME_OTHER_BACKEND},
    {"zero-skipping kernel name of the other backend", NAME_OTHER_SKIPPING},
};

/* The first kernel of the backend f does not run on. */
static const char *other_backend_kernel(const fixture_t *f)
{
    static char cpu_name[64];
    if (f->backend == ESMM_BACKEND_CPU) {
        const char *cuda_name = esmm_cuda_kernel_name(0);
        return cuda_name != NULL ? cuda_name : "cuda-kernel";
    }
    esmm_handle_t cpu = NULL;
    if (esmm_create(&cpu, ESMM_BACKEND_CPU) != ESMM_STATUS_SUCCESS)
        return "cpu";
    snprintf(cpu_name, sizeof cpu_name, "%s", esmm_kernel_name(cpu, 0));
    esmm_destroy(cpu);
    return cpu_name;
}

static void run_kernel_name_cases(const fixture_t *f)
{
    for (size_t r = 0; r < sizeof kernel_name_cases / sizeof kernel_name_cases[0]; r++) {
        char name[128];
        entry_t e = {1, name};
        switch (kernel_name_cases[r].kind) {
        case NAME_NULL: e.kernel = NULL; break;
        case NAME_EMPTY: name[0] = '\0'; break;
        case NAME_UNKNOWN: snprintf(name, sizeof name, "no-such-kernel"); break;
        case NAME_WITH_SUFFIX: snprintf(name, sizeof name, "%sx", f->kernel); break;
        case NAME_OTHER_BACKEND: snprintf(name, sizeof name, "%s", other_backend_kernel(f)); break;
        case NAME_OTHER_SKIPPING:
            snprintf(name, sizeof name, "%s",
                     f->backend == ESMM_BACKEND_CPU ? "sparse-union" : "cpu-skip-joint");
            break;
        }
        gemm_case_t t = valid_case;
        t.what = kernel_name_cases[r].what;
        t.expected = ESMM_STATUS_INVALID_VALUE;
        run_gemm_case(f, &t, ESMM_OP_N, ESMM_OP_T, &e);
    }
}

/* ---- esmm_kernel_name out of range -------------------------------------- */

static const struct {
    const char *what;
    int null_handle;
    int index;
    int from_count; /* index is added to esmm_kernel_count */
} kernel_index_cases[] = {
    {"NULL handle, index 0", 1, 0, 0},
    {"index -1", 0, -1, 0},
    {"index == count", 0, 0, 1},
    {"index == count + 1", 0, 1, 1},
    {"index INT_MIN", 0, INT_MIN, 0},
    {"index INT_MAX", 0, INT_MAX, 0},
};

static void run_kernel_index_cases(const fixture_t *f)
{
    int count = esmm_kernel_count(f->handle);
    for (size_t r = 0; r < sizeof kernel_index_cases / sizeof kernel_index_cases[0]; r++) {
        int index = kernel_index_cases[r].index + (kernel_index_cases[r].from_count ? count : 0);
        const char *name =
            esmm_kernel_name(kernel_index_cases[r].null_handle ? NULL : f->handle, index);
        CHECK(name == NULL, "%s: esmm_kernel_name %s gave \"%s\", expected NULL",
              backend_label(f->backend), kernel_index_cases[r].what, name ? name : "");
    }
    CHECK(esmm_kernel_count(NULL) == 0, "esmm_kernel_count(NULL) should be 0");
}

/* ---- the other calls ---------------------------------------------------- */

/* Each call gets the fixture and the row's arg; most ignore arg. */
static esmm_status_t create_with_null_out(const fixture_t *f, int arg)
{
    (void)arg;
    return esmm_create(NULL, f->backend);
}

/* esmm_create(arg) must fail and set *handle to NULL (it starts as the
 * fixture's handle, so a call that does not touch it is noticed). */
static esmm_status_t create_with_backend(const fixture_t *f, int arg)
{
    esmm_handle_t h = f->handle;
    esmm_status_t st = esmm_create(&h, (esmm_backend_t)arg);
    if (st == ESMM_STATUS_SUCCESS)
        esmm_destroy(h);
    else
        CHECK(h == NULL, "esmm_create(backend %d) failed but left *handle non-NULL", arg);
    return st;
}

static esmm_status_t get_backend_null_handle(const fixture_t *f, int arg)
{
    esmm_backend_t b;
    (void)f;
    (void)arg;
    return esmm_get_backend(NULL, &b);
}

static esmm_status_t get_backend_null_out(const fixture_t *f, int arg)
{
    (void)arg;
    return esmm_get_backend(f->handle, NULL);
}

static esmm_status_t set_stream_null_handle(const fixture_t *f, int arg)
{
    (void)f;
    (void)arg;
    return esmm_set_stream(NULL, NULL);
}

/* A refused stream must leave the handle's stream NULL. */
static esmm_status_t set_stream_non_null(const fixture_t *f, int arg)
{
    static int not_a_stream;
    (void)arg;
    esmm_status_t st = esmm_set_stream(f->handle, &not_a_stream);
    void *stream = &not_a_stream;
    CHECK(esmm_get_stream(f->handle, &stream) == ESMM_STATUS_SUCCESS && stream == NULL,
          "%s: a refused esmm_set_stream changed the stream", backend_label(f->backend));
    return st;
}

static esmm_status_t set_stream_null(const fixture_t *f, int arg)
{
    (void)arg;
    return esmm_set_stream(f->handle, NULL);
}

static esmm_status_t get_stream_null_handle(const fixture_t *f, int arg)
{
    void *stream;
    (void)f;
    (void)arg;
    return esmm_get_stream(NULL, &stream);
}

static esmm_status_t get_stream_null_out(const fixture_t *f, int arg)
{
    (void)arg;
    return esmm_get_stream(f->handle, NULL);
}

static esmm_status_t device_info_null_handle(const fixture_t *f, int arg)
{
    esmm_device_info_t info;
    (void)f;
    (void)arg;
    return esmm_get_device_info(NULL, &info);
}

static esmm_status_t device_info_null_out(const fixture_t *f, int arg)
{
    (void)arg;
    return esmm_get_device_info(f->handle, NULL);
}

static esmm_status_t set_min_planned_work_null_handle(const fixture_t *f, int arg)
{
    (void)f;
    return esmm_set_min_planned_work(NULL, arg);
}

/* A refused value must leave the one set before. */
static esmm_status_t set_min_planned_work_bad(const fixture_t *f, int arg)
{
    const esmm_status_t st = esmm_set_min_planned_work(f->handle, arg);
    int64_t work = -1;
    CHECK(esmm_get_min_planned_work(f->handle, &work) == ESMM_STATUS_SUCCESS &&
              work == ESMM_DEFAULT_MIN_PLANNED_WORK,
          "%s: a refused esmm_set_min_planned_work changed it to %lld",
          backend_label(f->backend), (long long)work);
    return st;
}

static esmm_status_t get_min_planned_work_null_handle(const fixture_t *f, int arg)
{
    int64_t work;
    (void)f;
    (void)arg;
    return esmm_get_min_planned_work(NULL, &work);
}

static esmm_status_t get_min_planned_work_null_out(const fixture_t *f, int arg)
{
    (void)arg;
    return esmm_get_min_planned_work(f->handle, NULL);
}

static esmm_status_t destroy_null(const fixture_t *f, int arg)
{
    (void)f;
    (void)arg;
    return esmm_destroy(NULL);
}

/* Bits of api_case_t.when. */
enum {
    ON_CPU = 1u << 0,
    ON_CUDA = 1u << 1,
    ONLY_WITHOUT_GPU = 1u << 2
};

typedef struct {
    const char *what;
    esmm_status_t (*call)(const fixture_t *f, int arg);
    int arg;
    esmm_status_t expected;
    unsigned when;
} api_case_t;

static const api_case_t api_cases[] = {
    {"esmm_create with NULL out pointer", create_with_null_out, 0, ESMM_STATUS_INVALID_VALUE,
     ON_CPU | ON_CUDA},
    {"esmm_create with backend 3", create_with_backend, 3, ESMM_STATUS_INVALID_VALUE,
     ON_CPU | ON_CUDA},
    {"esmm_create with backend 7", create_with_backend, 7, ESMM_STATUS_INVALID_VALUE,
     ON_CPU | ON_CUDA},
    {"esmm_create with backend -1", create_with_backend, -1, ESMM_STATUS_INVALID_VALUE,
     ON_CPU | ON_CUDA},
    {"esmm_create(ESMM_BACKEND_CUDA) without a GPU", create_with_backend, ESMM_BACKEND_CUDA,
     ESMM_STATUS_NO_DEVICE, ON_CPU | ONLY_WITHOUT_GPU},
    {"esmm_get_backend with NULL handle", get_backend_null_handle, 0,
     ESMM_STATUS_NOT_INITIALIZED, ON_CPU | ON_CUDA},
    {"esmm_get_backend with NULL out pointer", get_backend_null_out, 0,
     ESMM_STATUS_INVALID_VALUE, ON_CPU | ON_CUDA},
    {"esmm_set_stream with NULL handle", set_stream_null_handle, 0, ESMM_STATUS_NOT_INITIALIZED,
     ON_CPU | ON_CUDA},
    {"esmm_set_stream non-NULL on the CPU backend", set_stream_non_null, 0,
     ESMM_STATUS_NOT_SUPPORTED, ON_CPU},
    {"esmm_set_stream NULL", set_stream_null, 0, ESMM_STATUS_SUCCESS, ON_CPU | ON_CUDA},
    {"esmm_get_stream with NULL handle", get_stream_null_handle, 0, ESMM_STATUS_NOT_INITIALIZED,
     ON_CPU | ON_CUDA},
    {"esmm_get_stream with NULL out pointer", get_stream_null_out, 0, ESMM_STATUS_INVALID_VALUE,
     ON_CPU | ON_CUDA},
    {"esmm_get_device_info with NULL handle", device_info_null_handle, 0,
     ESMM_STATUS_NOT_INITIALIZED, ON_CPU | ON_CUDA},
    {"esmm_get_device_info with NULL out pointer", device_info_null_out, 0,
     ESMM_STATUS_INVALID_VALUE, ON_CPU | ON_CUDA},
    {"esmm_set_min_planned_work with NULL handle", set_min_planned_work_null_handle, 0,
     ESMM_STATUS_NOT_INITIALIZED, ON_CPU | ON_CUDA},
    {"esmm_set_min_planned_work(-1)", set_min_planned_work_bad, -1, ESMM_STATUS_INVALID_VALUE,
     ON_CPU | ON_CUDA},
    {"esmm_get_min_planned_work with NULL handle", get_min_planned_work_null_handle, 0,
     ESMM_STATUS_NOT_INITIALIZED, ON_CPU | ON_CUDA},
    {"esmm_get_min_planned_work with NULL out pointer", get_min_planned_work_null_out, 0,
     ESMM_STATUS_INVALID_VALUE, ON_CPU | ON_CUDA},
    {"esmm_destroy(NULL)", destroy_null, 0, ESMM_STATUS_SUCCESS, ON_CPU | ON_CUDA},
};

static void run_api_cases(const fixture_t *f, int gpu_count)
{
    unsigned backend_bit = f->backend == ESMM_BACKEND_CUDA ? ON_CUDA : ON_CPU;
    for (size_t r = 0; r < sizeof api_cases / sizeof api_cases[0]; r++) {
        const api_case_t *t = &api_cases[r];
        if (!(t->when & backend_bit) || ((t->when & ONLY_WITHOUT_GPU) && gpu_count > 0))
            continue;
        esmm_status_t st = t->call(f, t->arg);
        CHECK(st == t->expected, "%s: %s: returned \"%s\", expected \"%s\"",
              backend_label(f->backend), t->what, esmm_status_string(st),
              esmm_status_string(t->expected));
        check_handle_usable(f, ESMM_OP_T, ESMM_OP_N, t->what);
    }
}

/* ---- valid calls that describe the library ------------------------------ */

static void check_status_strings(void)
{
    static const esmm_status_t statuses[] = {
        ESMM_STATUS_SUCCESS,       ESMM_STATUS_NOT_INITIALIZED, ESMM_STATUS_INVALID_VALUE,
        ESMM_STATUS_ALLOC_FAILED,  ESMM_STATUS_NO_DEVICE,       ESMM_STATUS_NOT_SUPPORTED,
        ESMM_STATUS_EXECUTION_FAILED, ESMM_STATUS_INTERNAL_ERROR};
    const size_t count = sizeof statuses / sizeof statuses[0];
    for (size_t i = 0; i < count; i++) {
        const char *s = esmm_status_string(statuses[i]);
        CHECK(s != NULL && s[0] != '\0', "esmm_status_string(%d) is NULL or empty",
              (int)statuses[i]);
        for (size_t j = 0; j < i && s != NULL; j++) {
            const char *other = esmm_status_string(statuses[j]);
            CHECK(other == NULL || strcmp(s, other) != 0,
                  "esmm_status_string(%d) and (%d) are both \"%s\"", (int)statuses[i],
                  (int)statuses[j], s);
        }
    }
    CHECK(esmm_status_string((esmm_status_t)99) != NULL, "esmm_status_string(99) is NULL");
    CHECK(esmm_status_string((esmm_status_t)-1) != NULL, "esmm_status_string(-1) is NULL");
}

static void check_version(void)
{
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", ESMM_VERSION_MAJOR, ESMM_VERSION_MINOR,
             ESMM_VERSION_PATCH);
    const char *v = esmm_version();
    CHECK(v != NULL && v[0] != '\0', "esmm_version() is NULL or empty");
    CHECK(v != NULL && strcmp(v, want) == 0, "esmm_version() is \"%s\", the header says \"%s\"",
          v ? v : "(null)", want);
}

static void check_auto_backend(int gpu_count)
{
    esmm_handle_t h = NULL;
    esmm_backend_t backend = ESMM_BACKEND_AUTO;
    esmm_backend_t expected = gpu_count > 0 ? ESMM_BACKEND_CUDA : ESMM_BACKEND_CPU;
    CHECK(esmm_create(&h, ESMM_BACKEND_AUTO) == ESMM_STATUS_SUCCESS && h != NULL,
          "esmm_create(ESMM_BACKEND_AUTO) failed");
    CHECK(esmm_get_backend(h, &backend) == ESMM_STATUS_SUCCESS && backend == expected,
          "ESMM_BACKEND_AUTO with %d GPUs chose backend %d", gpu_count, (int)backend);
    CHECK(esmm_destroy(h) == ESMM_STATUS_SUCCESS, "esmm_destroy of the AUTO handle failed");
}

static void check_description(const fixture_t *f)
{
    esmm_backend_t backend = ESMM_BACKEND_AUTO;
    CHECK(esmm_get_backend(f->handle, &backend) == ESMM_STATUS_SUCCESS && backend == f->backend,
          "%s: esmm_get_backend gave %d", backend_label(f->backend), (int)backend);

    esmm_device_info_t info;
    memset(&info, 0x5a, sizeof info);
    esmm_status_t st = esmm_get_device_info(f->handle, &info);
    CHECK(st == ESMM_STATUS_SUCCESS, "%s: esmm_get_device_info returned \"%s\"",
          backend_label(f->backend), esmm_status_string(st));
    CHECK(memchr(info.device_name, '\0', sizeof info.device_name) != NULL &&
              memchr(info.build_architectures, '\0', sizeof info.build_architectures) != NULL,
          "%s: esmm_get_device_info left a string unterminated", backend_label(f->backend));
    CHECK(info.build_architectures[0] != '\0', "%s: no build architectures reported",
          backend_label(f->backend));
    if (f->backend == ESMM_BACKEND_CPU) {
        CHECK(info.device_name[0] == '\0' && info.multiprocessors == 0 &&
                  info.compute_capability == 0 && info.global_memory_bytes == 0 &&
                  info.l2_bytes == 0,
              "cpu: esmm_get_device_info should leave the device fields empty");
    } else {
        CHECK(info.device_name[0] != '\0' && info.multiprocessors > 0 &&
                  info.compute_capability > 0 && info.global_memory_bytes > 0 &&
                  info.runtime_version > 0 && info.driver_version > 0,
              "cuda: esmm_get_device_info left a device field empty");
    }

    void *stream = &stream;
    CHECK(esmm_get_stream(f->handle, &stream) == ESMM_STATUS_SUCCESS && stream == NULL,
          "%s: a new handle's stream should be NULL", backend_label(f->backend));
}

/* Every kernel is listed once, by a non-empty name, and computes the valid case. */
static void check_kernel_list(const fixture_t *f)
{
    int count = esmm_kernel_count(f->handle);
    CHECK(count >= 1, "%s: esmm_kernel_count is %d", backend_label(f->backend), count);
    for (int i = 0; i < count; i++) {
        const char *name = esmm_kernel_name(f->handle, i);
        CHECK(name != NULL && name[0] != '\0', "%s: kernel %d has no name",
              backend_label(f->backend), i);
        if (name == NULL)
            continue;
        for (int j = 0; j < i; j++) {
            const char *other = esmm_kernel_name(f->handle, j);
            CHECK(other == NULL || strcmp(name, other) != 0, "%s: kernels %d and %d are both %s",
                  backend_label(f->backend), j, i, name);
        }
        const entry_t e = {1, name};
        for (int oa = 0; oa < 2; oa++)
            for (int ob = 0; ob < 2; ob++)
                run_gemm_case(f, &valid_case, all_ops[oa], all_ops[ob], &e);
    }
}

/* CUDA only: a stream set on the handle is the one it reports and uses. */
static void check_stream_round_trip(const fixture_t *f)
{
    cudaStream_t stream = NULL;
    if (!cuda_ok(cudaStreamCreate(&stream), "cudaStreamCreate"))
        return;
    CHECK(esmm_set_stream(f->handle, stream) == ESMM_STATUS_SUCCESS,
          "cuda: esmm_set_stream with a created stream failed");
    void *got = NULL;
    CHECK(esmm_get_stream(f->handle, &got) == ESMM_STATUS_SUCCESS && got == (void *)stream,
          "cuda: esmm_get_stream does not give back the stream that was set");
    check_handle_usable(f, ESMM_OP_N, ESMM_OP_N, "esmm_set_stream with a created stream");
    CHECK(esmm_set_stream(f->handle, NULL) == ESMM_STATUS_SUCCESS,
          "cuda: esmm_set_stream(NULL) failed");
    cuda_ok(cudaStreamDestroy(stream), "cudaStreamDestroy");
}

/* ---- driver ------------------------------------------------------------- */

static int fixture_open(fixture_t *f, esmm_backend_t backend)
{
    memset(f, 0, sizeof *f);
    f->backend = backend;
    esmm_status_t st = esmm_create(&f->handle, backend);
    CHECK(st == ESMM_STATUS_SUCCESS, "esmm_create(%s) returned \"%s\"", backend_label(backend),
          esmm_status_string(st));
    if (st != ESMM_STATUS_SUCCESS)
        return 0;
    f->kernel = esmm_kernel_name(f->handle, 0);
    f->a = buffer_alloc(backend);
    f->b = buffer_alloc(backend);
    f->c = buffer_alloc(backend);
    CHECK(f->kernel != NULL, "%s: no kernel 0", backend_label(backend));
    return f->kernel != NULL && f->a != NULL && f->b != NULL && f->c != NULL;
}

static void fixture_close(fixture_t *f)
{
    CHECK(esmm_destroy(f->handle) == ESMM_STATUS_SUCCESS, "%s: esmm_destroy failed",
          backend_label(f->backend));
    buffer_free(f->backend, f->a);
    buffer_free(f->backend, f->b);
    buffer_free(f->backend, f->c);
}

static void run_backend(esmm_backend_t backend, int gpu_count)
{
    fixture_t f;
    if (fixture_open(&f, backend)) {
        check_description(&f);
        check_kernel_list(&f);
        run_gemm_table(&f, misuse_cases, sizeof misuse_cases / sizeof misuse_cases[0]);
        run_gemm_table(&f, edge_cases, sizeof edge_cases / sizeof edge_cases[0]);
        run_kernel_name_cases(&f);
        run_kernel_index_cases(&f);
        run_api_cases(&f, gpu_count);
        if (backend == ESMM_BACKEND_CUDA)
            check_stream_round_trip(&f);
    }
    fixture_close(&f);
    printf("%s backend: done\n", backend_label(backend));
}

int main(void)
{
    int gpu_count = esmm_cuda_device_count();
    check_version();
    check_status_strings();
    check_auto_backend(gpu_count);
    run_backend(ESMM_BACKEND_CPU, gpu_count);
    if (gpu_count > 0)
        run_backend(ESMM_BACKEND_CUDA, gpu_count);
    else
        check_skip("no CUDA device: the CUDA backend rows did not run");
    return check_finish();
}
