/*
 * Zero skipping, on whatever backend ESMM_BACKEND_AUTO gives (the CPU backend
 * where no GPU exists; on CUDA the operands go through device memory).
 *
 * Every path — esmm_sgemm, each skip kernel by name, esmm_sgemm_patterns with
 * cached A and/or B patterns, and with both keeping their operands' copies
 * (esmm_pattern_keep_copy) — must give the bits of the backend's dense
 * kernel (DESIGN.md, Exactness), and the dense kernel must be within rounding
 * of the float64 reference. Operands come from the strip generator (each
 * 32-row strip of op(A) keeps column k with probability d, each 32-column
 * strip of op(B) keeps row k, the rest exact zeros), element-wise zeros,
 * all-zero operands and a single nonzero; shapes are no multiple of any tile;
 * all four op combinations, two alpha/beta cases, tight and padded leading
 * dimensions with base pointers one float off. NaN and +-Inf sit in zero
 * slices of the other operand. Also checked: what esmm_get_last_info reports
 * (densities, work, the planner's choice, including at density 0 and 1), the
 * pattern API's misuse table and the caller's workspace.
 */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cpu/cpu_backend.h"
#include "cuda/cuda_backend.h" /* esmm_plan_decide: the planner's rule; ESMM_SKIP_BY_* */
#include "plan/plan.h"          /* ESMM_PLAN_CPU_SKIP_BELOW */
#include "esmm.h"
#include "gemm_problem.h"
#include "patterns/pattern_layout.h"
#include "test_support.h"
#include "test_support_cuda.h"

/* Poisoned floats before and after each matrix; 128 bytes keep the 16-byte
 * alignment of the allocation, so only the chosen offsets misalign. The
 * poison (POISON_BITS) also fills C where beta == 0. */
#define GUARD 32
/*
 * |C - reference| <= TOL_FACTOR * (k + 3) * FLT_EPSILON * (|alpha| sum|a||b| + |beta||c|).
 * A float sum of k products, fused or not, in any order, is within k unit
 * roundoffs (u = FLT_EPSILON / 2) of sum|a||b| to first order; alpha times it,
 * beta times C and their sum add three more. TOL_FACTOR 2 is a margin of 4
 * over that bound.
 */
#define TOL_FACTOR 2.0
/* Statistics the library reports against the ones recomputed here. */
#define STAT_TOL 1e-12

/* ---- helpers ------------------------------------------------------------ */

static int near(double got, double want)
{
    return fabs(got - want) <= STAT_TOL;
}

/* ---- the backend -------------------------------------------------------- */

/* The handle and the kernels its paths are named by. */
typedef struct {
    esmm_handle_t h;
    esmm_backend_t backend;
    const char *dense;   /* every path is compared with this kernel */
    const char *skip[3]; /* skipping by A, by B, by both */
} target_t;

static const esmm_skip_by_t skip_modes[3] = {ESMM_SKIP_BY_A, ESMM_SKIP_BY_B, ESMM_SKIP_BY_BOTH};

static const char *backend_label(const target_t *t)
{
    return t->backend == ESMM_BACKEND_CUDA ? "cuda" : "cpu";
}

/* Host memory on the CPU backend, device memory on CUDA. */
static void *backend_alloc(const target_t *t, size_t bytes)
{
    if (t->backend == ESMM_BACKEND_CPU)
        return host_alloc((int64_t)bytes, 1);
    return device_alloc(bytes > 0 ? bytes : 1);
}

static void backend_free(const target_t *t, void *p)
{
    if (t->backend == ESMM_BACKEND_CPU)
        free(p);
    else
        device_free(p);
}

static void backend_put(const target_t *t, void *dst, const void *src, size_t bytes)
{
    if (t->backend == ESMM_BACKEND_CPU)
        memcpy(dst, src, bytes);
    else
        device_upload(dst, src, bytes);
}

/* Waits for the work queued before, so an asynchronous fault shows here. */
static void backend_get(const target_t *t, void *dst, const void *src, size_t bytes)
{
    if (t->backend == ESMM_BACKEND_CPU) {
        memcpy(dst, src, bytes);
        return;
    }
    cuda_must(cudaDeviceSynchronize(), "cudaDeviceSynchronize after a product");
    device_download(dst, src, bytes);
}

/* ---- operands ----------------------------------------------------------- */

typedef enum {
    FILL_SLICES,   /* strip generator: each (strip, k) slice nonzero with probability density */
    FILL_ELEMENTS, /* each element nonzero with probability density */
    FILL_SINGLE,   /* one nonzero element at a random place */
    FILL_K_GAPS,   /* every strip zero at k = 0, period, 2 period, ...; nonzero elsewhere */
    FILL_K_ONLY,   /* every strip nonzero at k = 0, period, 2 period, ... only */
} fill_kind_t;

typedef struct {
    fill_kind_t kind;
    double density;
    int64_t period;
} operand_fill_t;

typedef struct {
    const char *name;
    operand_fill_t a, b;
} fill_t;

static const fill_t sweep_fills[] = {
    {"strips d=0 (both all zero)", {FILL_SLICES, 0.0, 0}, {FILL_SLICES, 0.0, 0}},
    {"strips d=0.125", {FILL_SLICES, 0.125, 0}, {FILL_SLICES, 0.125, 0}},
    {"strips d=0.5", {FILL_SLICES, 0.5, 0}, {FILL_SLICES, 0.5, 0}},
    {"strips d=1 (no zeros)", {FILL_SLICES, 1.0, 0}, {FILL_SLICES, 1.0, 0}},
    {"A strips d=0.125, B dense", {FILL_SLICES, 0.125, 0}, {FILL_SLICES, 1.0, 0}},
    {"A dense, B strips d=0.125", {FILL_SLICES, 1.0, 0}, {FILL_SLICES, 0.125, 0}},
    {"A all zero", {FILL_SLICES, 0.0, 0}, {FILL_SLICES, 1.0, 0}},
    {"B all zero", {FILL_SLICES, 1.0, 0}, {FILL_SLICES, 0.0, 0}},
    {"element-wise zeros 0.5", {FILL_ELEMENTS, 0.5, 0}, {FILL_ELEMENTS, 0.5, 0}},
    {"one nonzero in A", {FILL_SINGLE, 0.0, 0}, {FILL_SLICES, 1.0, 0}},
};

/* What the masks say, recomputed from the data: the statistics
 * esmm_get_last_info must report. */
typedef struct {
    double density_a, density_b;
    unsigned long long work[4]; /* by skip mode (ESMM_SKIP_BY_*): triples not proven zero */
    unsigned long long total;   /* ceil(m/32) * ceil(n/32) * k */
    esmm_plan_stats_t steps;    /* steps_normal / steps_swapped of the CUDA planner */
    int probed_dense;           /* the dense probe's verdict over its sampled slices */
    esmm_probe_slot_t probe;    /* the dense probe's packed totals */
} expected_t;

/* The logical problem: op(A) m x k, op(B) k x n, C m x n, row-major and tight. */
typedef struct {
    int64_t m, n, k;
    float *a, *b, *c;
    double *product;     /* sum_k op(A) op(B) in float64 (alpha 1, beta 0) */
    double *abs_product; /* sum_k |op(A)| |op(B)|: the scale of the rounding error */
    uint8_t *a_on;       /* [strip * k + kk]: op(A)'s (strip, kk) slice holds a nonzero */
    uint8_t *b_on;       /* [strip * k + kk]: op(B)'s (kk, strip) slice holds a nonzero */
    expected_t expected;
} operands_t;

/* Both operands are walked as x(i, kk) = x[i * i_stride + kk * k_stride], i
 * running along the strips: rows of op(A), columns of op(B). */
typedef struct {
    float *x;
    int64_t rows, i_stride, k_stride;
    uint8_t *on;
} operand_view_t;

static operand_view_t view_a(const operands_t *o)
{
    return (operand_view_t){o->a, o->m, o->k, 1, o->a_on};
}

static operand_view_t view_b(const operands_t *o)
{
    return (operand_view_t){o->b, o->n, 1, o->n, o->b_on};
}

static operands_t operands_alloc(int64_t m, int64_t n, int64_t k)
{
    operands_t o = {.m = m, .n = n, .k = k};
    o.a = host_alloc(m * k, sizeof(float));
    o.b = host_alloc(k * n, sizeof(float));
    o.c = host_alloc(m * n, sizeof(float));
    o.product = host_alloc(m * n, sizeof(double));
    o.abs_product = host_alloc(m * n, sizeof(double));
    o.a_on = host_alloc(esmm_pattern_strips(m) * k, 1);
    o.b_on = host_alloc(esmm_pattern_strips(n) * k, 1);
    return o;
}

static void operands_free(operands_t *o)
{
    free(o->a);
    free(o->b);
    free(o->c);
    free(o->product);
    free(o->abs_product);
    free(o->a_on);
    free(o->b_on);
}

static void fill_operand(const operand_view_t *v, int64_t k, operand_fill_t f, uint64_t *rng)
{
    for (int64_t i = 0; i < v->rows; i++)
        for (int64_t kk = 0; kk < k; kk++)
            v->x[i * v->i_stride + kk * v->k_stride] = 0.0f;
    if (v->rows == 0 || k == 0)
        return;
    switch (f.kind) {
    case FILL_SLICES:
    case FILL_K_GAPS:
    case FILL_K_ONLY:
        for (int64_t i0 = 0; i0 < v->rows; i0 += ESMM_PATTERN_STRIP)
            for (int64_t kk = 0; kk < k; kk++) {
                const int on = f.kind == FILL_K_GAPS   ? kk % f.period != 0
                               : f.kind == FILL_K_ONLY ? kk % f.period == 0
                                                       : rng_uniform(rng) < f.density;
                const int64_t i_end = min_i64(v->rows, i0 + ESMM_PATTERN_STRIP);
                for (int64_t i = i0; on && i < i_end; i++)
                    v->x[i * v->i_stride + kk * v->k_stride] = nonzero_value(rng);
            }
        break;
    case FILL_ELEMENTS:
        for (int64_t i = 0; i < v->rows; i++)
            for (int64_t kk = 0; kk < k; kk++)
                if (rng_uniform(rng) < f.density)
                    v->x[i * v->i_stride + kk * v->k_stride] = nonzero_value(rng);
        break;
    case FILL_SINGLE:
        v->x[rng_below(rng, v->rows) * v->i_stride + rng_below(rng, k) * v->k_stride] =
            nonzero_value(rng);
        break;
    }
}

static void operands_fill(operands_t *o, const fill_t *f, uint64_t seed)
{
    uint64_t rng = seed;
    const operand_view_t a = view_a(o), b = view_b(o);
    fill_operand(&a, o->k, f->a, &rng);
    fill_operand(&b, o->k, f->b, &rng);
    for (int64_t i = 0; i < o->m * o->n; i++)
        o->c[i] = nonzero_value(&rng);
}

/* on[strip * k + kk] = the strip holds a nonzero at kk ("nonzero": x != 0,
 * so NaN and Inf count). Returns, per kk, how many strips do in counts[kk]. */
static void slice_map(const operand_view_t *v, int64_t k, unsigned long long *counts)
{
    const int64_t strips = esmm_pattern_strips(v->rows);
    for (int64_t kk = 0; kk < k; kk++)
        counts[kk] = 0;
    for (int64_t s = 0; s < strips; s++)
        for (int64_t kk = 0; kk < k; kk++) {
            int on = 0;
            const int64_t i_end = min_i64(v->rows, (s + 1) * ESMM_PATTERN_STRIP);
            for (int64_t i = s * ESMM_PATTERN_STRIP; i < i_end && !on; i++)
                on = v->x[i * v->i_stride + kk * v->k_stride] != 0.0f;
            v->on[s * k + kk] = (uint8_t)on;
            counts[kk] += (unsigned long long)on;
        }
}

/* nonfinite[kk] = the operand holds a NaN or an infinity at kk. */
static void nonfinite_map(const operand_view_t *v, int64_t k, uint8_t *nonfinite)
{
    for (int64_t kk = 0; kk < k; kk++) {
        nonfinite[kk] = 0;
        for (int64_t i = 0; i < v->rows && !nonfinite[kk]; i++)
            nonfinite[kk] = (uint8_t)!isfinite(v->x[i * v->i_stride + kk * v->k_stride]);
    }
}

/* tiles[kk] = how many groups of ESMM_PLAN_TILE_STRIPS strips have kk in any strip. */
static void tile_map(const uint8_t *on, int64_t strips, int64_t k, unsigned long long *tiles)
{
    for (int64_t kk = 0; kk < k; kk++) {
        tiles[kk] = 0;
        for (int64_t t0 = 0; t0 < strips; t0 += ESMM_PLAN_TILE_STRIPS) {
            int any = 0;
            for (int64_t s = t0; s < t0 + ESMM_PLAN_TILE_STRIPS && s < strips; s++)
                any |= on[s * k + kk];
            tiles[kk] += (unsigned long long)any;
        }
    }
}

/* The dense probe's counts read off a slice map: the slices of the blocks
 * it samples (patterns/pattern_layout.h) and the zero ones among them. */
static void probe_counts(const uint8_t *on, int64_t strips, int64_t k, unsigned *zero,
                         unsigned *slices)
{
    const int64_t kblocks = esmm_pattern_kblocks(k), blocks = strips * kblocks;
    *zero = *slices = 0;
    for (int64_t j = 0; j < esmm_probe_samples(blocks); j++) {
        const int64_t block = esmm_probe_block(j, blocks);
        const int64_t s = block / kblocks, kb = block % kblocks;
        for (int64_t kk = kb * ESMM_PATTERN_BK; kk < min_i64(k, (kb + 1) * ESMM_PATTERN_BK);
             kk++) {
            *slices += 1;
            *zero += !on[s * k + kk];
        }
    }
}

/* Slice maps, the statistics they imply, and the float64 product. */
static void operands_prepare(operands_t *o)
{
    const operand_view_t a = view_a(o), b = view_b(o);
    unsigned long long *count_a = host_alloc(o->k, sizeof *count_a);
    unsigned long long *count_b = host_alloc(o->k, sizeof *count_b);
    slice_map(&a, o->k, count_a);
    slice_map(&b, o->k, count_b);
    const unsigned long long strips_a = (unsigned long long)esmm_pattern_strips(o->m);
    const unsigned long long strips_b = (unsigned long long)esmm_pattern_strips(o->n);
    expected_t *e = &o->expected;
    memset(e, 0, sizeof *e);
    unsigned long long bits_a = 0, bits_b = 0;
    unsigned long long *tiles_a = host_alloc(o->k, sizeof *tiles_a);
    unsigned long long *tiles_b = host_alloc(o->k, sizeof *tiles_b);
    tile_map(o->a_on, (int64_t)strips_a, o->k, tiles_a);
    tile_map(o->b_on, (int64_t)strips_b, o->k, tiles_b);
    uint8_t *nonfinite_a = host_alloc(o->k, 1), *nonfinite_b = host_alloc(o->k, 1);
    nonfinite_map(&a, o->k, nonfinite_a);
    nonfinite_map(&b, o->k, nonfinite_b);
    for (int64_t kk = 0; kk < o->k; kk++) {
        e->steps.steps_normal += count_a[kk] * tiles_b[kk];
        e->steps.steps_swapped += count_b[kk] * tiles_a[kk];
        e->steps.union_skipped += (unsigned long long)!esmm_union_needs_k(
            count_a[kk] > 0, count_b[kk] > 0, nonfinite_a[kk], nonfinite_b[kk]);
        bits_a += count_a[kk];
        bits_b += count_b[kk];
        e->work[ESMM_SKIP_BY_A] += count_a[kk] * strips_b;
        e->work[ESMM_SKIP_BY_B] += strips_a * count_b[kk];
        e->work[ESMM_SKIP_BY_BOTH] += count_a[kk] * count_b[kk];
    }
    unsigned zero_a, slices_a, zero_b, slices_b;
    probe_counts(o->a_on, (int64_t)strips_a, o->k, &zero_a, &slices_a);
    probe_counts(o->b_on, (int64_t)strips_b, o->k, &zero_b, &slices_b);
    e->probe = (esmm_probe_slot_t){esmm_probe_pack(zero_a, zero_b),
                                   esmm_probe_pack(slices_a, slices_b)};
    e->probed_dense = esmm_probe_rule(e->probe.zeros, e->probe.slices);
    e->total = strips_a * strips_b * (unsigned long long)o->k;
    e->density_a = strips_a * (unsigned long long)o->k == 0
                       ? 0.0
                       : (double)bits_a / (double)(strips_a * (unsigned long long)o->k);
    e->density_b = strips_b * (unsigned long long)o->k == 0
                       ? 0.0
                       : (double)bits_b / (double)(strips_b * (unsigned long long)o->k);
    free(count_a);
    free(count_b);
    free(tiles_a);
    free(tiles_b);
    free(nonfinite_a);
    free(nonfinite_b);

    float *abs_a = host_alloc(o->m * o->k, sizeof(float));
    float *abs_b = host_alloc(o->k * o->n, sizeof(float));
    for (int64_t i = 0; i < o->m * o->k; i++)
        abs_a[i] = fabsf(o->a[i]);
    for (int64_t i = 0; i < o->k * o->n; i++)
        abs_b[i] = fabsf(o->b[i]);
    esmm_gemm_problem_t p = {.op_a = ESMM_OP_N, .op_b = ESMM_OP_N, .m = o->m, .n = o->n,
                             .k = o->k, .alpha = 1.0f, .beta = 0.0f, .a = o->a,
                             .lda = max_i64(o->k, 1), .b = o->b, .ldb = max_i64(o->n, 1),
                             .c = o->c, .ldc = max_i64(o->n, 1)};
    esmm_cpu_reference_gemm(&p, o->product, max_i64(o->n, 1));
    p.a = abs_a;
    p.b = abs_b;
    esmm_cpu_reference_gemm(&p, o->abs_product, max_i64(o->n, 1));
    free(abs_a);
    free(abs_b);
}

static double work_fraction(const expected_t *e, esmm_skip_by_t mode)
{
    return e->total == 0 ? 0.0 : (double)e->work[mode] / (double)e->total;
}

/* The planner's rule for the backend (an esmm_plan_decision_t): on CUDA
 * esmm_plan_decide over the skipping kernel's steps and the union path's
 * share of k (how it reads its wide operand depends on the ops and the
 * shape, and on the copy the extraction made of an operand whose pattern was
 * not given: a_given, b_given), on the CPU skipping at most
 * ESMM_PLAN_CPU_SKIP_BELOW of the strip-pair work left. */
static int plan_decision(const target_t *t, const expected_t *e, const esmm_gemm_problem_t *p,
                         int a_given, int b_given)
{
    if (t->backend == ESMM_BACKEND_CPU)
        return (double)e->work[ESMM_SKIP_BY_BOTH] <= ESMM_PLAN_CPU_SKIP_BELOW * (double)e->total
                   ? ESMM_PLAN_SKIP_NORMAL
                   : ESMM_PLAN_DENSE;
    const int64_t m = p->m, n = p->n, k = p->k;
    const int given = (a_given ? ESMM_COPY_A : 0) | (b_given ? ESMM_COPY_B : 0);
    const esmm_copied_t candidate =
        (esmm_copied_t)(esmm_copies_held(m, n, k, p->op_a, p->op_b) & ~given);
    esmm_plan_stats_t stats = e->steps;
    esmm_plan_decide(&stats, m, n, k, p->op_a, p->op_b, ESMM_SKIP_BY_BOTH,
                     esmm_plan_warp_lists(ESMM_SKIP_BY_BOTH, m, n, k, p->op_a, p->op_b),
                     esmm_extraction_copy_made(e->probe.zeros, e->probe.slices, candidate),
                     esmm_union_share(&e->steps, k));
    return stats.decision;
}

/* ---- storage ------------------------------------------------------------ */

typedef struct {
    int64_t pad;    /* floats of padding per stored row */
    int64_t offset; /* floats each matrix starts after its 16-byte aligned slot */
    const char *name;
} layout_case_t;

static const layout_case_t layout_cases[] = {
    {0, 0, "tight"},
    {1, 1, "ld+1 base+1"},
};

typedef struct {
    int64_t ld, lead, len; /* lead: floats before element (0, 0) */
} layout_t;

/* Storage of an op_rows x op_cols op(X): transposed for ESMM_OP_T. */
static layout_t layout_of(esmm_operation_t op, int64_t op_rows, int64_t op_cols,
                          const layout_case_t *lc)
{
    const int64_t rows = op == ESMM_OP_N ? op_rows : op_cols;
    const int64_t cols = op == ESMM_OP_N ? op_cols : op_rows;
    layout_t l;
    l.ld = max_i64(cols, 1) + lc->pad;
    l.lead = GUARD + lc->offset;
    l.len = l.lead + rows * l.ld + GUARD;
    return l;
}

/* The most floats any layout case of either op needs. */
static int64_t layout_capacity(int64_t op_rows, int64_t op_cols)
{
    int64_t cap = 0;
    for (size_t i = 0; i < COUNT_OF(layout_cases); i++) {
        cap = max_i64(cap, layout_of(ESMM_OP_N, op_rows, op_cols, &layout_cases[i]).len);
        cap = max_i64(cap, layout_of(ESMM_OP_T, op_rows, op_cols, &layout_cases[i]).len);
    }
    return cap;
}

/* Poison everywhere, then op(X) = x (row-major op_rows x op_cols) unless x is NULL. */
static void stage_matrix(float *host, const layout_t *l, esmm_operation_t op, const float *x,
                         int64_t op_rows, int64_t op_cols)
{
    const float poison = poison_value();
    for (int64_t i = 0; i < l->len; i++)
        host[i] = poison;
    float *base = host + l->lead;
    for (int64_t r = 0; x != NULL && r < op_rows; r++)
        for (int64_t c = 0; c < op_cols; c++)
            base[op == ESMM_OP_N ? r * l->ld + c : c * l->ld + r] = x[r * op_cols + c];
}

/* Backend buffers for one problem size and their host staging copies. */
typedef struct {
    float *a, *b, *c;                /* backend memory */
    float *host_a, *host_b, *host_c; /* staged inputs */
    float *dense_c, *path_c;         /* C read back */
} buffers_t;

static buffers_t buffers_alloc(const target_t *t, const operands_t *o)
{
    const int64_t cap_a = layout_capacity(o->m, o->k), cap_b = layout_capacity(o->k, o->n);
    const int64_t cap_c = layout_capacity(o->m, o->n);
    buffers_t b;
    b.a = backend_alloc(t, (size_t)cap_a * sizeof(float));
    b.b = backend_alloc(t, (size_t)cap_b * sizeof(float));
    b.c = backend_alloc(t, (size_t)cap_c * sizeof(float));
    b.host_a = host_alloc(cap_a, sizeof(float));
    b.host_b = host_alloc(cap_b, sizeof(float));
    b.host_c = host_alloc(cap_c, sizeof(float));
    b.dense_c = host_alloc(cap_c, sizeof(float));
    b.path_c = host_alloc(cap_c, sizeof(float));
    return b;
}

static void buffers_free(const target_t *t, buffers_t *b)
{
    backend_free(t, b->a);
    backend_free(t, b->b);
    backend_free(t, b->c);
    free(b->host_a);
    free(b->host_b);
    free(b->host_c);
    free(b->dense_c);
    free(b->path_c);
}

typedef struct {
    esmm_operation_t op_a, op_b;
    float alpha, beta;
    const layout_case_t *layout;
} config_t;

static const float scalar_cases[][2] = {{1.0f, 0.0f}, {-0.5f, 2.0f}};

/* One configuration, staged: A and B uploaded, C staged on the host (it is
 * uploaded before every run), and the problem with backend pointers. */
typedef struct {
    layout_t la, lb, lc;
    esmm_gemm_problem_t p;
    char label[256];
} staged_t;

static staged_t stage_config(const target_t *t, buffers_t *buf, const operands_t *o,
                             const config_t *cfg, const char *what)
{
    staged_t s;
    s.la = layout_of(cfg->op_a, o->m, o->k, cfg->layout);
    s.lb = layout_of(cfg->op_b, o->k, o->n, cfg->layout);
    s.lc = layout_of(ESMM_OP_N, o->m, o->n, cfg->layout);
    stage_matrix(buf->host_a, &s.la, cfg->op_a, o->a, o->m, o->k);
    stage_matrix(buf->host_b, &s.lb, cfg->op_b, o->b, o->k, o->n);
    /* beta == 0: C is all poison, which the product must ignore. */
    stage_matrix(buf->host_c, &s.lc, ESMM_OP_N, cfg->beta != 0.0f ? o->c : NULL, o->m, o->n);
    backend_put(t, buf->a, buf->host_a, (size_t)s.la.len * sizeof(float));
    backend_put(t, buf->b, buf->host_b, (size_t)s.lb.len * sizeof(float));
    s.p = (esmm_gemm_problem_t){
        .op_a = cfg->op_a, .op_b = cfg->op_b, .m = o->m, .n = o->n, .k = o->k,
        .alpha = cfg->alpha, .beta = cfg->beta,
        .a = buf->a + s.la.lead, .lda = s.la.ld,
        .b = buf->b + s.lb.lead, .ldb = s.lb.ld,
        .c = buf->c + s.lc.lead, .ldc = s.lc.ld};
    snprintf(s.label, sizeof s.label, "%s: %lldx%lldx%lld op %s%s alpha %g beta %g %s",
             what, (long long)o->m, (long long)o->n, (long long)o->k, op_label(cfg->op_a),
             op_label(cfg->op_b), (double)cfg->alpha, (double)cfg->beta, cfg->layout->name);
    return s;
}

/* ---- paths -------------------------------------------------------------- */

typedef enum {
    PATH_DENSE,      /* the backend's dense kernel by name: the reference bits */
    PATH_DEFAULT,    /* esmm_sgemm */
    PATH_SKIP_A,     /* esmm_sgemm_kernel, skipping by A */
    PATH_SKIP_B,     /* ... by B */
    PATH_SKIP_JOINT, /* ... by both */
    PATH_CACHED_A,   /* esmm_sgemm_patterns with A's pattern */
    PATH_CACHED_B,   /* ... with B's */
    PATH_CACHED_AB,  /* ... with both */
    PATH_KEPT_COPIES, /* ... with both, each keeping its operand's copy (last: the
                         copies are made just before it) */
    PATH_COUNT
} path_t;

static const char *path_label(const target_t *t, path_t path)
{
    switch (path) {
    case PATH_DENSE: return t->dense;
    case PATH_DEFAULT: return "esmm_sgemm";
    case PATH_SKIP_A: return t->skip[0];
    case PATH_SKIP_B: return t->skip[1];
    case PATH_SKIP_JOINT: return t->skip[2];
    case PATH_CACHED_A: return "esmm_sgemm_patterns(A cached)";
    case PATH_CACHED_B: return "esmm_sgemm_patterns(B cached)";
    case PATH_CACHED_AB: return "esmm_sgemm_patterns(A and B cached)";
    case PATH_KEPT_COPIES: return "esmm_sgemm_patterns(A and B cached, copies kept)";
    case PATH_COUNT: break;
    }
    return "?";
}

static esmm_status_t call_kernel(const target_t *t, const char *kernel,
                                 const esmm_gemm_problem_t *p)
{
    return esmm_sgemm_kernel(t->h, kernel, p->op_a, p->op_b, p->m, p->n, p->k, &p->alpha, p->a,
                             p->lda, p->b, p->ldb, &p->beta, p->c, p->ldc);
}

static esmm_status_t call_patterns(const target_t *t, const esmm_gemm_problem_t *p,
                                   esmm_pattern_t pa, esmm_pattern_t pb)
{
    return esmm_sgemm_patterns(t->h, p->op_a, p->op_b, p->m, p->n, p->k, &p->alpha, p->a,
                               p->lda, pa, p->b, p->ldb, pb, &p->beta, p->c, p->ldc);
}

static esmm_status_t call_path(const target_t *t, path_t path, const esmm_gemm_problem_t *p,
                               esmm_pattern_t pa, esmm_pattern_t pb)
{
    switch (path) {
    case PATH_DENSE: return call_kernel(t, t->dense, p);
    case PATH_DEFAULT:
        return esmm_sgemm(t->h, p->op_a, p->op_b, p->m, p->n, p->k, &p->alpha, p->a, p->lda,
                          p->b, p->ldb, &p->beta, p->c, p->ldc);
    case PATH_SKIP_A:
    case PATH_SKIP_B:
    case PATH_SKIP_JOINT: return call_kernel(t, path_label(t, path), p);
    case PATH_CACHED_A: return call_patterns(t, p, pa, NULL);
    case PATH_CACHED_B: return call_patterns(t, p, NULL, pb);
    case PATH_CACHED_AB:
    case PATH_KEPT_COPIES: return call_patterns(t, p, pa, pb);
    case PATH_COUNT: break;
    }
    return ESMM_STATUS_INTERNAL_ERROR;
}

/* Uploads the staged C, runs one path and reads C's whole buffer back. */
static esmm_status_t run_path(const target_t *t, buffers_t *buf, const staged_t *s, path_t path,
                              esmm_pattern_t pa, esmm_pattern_t pb, float *dst)
{
    const size_t c_bytes = (size_t)s->lc.len * sizeof(float);
    backend_put(t, buf->c, buf->host_c, c_bytes);
    const esmm_status_t st = call_path(t, path, &s->p, pa, pb);
    backend_get(t, dst, buf->c, c_bytes);
    return st;
}

/* ---- checks ------------------------------------------------------------- */

/* The dense path against the float64 reference inside C, and the untouched
 * poison everywhere else in C's buffer. */
static void verify_dense(const float *got, const staged_t *s, const operands_t *o)
{
    const layout_t *lc = &s->lc;
    const float alpha = s->p.alpha, beta = s->p.beta;
    int64_t bad = 0;
    char first[256] = "";
    for (int64_t idx = 0; idx < lc->len; idx++) {
        const int64_t rel = idx - lc->lead;
        const int64_t i = rel >= 0 ? rel / lc->ld : -1, j = rel >= 0 ? rel % lc->ld : -1;
        const int inside = i >= 0 && i < o->m && j < o->n;
        double want = 0.0, tol = 0.0;
        int ok;
        if (inside) {
            const double scaled_c = beta == 0.0f ? 0.0 : (double)beta * (double)o->c[i * o->n + j];
            want = (double)alpha * o->product[i * o->n + j] + scaled_c;
            tol = TOL_FACTOR * (double)(o->k + 3) * FLT_EPSILON *
                  (fabs((double)alpha) * o->abs_product[i * o->n + j] + fabs(scaled_c));
            ok = close_enough(got[idx], want, tol);
        } else {
            ok = float_bits(got[idx]) == POISON_BITS;
        }
        if (ok || bad++ > 0)
            continue;
        if (inside)
            snprintf(first, sizeof first, "C(%lld, %lld) = %.9g, reference %.9g, tolerance %.3g",
                     (long long)i, (long long)j, (double)got[idx], want, tol);
        else
            snprintf(first, sizeof first, "buffer[%lld] outside the matrix overwritten (bits %08x)",
                     (long long)idx, (unsigned)float_bits(got[idx]));
    }
    CHECK(bad == 0, "%s dense kernel: %lld floats off the float64 reference, first: %s",
          s->label, (long long)bad, first);
}

/* Same bits as the dense path in the whole buffer; with nan_equal any NaN
 * matches any NaN inside C (payloads are not part of IEEE results), while
 * the poison around C must still be the very same bits. */
static void verify_same_bits(const float *got, const float *dense, const staged_t *s,
                             const char *path, int nan_equal)
{
    const int64_t len = s->lc.len;
    int64_t bad = 0, first = -1;
    const int identical = memcmp(got, dense, (size_t)len * sizeof(float)) == 0;
    for (int64_t idx = 0; !identical && idx < len; idx++) {
        const int64_t rel = idx - s->lc.lead;
        const int inside = rel >= 0 && rel / s->lc.ld < s->p.m && rel % s->lc.ld < s->p.n;
        if (float_bits(got[idx]) == float_bits(dense[idx]) ||
            (nan_equal && inside && written_nan(got[idx]) && written_nan(dense[idx])))
            continue;
        if (bad++ == 0)
            first = idx;
    }
    const int64_t rel = first - s->lc.lead;
    CHECK(bad == 0,
          "%s %s: %lld floats differ from the dense path, first buffer[%lld] (C(%lld, %lld)) = "
          "%.9g (bits %08x), dense %.9g (bits %08x)",
          s->label, path, (long long)bad, (long long)first, (long long)(rel / s->lc.ld),
          (long long)(rel % s->lc.ld), first >= 0 ? (double)got[first] : 0.0,
          first >= 0 ? (unsigned)float_bits(got[first]) : 0u,
          first >= 0 ? (double)dense[first] : 0.0,
          first >= 0 ? (unsigned)float_bits(dense[first]) : 0u);
}

/* What esmm_get_last_info says about the path that just ran. Work is checked
 * only for finite inputs: NaN/Inf slices may add work the masks do not count. */
static void verify_info(const target_t *t, path_t path, const expected_t *e,
                        const esmm_gemm_problem_t *p, const char *label, int check_work)
{
    esmm_info_t info;
    memset(&info, 0, sizeof info);
    const esmm_status_t st = esmm_get_last_info(t->h, &info);
    CHECK(st == ESMM_STATUS_SUCCESS, "%s %s: esmm_get_last_info returned \"%s\"", label,
          path_label(t, path), esmm_status_string(st));
    const char *kernel = info.kernel != NULL ? info.kernel : "(NULL)";
    if (path == PATH_DENSE) {
        CHECK(info.path == ESMM_PATH_DENSE && strcmp(kernel, t->dense) == 0 &&
                  info.masks == ESMM_MASKS_NONE,
              "%s %s: reported path %d kernel %s masks %d", label, t->dense, (int)info.path,
              kernel, (int)info.masks);
        return;
    }
    const int skipping = path >= PATH_SKIP_A && path <= PATH_SKIP_JOINT;
    if (!skipping && e->probed_dense) {
        /* The planner's choice, sent dense by the probe: no masks extracted. */
        CHECK(info.path == ESMM_PATH_DENSE && strcmp(kernel, t->dense) == 0 &&
                  info.density_a < 0.0 && info.density_b < 0.0 && info.work_fraction == 1.0 &&
                  info.masks == ESMM_MASKS_PROBE_DENSE,
              "%s %s: the probe finds too few zero slices; reported path %d kernel %s "
              "densities %.6f / %.6f work %.6f masks %d",
              label, path_label(t, path), (int)info.path, kernel, info.density_a,
              info.density_b, info.work_fraction, (int)info.masks);
        return;
    }
    CHECK(info.masks == ESMM_MASKS_USED, "%s %s: masks %d, not used", label,
          path_label(t, path), (int)info.masks);
    CHECK(near(info.density_a, e->density_a) && near(info.density_b, e->density_b),
          "%s %s: reported densities %.6f / %.6f, the data have %.6f / %.6f", label,
          path_label(t, path), info.density_a, info.density_b, e->density_a, e->density_b);
    CHECK(info.extraction_ms < 0.0, "%s %s: extraction_ms %g without esmm_set_timing", label,
          path_label(t, path), info.extraction_ms);
    /* The planner's choice (esmm_sgemm and esmm_sgemm_patterns), where
     * the data are finite; with copies kept, over the product that reads
     * them (each operand along m or n). */
    esmm_gemm_problem_t planned = *p;
    if (path == PATH_KEPT_COPIES) {
        planned.op_a = ESMM_OP_T;
        planned.op_b = ESMM_OP_N;
    }
    const int given_a = path == PATH_CACHED_A || path >= PATH_CACHED_AB;
    const int given_b = path == PATH_CACHED_B || path >= PATH_CACHED_AB;
    const int decision =
        !skipping && check_work ? plan_decision(t, e, &planned, given_a, given_b) : -1;
    /* A form only for the GPU's skipping paths; below 2^32 multiply-adds
     * always pair warps where the planner does not pick the union path
     * (test_gpu_sparse reaches strip warps), which with NaN/Inf in the data
     * (decision unknown) it may. */
    const char *want_form = NULL;
    const int union_form = info.form != NULL && strcmp(info.form, "union") == 0;
    if (t->backend == ESMM_BACKEND_CUDA && info.path == ESMM_PATH_SPARSE)
        want_form = decision == ESMM_PLAN_UNION || (!skipping && decision < 0 && union_form)
                        ? "union"
                    : esmm_plan_queues_strip_warps(ESMM_SKIP_BY_BOTH, p->m, p->n, p->k)
                        ? info.form
                        : "pair warps";
    CHECK(want_form == NULL ? info.form == NULL
                            : info.form != NULL && strcmp(info.form, want_form) == 0,
          "%s %s: form \"%s\"", label, path_label(t, path), info.form ? info.form : "(NULL)");
    if (skipping) {
        const int i = path - PATH_SKIP_A;
        CHECK(info.path == ESMM_PATH_SPARSE && strcmp(kernel, t->skip[i]) == 0,
              "%s %s: reported path %d kernel %s", label, t->skip[i], (int)info.path, kernel);
        CHECK(!check_work || near(info.work_fraction, work_fraction(e, skip_modes[i])),
              "%s %s: reported work fraction %.6f, the masks leave %.6f", label, t->skip[i],
              info.work_fraction, work_fraction(e, skip_modes[i]));
        return;
    }
    /* The planner's choice: esmm_sgemm and esmm_sgemm_patterns. */
    if (!check_work)
        return;
    if (decision == ESMM_PLAN_UNION) {
        const double share = esmm_union_share(&e->steps, p->k);
        CHECK(info.path == ESMM_PATH_SPARSE && strcmp(kernel, "sparse-union") == 0 &&
                  near(info.work_fraction, share),
              "%s %s: the union path lists %.6f of k (expected); reported path %d kernel %s "
              "work fraction %.6f",
              label, path_label(t, path), share, (int)info.path, kernel, info.work_fraction);
    } else if (decision != ESMM_PLAN_DENSE) {
        CHECK(info.path == ESMM_PATH_SPARSE && strcmp(kernel, t->skip[2]) == 0 &&
                  near(info.work_fraction, work_fraction(e, ESMM_SKIP_BY_BOTH)),
              "%s %s: the masks leave %.6f of the work (skip expected); reported path %d "
              "kernel %s work fraction %.6f",
              label, path_label(t, path), work_fraction(e, ESMM_SKIP_BY_BOTH), (int)info.path,
              kernel, info.work_fraction);
    } else {
        CHECK(info.path == ESMM_PATH_DENSE && strcmp(kernel, t->dense) == 0,
              "%s %s: the masks leave %.6f of the work (dense expected); reported path %d "
              "kernel %s",
              label, path_label(t, path), work_fraction(e, ESMM_SKIP_BY_BOTH), (int)info.path,
              kernel);
        /* "the fraction of the dense work that ran": all of it. */
        CHECK(info.path != ESMM_PATH_DENSE || info.work_fraction == 1.0,
              "%s %s: the dense path ran, but the reported work fraction is %.6f, not 1",
              label, path_label(t, path), info.work_fraction);
    }
}

static void verify_pattern_density(esmm_pattern_t pattern, double want, const char *which,
                                   const char *label)
{
    double got = -1.0;
    const esmm_status_t st = esmm_pattern_density(pattern, &got);
    CHECK(st == ESMM_STATUS_SUCCESS && near(got, want),
          "%s: esmm_pattern_density(%s) returned \"%s\", %.6f; the data have %.6f", label,
          which, esmm_status_string(st), got, want);
}

/* esmm_pattern_keep_copy refuses a leading dimension one short of the
 * stored operand's rows (stored_cols elements long). */
static void check_short_ld(const target_t *t, const staged_t *s, esmm_pattern_t pattern,
                           const float *x, int64_t stored_cols, const char *which)
{
    if (stored_cols > 1)
        CHECK(esmm_pattern_keep_copy(t->h, pattern, x, stored_cols - 1) ==
                  ESMM_STATUS_INVALID_VALUE,
              "%s: esmm_pattern_keep_copy(%s) took ld %lld", s->label, which,
              (long long)(stored_cols - 1));
}

/* Makes both patterns keep their operands' copies (esmm_pattern_keep_copy;
 * only an operand stored along k gets one), and checks the calls that
 * esmm_pattern_keep_copy refuses. */
static void keep_copies(const target_t *t, const staged_t *s, esmm_pattern_t pa,
                        esmm_pattern_t pb)
{
    const esmm_gemm_problem_t *p = &s->p;
    esmm_status_t st = esmm_pattern_keep_copy(t->h, pa, p->a, p->lda);
    CHECK(st == ESMM_STATUS_SUCCESS, "%s: esmm_pattern_keep_copy(A) returned \"%s\"", s->label,
          esmm_status_string(st));
    /* Twice: the second replaces the first. */
    for (int i = 0; i < 2; i++) {
        st = esmm_pattern_keep_copy(t->h, pb, p->b, p->ldb);
        CHECK(st == ESMM_STATUS_SUCCESS, "%s: esmm_pattern_keep_copy(B) returned \"%s\"",
              s->label, esmm_status_string(st));
    }
    /* Leading dimensions too short for the operands as stored, no data, no
     * pattern, no handle. */
    check_short_ld(t, s, pa, p->a, p->op_a == ESMM_OP_N ? p->k : p->m, "A");
    check_short_ld(t, s, pb, p->b, p->op_b == ESMM_OP_T ? p->k : p->n, "B");
    CHECK(p->n == 0 || p->k == 0 ||
              esmm_pattern_keep_copy(t->h, pb, NULL, p->ldb) == ESMM_STATUS_INVALID_VALUE,
          "%s: esmm_pattern_keep_copy took no data", s->label);
    CHECK(esmm_pattern_keep_copy(t->h, NULL, p->b, p->ldb) == ESMM_STATUS_INVALID_VALUE,
          "%s: esmm_pattern_keep_copy took no pattern", s->label);
    CHECK(esmm_pattern_keep_copy(NULL, pb, p->b, p->ldb) == ESMM_STATUS_NOT_INITIALIZED,
          "%s: esmm_pattern_keep_copy took no handle", s->label);
    /* An empty operand (k = 0) gets no copy, and the call succeeds. */
    esmm_pattern_t empty = NULL;
    st = esmm_pattern_extract_b(t->h, p->op_b, 0, p->n, p->b, p->ldb, &empty);
    if (st == ESMM_STATUS_SUCCESS)
        st = esmm_pattern_keep_copy(t->h, empty, p->b, p->ldb);
    CHECK(st == ESMM_STATUS_SUCCESS, "%s: esmm_pattern_keep_copy of an empty B: \"%s\"",
          s->label, esmm_status_string(st));
    esmm_pattern_destroy(empty);
}

/* A backend buffer of len floats, every one NaN. */
static float *nan_buffer(const target_t *t, int64_t len)
{
    float *host = host_alloc(len, sizeof(float));
    for (int64_t i = 0; i < len; i++)
        host[i] = NAN;
    float *x = backend_alloc(t, (size_t)len * sizeof(float));
    backend_put(t, x, host, (size_t)len * sizeof(float));
    free(host);
    return x;
}

/* The copies kept are what the call reads: passed NaN in place of each
 * operand that has one (A with op N, B with op T), the call still gives the
 * dense bits. */
static void check_copies_read(const target_t *t, buffers_t *buf, const staged_t *s,
                              esmm_pattern_t pa, esmm_pattern_t pb, int non_finite)
{
    const int copied_a = s->p.op_a == ESMM_OP_N, copied_b = s->p.op_b == ESMM_OP_T;
    if (!copied_a && !copied_b)
        return;
    staged_t elsewhere = *s;
    float *nan_a = copied_a ? nan_buffer(t, s->la.len) : NULL;
    float *nan_b = copied_b ? nan_buffer(t, s->lb.len) : NULL;
    if (copied_a)
        elsewhere.p.a = nan_a + s->la.lead;
    if (copied_b)
        elsewhere.p.b = nan_b + s->lb.lead;
    const char *label = "esmm_sgemm_patterns(copies kept, NaN passed for the copied operands)";
    const esmm_status_t st = run_path(t, buf, &elsewhere, PATH_KEPT_COPIES, pa, pb, buf->path_c);
    CHECK(st == ESMM_STATUS_SUCCESS, "%s %s: returned \"%s\"", s->label, label,
          esmm_status_string(st));
    if (st == ESMM_STATUS_SUCCESS)
        verify_same_bits(buf->path_c, buf->dense_c, s, label, non_finite);
    /* The operands a copy replaces are still checked: NULL is refused. */
    if (s->p.m > 0 && s->p.n > 0 && s->p.k > 0 && s->p.alpha != 0.0f) {
        esmm_gemm_problem_t none = s->p;
        none.a = copied_a ? NULL : none.a;
        none.b = copied_b ? NULL : none.b;
        CHECK(call_path(t, PATH_KEPT_COPIES, &none, pa, pb) == ESMM_STATUS_INVALID_VALUE,
              "%s: esmm_sgemm_patterns (copies kept) took NULL for the copied operands",
              s->label);
    }
    if (nan_a != NULL)
        backend_free(t, nan_a);
    if (nan_b != NULL)
        backend_free(t, nan_b);
}

/* Every path on one staged configuration. */
static void run_config(const target_t *t, buffers_t *buf, const operands_t *o, const config_t *cfg,
                       const char *what, int non_finite)
{
    const staged_t s = stage_config(t, buf, o, cfg, what);
    esmm_pattern_t pa = NULL, pb = NULL;
    esmm_status_t st = esmm_pattern_extract_a(t->h, s.p.op_a, s.p.m, s.p.k, s.p.a, s.p.lda, &pa);
    CHECK(st == ESMM_STATUS_SUCCESS, "%s: esmm_pattern_extract_a returned \"%s\"", s.label,
          esmm_status_string(st));
    st = esmm_pattern_extract_b(t->h, s.p.op_b, s.p.k, s.p.n, s.p.b, s.p.ldb, &pb);
    CHECK(st == ESMM_STATUS_SUCCESS, "%s: esmm_pattern_extract_b returned \"%s\"", s.label,
          esmm_status_string(st));
    verify_pattern_density(pa, o->expected.density_a, "A", s.label);
    verify_pattern_density(pb, o->expected.density_b, "B", s.label);

    for (int path = 0; path < PATH_COUNT; path++) {
        if (path == PATH_KEPT_COPIES)
            keep_copies(t, &s, pa, pb);
        float *dst = path == PATH_DENSE ? buf->dense_c : buf->path_c;
        st = run_path(t, buf, &s, (path_t)path, pa, pb, dst);
        CHECK(st == ESMM_STATUS_SUCCESS, "%s %s: returned \"%s\"", s.label,
              path_label(t, (path_t)path), esmm_status_string(st));
        if (st != ESMM_STATUS_SUCCESS)
            continue;
        verify_info(t, (path_t)path, &o->expected, &s.p, s.label, !non_finite);
        if (path == PATH_DENSE)
            verify_dense(dst, &s, o);
        else
            verify_same_bits(dst, buf->dense_c, &s, path_label(t, (path_t)path), non_finite);
        if (path == PATH_KEPT_COPIES)
            check_copies_read(t, buf, &s, pa, pb, non_finite);
    }
    CHECK(esmm_pattern_destroy(pa) == ESMM_STATUS_SUCCESS, "%s: esmm_pattern_destroy(A)", s.label);
    CHECK(esmm_pattern_destroy(pb) == ESMM_STATUS_SUCCESS, "%s: esmm_pattern_destroy(B)", s.label);
}

static const esmm_operation_t both_ops[] = {ESMM_OP_N, ESMM_OP_T};

/* Every op combination, scalar case and layout; or (reduced) one per op
 * combination that still covers both scalar cases and both layouts. */
static int make_configs(int reduced, config_t *out)
{
    int count = 0;
    for (int o = 0; o < 4; o++) {
        const esmm_operation_t op_a = both_ops[o / 2], op_b = both_ops[o % 2];
        for (size_t si = 0; si < COUNT_OF(scalar_cases); si++)
            for (size_t li = 0; li < COUNT_OF(layout_cases); li++) {
                if (reduced && (si != (size_t)(o % 2) || li != (size_t)(o == 1 || o == 2)))
                    continue;
                out[count++] = (config_t){op_a, op_b, scalar_cases[si][0], scalar_cases[si][1],
                                          &layout_cases[li]};
            }
    }
    return count;
}

#define MAX_CONFIGS (4 * COUNT_OF(scalar_cases) * COUNT_OF(layout_cases))

/* ---- the sweep ---------------------------------------------------------- */

typedef struct {
    int64_t m, n, k;
    int seeds;
    int reduced; /* fewer layouts: the shape is slow on the CPU backend */
} shape_t;

static const shape_t sweep_shapes[] = {
    {1, 1, 1, 8, 0},     {33, 65, 17, 20, 0},  {130, 67, 9, 20, 0},   {200, 300, 8, 10, 0},
    {1, 500, 33, 12, 0}, {500, 1, 33, 12, 0},  {64, 96, 40, 6, 0},    {257, 129, 1000, 2, 1},
};

static void sweep_shape(const target_t *t, const shape_t *shape, uint64_t seed)
{
    const double start = now_seconds();
    operands_t o = operands_alloc(shape->m, shape->n, shape->k);
    buffers_t buf = buffers_alloc(t, &o);
    config_t configs[MAX_CONFIGS];
    const int config_count = make_configs(shape->reduced, configs);
    int runs = 0;
    for (int si = 0; si < shape->seeds; si++)
        for (size_t fi = 0; fi < COUNT_OF(sweep_fills); fi++) {
            const uint64_t fill_seed = seed + 0x1000u * (uint64_t)si + fi;
            operands_fill(&o, &sweep_fills[fi], fill_seed);
            operands_prepare(&o);
            char what[128];
            snprintf(what, sizeof what, "%s seed %llx", sweep_fills[fi].name,
                     (unsigned long long)fill_seed);
            for (int ci = 0; ci < config_count; ci++) {
                run_config(t, &buf, &o, &configs[ci], what, 0);
                runs += PATH_COUNT;
            }
        }
    printf("%4lld x %4lld x %4lld: %d seeds x %zu fills x %d layouts, %5d runs, %.2f s\n",
           (long long)shape->m, (long long)shape->n, (long long)shape->k, shape->seeds,
           COUNT_OF(sweep_fills), config_count, runs, now_seconds() - start);
    buffers_free(t, &buf);
    operands_free(&o);
}

/* ---- NaN and Inf -------------------------------------------------------- */

/*
 * Puts v into op(A) (in_b 0) or op(B) (in_b 1) at a random element whose own
 * slice is zero (own_on 0) or not (own_on 1) in the data so far, at a k where
 * the other operand has a zero slice in at least one strip: a product that
 * only the NaN/Inf flags keep from being skipped. Returns 0 when the data
 * have no such place.
 */
static int plant(operands_t *o, int in_b, int own_on, float v, uint64_t *rng)
{
    const operand_view_t own = in_b ? view_b(o) : view_a(o);
    const operand_view_t other = in_b ? view_a(o) : view_b(o);
    const int64_t other_strips = esmm_pattern_strips(other.rows);
    for (int attempt = 0; attempt < 4096; attempt++) {
        const int64_t i = rng_below(rng, own.rows), kk = rng_below(rng, o->k);
        if (own.on[(i / ESMM_PATTERN_STRIP) * o->k + kk] != own_on)
            continue;
        for (int64_t s = 0; s < other_strips; s++)
            if (!other.on[s * o->k + kk]) {
                own.x[i * own.i_stride + kk * own.k_stride] = v;
                return 1;
            }
    }
    return 0;
}

typedef struct {
    int in_b, own_on;
    float value;
} plant_t;

typedef struct {
    const char *name;
    fill_t fill;
    plant_t plants[4];
    int plant_count;
} special_case_t;

static const special_case_t special_cases[] = {
    {"NaN/Inf in zero slices, strips d=0.5",
     {"", {FILL_SLICES, 0.5, 0}, {FILL_SLICES, 0.5, 0}},
     {{0, 0, INFINITY}, {1, 0, NAN}, {0, 1, -INFINITY}, {1, 1, INFINITY}},
     4},
    {"Inf in otherwise zero A, B all zero",
     {"", {FILL_SLICES, 0.0, 0}, {FILL_SLICES, 0.0, 0}},
     {{0, 0, INFINITY}},
     1},
    {"A all zero, NaN and -Inf in B",
     {"", {FILL_SLICES, 0.0, 0}, {FILL_SLICES, 1.0, 0}},
     {{1, 1, NAN}, {1, 1, -INFINITY}},
     2},
    {"NaN in one-nonzero A, B strips d=0.125",
     {"", {FILL_SINGLE, 0.0, 0}, {FILL_SLICES, 0.125, 0}},
     {{0, 0, NAN}},
     1},
};

static const shape_t special_shapes[] = {
    {33, 65, 17, 3, 0},
    {130, 67, 40, 3, 0},
    {200, 300, 8, 2, 0},
};

/* The CPU backend plans every product whatever the handle's min planned
 * work says (the gate is for CUDA's launches; test_gpu_sparse checks it
 * there). */
static void check_cpu_plans_small(const target_t *t)
{
    enum { SIZE = 64 };
    static float a[SIZE * SIZE], b[SIZE * SIZE], c[SIZE * SIZE];
    uint64_t rng = 0xC9u;
    for (int i = 0; i < SIZE * SIZE; i++) {
        a[i] = i % SIZE < SIZE / 2 ? 0.0f : nonzero_value(&rng);
        b[i] = nonzero_value(&rng);
    }
    const float one = 1.0f, zero = 0.0f;
    esmm_info_t info;
    CHECK(esmm_set_min_planned_work(t->h, ESMM_DEFAULT_MIN_PLANNED_WORK) == ESMM_STATUS_SUCCESS &&
              esmm_sgemm(t->h, ESMM_OP_N, ESMM_OP_N, SIZE, SIZE, SIZE, &one, a, SIZE, b, SIZE,
                         &zero, c, SIZE) == ESMM_STATUS_SUCCESS &&
              esmm_get_last_info(t->h, &info) == ESMM_STATUS_SUCCESS,
          "CPU 64^3 with the default min planned work");
    CHECK(info.density_a > 0.4 && info.density_a < 0.6 && info.masks == ESMM_MASKS_USED,
          "CPU 64^3 with the default min planned work: density of A %g, masks %d, want it "
          "planned",
          info.density_a, (int)info.masks);
    CHECK(esmm_set_min_planned_work(t->h, 0) == ESMM_STATUS_SUCCESS, "plan every product");
}

static void check_non_finite(const target_t *t)
{
    const double start = now_seconds();
    config_t configs[MAX_CONFIGS];
    const int config_count = make_configs(0, configs);
    int planted = 0;
    for (size_t shi = 0; shi < COUNT_OF(special_shapes); shi++) {
        const shape_t *shape = &special_shapes[shi];
        operands_t o = operands_alloc(shape->m, shape->n, shape->k);
        buffers_t buf = buffers_alloc(t, &o);
        for (size_t ci = 0; ci < COUNT_OF(special_cases); ci++)
            for (int si = 0; si < shape->seeds; si++) {
                const special_case_t *sc = &special_cases[ci];
                uint64_t rng = 0xBAD5EEDu + 0x100u * shi + 0x10u * ci + (uint64_t)si;
                operands_fill(&o, &sc->fill, rng);
                operands_prepare(&o);
                int count = 0;
                for (int pi = 0; pi < sc->plant_count; pi++)
                    count += plant(&o, sc->plants[pi].in_b, sc->plants[pi].own_on,
                                   sc->plants[pi].value, &rng);
                if (count == 0)
                    continue;
                planted += count;
                operands_prepare(&o);
                char what[128];
                snprintf(what, sizeof what, "%s (%d placed) seed %d", sc->name, count, si);
                for (int cfg = 0; cfg < config_count; cfg++)
                    run_config(t, &buf, &o, &configs[cfg], what, 1);
            }
        buffers_free(t, &buf);
        operands_free(&o);
    }
    CHECK(planted > 0, "no NaN/Inf could be placed in a zero slice of the other operand");
    printf("NaN/Inf in zero slices: %d placed, %.2f s\n", planted, now_seconds() - start);
}

/* ---- planner decisions -------------------------------------------------- */

typedef struct {
    const char *name;
    int64_t m, n, k;
    fill_t fill;
    esmm_path_t path;
    double work_fraction;
    double density_a, density_b; /* < 0: the probe sends it dense, no masks reported */
    /* >= 0: on the GPU the planner takes the union path instead (the k some
     * strip pair needs are fewer than a dense pass's: dead channels), whose
     * work is this share of k. */
    double gpu_union_work;
} plan_case_t;

static const plan_case_t plan_cases[] = {
    /* Density 0: nothing to multiply, every slice skipped. */
    {"A all zero", 64, 96, 40, {"", {FILL_SLICES, 0, 0}, {FILL_SLICES, 1, 0}},
     ESMM_PATH_SPARSE, 0.0, 0.0, 1.0, 0.0},
    {"A all zero, partial strips", 33, 65, 17, {"", {FILL_SLICES, 0, 0}, {FILL_SLICES, 1, 0}},
     ESMM_PATH_SPARSE, 0.0, 0.0, 1.0, 0.0},
    {"B all zero", 96, 64, 40, {"", {FILL_SLICES, 1, 0}, {FILL_SLICES, 0, 0}},
     ESMM_PATH_SPARSE, 0.0, 1.0, 0.0, 0.0},
    {"both all zero", 64, 64, 24, {"", {FILL_SLICES, 0, 0}, {FILL_SLICES, 0, 0}},
     ESMM_PATH_SPARSE, 0.0, 0.0, 0.0, 0.0},
    /* Density 1: every slice of both has a nonzero (partial strips and a
     * partial k block still count as full slices), so the probe, which reads
     * every block of operands this small, sends them dense unextracted. */
    {"no zeros", 64, 96, 40, {"", {FILL_SLICES, 1, 0}, {FILL_SLICES, 1, 0}},
     ESMM_PATH_DENSE, 1.0, -1.0, -1.0, -1.0},
    {"no zeros, partial strips", 33, 65, 17, {"", {FILL_SLICES, 1, 0}, {FILL_SLICES, 1, 0}},
     ESMM_PATH_DENSE, 1.0, -1.0, -1.0, -1.0},
    {"element-wise zeros, every slice nonzero", 64, 64, 64,
     {"", {FILL_ELEMENTS, 0.9, 0}, {FILL_ELEMENTS, 0.9, 0}},
     ESMM_PATH_DENSE, 1.0, -1.0, -1.0, -1.0},
    /* The probe's edge, zero shares adding up to 1/5: 7 of A's 40 slices per
     * strip zero (under 1/5) go dense unextracted; 8 of 40 (exactly 1/5) are
     * extracted and planned, and so are 4 of 40 of each operand and 5 of A's
     * with 4 of B's, but not 4 of A's with 3 of B's. Those are dead
     * channels, zero in every strip: planned, the CPU runs them dense and the
     * GPU takes the union path. */
    {"A zero at every 6th k", 64, 96, 40, {"", {FILL_K_GAPS, 0, 6}, {FILL_SLICES, 1, 0}},
     ESMM_PATH_DENSE, 1.0, -1.0, -1.0, -1.0},
    {"A zero at every 5th k", 64, 96, 40, {"", {FILL_K_GAPS, 0, 5}, {FILL_SLICES, 1, 0}},
     ESMM_PATH_DENSE, 1.0, 0.8, 1.0, 0.8},
    {"A zero at every 4th k", 64, 96, 40, {"", {FILL_K_GAPS, 0, 4}, {FILL_SLICES, 1, 0}},
     ESMM_PATH_DENSE, 1.0, 0.75, 1.0, 0.75},
    {"both zero at every 10th k", 64, 96, 40, {"", {FILL_K_GAPS, 0, 10}, {FILL_K_GAPS, 0, 10}},
     ESMM_PATH_DENSE, 1.0, 0.9, 0.9, 0.9},
    {"A zero at every 8th k, B at every 10th", 64, 96, 40,
     {"", {FILL_K_GAPS, 0, 8}, {FILL_K_GAPS, 0, 10}}, ESMM_PATH_DENSE, 1.0, 0.875, 0.9, 0.8},
    {"A zero at every 10th k, B at every 14th", 64, 96, 40,
     {"", {FILL_K_GAPS, 0, 10}, {FILL_K_GAPS, 0, 14}}, ESMM_PATH_DENSE, 1.0, -1.0, -1.0, -1.0},
    /* A quarter of the work left: skipped, though both operands run along k
     * (NT) and either orientation transposes its wide operand on the way in
     * at this size (check_transposed_rule: half of the steps would not be),
     * C filling the skipping kernel's 256-wide tiles. */
    {"B nonzero at every 4th k only", 256, 256, 40,
     {"", {FILL_SLICES, 1, 0}, {FILL_K_ONLY, 0, 4}}, ESMM_PATH_SPARSE, 0.25, 1.0, 0.25, 0.25},
};

static void check_planner(const target_t *t)
{
    const config_t cfg = {ESMM_OP_N, ESMM_OP_T, 1.0f, 0.0f, &layout_cases[0]};
    for (size_t i = 0; i < COUNT_OF(plan_cases); i++) {
        const plan_case_t *pc = &plan_cases[i];
        operands_t o = operands_alloc(pc->m, pc->n, pc->k);
        buffers_t buf = buffers_alloc(t, &o);
        operands_fill(&o, &pc->fill, 0x9A11u + i);
        operands_prepare(&o);
        char what[128];
        snprintf(what, sizeof what, "planner, %s", pc->name);
        const staged_t s = stage_config(t, &buf, &o, &cfg, what);
        esmm_status_t st = run_path(t, &buf, &s, PATH_DENSE, NULL, NULL, buf.dense_c);
        CHECK(st == ESMM_STATUS_SUCCESS, "%s: dense kernel returned \"%s\"", s.label,
              esmm_status_string(st));
        st = run_path(t, &buf, &s, PATH_DEFAULT, NULL, NULL, buf.path_c);
        CHECK(st == ESMM_STATUS_SUCCESS, "%s: esmm_sgemm returned \"%s\"", s.label,
              esmm_status_string(st));
        verify_same_bits(buf.path_c, buf.dense_c, &s, "esmm_sgemm", 0);
        esmm_info_t info;
        memset(&info, 0, sizeof info);
        st = esmm_get_last_info(t->h, &info);
        const int probed = pc->density_a < 0.0;
        CHECK(o.expected.probed_dense == probed,
              "%s: the probe's counts over the data give verdict %d, the table %d", s.label,
              o.expected.probed_dense, probed);
        const int densities_ok =
            probed ? info.density_a < 0.0 && info.density_b < 0.0
                   : near(info.density_a, pc->density_a) && near(info.density_b, pc->density_b);
        const int gpu_union = t->backend == ESMM_BACKEND_CUDA && pc->gpu_union_work >= 0.0;
        const esmm_path_t want_path = gpu_union ? ESMM_PATH_SPARSE : pc->path;
        const double want_work = gpu_union ? pc->gpu_union_work : pc->work_fraction;
        CHECK(st == ESMM_STATUS_SUCCESS && info.path == want_path &&
                  near(info.work_fraction, want_work) && densities_ok,
              "%s: reported path %d work %.6f densities %.6f / %.6f; expected path %d work %.6f "
              "densities %.6f / %.6f",
              s.label, (int)info.path, info.work_fraction, info.density_a, info.density_b,
              (int)want_path, want_work, pc->density_a, pc->density_b);
        CHECK(!gpu_union || (info.form != NULL && strcmp(info.form, "union") == 0),
              "%s: form \"%s\", expected the union path", s.label,
              info.form != NULL ? info.form : "(NULL)");
        buffers_free(t, &buf);
        operands_free(&o);
    }

    /* Nothing to multiply: no path runs. */
    const struct {
        const char *what;
        int64_t m, n, k;
        float alpha;
    } none_cases[] = {
        {"m == 0", 0, 5, 7, 1.0f},
        {"n == 0", 5, 0, 7, 1.0f},
        {"k == 0", 5, 6, 0, 1.0f},
        {"alpha == 0", 5, 6, 7, 0.0f},
    };
    operands_t o = operands_alloc(8, 8, 8);
    buffers_t buf = buffers_alloc(t, &o);
    operands_fill(&o, &sweep_fills[2], 0x0E0Eu);
    operands_prepare(&o);
    const staged_t s = stage_config(t, &buf, &o, &cfg, "planner, nothing to multiply");
    for (size_t i = 0; i < COUNT_OF(none_cases); i++) {
        const float beta = 0.5f;
        for (int entry = 0; entry < 3; entry++) {
            /* A planned product first, so stale figures would show. */
            CHECK(run_path(t, &buf, &s, PATH_DEFAULT, NULL, NULL, buf.path_c) ==
                      ESMM_STATUS_SUCCESS,
                  "%s: esmm_sgemm failed", s.label);
            const int64_t m = none_cases[i].m, n = none_cases[i].n, k = none_cases[i].k;
            const int64_t lda = max_i64(k, 1), ldb = max_i64(n, 1), ldc = max_i64(n, 1);
            const float *alpha = &none_cases[i].alpha;
            esmm_status_t st =
                entry == 0 ? esmm_sgemm(t->h, ESMM_OP_N, ESMM_OP_N, m, n, k, alpha, buf.a, lda,
                                        buf.b, ldb, &beta, buf.c, ldc)
                : entry == 1
                    ? esmm_sgemm_kernel(t->h, t->skip[2], ESMM_OP_N, ESMM_OP_N, m, n, k, alpha,
                                        buf.a, lda, buf.b, ldb, &beta, buf.c, ldc)
                    : esmm_sgemm_patterns(t->h, ESMM_OP_N, ESMM_OP_N, m, n, k, alpha, buf.a, lda,
                                          NULL, buf.b, ldb, NULL, &beta, buf.c, ldc);
            esmm_info_t info;
            memset(&info, 0xA5, sizeof info); /* every field must be written */
            const esmm_status_t info_st = esmm_get_last_info(t->h, &info);
            CHECK(st == ESMM_STATUS_SUCCESS && info_st == ESMM_STATUS_SUCCESS &&
                      info.path == ESMM_PATH_NONE && info.masks == ESMM_MASKS_NONE,
                  "%s via %s: returned \"%s\", reported path %d masks %d (expected "
                  "ESMM_PATH_NONE, ESMM_MASKS_NONE)",
                  none_cases[i].what,
                  entry == 0 ? "esmm_sgemm" : entry == 1 ? t->skip[2] : "esmm_sgemm_patterns",
                  esmm_status_string(st), (int)info.path, (int)info.masks);
        }
    }
    buffers_free(t, &buf);
    operands_free(&o);
}

/* The split-K rule (esmm_k_split): the ranges cover k exactly in multiples
 * of ESMM_SPLIT_K_ALIGN, at most ESMM_SPLIT_MAX of them; products of more
 * than ESMM_SPLIT_TILES_AT_MOST tiles or of k below ESMM_SPLIT_MIN_K do not
 * split; a narrow C keeps the rule its tiles were measured with (two CTAs an
 * SM at least ESMM_SPLIT_MIN_K deep, or finer ranges up to one CTA an SM);
 * elsewhere the split with the least modelled time wins where it saves at
 * least ESMM_SPLIT_GAIN_PERCENT percent of the unsplit time. The table's
 * wide shapes are the H100's measured best or within 1% of it, except 1280^3
 * and 2560^3, whose best splits save 4% and 7% on dense data and stay whole
 * (README item 4); 629 x 2820 x 5408 saves exactly 10% (the integer model
 * has no rounding) and splits, and k past ESMM_SPLIT_K_MODELLED stays whole.
 * Host rule only: the GPU tests run split products against the CPU backend
 * and the skipping paths against the dense kernel bit for bit. */
static void check_split_rule(void)
{
    static const struct {
        int64_t m, n, k, splits, per;
    } cases[] = {
        {256, 256, 256, 8, 32},     {384, 384, 384, 12, 32},      {512, 512, 512, 8, 64},
        {640, 640, 640, 5, 128},    {768, 768, 768, 3, 256},      {896, 896, 896, 5, 192},
        {1024, 1024, 1024, 4, 256}, {1152, 1152, 1152, 3, 384},   {1280, 1280, 1280, 1, 1280},
        {1408, 1408, 1408, 1, 1408}, {1536, 1536, 1536, 3, 512},  {1792, 1792, 1792, 2, 896},
        {2048, 2048, 2048, 1, 2048}, {2560, 2560, 2560, 1, 2560}, {1536, 1536, 1024, 3, 352},
        {1280, 1280, 4096, 5, 832}, {2048, 2048, 512, 1, 512},    {3000, 3000, 3000, 1, 3000},
        {1797, 10, 2048, 8, 256},   {300, 20, 3001, 32, 96},      {64, 64, 8192, 32, 256},
        {512, 512, 8192, 16, 512},  {256, 4096, 4096, 4, 1024},   {1024, 1024, 4096, 4, 1024},
        {4096, 4096, 4096, 1, 4096}, {64, 64, 255, 1, 255},       {1, 1, 0, 1, 0},
        {629, 2820, 5408, 9, 608},  {1024, 1024, ESMM_SPLIT_K_MODELLED + 32, 1,
                                     ESMM_SPLIT_K_MODELLED + 32},
    };
    for (size_t i = 0; i < COUNT_OF(cases); i++) {
        const esmm_k_split_t got = esmm_k_split(cases[i].m, cases[i].n, cases[i].k);
        CHECK(got.splits == cases[i].splits && got.k_per_split == cases[i].per,
              "esmm_k_split(%lld, %lld, %lld) = %lld x %lld, expected %lld x %lld",
              (long long)cases[i].m, (long long)cases[i].n, (long long)cases[i].k,
              (long long)got.splits, (long long)got.k_per_split, (long long)cases[i].splits,
              (long long)cases[i].per);
    }
    static const int64_t sides[] = {1, 7, 64, 65, 128, 129, 300, 1000, 1797, 2900, 4096, 20000};
    static const int64_t depths[] = {0, 1, 31, 255, 256, 257, 300, 511, 1000, 3001, 100003};
    for (size_t a = 0; a < COUNT_OF(sides); a++)
        for (size_t b = 0; b < COUNT_OF(sides); b++)
            for (size_t d = 0; d < COUNT_OF(depths); d++) {
                const int64_t m = sides[a], n = sides[b], k = depths[d];
                const int64_t tiles = ((m + 127) / 128) * ((n + 127) / 128);
                const bool narrow = m <= ESMM_SPLIT_NARROW || n <= ESMM_SPLIT_NARROW;
                const esmm_k_split_t s = esmm_k_split(m, n, k);
                const bool whole = s.splits == 1 && s.k_per_split == k;
                const bool ranges = s.splits >= 2 && s.splits <= ESMM_SPLIT_MAX &&
                                    s.k_per_split % ESMM_SPLIT_K_ALIGN == 0 &&
                                    (s.splits - 1) * s.k_per_split < k &&
                                    s.splits * s.k_per_split >= k;
                const bool allowed =
                    k >= ESMM_SPLIT_MIN_K && tiles <= ESMM_SPLIT_TILES_AT_MOST &&
                    (narrow ? tiles < ESMM_SPLIT_CTAS / 2 &&
                                  tiles * s.splits <= ESMM_SPLIT_CTAS + tiles
                            : esmm_split_pays(esmm_split_time(m, n, tiles, s),
                                              esmm_split_time(m, n, tiles,
                                                              (esmm_k_split_t){1, k})));
                CHECK(whole || (ranges && allowed),
                      "esmm_k_split(%lld, %lld, %lld) = %lld x %lld", (long long)m, (long long)n,
                      (long long)k, (long long)s.splits, (long long)s.k_per_split);
                CHECK(esmm_split_bytes(m, n, k) ==
                          (whole ? 0 : (size_t)(s.splits * m * n) * sizeof(float)),
                      "esmm_split_bytes(%lld, %lld, %lld) disagrees with the split", (long long)m,
                      (long long)n, (long long)k);
            }
}

/* The k-major copies the workspace holds (esmm_copies_held), which the
 * skipping orientations and the warp lists read and the extraction may write:
 * of each operand along k from the edge of the orientation rule that reads it
 * (C's other side at least ESMM_PLAN_COPY_COST / esmm_plan_copy_at_most: 1760,
 * or 440 where both operands run along k, NT, in products of at least
 * ESMM_PLAN_BOTH_K_COPY_MIN_PRODUCT multiply-adds), both where both are, each at a
 * place of its own in a workspace that holds it; the ones the dense path
 * reads (esmm_dense_copies: from 1760 whatever the ops); made
 * (esmm_extraction_copy_made) where at least 1 in ESMM_PROBE_COPY_SHARE of
 * the other operand's sampled slices is zero; and then the plan no longer
 * charges its paths for it (esmm_plan_decide). Host rules only:
 * test_gpu_sparse runs products that read the copies, and products whose
 * extraction writes them, bit for bit against the dense kernel. */
static void check_copies_held_rule(void)
{
    const int64_t edge = (int64_t)ceil(ESMM_PLAN_COPY_COST / ESMM_PLAN_COPY_AT_MOST);
    const int64_t nt_edge = (int64_t)ceil(ESMM_PLAN_COPY_COST / ESMM_PLAN_BOTH_K_COPY_AT_MOST);
    CHECK(nt_edge == 440 && edge == 1760, "copy edges %lld (NT) and %lld, expected 440 and 1760",
          (long long)nt_edge, (long long)edge);
    const int64_t big = 8192; /* k past ESMM_PLAN_BOTH_K_COPY_MIN_PRODUCT with these sides */
    const struct {
        int64_t m, n, k;
        esmm_operation_t op_a, op_b;
        esmm_copied_t held, dense;
    } cases[] = {
        {1797, 2048, 300, ESMM_OP_N, ESMM_OP_T, ESMM_COPY_BOTH, ESMM_COPY_BOTH},
        {edge, edge, 300, ESMM_OP_N, ESMM_OP_T, ESMM_COPY_BOTH, ESMM_COPY_BOTH},
        {edge - 1, edge - 1, 300, ESMM_OP_N, ESMM_OP_T, ESMM_COPY_NONE, ESMM_COPY_NONE},
        {edge - 1, edge - 1, big, ESMM_OP_N, ESMM_OP_T, ESMM_COPY_BOTH, ESMM_COPY_NONE},
        {nt_edge, 4096, big, ESMM_OP_N, ESMM_OP_T, ESMM_COPY_BOTH, ESMM_COPY_A},
        {nt_edge - 1, 4096, big, ESMM_OP_N, ESMM_OP_T, ESMM_COPY_A, ESMM_COPY_A},
        {4096, nt_edge, big, ESMM_OP_N, ESMM_OP_T, ESMM_COPY_BOTH, ESMM_COPY_B},
        {4096, nt_edge - 1, big, ESMM_OP_N, ESMM_OP_T, ESMM_COPY_B, ESMM_COPY_B},
        {1024, 1024, 4096, ESMM_OP_N, ESMM_OP_T, ESMM_COPY_BOTH, ESMM_COPY_NONE},
        {1024, 1024, 4095, ESMM_OP_N, ESMM_OP_T, ESMM_COPY_NONE, ESMM_COPY_NONE},
        {37, edge, 300, ESMM_OP_N, ESMM_OP_T, ESMM_COPY_A, ESMM_COPY_A},
        {37, edge - 1, 300, ESMM_OP_N, ESMM_OP_T, ESMM_COPY_NONE, ESMM_COPY_NONE},
        {edge, 37, 300, ESMM_OP_N, ESMM_OP_T, ESMM_COPY_B, ESMM_COPY_B},
        {edge, edge - 1, 300, ESMM_OP_N, ESMM_OP_T, ESMM_COPY_B, ESMM_COPY_B},
        {4096, 1000, 300, ESMM_OP_N, ESMM_OP_T, ESMM_COPY_B, ESMM_COPY_B},
        {4096, 1000, 4096, ESMM_OP_N, ESMM_OP_T, ESMM_COPY_BOTH, ESMM_COPY_B},
        {1000, 4096, 4096, ESMM_OP_N, ESMM_OP_T, ESMM_COPY_BOTH, ESMM_COPY_A},
        {4096, 4096, 300, ESMM_OP_N, ESMM_OP_T, ESMM_COPY_BOTH, ESMM_COPY_BOTH},
        {4096, 4096, 300, ESMM_OP_N, ESMM_OP_N, ESMM_COPY_A, ESMM_COPY_A},
        {37, edge, 300, ESMM_OP_N, ESMM_OP_N, ESMM_COPY_A, ESMM_COPY_A},
        {4096, edge - 1, big, ESMM_OP_N, ESMM_OP_N, ESMM_COPY_NONE, ESMM_COPY_NONE},
        {4096, 4096, 300, ESMM_OP_T, ESMM_OP_T, ESMM_COPY_B, ESMM_COPY_B},
        {edge, 37, 300, ESMM_OP_T, ESMM_OP_T, ESMM_COPY_B, ESMM_COPY_B},
        {edge - 1, 4096, big, ESMM_OP_T, ESMM_OP_T, ESMM_COPY_NONE, ESMM_COPY_NONE},
        {4096, 4096, 300, ESMM_OP_T, ESMM_OP_N, ESMM_COPY_NONE, ESMM_COPY_NONE},
    };
    for (size_t i = 0; i < COUNT_OF(cases); i++) {
        const int64_t m = cases[i].m, n = cases[i].n, k = cases[i].k;
        const esmm_operation_t op_a = cases[i].op_a, op_b = cases[i].op_b;
        const esmm_copied_t got = esmm_copies_held(m, n, k, op_a, op_b);
        const esmm_copied_t dense = esmm_dense_copies(m, n, op_a, op_b);
        CHECK(got == cases[i].held && dense == cases[i].dense,
              "esmm_copies_held(%lld, %lld, %lld, %s, %s) = %d and esmm_dense_copies %d, "
              "expected %d and %d",
              (long long)m, (long long)n, (long long)k, op_label(op_a), op_label(op_b), (int)got,
              (int)dense, (int)cases[i].held, (int)cases[i].dense);
        const int64_t a_end = esmm_wide_copy_ld(m) * k;
        const int64_t b_at = esmm_wide_copy_b_at(m, n, k, op_a, op_b);
        const int64_t b_end = b_at + esmm_wide_copy_ld(n) * k;
        const int64_t need = max_i64(got & ESMM_COPY_A ? a_end : 0, got & ESMM_COPY_B ? b_end : 0);
        CHECK(esmm_wide_copy_floats(m, n, k, op_a, op_b) >= need &&
                  (got != ESMM_COPY_BOTH || b_at >= a_end),
              "esmm_wide_copy_floats(%lld, %lld, %lld) = %lld and B's copy at %lld do not hold "
              "the copies %d",
              (long long)m, (long long)n, (long long)k,
              (long long)esmm_wide_copy_floats(m, n, k, op_a, op_b), (long long)b_at, (int)got);
    }
    /* The other operand's zero share decides: B's for A's copy, A's for B's. */
    const uint32_t slices = 2048, share = ESMM_PROBE_COPY_SHARE;
    const struct {
        uint32_t zero_a, zero_b, slices_a, slices_b;
        esmm_copied_t candidate, want;
    } probes[] = {
        {0, slices / share, slices, slices, ESMM_COPY_A, ESMM_COPY_A},
        {slices, slices / share - 1, slices, slices, ESMM_COPY_A, ESMM_COPY_NONE},
        {slices / share, 0, slices, slices, ESMM_COPY_B, ESMM_COPY_B},
        {slices / share - 1, slices, slices, slices, ESMM_COPY_B, ESMM_COPY_NONE},
        {slices, slices, slices, slices, ESMM_COPY_NONE, ESMM_COPY_NONE},
        {0, 0, 0, 0, ESMM_COPY_A, ESMM_COPY_NONE}, /* no probe ran */
        {slices / share, slices / share, slices, slices, ESMM_COPY_BOTH, ESMM_COPY_BOTH},
        {slices / share, 0, slices, slices, ESMM_COPY_BOTH, ESMM_COPY_B},
        {0, slices / share, slices, slices, ESMM_COPY_BOTH, ESMM_COPY_A},
    };
    for (size_t i = 0; i < COUNT_OF(probes); i++) {
        const esmm_copied_t got = esmm_extraction_copy_made(
            esmm_probe_pack(probes[i].zero_a, probes[i].zero_b),
            esmm_probe_pack(probes[i].slices_a, probes[i].slices_b), probes[i].candidate);
        CHECK(got == probes[i].want,
              "esmm_extraction_copy_made, zero slices %u / %u of A, %u / %u of B, copy %d: %d, "
              "expected %d",
              probes[i].zero_a, probes[i].slices_a, probes[i].zero_b, probes[i].slices_b,
              (int)probes[i].candidate, (int)got, (int)probes[i].want);
    }
    /* B-leading steps whose pair warps take ESMM_PLAN_SKIP_BELOW of a dense
     * pass less half of A's copy (ESMM_PLAN_COPY_COST / 4096): dense unless
     * the extraction made the copy. */
    const int64_t size = 4096;
    const double strips = (double)(size / 32), tiles = strips / ESMM_PLAN_TILE_STRIPS;
    const double steps = (ESMM_PLAN_SKIP_BELOW - ESMM_PLAN_PAIR_FIXED -
                          ESMM_PLAN_COPY_COST / (double)size / 2.0) /
                         ESMM_PLAN_PAIR_PER_STEP;
    esmm_plan_stats_t made = {0};
    made.steps_normal = (unsigned long long)(strips * tiles * (double)size);
    made.steps_swapped = (unsigned long long)(steps * strips * tiles * (double)size);
    made.work = (unsigned long long)(strips * strips * (double)size);
    esmm_plan_stats_t not_made = made;
    const int swapped_wide = esmm_plan_swapped_wide(size, size, size, ESMM_OP_N, ESMM_OP_N);
    esmm_plan_decide(&not_made, size, size, size, ESMM_OP_N, ESMM_OP_N, ESMM_SKIP_BY_BOTH, -1.0,
                     ESMM_COPY_NONE, -1.0);
    esmm_plan_decide(&made, size, size, size, ESMM_OP_N, ESMM_OP_N, ESMM_SKIP_BY_BOTH, -1.0,
                     ESMM_COPY_A, -1.0);
    CHECK(swapped_wide == ESMM_WIDE_COPIED &&
              esmm_plan_normal_wide(size, size, size, ESMM_OP_N, ESMM_OP_N) ==
                      ESMM_WIDE_DIRECT &&
              not_made.decision == ESMM_PLAN_DENSE &&
              made.decision == ESMM_PLAN_SKIP_SWAPPED,
          "B-leading steps at %.3f of the dense ones: decision %d with A's copy to make, %d "
          "with it made (expected %d and %d)",
          steps, not_made.decision, made.decision, ESMM_PLAN_DENSE, ESMM_PLAN_SKIP_SWAPPED);
}

/* Where the wide operand is transposed on the way in, a step costs
 * ESMM_PLAN_TRANSPOSED_IN times more: one operand's half of the steps left
 * runs dense, a quarter skips, in strip warps where they are queued (products
 * from ESMM_PLAN_STRIP_WARPS_MIN_PRODUCT) and in pair warps below. Host rule
 * only; test_gpu_sparse runs planned products bit for bit against the dense
 * kernel. */
static void check_transposed_rule(void)
{
    const struct {
        int64_t m, n, k;
        double share;
        int decision, form; /* form < 0: not checked (dense) */
    } cases[] = {
        {1024, 4096, 4096, 0.5, ESMM_PLAN_DENSE, -1},
        {1024, 4096, 4096, 0.25, ESMM_PLAN_SKIP_NORMAL, ESMM_FORM_STRIP_WARPS},
        {1024, 1024, 2048, 0.25, ESMM_PLAN_SKIP_NORMAL, ESMM_FORM_PAIR_WARPS},
    };
    for (size_t i = 0; i < COUNT_OF(cases); i++) {
        const int64_t m = cases[i].m, n = cases[i].n, k = cases[i].k;
        const double strips_a = (double)(m / 32), strips_b = (double)(n / 32);
        const double tiles_a = strips_a / ESMM_PLAN_TILE_STRIPS;
        const double tiles_b = strips_b / ESMM_PLAN_TILE_STRIPS;
        /* A skipped: the normal orientation keeps the share of its steps, and
         * every B-leading step has a tile of A strips with some nonzero. */
        esmm_plan_stats_t stats = {0};
        stats.steps_normal = (unsigned long long)(cases[i].share * strips_a * tiles_b * (double)k);
        stats.steps_swapped = (unsigned long long)(strips_b * tiles_a * (double)k);
        stats.work = (unsigned long long)(cases[i].share * strips_a * strips_b * (double)k);
        const int normal_wide = esmm_plan_normal_wide(m, n, k, ESMM_OP_T, ESMM_OP_T);
        esmm_plan_decide(&stats, m, n, k, ESMM_OP_T, ESMM_OP_T, ESMM_SKIP_BY_BOTH, -1.0,
                         ESMM_COPY_NONE, -1.0);
        CHECK(normal_wide == ESMM_WIDE_TRANSPOSED && stats.decision == cases[i].decision &&
                  (cases[i].form < 0 || stats.form == cases[i].form),
              "%lld x %lld x %lld, op(B) = B^T, A's steps at %.2f: read %d, decision %d, form "
              "%d (expected %d, %d and %d)",
              (long long)m, (long long)n, (long long)k, cases[i].share, normal_wide,
              stats.decision, stats.form, ESMM_WIDE_TRANSPOSED, cases[i].decision,
              cases[i].form);
    }
}

/* The pair-warp tile spans 256 columns of C: where C is 128 wide, half of
 * it lies past C and a step costs twice its share, so A's half of the steps
 * left runs dense there and skips where C is 4096 wide. Along A's strips the
 * dense tiles reach further: 1797 rows are 15 tiles of 128 (1920 rows) and
 * 57 strips (1824), so 0.79 of A's steps skip there and run dense at 2048
 * rows. Host rule only. */
static void check_tile_span_rule(void)
{
    const int64_t k = 4096, m = 4096, widths[] = {128, 4096};
    const int want[] = {ESMM_PLAN_DENSE, ESMM_PLAN_SKIP_NORMAL};
    for (size_t i = 0; i < COUNT_OF(widths); i++) {
        const int64_t n = widths[i];
        const double strips_a = (double)(m / 32), strips_b = (double)(n / 32);
        const double tiles_a = strips_a / ESMM_PLAN_TILE_STRIPS;
        const double tiles_b = (double)((n + 255) / 256);
        esmm_plan_stats_t stats = {0};
        stats.steps_normal = (unsigned long long)(0.5 * strips_a * tiles_b * (double)k);
        stats.steps_swapped = (unsigned long long)(strips_b * tiles_a * (double)k);
        stats.work = (unsigned long long)(0.5 * strips_a * strips_b * (double)k);
        esmm_plan_decide(&stats, m, n, k, ESMM_OP_T, ESMM_OP_N, ESMM_SKIP_BY_BOTH, -1.0,
                         ESMM_COPY_NONE, -1.0);
        CHECK(stats.decision == want[i],
              "%lld x %lld x %lld, A's steps at 0.5: decision %d, expected %d", (long long)m,
              (long long)n, (long long)k, stats.decision, want[i]);
    }
    const int64_t heights[] = {1797, 2048};
    const int want_led[] = {ESMM_PLAN_SKIP_NORMAL, ESMM_PLAN_DENSE};
    for (size_t i = 0; i < COUNT_OF(heights); i++) {
        const int64_t rows = heights[i], cols = 2048, depth = 2048;
        const double strips_a = (double)((rows + 31) / 32), strips_b = (double)(cols / 32);
        const double tiles_a = (double)((rows + 255) / 256);
        const double tiles_b = strips_b / ESMM_PLAN_TILE_STRIPS;
        esmm_plan_stats_t stats = {0};
        stats.steps_normal = (unsigned long long)(0.79 * strips_a * tiles_b * (double)depth);
        stats.steps_swapped = (unsigned long long)(strips_b * tiles_a * (double)depth);
        stats.work = (unsigned long long)(0.79 * strips_a * strips_b * (double)depth);
        esmm_plan_decide(&stats, rows, cols, depth, ESMM_OP_T, ESMM_OP_N, ESMM_SKIP_BY_BOTH,
                         -1.0, ESMM_COPY_NONE, -1.0);
        CHECK(stats.decision == want_led[i],
              "%lld x %lld x %lld, A's steps at 0.79: decision %d, expected %d",
              (long long)rows, (long long)cols, (long long)depth, stats.decision, want_led[i]);
    }
}

/* The union path: which k it needs (esmm_union_needs_k, the exactness rule
 * over whole columns of op(A) and rows of op(B)), where the planner takes it
 * (esmm_plan_take_union), and the list's layout in the workspace. Host rules
 * only; test_gpu_sparse runs it bit for bit against the dense kernel,
 * NaN/Inf beside dead channels included. */
static void check_union_rule(void)
{
    /* a, b: some strip nonzero; nf_a, nf_b: some strip NaN/Inf. */
    const struct {
        int a, b, nf_a, nf_b, needed;
    } ks[] = {
        {1, 1, 0, 0, 1}, {0, 1, 0, 0, 0}, {1, 0, 0, 0, 0}, {0, 0, 0, 0, 0},
        {0, 1, 0, 1, 1}, /* op(A) zero, op(B) NaN there: 0 x NaN */
        {1, 0, 1, 0, 1}, /* op(B) zero, op(A) Inf there */
        {1, 1, 1, 1, 1},
    };
    for (size_t i = 0; i < COUNT_OF(ks); i++)
        CHECK(esmm_union_needs_k(ks[i].a, ks[i].b, ks[i].nf_a, ks[i].nf_b) == ks[i].needed,
              "esmm_union_needs_k(%d, %d, %d, %d) is %d", ks[i].a, ks[i].b, ks[i].nf_a,
              ks[i].nf_b, !ks[i].needed);
    /* A at 4096^3 with a share of its k live, B dense: dead channels (the
     * union's share the same) take the union path, strips alive at random
     * (every k needed by some strip) the pair warps, and where the skipping
     * paths lose, the union path still runs below a dense pass. */
    const int64_t size = 4096;
    const double strips = (double)(size / 32), tiles = strips / ESMM_PLAN_TILE_STRIPS;
    const struct {
        double steps, union_share;
        int decision;
    } cases[] = {
        {0.25, 0.25, ESMM_PLAN_UNION},
        {0.25, 1.0, ESMM_PLAN_SKIP_NORMAL},
        {0.9, 0.9, ESMM_PLAN_UNION},
        {0.9, 1.0, ESMM_PLAN_DENSE},
        {0.9, 0.995, ESMM_PLAN_DENSE},
        {0.25, -1.0, ESMM_PLAN_SKIP_NORMAL}, /* not offered */
    };
    for (size_t i = 0; i < COUNT_OF(cases); i++) {
        esmm_plan_stats_t stats = {0};
        stats.steps_normal = (unsigned long long)(cases[i].steps * strips * tiles * (double)size);
        stats.steps_swapped = (unsigned long long)(strips * tiles * (double)size);
        stats.work = (unsigned long long)(cases[i].steps * strips * strips * (double)size);
        esmm_plan_decide(&stats, size, size, size, ESMM_OP_T, ESMM_OP_N, ESMM_SKIP_BY_BOTH,
                         -1.0, ESMM_COPY_NONE, cases[i].union_share);
        CHECK(stats.decision == cases[i].decision &&
                  (stats.decision == ESMM_PLAN_UNION) == (stats.form == ESMM_FORM_UNION),
              "4096^3, A's steps at %.3f, union share %.3f: decision %d form %d, expected "
              "decision %d",
              cases[i].steps, cases[i].union_share, stats.decision, stats.form,
              cases[i].decision);
    }
    /* With A's dead channels leaving 3/4 of k (steps and share alike), pair
     * warps cost 0.86 of a dense pass. At 2048^3 the dense kernel reads every
     * operand along k from its copy, so the union path costs 0.7825 (3/4 of
     * k listed) and the copies it makes (0.043 each): it runs on every
     * layout (in NT against pair warps that read B's copy made by the
     * extraction, or against a dense pass where the pair warps would make
     * it, 0.903). At
     * 2048 x 1024 x 2048 NN, C too narrow for A's copy, the dense kernel
     * transposes A on the way in, which costs the union path 12% more a k
     * against a skipping path: pair warps run. */
    const int64_t mid = 2048;
    const struct {
        int64_t n;
        esmm_operation_t op_a, op_b;
        int made, decision;
    } layouts[] = {
        {mid, ESMM_OP_T, ESMM_OP_N, ESMM_COPY_NONE, ESMM_PLAN_UNION},
        {mid, ESMM_OP_N, ESMM_OP_N, ESMM_COPY_NONE, ESMM_PLAN_UNION},
        {mid, ESMM_OP_N, ESMM_OP_T, ESMM_COPY_B, ESMM_PLAN_UNION},
        {mid, ESMM_OP_N, ESMM_OP_T, ESMM_COPY_NONE, ESMM_PLAN_UNION},
        {1024, ESMM_OP_N, ESMM_OP_N, ESMM_COPY_NONE, ESMM_PLAN_SKIP_NORMAL},
    };
    for (size_t i = 0; i < COUNT_OF(layouts); i++) {
        const int64_t n = layouts[i].n;
        const double strips_a = (double)(mid / 32), strips_b = (double)(n / 32);
        const double tiles_a = strips_a / ESMM_PLAN_TILE_STRIPS;
        const double tiles_b = strips_b / ESMM_PLAN_TILE_STRIPS;
        esmm_plan_stats_t stats = {0};
        stats.steps_normal = (unsigned long long)(0.75 * strips_a * tiles_b * (double)mid);
        stats.steps_swapped = (unsigned long long)(strips_b * tiles_a * (double)mid);
        stats.work = (unsigned long long)(0.75 * strips_a * strips_b * (double)mid);
        esmm_plan_decide(&stats, mid, n, mid, layouts[i].op_a, layouts[i].op_b,
                         ESMM_SKIP_BY_BOTH, -1.0, layouts[i].made, 0.75);
        CHECK(stats.decision == layouts[i].decision,
              "2048 x %lld x 2048 op(A) %d op(B) %d, copies made %d, 3/4 of k listed and of "
              "A's steps: decision %d, expected %d",
              (long long)n, (int)layouts[i].op_a, (int)layouts[i].op_b, layouts[i].made,
              stats.decision, layouts[i].decision);
    }
    /* Both operands transposed on the way in (NT, 64 x 96 x 40, no copies),
     * with no step skipped: against a dense pass the union path runs up to
     * 96% of k listed, as on any layout. */
    const double small_shares[] = {0.95, 0.97};
    const int small_want[] = {ESMM_PLAN_UNION, ESMM_PLAN_DENSE};
    for (size_t i = 0; i < COUNT_OF(small_shares); i++) {
        esmm_plan_stats_t stats = {0};
        stats.steps_normal = 2 * 1 * 40;  /* strips of A x tiles of B x k */
        stats.steps_swapped = 3 * 1 * 40; /* strips of B x tiles of A x k */
        stats.work = 2 * 3 * 40;
        esmm_plan_decide(&stats, 64, 96, 40, ESMM_OP_N, ESMM_OP_T, ESMM_SKIP_BY_BOTH, -1.0,
                         ESMM_COPY_NONE, small_shares[i]);
        CHECK(stats.decision == small_want[i] &&
                  esmm_dense_transposed_in(ESMM_OP_N, ESMM_OP_T,
                                           esmm_dense_copies(64, 96, ESMM_OP_N, ESMM_OP_T)) == 2,
              "64 x 96 x 40 NT, union share %.2f: decision %d, expected %d", small_shares[i],
              stats.decision, small_want[i]);
    }
    /* Every part of the list lies inside its bytes, whatever k. */
    const int64_t depths[] = {1, 63, 64, 65, 4096, 100003};
    for (size_t i = 0; i < COUNT_OF(depths); i++) {
        const int64_t k = depths[i], words = esmm_union_words(k);
        const size_t bytes = esmm_union_list_bytes(k);
        unsigned char *base = host_alloc((int64_t)bytes, 1);
        const esmm_union_list_t list = esmm_union_list_at(base, k);
        const unsigned char *starts = (const unsigned char *)list.starts;
        const unsigned char *entries = (const unsigned char *)list.entries;
        const size_t end = (size_t)(entries - base) +
                           (size_t)(ESMM_UNION_K_PER_WORD * words + ESMM_UNION_PAD) * sizeof(int);
        CHECK(words * ESMM_UNION_K_PER_WORD >= k &&
                  (size_t)(starts - base) >= (size_t)words * sizeof(unsigned long long) &&
                  (size_t)(entries - starts) >= (size_t)(2 * words + 1) * sizeof(int) &&
                  end <= bytes,
              "union list at k = %lld: %lld words, entries end at byte %zu of %zu",
              (long long)k, (long long)words, end, bytes);
        free(base);
    }
}

/* extraction_ms is measured only while timing is on. */
static void check_timing(const target_t *t)
{
    operands_t o = operands_alloc(70, 90, 50);
    buffers_t buf = buffers_alloc(t, &o);
    operands_fill(&o, &sweep_fills[2], 0x7171u);
    operands_prepare(&o);
    const config_t cfg = {ESMM_OP_T, ESMM_OP_N, 1.0f, 0.0f, &layout_cases[1]};
    const staged_t s = stage_config(t, &buf, &o, &cfg, "timing");
    CHECK(esmm_set_timing(NULL, 1) == ESMM_STATUS_NOT_INITIALIZED,
          "esmm_set_timing(NULL) should return NOT_INITIALIZED");
    for (int enable = 1; enable >= 0; enable--) {
        CHECK(esmm_set_timing(t->h, enable) == ESMM_STATUS_SUCCESS, "esmm_set_timing(%d)", enable);
        const esmm_status_t st = run_path(t, &buf, &s, PATH_DEFAULT, NULL, NULL, buf.path_c);
        esmm_info_t info;
        memset(&info, 0, sizeof info);
        CHECK(st == ESMM_STATUS_SUCCESS &&
                  esmm_get_last_info(t->h, &info) == ESMM_STATUS_SUCCESS &&
                  (enable ? info.extraction_ms >= 0.0 : info.extraction_ms < 0.0),
              "%s with timing %d: returned \"%s\", extraction_ms %g", s.label, enable,
              esmm_status_string(st), info.extraction_ms);
    }
    esmm_info_t info;
    CHECK(esmm_get_last_info(NULL, &info) == ESMM_STATUS_NOT_INITIALIZED,
          "esmm_get_last_info(NULL handle) should return NOT_INITIALIZED");
    CHECK(esmm_get_last_info(t->h, NULL) == ESMM_STATUS_INVALID_VALUE,
          "esmm_get_last_info(NULL out) should return INVALID_VALUE");
    buffers_free(t, &buf);
    operands_free(&o);
}

/* ---- the pattern API ---------------------------------------------------- */

/* The valid product that proves the handle still works: cached patterns
 * give the dense bits. */
static void check_still_works(const target_t *t, buffers_t *buf, const staged_t *s,
                              esmm_pattern_t pa, esmm_pattern_t pb, const char *after)
{
    esmm_status_t st = run_path(t, buf, s, PATH_DENSE, NULL, NULL, buf->dense_c);
    esmm_status_t st2 = run_path(t, buf, s, PATH_CACHED_AB, pa, pb, buf->path_c);
    CHECK(st == ESMM_STATUS_SUCCESS && st2 == ESMM_STATUS_SUCCESS,
          "after %s: valid calls returned \"%s\" / \"%s\"", after, esmm_status_string(st),
          esmm_status_string(st2));
    verify_same_bits(buf->path_c, buf->dense_c, s, "esmm_sgemm_patterns after a misuse", 0);
}

static void check_extract_misuse(const target_t *t, const buffers_t *buf)
{
    const struct {
        const char *what;
        int is_b, null_handle, null_out, null_data;
        esmm_operation_t op;
        int64_t rows, k, ld; /* rows: m for A, n for B */
        esmm_status_t expected;
    } cases[] = {
        {"A: NULL handle", 0, 1, 0, 0, ESMM_OP_N, 40, 24, 24, ESMM_STATUS_NOT_INITIALIZED},
        {"B: NULL handle", 1, 1, 0, 0, ESMM_OP_N, 40, 24, 40, ESMM_STATUS_NOT_INITIALIZED},
        {"A: NULL handle and out pointer", 0, 1, 1, 0, ESMM_OP_N, 40, 24, 24,
         ESMM_STATUS_NOT_INITIALIZED},
        {"A: NULL out pointer", 0, 0, 1, 0, ESMM_OP_N, 40, 24, 24, ESMM_STATUS_INVALID_VALUE},
        {"B: NULL out pointer", 1, 0, 1, 0, ESMM_OP_N, 40, 24, 40, ESMM_STATUS_INVALID_VALUE},
        {"A: m = -1", 0, 0, 0, 0, ESMM_OP_N, -1, 24, 24, ESMM_STATUS_INVALID_VALUE},
        {"A: k = -1", 0, 0, 0, 0, ESMM_OP_N, 40, -1, 24, ESMM_STATUS_INVALID_VALUE},
        {"B: n = -1", 1, 0, 0, 0, ESMM_OP_N, -1, 24, 40, ESMM_STATUS_INVALID_VALUE},
        {"B: k = INT64_MIN", 1, 0, 0, 0, ESMM_OP_T, 40, INT64_MIN, 24, ESMM_STATUS_INVALID_VALUE},
        {"A op N: lda < k", 0, 0, 0, 0, ESMM_OP_N, 40, 24, 23, ESMM_STATUS_INVALID_VALUE},
        {"A op T: lda < m", 0, 0, 0, 0, ESMM_OP_T, 40, 24, 39, ESMM_STATUS_INVALID_VALUE},
        {"B op N: ldb < n", 1, 0, 0, 0, ESMM_OP_N, 40, 24, 39, ESMM_STATUS_INVALID_VALUE},
        {"B op T: ldb < k", 1, 0, 0, 0, ESMM_OP_T, 40, 24, 23, ESMM_STATUS_INVALID_VALUE},
        {"A: ld = 0", 0, 0, 0, 0, ESMM_OP_N, 40, 24, 0, ESMM_STATUS_INVALID_VALUE},
        {"B: negative ld", 1, 0, 0, 0, ESMM_OP_T, 40, 24, -24, ESMM_STATUS_INVALID_VALUE},
        {"A: op 2", 0, 0, 0, 0, (esmm_operation_t)2, 40, 24, 40, ESMM_STATUS_INVALID_VALUE},
        {"B: op -1", 1, 0, 0, 0, (esmm_operation_t)-1, 40, 24, 40, ESMM_STATUS_INVALID_VALUE},
        {"A: NULL data", 0, 0, 0, 1, ESMM_OP_N, 40, 24, 24, ESMM_STATUS_INVALID_VALUE},
        {"B: NULL data", 1, 0, 0, 1, ESMM_OP_T, 40, 24, 24, ESMM_STATUS_INVALID_VALUE},
        {"A: ld whose last offset overflows", 0, 0, 0, 0, ESMM_OP_N, 40, 24, INT64_MAX / 8,
         ESMM_STATUS_INVALID_VALUE},
        {"A: ld whose last byte offset overflows", 0, 0, 0, 0, ESMM_OP_N, 2, 24, INT64_MAX / 8,
         ESMM_STATUS_INVALID_VALUE},
        {"A: m == 0 with NULL data (empty pattern)", 0, 0, 0, 1, ESMM_OP_N, 0, 24, 24,
         ESMM_STATUS_SUCCESS},
        {"B: k == 0 with NULL data (empty pattern)", 1, 0, 0, 1, ESMM_OP_N, 40, 0, 40,
         ESMM_STATUS_SUCCESS},
        /* Nothing stored (k = 0), but strips no mask count holds. */
        {"A op T: m = INT64_MAX, k = 0", 0, 0, 0, 0, ESMM_OP_T, INT64_MAX, 0, INT64_MAX,
         ESMM_STATUS_ALLOC_FAILED},
        {"B op N: n = INT64_MAX, k = 0", 1, 0, 0, 0, ESMM_OP_N, INT64_MAX, 0, INT64_MAX,
         ESMM_STATUS_ALLOC_FAILED},
    };
    static int not_a_pattern;
    for (size_t i = 0; i < COUNT_OF(cases); i++) {
        esmm_pattern_t pattern = (esmm_pattern_t)&not_a_pattern;
        esmm_pattern_t *out = cases[i].null_out ? NULL : &pattern;
        esmm_handle_t h = cases[i].null_handle ? NULL : t->h;
        const float *x = cases[i].null_data ? NULL : (cases[i].is_b ? buf->b : buf->a);
        const esmm_status_t st =
            cases[i].is_b
                ? esmm_pattern_extract_b(h, cases[i].op, cases[i].k, cases[i].rows, x, cases[i].ld,
                                         out)
                : esmm_pattern_extract_a(h, cases[i].op, cases[i].rows, cases[i].k, x, cases[i].ld,
                                         out);
        CHECK(st == cases[i].expected, "pattern extraction, %s: returned \"%s\", expected \"%s\"",
              cases[i].what, esmm_status_string(st), esmm_status_string(cases[i].expected));
        if (cases[i].null_out)
            continue;
        if (cases[i].expected != ESMM_STATUS_SUCCESS) {
            CHECK(pattern == NULL, "pattern extraction, %s: failed but left *pattern set",
                  cases[i].what);
            continue;
        }
        double density = -1.0;
        CHECK(esmm_pattern_density(pattern, &density) == ESMM_STATUS_SUCCESS && density == 0.0,
              "pattern extraction, %s: density %g of an empty pattern", cases[i].what, density);
        CHECK(esmm_pattern_destroy(pattern) == ESMM_STATUS_SUCCESS,
              "pattern extraction, %s: esmm_pattern_destroy", cases[i].what);
    }
    double density = 0.0;
    CHECK(esmm_pattern_density(NULL, &density) == ESMM_STATUS_INVALID_VALUE,
          "esmm_pattern_density(NULL pattern) should return INVALID_VALUE");
    CHECK(esmm_pattern_destroy(NULL) == ESMM_STATUS_SUCCESS,
          "esmm_pattern_destroy(NULL) should succeed");
}

/* esmm_pattern_density of patterns whose fraction is known by construction. */
static void check_known_densities(const target_t *t)
{
    const struct {
        const char *what;
        int64_t m, n, k;
        fill_t fill;
        double density_a, density_b;
    } cases[] = {
        {"all zero", 64, 40, 16, {"", {FILL_SLICES, 0, 0}, {FILL_SLICES, 0, 0}}, 0.0, 0.0},
        {"no zeros, partial strips and k block", 33, 65, 17,
         {"", {FILL_SLICES, 1, 0}, {FILL_SLICES, 1, 0}}, 1.0, 1.0},
        {"one nonzero in A (1 of 2 strips x 16 k)", 64, 40, 16,
         {"", {FILL_SINGLE, 0, 0}, {FILL_SINGLE, 0, 0}}, 1.0 / 32.0, 1.0 / 32.0},
        {"every 4th k zero", 40, 70, 32, {"", {FILL_K_GAPS, 0, 4}, {FILL_K_GAPS, 0, 4}}, 0.75,
         0.75},
    };
    for (size_t i = 0; i < COUNT_OF(cases); i++)
        for (size_t ci = 0; ci < 4; ci++) {
            operands_t o = operands_alloc(cases[i].m, cases[i].n, cases[i].k);
            buffers_t buf = buffers_alloc(t, &o);
            operands_fill(&o, &cases[i].fill, 0xDE45u + i);
            operands_prepare(&o);
            const config_t cfg = {both_ops[ci / 2], both_ops[ci % 2], 1.0f, 0.0f,
                                  &layout_cases[ci % 2]};
            char what[128];
            snprintf(what, sizeof what, "known density, %s", cases[i].what);
            const staged_t s = stage_config(t, &buf, &o, &cfg, what);
            esmm_pattern_t pa = NULL, pb = NULL;
            CHECK(esmm_pattern_extract_a(t->h, s.p.op_a, s.p.m, s.p.k, s.p.a, s.p.lda, &pa) ==
                          ESMM_STATUS_SUCCESS &&
                      esmm_pattern_extract_b(t->h, s.p.op_b, s.p.k, s.p.n, s.p.b, s.p.ldb, &pb) ==
                          ESMM_STATUS_SUCCESS,
                  "%s: extraction failed", s.label);
            verify_pattern_density(pa, cases[i].density_a, "A", s.label);
            verify_pattern_density(pb, cases[i].density_b, "B", s.label);
            esmm_pattern_destroy(pa);
            esmm_pattern_destroy(pb);
            buffers_free(t, &buf);
            operands_free(&o);
        }
}

/* Patterns that do not describe the operand: refused, C untouched, and the
 * handle keeps working. */
static void check_pattern_mismatch(const target_t *t)
{
    /* Square op(A) and op(B) so either op's storage fits the same buffers. */
    const int64_t size = 40;
    operands_t o = operands_alloc(size, size, size);
    buffers_t buf = buffers_alloc(t, &o);
    operands_fill(&o, &sweep_fills[2], 0xF175u);
    operands_prepare(&o);
    const config_t cfg = {ESMM_OP_N, ESMM_OP_N, -0.5f, 2.0f, &layout_cases[1]};
    const staged_t s = stage_config(t, &buf, &o, &cfg, "pattern mismatch");
    const esmm_gemm_problem_t *p = &s.p;

    esmm_pattern_t pa = NULL, pb = NULL, pa_t = NULL, pb_t = NULL, pa_m = NULL, pa_m1 = NULL,
                   pa_k = NULL, pb_n = NULL, pb_k = NULL, foreign = NULL;
    int ok = esmm_pattern_extract_a(t->h, ESMM_OP_N, size, size, p->a, p->lda, &pa) == 0;
    ok &= esmm_pattern_extract_b(t->h, ESMM_OP_N, size, size, p->b, p->ldb, &pb) == 0;
    ok &= esmm_pattern_extract_a(t->h, ESMM_OP_T, size, size, p->a, p->lda, &pa_t) == 0;
    ok &= esmm_pattern_extract_b(t->h, ESMM_OP_T, size, size, p->b, p->ldb, &pb_t) == 0;
    /* 39 rows: the same strips, a different shape. */
    ok &= esmm_pattern_extract_a(t->h, ESMM_OP_N, size - 1, size, p->a, p->lda, &pa_m1) == 0;
    /* 80 rows need a larger (zero) operand. */
    float *zeros = host_alloc(2 * size * size, sizeof(float));
    memset(zeros, 0, (size_t)(2 * size * size) * sizeof(float));
    float *tall = backend_alloc(t, (size_t)(2 * size * size) * sizeof(float));
    backend_put(t, tall, zeros, (size_t)(2 * size * size) * sizeof(float));
    ok &= esmm_pattern_extract_a(t->h, ESMM_OP_N, 2 * size, size, tall, size, &pa_m) == 0;
    ok &= esmm_pattern_extract_a(t->h, ESMM_OP_N, size, size - 8, p->a, p->lda, &pa_k) == 0;
    ok &= esmm_pattern_extract_b(t->h, ESMM_OP_N, size, size - 1, p->b, p->ldb, &pb_n) == 0;
    ok &= esmm_pattern_extract_b(t->h, ESMM_OP_N, size - 1, size, p->b, p->ldb, &pb_k) == 0;
    CHECK(ok, "pattern mismatch: extracting the test patterns failed");

    /* A pattern made by a handle of the other backend. */
    esmm_handle_t cpu = NULL;
    float *host_a = NULL;
    if (t->backend == ESMM_BACKEND_CUDA &&
        esmm_create(&cpu, ESMM_BACKEND_CPU) == ESMM_STATUS_SUCCESS) {
        host_a = host_alloc(size * size, sizeof(float));
        memcpy(host_a, o.a, (size_t)(size * size) * sizeof(float));
        CHECK(esmm_pattern_extract_a(cpu, ESMM_OP_N, size, size, host_a, size, &foreign) ==
                  ESMM_STATUS_SUCCESS,
              "pattern mismatch: extraction on a CPU handle failed");
    }

    const struct {
        const char *what;
        esmm_pattern_t a, b;
    } cases[] = {
        {"B's pattern passed as A's", pb, NULL},
        {"A's pattern passed as B's", NULL, pa},
        {"patterns swapped", pb, pa},
        {"A's pattern of op T for op N", pa_t, NULL},
        {"B's pattern of op T for op N", NULL, pb_t},
        {"A's pattern of m = 39 (same strips) for m = 40", pa_m1, NULL},
        {"A's pattern of m = 80 for m = 40", pa_m, NULL},
        {"A's pattern of k = 32 for k = 40", pa_k, NULL},
        {"B's pattern of n = 39 (same strips) for n = 40", NULL, pb_n},
        {"B's pattern of k = 39 for k = 40", NULL, pb_k},
        {"right A, wrong B", pa, pb_t},
        {"A's pattern from a CPU handle", foreign, NULL},
    };
    for (size_t i = 0; i < COUNT_OF(cases); i++) {
        if (cases[i].a == NULL && cases[i].b == NULL)
            continue;
        const esmm_status_t st = run_path(t, &buf, &s, PATH_CACHED_AB, cases[i].a, cases[i].b,
                                          buf.path_c);
        CHECK(st == ESMM_STATUS_INVALID_VALUE, "esmm_sgemm_patterns, %s: returned \"%s\"",
              cases[i].what, esmm_status_string(st));
        CHECK(memcmp(buf.path_c, buf.host_c, (size_t)s.lc.len * sizeof(float)) == 0,
              "esmm_sgemm_patterns, %s: refused, but C changed", cases[i].what);
        check_still_works(t, &buf, &s, pa, pb, cases[i].what);
    }
    CHECK(foreign == NULL ||
              esmm_pattern_keep_copy(t->h, foreign, p->a, p->lda) == ESMM_STATUS_INVALID_VALUE,
          "esmm_pattern_keep_copy took a CPU handle's pattern on a CUDA handle");
    CHECK(cpu == NULL ||
              esmm_pattern_keep_copy(cpu, pa, host_a, size) == ESMM_STATUS_INVALID_VALUE,
          "esmm_pattern_keep_copy took a CUDA handle's pattern on a CPU handle");
    const float one = 1.0f;
    CHECK(esmm_sgemm_patterns(NULL, ESMM_OP_N, ESMM_OP_N, size, size, size, &one, p->a, p->lda,
                              pa, p->b, p->ldb, pb, &one, p->c, p->ldc) ==
              ESMM_STATUS_NOT_INITIALIZED,
          "esmm_sgemm_patterns(NULL handle) should return NOT_INITIALIZED");
    CHECK(esmm_sgemm_patterns(t->h, ESMM_OP_N, ESMM_OP_N, size, size, size, &one, p->a,
                              p->lda - 2, pa, p->b, p->ldb, pb, &one, p->c, p->ldc) ==
              ESMM_STATUS_INVALID_VALUE,
          "esmm_sgemm_patterns with a short lda should return INVALID_VALUE");
    CHECK(esmm_sgemm_patterns(t->h, ESMM_OP_N, ESMM_OP_N, -1, size, size, &one, p->a, p->lda, pa,
                              p->b, p->ldb, pb, &one, p->c, p->ldc) == ESMM_STATUS_INVALID_VALUE,
          "esmm_sgemm_patterns with m = -1 should return INVALID_VALUE");
    check_still_works(t, &buf, &s, pa, pb, "the last misuse");

    const esmm_pattern_t all[] = {pa, pb, pa_t, pb_t, pa_m, pa_m1, pa_k, pb_n, pb_k, foreign};
    for (size_t i = 0; i < COUNT_OF(all); i++)
        CHECK(esmm_pattern_destroy(all[i]) == ESMM_STATUS_SUCCESS, "esmm_pattern_destroy %zu", i);
    esmm_destroy(cpu);
    free(host_a);
    free(zeros);
    backend_free(t, tall);
    buffers_free(t, &buf);
    operands_free(&o);
}

/* ---- the caller's workspace --------------------------------------------- */

/* Every path with the handle's current workspace gives the dense bits. */
static void check_workspace_product(const target_t *t, buffers_t *buf, const operands_t *o,
                                    const char *what)
{
    const config_t cfg = {ESMM_OP_T, ESMM_OP_N, -0.5f, 2.0f, &layout_cases[1]};
    run_config(t, buf, o, &cfg, what, 0);
}

static int same_name(const char *a, const char *b)
{
    return a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0;
}

/* Two reports of esmm_get_last_info describe the same call. */
static int same_report(const esmm_info_t *a, const esmm_info_t *b)
{
    return a->path == b->path && a->masks == b->masks && same_name(a->kernel, b->kernel) &&
           same_name(a->form, b->form) && a->density_a == b->density_a &&
           a->density_b == b->density_b && a->work_fraction == b->work_fraction;
}

static void check_workspace(const target_t *t)
{
    const int64_t m = 100, n = 70, k = 90;
    CHECK(esmm_workspace_size(-1, n, k) == 0 && esmm_workspace_size(m, -1, k) == 0 &&
              esmm_workspace_size(m, n, -1) == 0,
          "esmm_workspace_size of a negative size should be 0");
    CHECK(esmm_workspace_size(0, 0, INT64_MAX) == 0 && esmm_workspace_size(0, n, INT64_MAX) == 0 &&
              esmm_workspace_size(m, 0, INT64_MAX) == 0,
          "esmm_workspace_size without C (a call that does nothing) should be 0");
    CHECK(esmm_workspace_size(INT64_MAX, 1, 1) == SIZE_MAX &&
              esmm_workspace_size(1, INT64_MAX, 1) == SIZE_MAX &&
              esmm_workspace_size(1, 1, INT64_MAX) == SIZE_MAX &&
              esmm_workspace_size((int64_t)1 << 30, (int64_t)1 << 30, 1) == SIZE_MAX,
          "esmm_workspace_size of sizes no call accepts is not SIZE_MAX");
    const size_t need = esmm_workspace_size(m, n, k);
    CHECK(need > 0, "esmm_workspace_size(%lld, %lld, %lld) is 0", (long long)m, (long long)n,
          (long long)k);
    CHECK(esmm_workspace_size(2 * m, n, k) >= need && esmm_workspace_size(m, n, 2 * k) >= need,
          "esmm_workspace_size shrinks as the problem grows");
    CHECK(esmm_set_workspace(NULL, NULL, 0) == ESMM_STATUS_NOT_INITIALIZED,
          "esmm_set_workspace(NULL handle) should return NOT_INITIALIZED");
    CHECK(esmm_set_workspace(t->h, NULL, 64) == ESMM_STATUS_INVALID_VALUE,
          "esmm_set_workspace(NULL, 64 bytes) should return INVALID_VALUE");

    operands_t o = operands_alloc(m, n, k);
    buffers_t buf = buffers_alloc(t, &o);
    operands_fill(&o, &sweep_fills[1], 0x3053u);
    operands_prepare(&o);
    void *lent = backend_alloc(t, need);
    /* Device memory must keep the layout's 256-byte alignment. */
    const int cuda = t->backend == ESMM_BACKEND_CUDA;
    CHECK(esmm_set_workspace(t->h, (char *)lent + 16, need - 16) ==
              (cuda ? ESMM_STATUS_INVALID_VALUE : ESMM_STATUS_SUCCESS),
          "esmm_set_workspace(16 bytes past an aligned block)");
    CHECK(esmm_set_workspace(t->h, NULL, 0) == ESMM_STATUS_SUCCESS, "esmm_set_workspace(NULL, 0)");

    /* Short: every zero-skipping product is refused and C untouched. The size
     * is the CUDA backend's need (with these ops, a copy of an operand), so
     * there one byte short; the CPU backend's masks get 64 bytes. */
    const size_t short_bytes = cuda ? need - 1 : 64;
    CHECK(esmm_set_workspace(t->h, lent, short_bytes) == ESMM_STATUS_SUCCESS,
          "esmm_set_workspace(%zu bytes)", short_bytes);
    const config_t cfg = {ESMM_OP_N, ESMM_OP_T, 1.0f, 0.0f, &layout_cases[0]};
    const staged_t s = stage_config(t, &buf, &o, &cfg, "lent workspace too short");
    /* A refused call leaves the last call's report as it was. */
    esmm_info_t reported, now;
    memset(&reported, 0, sizeof reported);
    CHECK(esmm_get_last_info(t->h, &reported) == ESMM_STATUS_SUCCESS,
          "esmm_get_last_info before the refused calls");
    const path_t refused[] = {PATH_DEFAULT, PATH_SKIP_A, PATH_SKIP_B, PATH_SKIP_JOINT};
    for (size_t i = 0; i < COUNT_OF(refused); i++) {
        const esmm_status_t st = run_path(t, &buf, &s, refused[i], NULL, NULL, buf.path_c);
        CHECK(st == ESMM_STATUS_INVALID_VALUE, "%s %s: returned \"%s\", expected INVALID_VALUE",
              s.label, path_label(t, refused[i]), esmm_status_string(st));
        CHECK(memcmp(buf.path_c, buf.host_c, (size_t)s.lc.len * sizeof(float)) == 0,
              "%s %s: refused, but C changed", s.label, path_label(t, refused[i]));
        memset(&now, 0, sizeof now);
        CHECK(esmm_get_last_info(t->h, &now) == ESMM_STATUS_SUCCESS && same_report(&now, &reported),
              "%s %s: refused, but the report changed: path %d kernel %s, before path %d kernel "
              "%s",
              s.label, path_label(t, refused[i]), (int)now.path,
              now.kernel ? now.kernel : "(NULL)", (int)reported.path,
              reported.kernel ? reported.kernel : "(NULL)");
    }

    /* Back to the handle's own: it grows as needed. */
    CHECK(esmm_set_workspace(t->h, NULL, 0) == ESMM_STATUS_SUCCESS, "esmm_set_workspace(NULL, 0)");
    check_workspace_product(t, &buf, &o, "own workspace after a short lent one");

    /* Exactly the size asked for works, for this problem and a smaller one. */
    CHECK(esmm_set_workspace(t->h, lent, need) == ESMM_STATUS_SUCCESS,
          "esmm_set_workspace(%zu bytes)", need);
    check_workspace_product(t, &buf, &o, "lent workspace of esmm_workspace_size bytes");
    operands_t small = operands_alloc(m / 2, n - 1, k / 3);
    buffers_t small_buf = buffers_alloc(t, &small);
    operands_fill(&small, &sweep_fills[2], 0x3054u);
    operands_prepare(&small);
    check_workspace_product(t, &small_buf, &small, "lent workspace, a smaller problem");

    /* A larger problem needs more than was lent. */
    operands_t large = operands_alloc(2 * m, n, k);
    buffers_t large_buf = buffers_alloc(t, &large);
    operands_fill(&large, &sweep_fills[2], 0x3055u);
    operands_prepare(&large);
    if (cuda && esmm_workspace_size(2 * m, n, k) > need) {
        const staged_t ls = stage_config(t, &large_buf, &large, &cfg, "lent workspace too small");
        const esmm_status_t st = run_path(t, &large_buf, &ls, PATH_DEFAULT, NULL, NULL,
                                          large_buf.path_c);
        CHECK(st == ESMM_STATUS_INVALID_VALUE, "%s: returned \"%s\", expected INVALID_VALUE",
              ls.label, esmm_status_string(st));
    }
    CHECK(esmm_set_workspace(t->h, NULL, 0) == ESMM_STATUS_SUCCESS, "esmm_set_workspace(NULL, 0)");
    check_workspace_product(t, &large_buf, &large, "own workspace again, grown");

    /* The last call's report outlives the workspace that held its statistics:
     * the handle's own, freed by lending one, then the lent one, given back. */
    esmm_info_t before, after;
    memset(&before, 0, sizeof before);
    esmm_status_t st = esmm_get_last_info(t->h, &before);
    CHECK(st == ESMM_STATUS_SUCCESS && before.masks == ESMM_MASKS_USED && before.density_a >= 0.0,
          "own workspace: esmm_get_last_info reports masks %d, density of A %g", (int)before.masks,
          before.density_a);
    for (int lend = 1; lend >= 0; lend--) {
        CHECK(esmm_set_workspace(t->h, lend ? lent : NULL, lend ? need : 0) ==
                  ESMM_STATUS_SUCCESS,
              "esmm_set_workspace after a planned call");
        memset(&after, 0, sizeof after);
        st = esmm_get_last_info(t->h, &after);
        CHECK(st == ESMM_STATUS_SUCCESS && same_report(&after, &before),
              "%s: esmm_get_last_info says path %d kernel %s masks %d densities %g / %g work "
              "%g, before it path %d kernel %s masks %d densities %g / %g work %g",
              lend ? "own workspace freed" : "lent workspace given back", (int)after.path,
              after.kernel ? after.kernel : "(NULL)", (int)after.masks, after.density_a,
              after.density_b, after.work_fraction, (int)before.path,
              before.kernel ? before.kernel : "(NULL)", (int)before.masks, before.density_a,
              before.density_b, before.work_fraction);
    }

    buffers_free(t, &large_buf);
    operands_free(&large);
    buffers_free(t, &small_buf);
    operands_free(&small);
    /* The library must not have freed the lent buffer: freeing it here would
     * then fail or crash. */
    backend_free(t, lent);
    buffers_free(t, &buf);
    operands_free(&o);
}

/* ---- driver ------------------------------------------------------------- */

/* The backend's dense and skip kernels must all be listed by name. */
static int find_kernels(target_t *t)
{
    static const char *const cpu_names[4] = {"cpu", "cpu-skip-a", "cpu-skip-b", "cpu-skip-joint"};
    static const char *const cuda_names[4] = {"pipelined", "sparse-a", "sparse-b",
                                              "sparse-joint"};
    const char *const *names = t->backend == ESMM_BACKEND_CUDA ? cuda_names : cpu_names;
    int found = 1;
    for (int i = 0; i < 4; i++) {
        int listed = 0;
        for (int j = 0; j < esmm_kernel_count(t->h); j++)
            listed |= esmm_kernel_name(t->h, j) != NULL &&
                      strcmp(esmm_kernel_name(t->h, j), names[i]) == 0;
        CHECK(listed, "%s backend: kernel \"%s\" is not listed by esmm_kernel_name",
              backend_label(t), names[i]);
        found &= listed;
    }
    t->dense = names[0];
    for (int i = 0; i < 3; i++)
        t->skip[i] = names[i + 1];
    return found;
}

int main(void)
{
    target_t t;
    memset(&t, 0, sizeof t);
    esmm_status_t st = esmm_create(&t.h, ESMM_BACKEND_AUTO);
    CHECK(st == ESMM_STATUS_SUCCESS, "esmm_create(ESMM_BACKEND_AUTO) returned \"%s\"",
          esmm_status_string(st));
    if (st != ESMM_STATUS_SUCCESS)
        return check_finish();
    /* Plans every product, however small: the planned paths are what this covers. */
    CHECK(esmm_set_min_planned_work(t.h, 0) == ESMM_STATUS_SUCCESS, "esmm_set_min_planned_work");
    CHECK(esmm_get_backend(t.h, &t.backend) == ESMM_STATUS_SUCCESS, "esmm_get_backend failed");
    if (!find_kernels(&t)) {
        esmm_destroy(t.h);
        return check_finish();
    }
    printf("backend %s: dense kernel %s, skip kernels %s %s %s\n", backend_label(&t), t.dense,
           t.skip[0], t.skip[1], t.skip[2]);
    if (t.backend == ESMM_BACKEND_CPU)
        check_cpu_plans_small(&t);

    const double start = now_seconds();
    for (size_t i = 0; i < COUNT_OF(sweep_shapes); i++)
        sweep_shape(&t, &sweep_shapes[i], 0x5BA55u + 0x100000u * i);
    check_non_finite(&t);
    check_planner(&t);
    check_split_rule();
    check_copies_held_rule();
    check_transposed_rule();
    check_tile_span_rule();
    check_union_rule();
    check_timing(&t);
    check_known_densities(&t);
    check_pattern_mismatch(&t);
    {
        operands_t o = operands_alloc(40, 40, 40);
        buffers_t buf = buffers_alloc(&t, &o);
        check_extract_misuse(&t, &buf);
        buffers_free(&t, &buf);
        operands_free(&o);
    }
    check_workspace(&t);
    CHECK(esmm_destroy(t.h) == ESMM_STATUS_SUCCESS, "esmm_destroy failed");
    printf("total %.2f s\n", now_seconds() - start);
    return check_finish();
}
