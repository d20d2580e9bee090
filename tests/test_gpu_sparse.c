/*
 * Zero skipping at sizes where the CUDA kernels run many tiles and long k
 * segments: every skip kernel by name, esmm_sgemm and esmm_sgemm_patterns
 * with a cached B against the dense "pipelined" kernel bit for bit, on
 * strip-generated operands (each 32-row strip of op(A) keeps column k with
 * probability d, each 32-column strip of op(B) keeps row k; exact zeros
 * elsewhere). The dense result is checked against float64 at sampled
 * elements, the planner's choice at density 0.125 and 1, a created
 * non-blocking stream, and the extraction timer. Skipped where no CUDA device
 * exists.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "check.h"
#include "cuda/cuda_backend.h" /* ESMM_SPARSE_WORK_*: the planner's rule */
#include "esmm.h"
#include "patterns/pattern_layout.h"

#define COUNT_OF(x) (sizeof(x) / sizeof((x)[0]))
/* Poisoned floats before and after C (16-byte aligned slots). */
#define GUARD 32
#define POISON_BITS 0x7FDEAD01u
/* Elements of the dense result checked against float64. The bound is the
 * first-order bound of a float sum of k products, alpha and beta * C
 * ((k + 3) unit roundoffs of the absolute scale), with a margin of 4. */
#define SAMPLES 2048
#define TOL_FACTOR 2.0
#define STAT_TOL 1e-12

typedef struct {
    int64_t m, n, k;
    int64_t pad, offset; /* floats of padding per stored row; of base offset */
} shape_t;

static const shape_t shapes[] = {
    {1024, 1024, 1024, 0, 0},
    {1000, 777, 2049, 1, 1}, /* odd everything, misaligned rows and bases */
    {4096, 4096, 256, 0, 0},
};

typedef struct {
    double a, b; /* strip densities of op(A) and op(B) */
} density_t;

static const density_t densities[] = {
    {0.125, 0.125}, {0.25, 0.25}, {0.5, 0.5}, {1.0, 1.0}, {0.125, 1.0}, {1.0, 0.125},
};

static const esmm_operation_t both_ops[] = {ESMM_OP_N, ESMM_OP_T};

/* ---- helpers ------------------------------------------------------------ */

static void cuda_must(cudaError_t err, const char *what)
{
    if (err == cudaSuccess)
        return;
    CHECK(0, "%s: %s (stopping: the CUDA context may be unusable)", what, cudaGetErrorString(err));
    exit(check_finish());
}

static void *host_alloc(int64_t count, size_t size)
{
    void *p = malloc((size_t)(count > 0 ? count : 1) * size);
    if (p == NULL) {
        CHECK(0, "out of host memory");
        exit(check_finish());
    }
    return p;
}

static float *device_alloc(int64_t count)
{
    void *p = NULL;
    cuda_must(cudaMalloc(&p, (size_t)count * sizeof(float)), "cudaMalloc");
    return p;
}

static int64_t min_i64(int64_t x, int64_t y)
{
    return x < y ? x : y;
}

static uint32_t float_bits(float x)
{
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    return bits;
}

static float poison_value(void)
{
    const uint32_t bits = POISON_BITS;
    float x;
    memcpy(&x, &bits, sizeof x);
    return x;
}

static double now_seconds(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t rng_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double rng_uniform(uint64_t *state)
{
    return (double)(rng_next(state) >> 11) * 0x1.0p-53;
}

/* Magnitude in [0.25, 1), random sign: never zero, and no product underflows. */
static float nonzero_value(uint64_t *state)
{
    const float magnitude = (float)(0.25 + 0.75 * rng_uniform(state));
    return rng_next(state) & 1 ? -magnitude : magnitude;
}

static const char *op_label(esmm_operation_t op)
{
    return op == ESMM_OP_N ? "N" : "T";
}

/* ---- one case ----------------------------------------------------------- */

/* A stored operand: x(i, kk) of op(X) lives at x[i * i_stride + kk * k_stride],
 * i running along the strips (rows of op(A), columns of op(B)). */
typedef struct {
    float *host, *dev;
    int64_t ld, len;
    int64_t rows, i_stride, k_stride; /* in floats, from the first element */
} operand_t;

/* Storage of op(X) (strip dimension `rows` by k), transposed where op says. */
static operand_t operand_alloc(int strip_along_rows, int64_t rows, int64_t k, int64_t pad,
                               int64_t offset)
{
    operand_t x;
    const int64_t stored_rows = strip_along_rows ? rows : k;
    const int64_t stored_cols = strip_along_rows ? k : rows;
    x.ld = stored_cols + pad;
    x.len = offset + stored_rows * x.ld;
    x.rows = rows;
    x.i_stride = strip_along_rows ? x.ld : 1;
    x.k_stride = strip_along_rows ? 1 : x.ld;
    x.host = host_alloc(x.len, sizeof(float));
    x.dev = device_alloc(x.len);
    return x;
}

static void operand_free(operand_t *x)
{
    free(x->host);
    cuda_must(cudaFree(x->dev), "cudaFree");
}

/* Strip generator; NaN in the padding, which no path may read. Returns, per
 * kk, how many strips hold a nonzero there. */
static void fill_strips(operand_t *x, int64_t offset, int64_t k, double density, uint64_t *rng,
                        unsigned long long *counts)
{
    const float poison = poison_value();
    for (int64_t i = 0; i < x->len; i++)
        x->host[i] = poison;
    float *base = x->host + offset;
    for (int64_t kk = 0; kk < k; kk++)
        counts[kk] = 0;
    for (int64_t i0 = 0; i0 < x->rows; i0 += ESMM_PATTERN_STRIP)
        for (int64_t kk = 0; kk < k; kk++) {
            const int on = rng_uniform(rng) < density;
            counts[kk] += (unsigned long long)on;
            for (int64_t i = i0; i < min_i64(x->rows, i0 + ESMM_PATTERN_STRIP); i++)
                base[i * x->i_stride + kk * x->k_stride] = on ? nonzero_value(rng) : 0.0f;
        }
    cuda_must(cudaMemcpy(x->dev, x->host, (size_t)x->len * sizeof(float), cudaMemcpyHostToDevice),
              "cudaMemcpy to device");
}

typedef struct {
    esmm_handle_t h;
    esmm_gemm_problem_fields_unused_t *unused;
} unused_t;

typedef struct {
    int64_t m, n, k;
    esmm_operation_t op_a, op_b;
    float alpha, beta;
    operand_t a, b;
    int64_t offset;
    /* C: guards, then m rows of ldc */
    float *c_host, *c_dev, *dense, *got;
    int64_t ldc, c_len;
    const float *a_ptr, *b_ptr; /* device pointers to element (0, 0) */
    float *c_ptr;
    double density_a, density_b, work_fraction;
    char label[160];
} case_t;
EOF
