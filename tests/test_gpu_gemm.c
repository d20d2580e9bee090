/*
 * GPU correctness: every CUDA kernel by name and the esmm_sgemm default path
 * against the float64 CPU reference, over odd shapes, both ops of each
 * operand, alpha/beta cases, padded leading dimensions and misaligned base
 * pointers. In device memory everything around each matrix (guards before and
 * after it, the padding at the end of each row) holds a NaN bit pattern: a
 * kernel that reads it into a result gives NaN, one that writes it changes
 * the bits. Skipped where no CUDA device exists.
 */
#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cpu/cpu_backend.h"
#include "esmm.h"
#include "gemm_problem.h"
#include "test_support.h"
#include "test_support_cuda.h"

/* Poisoned floats before and after each matrix; 128 bytes keep the 16-byte
 * alignment of the allocation, so only the chosen offsets misalign. */
#define GUARD 32
/* |C - reference| <= TOL_FACTOR * (k + 2) * FLT_EPSILON * (|alpha| sum|a||b| + |beta||c|).
 * Any summation order of k products, then alpha and beta*C, stays within
 * (k + 2) unit roundoffs (FLT_EPSILON / 2) of that scale (a split k's
 * partial sums add a few more, far fewer than k): the factor is a margin of
 * 2 over the bound. A lost or extra term is about scale / k, so the bound
 * stays below one up to k of about 2900 (the longest k here is 2500). */
#define TOL_FACTOR 1.0
/* How long the stream test holds its stream before giving up on the host. */
#define GATE_TIMEOUT_S 10.0

typedef enum {
    SWEEP_FULL,    /* every op, alpha/beta, padding and offset combination */
    SWEEP_REDUCED, /* two layouts per op combination */
} sweep_t;

typedef struct {
    int64_t m, n, k;
    sweep_t sweep;
    int upper_ladder_only; /* too slow for the lower half of the ladder */
} shape_t;

static const shape_t shapes[] = {
    {1, 1, 1, SWEEP_FULL, 0},
    {1, 300, 1, SWEEP_FULL, 0},   /* 1 x N x 1 */
    {300, 1, 257, SWEEP_FULL, 0}, /* M x 1 x K */
    {1, 1, 300, SWEEP_FULL, 0},   /* one long dot product */
    {3, 2, 1000, SWEEP_FULL, 0},  /* tiny C, long K */
    {7, 5, 0, SWEEP_FULL, 0},     /* k == 0: C = beta * C */
    {7, 13, 11, SWEEP_FULL, 0},
    {31, 37, 41, SWEEP_FULL, 0},
    {127, 131, 137, SWEEP_FULL, 0},
    {257, 263, 269, SWEEP_FULL, 0},
    {129, 67, 9, SWEEP_FULL, 0},
    {200, 300, 17, SWEEP_FULL, 0},
    {64, 128, 256, SWEEP_FULL, 0}, /* tile multiples: vector loads with no padding; split-K
                                      into 8 ranges of one k tile */
    {600, 520, 700, SWEEP_REDUCED, 0},
    {1000, 1024, 999, SWEEP_REDUCED, 1},
    {97, 10, 2500, SWEEP_REDUCED, 1}, /* split-K: 1 C tile, k in 27 ranges, the last of 4 */
    /* The dense kernel's narrow tiles (C at most 64 wide or tall), at their edge
     * and past it, with and without split-K, the narrow side n or m; 64x32. */
    {65, 64, 300, SWEEP_REDUCED, 1},
    {64, 65, 40, SWEEP_REDUCED, 1},
    {2000, 33, 700, SWEEP_REDUCED, 1},
    {33, 1000, 99, SWEEP_REDUCED, 1},
    /* 33 to 64 wide with at least 256 CTAs of 128x64: those tiles, split and not. */
    {4097, 36, 2100, SWEEP_REDUCED, 1},
    {40, 32769, 64, SWEEP_REDUCED, 1},
};

typedef struct {
    float alpha, beta;
} scalars_t;

/* beta == 0 runs with C still full of poison: the NaN must be ignored. */
static const scalars_t scalar_cases[] = {{1.0f, 0.0f}, {-0.5f, 2.0f}, {2.0f, 1.0f}};
/* Odd paddings leave rows misaligned, so vector loads must fall back. */
static const int64_t ld_pads[] = {0, 1, 3, 5};

typedef struct {
    int64_t a, b, c; /* floats the matrix starts after its 16-byte aligned slot */
} offsets_t;

static const offsets_t offset_cases[] = {{0, 0, 0}, {1, 1, 1}, {2, 0, 3}};

#define MAX_CONFIGS (4 * COUNT_OF(scalar_cases) * COUNT_OF(ld_pads) * COUNT_OF(offset_cases))

typedef struct {
    esmm_operation_t op_a, op_b;
    scalars_t s;
    int64_t pad;
    offsets_t off;
} config_t;

/* The logical problem: op(A) m x k, op(B) k x n, C m x n, row-major and tight. */
typedef struct {
    int64_t m, n, k;
    float *a, *b, *c;
    double *product;     /* sum_k op(A) op(B): the float64 reference with alpha 1, beta 0 */
    double *abs_product; /* sum_k |op(A)| |op(B)|: the scale of the rounding error */
} operands_t;

/* Where a matrix sits in its buffer. */
typedef struct {
    int64_t rows, cols; /* as stored */
    int64_t ld;
    int64_t lead; /* floats before element (0, 0): the guard and the offset */
    int64_t len;  /* floats the buffer uses, guards included */
} layout_t;

/* A device buffer and its host staging copy. */
typedef struct {
    float *dev;
    float *host;
    int64_t cap;
} buffer_t;

typedef struct {
    buffer_t a, b, c;
    float *got, *again; /* C read back */
    double *want, *scale;
} workspace_t;

/* ---- helpers ------------------------------------------------------------ */

static uint64_t rng_state;

/* Uniform in (-1, 1) and never 0, so every product carries information.
 * This test's own stream (a 64-bit LCG, one draw per value), not the
 * SplitMix64 stream of test_support.h: the seeds below select its values. */
static float next_value(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    const uint32_t x = (uint32_t)(rng_state >> 40); /* 24 bits */
    return (float)(((double)x + 0.5) / 8388608.0 - 1.0);
}

static const char *path_label(const char *kernel)
{
    return kernel != NULL ? kernel : "esmm_sgemm";
}

/* ---- operands and references -------------------------------------------- */

static operands_t operands_alloc(int64_t m, int64_t n, int64_t k)
{
    operands_t o = {m, n, k, NULL, NULL, NULL, NULL, NULL};
    o.a = host_alloc(m * k, sizeof(float));
    o.b = host_alloc(k * n, sizeof(float));
    o.c = host_alloc(m * n, sizeof(float));
    o.product = host_alloc(m * n, sizeof(double));
    o.abs_product = host_alloc(m * n, sizeof(double));
    return o;
}

static void operands_fill(operands_t *o, uint64_t seed)
{
    rng_state = seed;
    for (int64_t i = 0; i < o->m * o->k; i++)
        o->a[i] = next_value();
    for (int64_t i = 0; i < o->k * o->n; i++)
        o->b[i] = next_value();
    for (int64_t i = 0; i < o->m * o->n; i++)
        o->c[i] = next_value();
}

/* product from the library's float64 reference; abs_product by the same
 * definition over absolute values. */
static void operands_reference(operands_t *o)
{
    const esmm_gemm_problem_t p = {
        .op_a = ESMM_OP_N, .op_b = ESMM_OP_N, .m = o->m, .n = o->n, .k = o->k,
        .alpha = 1.0f, .beta = 0.0f,
        .a = o->a, .lda = o->k > 1 ? o->k : 1,
        .b = o->b, .ldb = o->n > 1 ? o->n : 1,
        .c = o->c, .ldc = o->n > 1 ? o->n : 1};
    esmm_cpu_reference_gemm(&p, o->product, o->n);

    const int64_t m = o->m, n = o->n, k = o->k;
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
    for (int64_t i = 0; i < m; i++) {
        double *row = o->abs_product + i * n;
        for (int64_t j = 0; j < n; j++)
            row[j] = 0.0;
        for (int64_t kk = 0; kk < k; kk++) {
            const double a = fabs((double)o->a[i * k + kk]);
            const float *b_row = o->b + kk * n;
            for (int64_t j = 0; j < n; j++)
                row[j] += a * fabs((double)b_row[j]);
        }
    }
}

static void operands_free(operands_t *o)
{
    free(o->a);
    free(o->b);
    free(o->c);
    free(o->product);
    free(o->abs_product);
}

/* ---- device layout ------------------------------------------------------ */

/* Enough for either op of a rows x cols operand, any padding and offset used. */
static int64_t buffer_cap(int64_t rows, int64_t cols)
{
    return 2 * GUARD + 3 + (rows + 6) * (cols + 6);
}

static buffer_t buffer_alloc(int64_t cap)
{
    buffer_t b = {NULL, NULL, cap};
    b.dev = device_alloc((size_t)cap * sizeof(float));
    b.host = host_alloc(cap, sizeof(float));
    return b;
}

static void buffer_free(buffer_t *b)
{
    device_free(b->dev);
    free(b->host);
}

static workspace_t workspace_alloc(const operands_t *o)
{
    workspace_t w;
    w.a = buffer_alloc(buffer_cap(o->m, o->k));
    w.b = buffer_alloc(buffer_cap(o->k, o->n));
    w.c = buffer_alloc(buffer_cap(o->m, o->n));
    w.got = host_alloc(w.c.cap, sizeof(float));
    w.again = host_alloc(w.c.cap, sizeof(float));
    w.want = host_alloc(o->m * o->n, sizeof(double));
    w.scale = host_alloc(o->m * o->n, sizeof(double));
    return w;
}

static void workspace_free(workspace_t *w)
{
    buffer_free(&w->a);
    buffer_free(&w->b);
    buffer_free(&w->c);
    free(w->got);
    free(w->again);
    free(w->want);
    free(w->scale);
}

/* Poisons the staging copy, writes the logical op_rows x op_cols matrix x
 * (NULL: none) where op stores it, and returns where it lies. */
static layout_t stage_matrix(buffer_t *buf, esmm_operation_t op, const float *x, int64_t op_rows,
                             int64_t op_cols, int64_t pad, int64_t offset)
{
    layout_t l;
    l.rows = op == ESMM_OP_N ? op_rows : op_cols;
    l.cols = op == ESMM_OP_N ? op_cols : op_rows;
    l.ld = (l.cols > 1 ? l.cols : 1) + pad;
    l.lead = GUARD + offset;
    l.len = l.lead + l.rows * l.ld + GUARD;
    const float poison = poison_value();
    for (int64_t i = 0; i < l.len; i++)
        buf->host[i] = poison;
    float *base = buf->host + l.lead;
    for (int64_t r = 0; x != NULL && r < op_rows; r++)
        for (int64_t c = 0; c < op_cols; c++) {
            const int64_t at = op == ESMM_OP_N ? r * l.ld + c : c * l.ld + r;
            base[at] = x[r * op_cols + c];
        }
    return l;
}

static void upload(const buffer_t *buf, const layout_t *l)
{
    device_upload(buf->dev, buf->host, (size_t)l->len * sizeof(float));
}

/* Waits for the legacy default stream the handle uses, then copies C back. */
static void download(float *dst, const buffer_t *buf, const layout_t *l)
{
    cuda_must(cudaDeviceSynchronize(), "cudaDeviceSynchronize after a GEMM");
    device_download(dst, buf->dev, (size_t)l->len * sizeof(float));
}

/* ---- one configuration -------------------------------------------------- */

/* A staged configuration: layouts of the three operands and the problem with
 * device pointers. */
typedef struct {
    layout_t la, lb, lc;
    esmm_gemm_problem_t p;
    char label[200];
} staged_t;

/* Stages and uploads A and B, stages C (uploaded per run), and computes the
 * expected C and its error scale. */
static staged_t stage_config(workspace_t *w, const operands_t *o, const config_t *cfg)
{
    staged_t s;
    const float alpha = cfg->s.alpha, beta = cfg->s.beta;
    s.la = stage_matrix(&w->a, cfg->op_a, o->a, o->m, o->k, cfg->pad, cfg->off.a);
    s.lb = stage_matrix(&w->b, cfg->op_b, o->b, o->k, o->n, cfg->pad, cfg->off.b);
    s.lc = stage_matrix(&w->c, ESMM_OP_N, beta != 0.0f ? o->c : NULL, o->m, o->n, cfg->pad,
                        cfg->off.c);
    upload(&w->a, &s.la);
    upload(&w->b, &s.lb);

    s.p = (esmm_gemm_problem_t){
        .op_a = cfg->op_a, .op_b = cfg->op_b, .m = o->m, .n = o->n, .k = o->k,
        .alpha = alpha, .beta = beta,
        .a = w->a.dev + s.la.lead, .lda = s.la.ld,
        .b = w->b.dev + s.lb.lead, .ldb = s.lb.ld,
        .c = w->c.dev + s.lc.lead, .ldc = s.lc.ld};

    /* The reference's own formula: alpha * sum + beta * C in float64, C ignored when beta == 0. */
    for (int64_t i = 0; i < o->m * o->n; i++) {
        const double scaled_c = beta == 0.0f ? 0.0 : (double)beta * (double)o->c[i];
        w->want[i] = (double)alpha * o->product[i] + scaled_c;
        w->scale[i] = fabs((double)alpha) * o->abs_product[i] + fabs(scaled_c);
    }
    snprintf(s.label, sizeof s.label,
             "%lldx%lldx%lld op %s%s alpha %g beta %g pad %lld offsets %lld/%lld/%lld",
             (long long)o->m, (long long)o->n, (long long)o->k, op_label(cfg->op_a),
             op_label(cfg->op_b), (double)alpha, (double)beta, (long long)cfg->pad,
             (long long)cfg->off.a, (long long)cfg->off.b, (long long)cfg->off.c);
    return s;
}

static esmm_status_t run_path(esmm_handle_t h, const char *kernel, const esmm_gemm_problem_t *p)
{
    if (kernel == NULL)
        return esmm_sgemm(h, p->op_a, p->op_b, p->m, p->n, p->k, &p->alpha, p->a, p->lda, p->b,
                          p->ldb, &p->beta, p->c, p->ldc);
    return esmm_sgemm_kernel(h, kernel, p->op_a, p->op_b, p->m, p->n, p->k, &p->alpha, p->a,
                             p->lda, p->b, p->ldb, &p->beta, p->c, p->ldc);
}

/* Checks every float of C's buffer: the result inside the matrix, the
 * untouched poison everywhere else. Returns the number of bad floats and
 * describes the first. */
static int64_t verify_c(const float *got, const layout_t *lc, const operands_t *o,
                        const workspace_t *w, char *first, size_t first_len)
{
    int64_t bad = 0;
    for (int64_t idx = 0; idx < lc->len; idx++) {
        const int64_t rel = idx - lc->lead;
        const int64_t i = rel >= 0 ? rel / lc->ld : -1;
        const int64_t j = rel >= 0 ? rel % lc->ld : -1;
        const int inside = i >= 0 && i < o->m && j < o->n;
        double want = 0.0, tol = 0.0;
        int ok;
        if (inside) {
            want = w->want[i * o->n + j];
            tol = TOL_FACTOR * (double)(o->k + 2) * FLT_EPSILON * w->scale[i * o->n + j];
            ok = close_enough(got[idx], want, tol);
        } else {
            ok = float_bits(got[idx]) == POISON_BITS;
        }
        if (ok || bad++ > 0)
            continue;
        if (inside)
            snprintf(first, first_len, "C(%lld, %lld) = %.9g, reference %.9g, tolerance %.3g",
                     (long long)i, (long long)j, (double)got[idx], want, tol);
        else
            snprintf(first, first_len,
                     "buffer[%lld] outside the matrix (guard or row padding) overwritten: %.9g "
                     "(bits %08x)",
                     (long long)idx, (double)got[idx], (unsigned)float_bits(got[idx]));
    }
    return bad;
}

/* Uploads the staged C, runs one path, reads C back into dst and checks it. */
static void run_and_verify(esmm_handle_t h, const char *kernel, workspace_t *w, float *dst,
                           const operands_t *o, const staged_t *s)
{
    upload(&w->c, &s->lc);
    esmm_status_t st = run_path(h, kernel, &s->p);
    CHECK(st == ESMM_STATUS_SUCCESS, "%s %s: returned \"%s\"", path_label(kernel), s->label,
          esmm_status_string(st));
    download(dst, &w->c, &s->lc);
    char first[256] = "";
    int64_t bad = verify_c(dst, &s->lc, o, w, first, sizeof first);
    CHECK(bad == 0, "%s %s: %lld bad floats, first: %s", path_label(kernel), s->label,
          (long long)bad, first);
}

/* ---- the sweep ---------------------------------------------------------- */

static const esmm_operation_t both_ops[] = {ESMM_OP_N, ESMM_OP_T};

static int make_configs(sweep_t sweep, config_t *out)
{
    int count = 0;
    for (int o = 0; o < 4; o++) {
        const esmm_operation_t op_a = both_ops[o / 2], op_b = both_ops[o % 2];
        if (sweep == SWEEP_REDUCED) {
            out[count++] = (config_t){op_a, op_b, scalar_cases[o % 3], 0, offset_cases[0]};
            out[count++] = (config_t){op_a, op_b, scalar_cases[(o + 1) % 3], 3,
                                      offset_cases[1 + o % 2]};
            continue;
        }
        for (size_t si = 0; si < COUNT_OF(scalar_cases); si++)
            for (size_t pi = 0; pi < COUNT_OF(ld_pads); pi++)
                for (size_t oi = 0; oi < COUNT_OF(offset_cases); oi++)
                    out[count++] =
                        (config_t){op_a, op_b, scalar_cases[si], ld_pads[pi], offset_cases[oi]};
    }
    return count;
}

/* Paths are the kernels by ladder index, then esmm_sgemm (kernel NULL). */
static const char *path_kernel(esmm_handle_t h, int path)
{
    return path < esmm_kernel_count(h) ? esmm_kernel_name(h, path) : NULL;
}

static void sweep_shape(esmm_handle_t h, const shape_t *shape, uint64_t seed)
{
    const double start = now_seconds();
    const int kernels = esmm_kernel_count(h);
    operands_t o = operands_alloc(shape->m, shape->n, shape->k);
    operands_fill(&o, seed);
    operands_reference(&o);
    workspace_t w = workspace_alloc(&o);

    static config_t configs[MAX_CONFIGS];
    const int config_count = make_configs(shape->sweep, configs);
    int runs = 0;
    for (int ci = 0; ci < config_count; ci++) {
        const staged_t s = stage_config(&w, &o, &configs[ci]);
        for (int path = 0; path <= kernels; path++) {
            if (shape->upper_ladder_only && path < kernels / 2)
                continue;
            const char *kernel = path_kernel(h, path);
            run_and_verify(h, kernel, &w, w.got, &o, &s);
            runs++;
            if (kernel != NULL)
                continue;
            /* esmm_sgemm must be deterministic: a second run gives the same bits. */
            run_and_verify(h, kernel, &w, w.again, &o, &s);
            CHECK(memcmp(w.got, w.again, (size_t)s.lc.len * sizeof(float)) == 0,
                  "esmm_sgemm %s: two runs on the same inputs differ", s.label);
        }
    }
    printf("%5lld x %5lld x %5lld: %3d layouts, %4d runs, %.2f s\n", (long long)shape->m,
           (long long)shape->n, (long long)shape->k, config_count, runs, now_seconds() - start);
    workspace_free(&w);
    operands_free(&o);
}

/* ---- NaN and Inf -------------------------------------------------------- */

/* NaN and Inf in the inputs come out as the reference gives them on every
 * path: NaN rows and columns, Inf * 0 = NaN, Inf * x = +-Inf, and an Inf in C
 * with beta != 0. */
static void check_non_finite(esmm_handle_t h)
{
    operands_t o = operands_alloc(37, 41, 29);
    operands_fill(&o, 0x5eed0001u);
    const int64_t n = o.n, k = o.k;
    o.a[3 * k + 5] = NAN;
    o.a[10 * k + 7] = INFINITY;
    for (int64_t j = 0; j < n; j += 3)
        o.b[7 * n + j] = 0.0f; /* Inf * 0 in row 10 */
    o.a[20 * k + (k - 1)] = -INFINITY;
    o.b[4 * n + 9] = NAN;
    o.c[30 * n + 2] = INFINITY;
    operands_reference(&o);
    workspace_t w = workspace_alloc(&o);

    const config_t configs[] = {
        {ESMM_OP_N, ESMM_OP_N, {-0.5f, 1.0f}, 0, {0, 0, 0}},
        {ESMM_OP_T, ESMM_OP_T, {2.0f, 1.0f}, 1, {1, 1, 1}},
        {ESMM_OP_T, ESMM_OP_N, {1.0f, -2.0f}, 3, {2, 0, 3}},
    };
    const int kernels = esmm_kernel_count(h);
    for (size_t ci = 0; ci < COUNT_OF(configs); ci++) {
        staged_t s = stage_config(&w, &o, &configs[ci]);
        strncat(s.label, " with NaN/Inf", sizeof s.label - strlen(s.label) - 1);
        for (int path = 0; path <= kernels; path++)
            run_and_verify(h, path_kernel(h, path), &w, w.got, &o, &s);
    }
    workspace_free(&w);
    operands_free(&o);
}

/* ---- streams ------------------------------------------------------------ */

typedef struct {
    atomic_int open;
    atomic_int timed_out;
} gate_t;

/* Queued on the stream ahead of the GEMM: holds everything behind it until
 * the host opens the gate, or the timeout passes (so a library that waits for
 * its own stream cannot hang the test). */
static void CUDART_CB hold_stream(void *arg)
{
    gate_t *gate = arg;
    const double start = now_seconds();
    while (!atomic_load(&gate->open)) {
        if (now_seconds() - start > GATE_TIMEOUT_S) {
            atomic_store(&gate->timed_out, 1);
            return;
        }
    }
}

/* esmm_sgemm on a created non-blocking stream: it returns without waiting,
 * its work waits behind what was queued on that stream before it (so it runs
 * on that stream, not on the default one), and the result is right. */
static void check_stream(esmm_handle_t h)
{
    operands_t o = operands_alloc(127, 131, 137);
    operands_fill(&o, 0x5eed0002u);
    operands_reference(&o);
    workspace_t w = workspace_alloc(&o);
    const config_t cfg = {ESMM_OP_N, ESMM_OP_T, {2.0f, 1.0f}, 1, {1, 0, 1}};
    staged_t s = stage_config(&w, &o, &cfg);
    strncat(s.label, " on a created stream", sizeof s.label - strlen(s.label) - 1);
    upload(&w.c, &s.lc);
    const size_t c_bytes = (size_t)s.lc.len * sizeof(float);

    cudaStream_t work = NULL, reader = NULL;
    void *pinned = NULL;
    cuda_must(cudaStreamCreateWithFlags(&work, cudaStreamNonBlocking), "cudaStreamCreate");
    cuda_must(cudaStreamCreateWithFlags(&reader, cudaStreamNonBlocking), "cudaStreamCreate");
    cuda_must(cudaMallocHost(&pinned, c_bytes), "cudaMallocHost");

    CHECK(esmm_set_stream(h, work) == ESMM_STATUS_SUCCESS, "esmm_set_stream failed");
    void *current = NULL;
    CHECK(esmm_get_stream(h, &current) == ESMM_STATUS_SUCCESS && current == (void *)work,
          "esmm_get_stream does not give back the stream that was set");

    gate_t gate;
    atomic_init(&gate.open, 0);
    atomic_init(&gate.timed_out, 0);
    cuda_must(cudaLaunchHostFunc(work, hold_stream, &gate), "cudaLaunchHostFunc");
    esmm_status_t st = run_path(h, NULL, &s.p);
    CHECK(st == ESMM_STATUS_SUCCESS, "esmm_sgemm %s: returned \"%s\"", s.label,
          esmm_status_string(st));
    /* While the gate holds the stream, C must still be what was uploaded. */
    cuda_must(cudaMemcpyAsync(pinned, w.c.dev, c_bytes, cudaMemcpyDeviceToHost, reader),
              "cudaMemcpyAsync");
    cuda_must(cudaStreamSynchronize(reader), "cudaStreamSynchronize(reader)");
    CHECK(memcmp(pinned, w.c.host, c_bytes) == 0,
          "esmm_sgemm %s: C changed while the handle's stream was held: the work did not "
          "run on that stream",
          s.label);
    atomic_store(&gate.open, 1);
    cuda_must(cudaStreamSynchronize(work), "cudaStreamSynchronize(work)");
    /* compute-sanitizer's initcheck serialises the stream work it tracks, so
     * there (ESMM_TEST_SERIALIZED set) only the results are checked. */
    CHECK(!atomic_load(&gate.timed_out) || getenv("ESMM_TEST_SERIALIZED") != NULL,
          "esmm_sgemm %s: the call waited for work queued on its stream", s.label);

    download(w.got, &w.c, &s.lc);
    char first[256] = "";
    int64_t bad = verify_c(w.got, &s.lc, &o, &w, first, sizeof first);
    CHECK(bad == 0, "esmm_sgemm %s: %lld bad floats, first: %s", s.label, (long long)bad, first);

    CHECK(esmm_set_stream(h, NULL) == ESMM_STATUS_SUCCESS, "esmm_set_stream(NULL) failed");
    cuda_must(cudaFreeHost(pinned), "cudaFreeHost");
    cuda_must(cudaStreamDestroy(work), "cudaStreamDestroy");
    cuda_must(cudaStreamDestroy(reader), "cudaStreamDestroy");
    workspace_free(&w);
    operands_free(&o);
}

/* ---- driver ------------------------------------------------------------- */

int main(void)
{
    if (!cuda_device_present("GPU GEMM tests"))
        return check_finish();

    esmm_handle_t h = NULL;
    esmm_status_t st = esmm_create(&h, ESMM_BACKEND_CUDA);
    CHECK(st == ESMM_STATUS_SUCCESS, "esmm_create(ESMM_BACKEND_CUDA) returned \"%s\"",
          esmm_status_string(st));
    if (st != ESMM_STATUS_SUCCESS)
        return check_finish();

    esmm_device_info_t info;
    if (esmm_get_device_info(h, &info) == ESMM_STATUS_SUCCESS)
        printf("device: %s, sm_%d, %d SMs\n", info.device_name, info.compute_capability,
               info.multiprocessors);
    const int kernels = esmm_kernel_count(h);
    CHECK(kernels >= 1, "the CUDA backend lists %d kernels", kernels);
    printf("paths:");
    for (int path = 0; path <= kernels; path++)
        printf(" %s", path_label(path_kernel(h, path)));
    printf("\n");

    const double start = now_seconds();
    for (size_t i = 0; i < COUNT_OF(shapes); i++)
        sweep_shape(h, &shapes[i], 0x5eed1000u + i);
    check_non_finite(h);
    check_stream(h);
    CHECK(esmm_destroy(h) == ESMM_STATUS_SUCCESS, "esmm_destroy failed");
    printf("total %.2f s\n", now_seconds() - start);
    return check_finish();
}
