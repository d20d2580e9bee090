/*
 * Zero skipping at sizes where the CUDA kernels run many tiles and long k
 * segments: every skip kernel by name, esmm_sgemm and esmm_sgemm_patterns
 * with a cached B, and with both patterns keeping their operands' copies
 * (esmm_pattern_keep_copy), against the dense "pipelined" kernel bit for bit, on
 * strip-generated operands (each 32-row strip of op(A) keeps column k with
 * probability d, each 32-column strip of op(B) keeps row k; exact zeros
 * elsewhere). Also: the dense result against float64 at sampled elements,
 * the planner's choice at density 0.125 and 1, that planned calls run both
 * forms of the skipping kernel (pair and strip warps), dense products whose
 * operands both run along k (read from a k-major copy), a created non-blocking
 * stream, capture into a CUDA graph, the extraction timer, and products that
 * underflow (the sign of a zero). Skipped where no CUDA device exists.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cuda/cuda_backend.h" /* esmm_plan_decide: the planner's rule */
#include "esmm.h"
#include "patterns/pattern_layout.h"
#include "test_support.h"
#include "test_support_cuda.h"

/* Poisoned floats before and after C; 128 bytes keep 16-byte alignment. */
#define GUARD 32
/* Elements of the dense result checked against float64, within the
 * first-order bound of a float sum of k products, alpha and beta * C
 * ((k + 3) unit roundoffs of the absolute scale) with a margin of 4. */
#define SAMPLES 4096
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
    {300, 20, 3001, 1, 1}, /* few C tiles, long k: split-K, a partial last split */
    {4097, 36, 2100, 1, 1}, /* the dense kernel's 128x64 tiles, split */
    /* C's other side past the copy threshold (esmm_wide_read): the skipping
     * kernel reads a k-major copy of op(A) = A (swapped) or op(B) = B^T
     * (normal) with padded rows, split along k. */
    {37, 1777, 2051, 1, 1},
    {1777, 37, 2051, 1, 1},
    /* Past 2^32 multiply-adds (esmm_plan_queues_strip_warps) with odd sizes,
     * padded rows and misaligned bases: the warp lists (TN, TT through the
     * copy of B, and NT through both copies, item 18) and the strip-warp
     * form (NN) on scalar copies, the
     * first split along k (5 ranges: esmm_k_split). The second is not
     * split: where the warp lists run on it, their lists of about 34 to 550
     * entries (d = 0.125 to 0.5) take both stage depths (warp_list_gemm.cu). */
    {2053, 1031, 2051, 1, 1},
    {1400, 1400, 2200, 1, 1},
    /* Groups of warp-list pairs (91 strips of A by 23 groups of B's, the
     * last group one strip short) past three rounds of CTAs on up to 174
     * SMs: the warp lists' grid is what the SMs hold, its warps claiming
     * pairs from the plan's counter (warp_list_gemm.cu). */
    {2900, 2900, 700, 1, 1},
    /* Both sides past the copy rule's edge: with both operands along k (NT,
     * variant 10) the warp lists read a copy of each, at odd sizes; below
     * 2^32 multiply-adds, where the warp lists are not queued, the extraction
     * writes both copies (variant 10) for the other paths. */
    {1800, 1900, 1300, 1, 1},
    {1800, 1900, 600, 1, 1},
};

typedef struct {
    double a, b;              /* strip densities of op(A) and op(B) */
    int dead_a, dead_b;       /* > 0: only every dead_x-th k is live in op(X), in every strip */
} density_t;

/* The last two have dead channels, zero in every strip (where the union
 * path pays): a quarter of op(A)'s k live, or a half of op(A)'s at strip
 * density 0.5 and a third of op(B)'s. */
static const density_t densities[] = {
    {0.125, 0.125, 0, 0}, {0.25, 0.25, 0, 0}, {0.5, 0.5, 0, 0}, {1.0, 1.0, 0, 0},
    {0.125, 1.0, 0, 0},   {1.0, 0.125, 0, 0}, {1.0, 1.0, 4, 0}, {0.5, 1.0, 2, 3},
};

/* Where the stream and timing checks run: shape and density indices. */
#define STREAM_SHAPE 0
#define STREAM_DENSITY 1
#define TIMING_SHAPE 2
#define TIMING_DENSITY 0

static const esmm_operation_t both_ops[] = {ESMM_OP_N, ESMM_OP_T};
static const char *const skip_kernels[] = {"sparse-a", "sparse-b", "sparse-joint",
                                           "sparse-union"};

/* ---- operands ----------------------------------------------------------- */

/* A stored operand, host copy and device copy. Element (i, kk) of op(X), i
 * running along the strips (rows of op(A), columns of op(B)), is
 * host[offset + i * i_stride + kk * k_stride]. */
typedef struct {
    float *host, *dev;
    int64_t ld, len, offset;
    int64_t rows, k, i_stride, k_stride;
} operand_t;

static operand_t operand_alloc(int strip_along_stored_rows, int64_t rows, int64_t k,
                               const shape_t *shape)
{
    operand_t x;
    const int64_t stored_rows = strip_along_stored_rows ? rows : k;
    const int64_t stored_cols = strip_along_stored_rows ? k : rows;
    x.ld = stored_cols + shape->pad;
    x.offset = shape->offset;
    x.len = x.offset + stored_rows * x.ld;
    x.rows = rows;
    x.k = k;
    x.i_stride = strip_along_stored_rows ? x.ld : 1;
    x.k_stride = strip_along_stored_rows ? 1 : x.ld;
    x.host = host_alloc(x.len, sizeof(float));
    x.dev = device_alloc((size_t)x.len * sizeof(float));
    return x;
}

static void operand_free(operand_t *x)
{
    free(x->host);
    device_free(x->dev);
}

static float operand_at(const operand_t *x, int64_t i, int64_t kk)
{
    return x->host[x->offset + i * x->i_stride + kk * x->k_stride];
}

/* Strip generator, NaN in the row padding (no path may read it), uploaded:
 * a strip holds nonzeros at kk with probability density, and where dead > 0
 * only at the kk that dead divides. counts[kk] = how many strips hold a
 * nonzero at kk; tiles[kk] = how many groups of ESMM_PLAN_TILE_STRIPS strips
 * do in any strip. */
static void operand_fill(operand_t *x, double density, int dead, uint64_t *rng,
                         unsigned long long *counts, unsigned long long *tiles)
{
    const float poison = poison_value();
    for (int64_t i = 0; i < x->len; i++)
        x->host[i] = poison;
    float *base = x->host + x->offset;
    unsigned char *tile_on = host_alloc(x->k, 1);
    for (int64_t kk = 0; kk < x->k; kk++)
        counts[kk] = tiles[kk] = tile_on[kk] = 0;
    const int64_t strips = esmm_pattern_strips(x->rows);
    for (int64_t s = 0; s < strips; s++) {
        const int64_t i0 = s * ESMM_PATTERN_STRIP;
        for (int64_t kk = 0; kk < x->k; kk++) {
            const int on = rng_uniform(rng) < density && (dead == 0 || kk % dead == 0);
            counts[kk] += (unsigned long long)on;
            tile_on[kk] |= (unsigned char)on;
            for (int64_t i = i0; i < min_i64(x->rows, i0 + ESMM_PATTERN_STRIP); i++)
                base[i * x->i_stride + kk * x->k_stride] = on ? nonzero_value(rng) : 0.0f;
        }
        if ((s + 1) % ESMM_PLAN_TILE_STRIPS == 0 || s + 1 == strips)
            for (int64_t kk = 0; kk < x->k; kk++) {
                tiles[kk] += tile_on[kk];
                tile_on[kk] = 0;
            }
    }
    free(tile_on);
    device_upload(x->dev, x->host, (size_t)x->len * sizeof(float));
}

/* The dense probe's counts over op(X), read from the data at the blocks it
 * samples (patterns/pattern_layout.h). */
static void probe_counts(const operand_t *x, unsigned *zero, unsigned *slices)
{
    const int64_t kblocks = esmm_pattern_kblocks(x->k);
    const int64_t blocks = esmm_pattern_strips(x->rows) * kblocks;
    *zero = *slices = 0;
    for (int64_t j = 0; j < esmm_probe_samples(blocks); j++) {
        const int64_t block = esmm_probe_block(j, blocks);
        const int64_t i0 = block / kblocks * ESMM_PATTERN_STRIP, k0 = block % kblocks * 8;
        for (int64_t kk = k0; kk < min_i64(x->k, k0 + 8); kk++) {
            int on = 0;
            for (int64_t i = i0; i < min_i64(x->rows, i0 + ESMM_PATTERN_STRIP) && !on; i++)
                on = operand_at(x, i, kk) != 0.0f;
            *slices += 1;
            *zero += !on;
        }
    }
}

/* ---- one problem -------------------------------------------------------- */

typedef struct {
    int64_t m, n, k;
    esmm_operation_t op_a, op_b;
    float alpha, beta;
    operand_t a, b;
    float *c_init;          /* C before the product, staged (guards and padding poisoned) */
    float *c_dev;           /* its device buffer */
    float *dense, *got;     /* C read back */
    int64_t ldc, c_lead, c_len;
    double density_a, density_b, work_fraction; /* recomputed from the data */
    esmm_plan_stats_t steps; /* the planner's steps_normal / steps_swapped, recomputed */
    int probed_dense;        /* the dense probe's verdict, recomputed */
    esmm_probe_slot_t probe; /* the dense probe's packed totals, recomputed */
    char label[160];
} problem_t;

static problem_t problem_make(const shape_t *shape, const density_t *d, int variant,
                              uint64_t seed)
{
    problem_t p;
    p.m = shape->m;
    p.n = shape->n;
    p.k = shape->k;
    p.op_a = both_ops[variant % 2];
    p.op_b = both_ops[(variant / 2) % 2];
    p.alpha = variant % 3 == 1 ? -0.5f : 1.0f;
    p.beta = variant % 3 == 1 ? 2.0f : 0.0f;
    uint64_t rng = seed;

    unsigned long long *count_a = host_alloc(p.k, sizeof *count_a);
    unsigned long long *count_b = host_alloc(p.k, sizeof *count_b);
    unsigned long long *tiles_a = host_alloc(p.k, sizeof *tiles_a);
    unsigned long long *tiles_b = host_alloc(p.k, sizeof *tiles_b);
    p.a = operand_alloc(p.op_a == ESMM_OP_N, p.m, p.k, shape);
    p.b = operand_alloc(p.op_b == ESMM_OP_T, p.n, p.k, shape);
    operand_fill(&p.a, d->a, d->dead_a, &rng, count_a, tiles_a);
    operand_fill(&p.b, d->b, d->dead_b, &rng, count_b, tiles_b);
    memset(&p.steps, 0, sizeof p.steps);
    const double strips_a = (double)esmm_pattern_strips(p.m);
    const double strips_b = (double)esmm_pattern_strips(p.n);
    unsigned long long bits_a = 0, bits_b = 0, work = 0;
    for (int64_t kk = 0; kk < p.k; kk++) {
        bits_a += count_a[kk];
        bits_b += count_b[kk];
        work += count_a[kk] * count_b[kk];
        p.steps.steps_normal += count_a[kk] * tiles_b[kk];
        p.steps.steps_swapped += count_b[kk] * tiles_a[kk];
        p.steps.union_skipped +=
            (unsigned long long)!esmm_union_needs_k(count_a[kk] > 0, count_b[kk] > 0, 0, 0);
    }
    p.steps.work = work;
    unsigned zero_a, slices_a, zero_b, slices_b;
    probe_counts(&p.a, &zero_a, &slices_a);
    probe_counts(&p.b, &zero_b, &slices_b);
    p.probe = (esmm_probe_slot_t){esmm_probe_pack(zero_a, zero_b),
                                  esmm_probe_pack(slices_a, slices_b)};
    p.probed_dense = esmm_probe_rule(p.probe.zeros, p.probe.slices);
    p.density_a = (double)bits_a / (strips_a * (double)p.k);
    p.density_b = (double)bits_b / (strips_b * (double)p.k);
    p.work_fraction = (double)work / (strips_a * strips_b * (double)p.k);
    free(count_a);
    free(count_b);
    free(tiles_a);
    free(tiles_b);

    /* beta == 0: C is all poison, which the product must ignore. */
    p.ldc = p.n + shape->pad;
    p.c_lead = GUARD + shape->offset;
    p.c_len = p.c_lead + p.m * p.ldc + GUARD;
    p.c_init = host_alloc(p.c_len, sizeof(float));
    p.dense = host_alloc(p.c_len, sizeof(float));
    p.got = host_alloc(p.c_len, sizeof(float));
    p.c_dev = device_alloc((size_t)p.c_len * sizeof(float));
    const float poison = poison_value();
    for (int64_t i = 0; i < p.c_len; i++)
        p.c_init[i] = poison;
    for (int64_t i = 0; p.beta != 0.0f && i < p.m; i++)
        for (int64_t j = 0; j < p.n; j++)
            p.c_init[p.c_lead + i * p.ldc + j] = nonzero_value(&rng);
    char dead[40] = "";
    if (d->dead_a || d->dead_b)
        snprintf(dead, sizeof dead, " live k 1/%d, 1/%d", d->dead_a ? d->dead_a : 1,
                 d->dead_b ? d->dead_b : 1);
    snprintf(p.label, sizeof p.label, "%lldx%lldx%lld d=%g/%g%s op %s%s alpha %g beta %g%s",
             (long long)p.m, (long long)p.n, (long long)p.k, d->a, d->b, dead, op_label(p.op_a),
             op_label(p.op_b), (double)p.alpha, (double)p.beta,
             shape->pad || shape->offset ? " ld+1 base+1" : "");
    return p;
}

static void problem_free(problem_t *p)
{
    operand_free(&p->a);
    operand_free(&p->b);
    free(p->c_init);
    free(p->dense);
    free(p->got);
    device_free(p->c_dev);
}

/* A path: a kernel by name, esmm_sgemm (NULL), or esmm_sgemm_patterns with
 * cached patterns. */
typedef struct {
    const char *kernel;
    esmm_pattern_t pa, pb;
    const char *label;
} path_t;

static esmm_status_t call_path(esmm_handle_t h, const problem_t *p, const path_t *path)
{
    const float *a = p->a.dev + p->a.offset, *b = p->b.dev + p->b.offset;
    float *c = p->c_dev + p->c_lead;
    if (path->kernel != NULL)
        return esmm_sgemm_kernel(h, path->kernel, p->op_a, p->op_b, p->m, p->n, p->k, &p->alpha,
                                 a, p->a.ld, b, p->b.ld, &p->beta, c, p->ldc);
    return esmm_sgemm_patterns(h, p->op_a, p->op_b, p->m, p->n, p->k, &p->alpha, a, p->a.ld,
                               path->pa, b, p->b.ld, path->pb, &p->beta, c, p->ldc);
}

/* Uploads C, runs the path on the handle's stream, waits for it and reads
 * C's whole buffer into dst. */
static esmm_status_t run_path(esmm_handle_t h, const problem_t *p, const path_t *path,
                              cudaStream_t stream, float *dst)
{
    const size_t bytes = (size_t)p->c_len * sizeof(float);
    cuda_must(cudaMemcpy(p->c_dev, p->c_init, bytes, cudaMemcpyHostToDevice), "cudaMemcpy C");
    cuda_must(cudaDeviceSynchronize(), "cudaDeviceSynchronize before a product");
    const esmm_status_t st = call_path(h, p, path);
    cuda_must(cudaStreamSynchronize(stream), "cudaStreamSynchronize after a product");
    cuda_must(cudaDeviceSynchronize(), "cudaDeviceSynchronize after a product");
    cuda_must(cudaMemcpy(dst, p->c_dev, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy C back");
    return st;
}

/* The dense result: poison untouched outside C, float64 at sampled elements. */
static void verify_dense(const problem_t *p, uint64_t seed)
{
    int64_t bad = 0, first = -1;
    for (int64_t idx = 0; idx < p->c_len; idx++) {
        const int64_t rel = idx - p->c_lead;
        const int inside = rel >= 0 && rel / p->ldc < p->m && rel % p->ldc < p->n;
        if (!inside && float_bits(p->dense[idx]) != POISON_BITS && bad++ == 0)
            first = idx;
    }
    CHECK(bad == 0, "%s pipelined: %lld floats outside C overwritten, first buffer[%lld]",
          p->label, (long long)bad, (long long)first);

    uint64_t rng = seed;
    bad = 0;
    char what[200] = "";
    for (int s = 0; s < SAMPLES; s++) {
        const int64_t i = rng_below(&rng, p->m), j = rng_below(&rng, p->n);
        double sum = 0.0, scale = 0.0;
        for (int64_t kk = 0; kk < p->k; kk++) {
            const double term = (double)operand_at(&p->a, i, kk) * (double)operand_at(&p->b, j, kk);
            sum += term;
            scale += fabs(term);
        }
        const double c = p->beta == 0.0f ? 0.0 : (double)p->beta * p->c_init[p->c_lead + i * p->ldc + j];
        const double want = (double)p->alpha * sum + c;
        const double tol =
            TOL_FACTOR * (double)(p->k + 3) * FLT_EPSILON * (fabs((double)p->alpha) * scale + fabs(c));
        const float got = p->dense[p->c_lead + i * p->ldc + j];
        if (isfinite(got) && fabs((double)got - want) <= tol)
            continue;
        if (bad++ == 0)
            snprintf(what, sizeof what, "C(%lld, %lld) = %.9g, reference %.9g, tolerance %.3g",
                     (long long)i, (long long)j, (double)got, want, tol);
    }
    CHECK(bad == 0, "%s pipelined: %lld of %d sampled elements off the float64 reference, first %s",
          p->label, (long long)bad, SAMPLES, what);
}

static void verify_same_bits(const problem_t *p, const char *path)
{
    int64_t bad = 0, first = -1;
    if (memcmp(p->got, p->dense, (size_t)p->c_len * sizeof(float)) != 0)
        for (int64_t idx = 0; idx < p->c_len; idx++)
            if (float_bits(p->got[idx]) != float_bits(p->dense[idx]) && bad++ == 0)
                first = idx;
    const int64_t rel = first - p->c_lead;
    CHECK(bad == 0,
          "%s %s: %lld floats differ from pipelined, first C(%lld, %lld) = %.9g, dense %.9g",
          p->label, path, (long long)bad, (long long)(rel / p->ldc), (long long)(rel % p->ldc),
          first >= 0 ? (double)p->got[first] : 0.0, first >= 0 ? (double)p->dense[first] : 0.0);
}

/* Planned calls that skipped, by the form of the kernel that ran
 * (esmm_plan_form_t). */
static const char *const form_names[] = {"pair warps", "strip warps", "warp lists", "union"};
static int forms_run[4];
/* Planned warp-list calls with both operands along k (NT: two copies). */
static int lists_with_two_copies;
static int lists_split; /* planned warp-list calls on a product that splits k */
/* Planned calls whose extraction wrote the k-major copy, by copy
 * (esmm_copied_t), and those that wrote both with the warp lists not queued. */
static int extraction_copies[4];
static int both_copies_without_lists;

/* What esmm_get_last_info says after a planned call (with B's pattern
 * given when b_given). */
static void verify_plan(esmm_handle_t h, const problem_t *p, const density_t *d, int b_given,
                        const char *path)
{
    esmm_info_t info;
    memset(&info, 0, sizeof info);
    const esmm_status_t st = esmm_get_last_info(h, &info);
    if (d->a == 1.0 && d->b == 1.0 && d->dead_a == 0 && d->dead_b == 0)
        CHECK(p->probed_dense, "%s %s: the probe's counts over dense data do not send it dense",
              p->label, path);
    if (p->probed_dense) {
        CHECK(st == ESMM_STATUS_SUCCESS && info.path == ESMM_PATH_DENSE &&
                  info.density_a < 0.0 && info.density_b < 0.0 && info.work_fraction == 1.0 &&
                  info.form == NULL && info.masks == ESMM_MASKS_PROBE_DENSE,
              "%s %s: the probe finds too few zero slices; esmm_get_last_info \"%s\", path %d "
              "densities %.6f / %.6f work %.6f masks %d",
              p->label, path, esmm_status_string(st), (int)info.path, info.density_a,
              info.density_b, info.work_fraction, (int)info.masks);
        return;
    }
    /* The copies the extraction makes: never of a given pattern's operand. */
    const esmm_copied_t candidate = (esmm_copied_t)(
        esmm_copies_held(p->m, p->n, p->k, p->op_a, p->op_b) & ~(b_given ? ESMM_COPY_B : 0));
    const esmm_copied_t made =
        esmm_extraction_copy_made(p->probe.zeros, p->probe.slices, candidate);
    extraction_copies[made]++;
    both_copies_without_lists +=
        made == ESMM_COPY_BOTH &&
        esmm_plan_warp_lists(ESMM_SKIP_BY_BOTH, p->m, p->n, p->k, p->op_a, p->op_b) < 0.0;
    esmm_plan_stats_t plan = p->steps;
    esmm_plan_decide(&plan, p->m, p->n, p->k, p->op_a, p->op_b, ESMM_SKIP_BY_BOTH,
                     esmm_plan_warp_lists(ESMM_SKIP_BY_BOTH, p->m, p->n, p->k, p->op_a,
                                          p->op_b),
                     made, esmm_union_share(&p->steps, p->k));
    const int sparse = plan.decision != ESMM_PLAN_DENSE;
    if (sparse) {
        /* The form esmm_get_last_info reports (read from the device's plan)
         * against the plan's rule over the test's own statistics. */
        const char *want_form = form_names[plan.form];
        CHECK(info.form != NULL && strcmp(info.form, want_form) == 0,
              "%s %s: form \"%s\", the plan's rule gives \"%s\"", p->label, path,
              info.form ? info.form : "(NULL)", want_form);
        for (int f = 0; f < 4; f++)
            forms_run[f] += info.form != NULL && strcmp(info.form, form_names[f]) == 0;
        lists_with_two_copies += plan.form == ESMM_FORM_WARP_LISTS &&
                                 esmm_plan_warp_lists_copy(p->op_a, p->op_b) == ESMM_COPY_BOTH;
        lists_split +=
            plan.form == ESMM_FORM_WARP_LISTS && esmm_k_split(p->m, p->n, p->k).splits > 1;
    }
    CHECK(st == ESMM_STATUS_SUCCESS && fabs(info.density_a - p->density_a) <= STAT_TOL &&
              fabs(info.density_b - p->density_b) <= STAT_TOL,
          "%s %s: esmm_get_last_info \"%s\", densities %.6f / %.6f, the data have %.6f / %.6f",
          p->label, path, esmm_status_string(st), info.density_a, info.density_b, p->density_a,
          p->density_b);
    const esmm_path_t want = sparse ? ESMM_PATH_SPARSE : ESMM_PATH_DENSE;
    const double want_work = plan.decision == ESMM_PLAN_UNION
                                 ? esmm_union_share(&p->steps, p->k)
                             : sparse ? p->work_fraction
                                      : 1.0;
    CHECK(info.path == want && fabs(info.work_fraction - want_work) <= STAT_TOL,
          "%s %s: the masks leave %.6f of the work; reported path %d (kernel %s) work %.6f, "
          "expected path %d work %.6f",
          p->label, path, p->work_fraction, (int)info.path, info.kernel ? info.kernel : "(NULL)",
          info.work_fraction, (int)want, want_work);
    /* The planner's decision at the two ends the issue names. */
    if (d->a == 0.125 && d->b == 0.125)
        CHECK(info.path == ESMM_PATH_SPARSE, "%s %s: density 0.125 did not skip", p->label, path);
    if (d->a == 1.0 && d->b == 1.0 && d->dead_a == 0 && d->dead_b == 0)
        CHECK(info.path == ESMM_PATH_DENSE, "%s %s: density 1 did not run dense", p->label, path);
}

/* What esmm_get_last_info says after the union path was forced: its kernel
 * and form, and the share of k it listed. */
static void verify_union_info(esmm_handle_t h, const problem_t *p)
{
    esmm_info_t info;
    memset(&info, 0, sizeof info);
    const esmm_status_t st = esmm_get_last_info(h, &info);
    const double want = esmm_union_share(&p->steps, p->k);
    CHECK(st == ESMM_STATUS_SUCCESS && info.path == ESMM_PATH_SPARSE && info.kernel != NULL &&
              strcmp(info.kernel, "sparse-union") == 0 && info.form != NULL &&
              strcmp(info.form, "union") == 0 && fabs(info.work_fraction - want) <= STAT_TOL,
          "%s sparse-union: esmm_get_last_info \"%s\", path %d kernel %s form %s work %.6f, "
          "expected the union form with %.6f of k listed",
          p->label, esmm_status_string(st), (int)info.path, info.kernel ? info.kernel : "(NULL)",
          info.form ? info.form : "(NULL)", info.work_fraction, want);
}

/* esmm_sgemm and the skip kernel on a created non-blocking stream give the
 * default stream's bits. */
static void check_stream(esmm_handle_t h, problem_t *p)
{
    cudaStream_t stream = NULL;
    cuda_must(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    CHECK(esmm_set_stream(h, stream) == ESMM_STATUS_SUCCESS, "esmm_set_stream failed");
    const path_t paths[] = {{NULL, NULL, NULL, "esmm_sgemm on a created stream"},
                            {"sparse-joint", NULL, NULL, "sparse-joint on a created stream"}};
    for (size_t i = 0; i < COUNT_OF(paths); i++) {
        const esmm_status_t st = run_path(h, p, &paths[i], stream, p->got);
        CHECK(st == ESMM_STATUS_SUCCESS, "%s %s: returned \"%s\"", p->label, paths[i].label,
              esmm_status_string(st));
        verify_same_bits(p, paths[i].label);
    }
    esmm_info_t info;
    CHECK(esmm_get_last_info(h, &info) == ESMM_STATUS_SUCCESS && info.path == ESMM_PATH_SPARSE,
          "%s: esmm_get_last_info on a created stream", p->label);
    CHECK(esmm_set_stream(h, NULL) == ESMM_STATUS_SUCCESS, "esmm_set_stream(NULL) failed");
    cuda_must(cudaStreamDestroy(stream), "cudaStreamDestroy");
}

/* esmm_sgemm captured into a CUDA graph (after a first call of the size, which
 * grows the workspace) and replayed gives the dense path's bits. */
static void check_graph(esmm_handle_t h, problem_t *p)
{
    cudaStream_t stream = NULL;
    cuda_must(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    CHECK(esmm_set_stream(h, stream) == ESMM_STATUS_SUCCESS, "esmm_set_stream failed");
    const path_t path = {NULL, NULL, NULL, "esmm_sgemm warm-up before capture"};
    CHECK(run_path(h, p, &path, stream, p->got) == ESMM_STATUS_SUCCESS, "%s: %s failed",
          p->label, path.label);

    const size_t bytes = (size_t)p->c_len * sizeof(float);
    cuda_must(cudaMemcpy(p->c_dev, p->c_init, bytes, cudaMemcpyHostToDevice), "cudaMemcpy C");
    cudaGraph_t graph = NULL;
    cuda_must(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal),
              "cudaStreamBeginCapture");
    const esmm_status_t st = call_path(h, p, &path);
    const cudaError_t end = cudaStreamEndCapture(stream, &graph);
    CHECK(st == ESMM_STATUS_SUCCESS && end == cudaSuccess && graph != NULL,
          "%s: esmm_sgemm under stream capture returned \"%s\", capture \"%s\"", p->label,
          esmm_status_string(st), cudaGetErrorString(end));
    if (st == ESMM_STATUS_SUCCESS && end == cudaSuccess && graph != NULL) {
        cudaGraphExec_t exec = NULL;
        cuda_must(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
        cuda_must(cudaGraphLaunch(exec, stream), "cudaGraphLaunch");
        cuda_must(cudaStreamSynchronize(stream), "cudaStreamSynchronize after the graph");
        cuda_must(cudaMemcpy(p->got, p->c_dev, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy C back");
        verify_same_bits(p, "esmm_sgemm replayed from a CUDA graph");
        cuda_must(cudaGraphExecDestroy(exec), "cudaGraphExecDestroy");
    }
    if (graph != NULL)
        cuda_must(cudaGraphDestroy(graph), "cudaGraphDestroy");
    cudaGetLastError(); /* a refused capture leaves its error here; the check above reports it */
    CHECK(esmm_set_stream(h, NULL) == ESMM_STATUS_SUCCESS, "esmm_set_stream(NULL) failed");
    cuda_must(cudaStreamDestroy(stream), "cudaStreamDestroy");
}

/* With timing on, the extraction of both operands takes measurable time. */
static void check_timing(esmm_handle_t h, problem_t *p)
{
    CHECK(esmm_set_timing(h, 1) == ESMM_STATUS_SUCCESS, "esmm_set_timing(1) failed");
    const path_t path = {NULL, NULL, NULL, "esmm_sgemm timed"};
    const esmm_status_t st = run_path(h, p, &path, NULL, p->got);
    esmm_info_t info;
    memset(&info, 0, sizeof info);
    CHECK(st == ESMM_STATUS_SUCCESS && esmm_get_last_info(h, &info) == ESMM_STATUS_SUCCESS &&
              info.extraction_ms > 0.0,
          "%s: with esmm_set_timing(1), returned \"%s\" and extraction_ms %g", p->label,
          esmm_status_string(st), info.extraction_ms);
    printf("  extraction of both operands: %.4f ms\n", info.extraction_ms);
    verify_same_bits(p, path.label);
    CHECK(esmm_set_timing(h, 0) == ESMM_STATUS_SUCCESS, "esmm_set_timing(0) failed");
}

/* Checks beyond the paths' bits a problem may run. */
enum { CHECK_STREAM = 1, CHECK_GRAPH = 2, CHECK_TIMING = 4 };

static void run_problem(esmm_handle_t h, const shape_t *shape, const density_t *d, int variant,
                        uint64_t seed, int checks)
{
    const double start = now_seconds();
    problem_t p = problem_make(shape, d, variant, seed);

    esmm_pattern_t pb = NULL;
    const esmm_status_t pst = esmm_pattern_extract_b(h, p.op_b, p.k, p.n, p.b.dev + p.b.offset,
                                                     p.b.ld, &pb);
    CHECK(pst == ESMM_STATUS_SUCCESS, "%s: esmm_pattern_extract_b returned \"%s\"", p.label,
          esmm_status_string(pst));
    /* Both patterns again, each keeping its operand's copy where the operand
     * runs along k (esmm_pattern_keep_copy): the call reads the copies in
     * place of A and B. */
    esmm_pattern_t kept_a = NULL, kept_b = NULL;
    const float *a = p.a.dev + p.a.offset, *b = p.b.dev + p.b.offset;
    esmm_status_t kst = esmm_pattern_extract_a(h, p.op_a, p.m, p.k, a, p.a.ld, &kept_a);
    if (kst == ESMM_STATUS_SUCCESS)
        kst = esmm_pattern_extract_b(h, p.op_b, p.k, p.n, b, p.b.ld, &kept_b);
    if (kst == ESMM_STATUS_SUCCESS)
        kst = esmm_pattern_keep_copy(h, kept_a, a, p.a.ld);
    if (kst == ESMM_STATUS_SUCCESS)
        kst = esmm_pattern_keep_copy(h, kept_b, b, p.b.ld);
    CHECK(kst == ESMM_STATUS_SUCCESS, "%s: patterns keeping copies: \"%s\"", p.label,
          esmm_status_string(kst));
    const path_t dense = {"pipelined", NULL, NULL, "pipelined"};
    const path_t paths[] = {
        {NULL, NULL, NULL, "esmm_sgemm"},
        {skip_kernels[0], NULL, NULL, skip_kernels[0]},
        {skip_kernels[1], NULL, NULL, skip_kernels[1]},
        {skip_kernels[2], NULL, NULL, skip_kernels[2]},
        {skip_kernels[3], NULL, NULL, skip_kernels[3]},
        {NULL, NULL, pb, "esmm_sgemm_patterns(B cached)"},
        {NULL, kept_a, kept_b, "esmm_sgemm_patterns(A and B cached, copies kept)"},
    };
    esmm_status_t st = run_path(h, &p, &dense, NULL, p.dense);
    CHECK(st == ESMM_STATUS_SUCCESS, "%s pipelined: returned \"%s\"", p.label,
          esmm_status_string(st));
    verify_dense(&p, seed ^ 0x5A5Au);
    for (size_t i = 0; i < COUNT_OF(paths); i++) {
        st = run_path(h, &p, &paths[i], NULL, p.got);
        CHECK(st == ESMM_STATUS_SUCCESS, "%s %s: returned \"%s\"", p.label, paths[i].label,
              esmm_status_string(st));
        verify_same_bits(&p, paths[i].label);
        /* With copies kept the call plans another product (one along m / n). */
        if (paths[i].kernel == NULL && paths[i].pa == NULL)
            verify_plan(h, &p, d, paths[i].pb != NULL, paths[i].label);
        else if (paths[i].kernel == skip_kernels[3])
            verify_union_info(h, &p);
    }
    if (checks & CHECK_STREAM)
        check_stream(h, &p);
    if (checks & CHECK_GRAPH)
        check_graph(h, &p);
    if (checks & CHECK_TIMING)
        check_timing(h, &p);
    CHECK(esmm_pattern_destroy(pb) == ESMM_STATUS_SUCCESS &&
              esmm_pattern_destroy(kept_a) == ESMM_STATUS_SUCCESS &&
              esmm_pattern_destroy(kept_b) == ESMM_STATUS_SUCCESS,
          "%s: esmm_pattern_destroy", p.label);
    printf("%-52s work %.4f  %.2f s\n", p.label, p.work_fraction, now_seconds() - start);
    problem_free(&p);
}

static void run_case(esmm_handle_t h, size_t shape_index, size_t density_index)
{
    int checks = 0;
    if (shape_index == STREAM_SHAPE && density_index == STREAM_DENSITY)
        checks |= CHECK_STREAM | CHECK_GRAPH;
    if (shape_index == TIMING_SHAPE && density_index == TIMING_DENSITY)
        checks |= CHECK_TIMING;
    run_problem(h, &shapes[shape_index], &densities[density_index],
                (int)(shape_index + density_index), 0x6B5Au + 0x100u * shape_index + density_index,
                checks);
}

/* NT products past ESMM_PLAN_BOTH_K_COPY_MIN_PRODUCT multiply-adds (variant
 * 2: NT, alpha 1, beta 0), sparse: with both sides of C between the NT edge
 * (440) and the dense one (1760), the skipping paths read copies the dense
 * path does not (held: both, dense: none); with one side under 440, the
 * orientation led by the other side's strips transposes its wide operand on
 * the way in while the other reads a copy, and the warp lists are not
 * queued. */
static const struct {
    shape_t shape;
    size_t density;
    esmm_copied_t held, dense;
} nt_copy_cases[] = {
    {{1031, 601, 7001, 1, 1}, 1, ESMM_COPY_BOTH, ESMM_COPY_NONE},
    {{1031, 601, 7001, 1, 1}, 4, ESMM_COPY_BOTH, ESMM_COPY_NONE},
    {{601, 1031, 7001, 0, 0}, 5, ESMM_COPY_BOTH, ESMM_COPY_NONE},
    {{300, 8192, 2049, 1, 1}, 1, ESMM_COPY_A, ESMM_COPY_A},
};

static void run_nt_copy_cases(esmm_handle_t h)
{
    for (size_t i = 0; i < COUNT_OF(nt_copy_cases); i++) {
        const shape_t *s = &nt_copy_cases[i].shape;
        CHECK(esmm_copies_held(s->m, s->n, s->k, ESMM_OP_N, ESMM_OP_T) == nt_copy_cases[i].held &&
                  esmm_dense_copies(s->m, s->n, ESMM_OP_N, ESMM_OP_T) == nt_copy_cases[i].dense,
              "%lldx%lldx%lld NT: the workspace does not hold the copies this case is for",
              (long long)s->m, (long long)s->n, (long long)s->k);
        run_problem(h, s, &densities[nt_copy_cases[i].density], 2, 0x4E7u + 0x10u * i, 0);
    }
}

/* Dense data whose operands along k have their k-major copies in the
 * workspace (C's other side past the copy rule's edge): the dense path reads
 * the copies its rule names (esmm_dense_copies), with padded rows and
 * misaligned bases, and with few C tiles split along k. Each runs in two
 * variants (problem_make: the same ops, alpha 1 and beta 0, then alpha -0.5
 * and beta 2): NN reading A's copy, TT reading B's, and NT reading both or,
 * where only one side of C is past the dense edge, one (the last NT case
 * holds B's copy too, at its place after A's, for the skipping paths); the
 * first NT case also replayed from a CUDA graph. */
static const struct {
    shape_t shape;
    int variants[2];
    esmm_copied_t copied, held;
} copy_cases[] = {
    {{300, 1800, 517, 1, 1}, {0, 4}, ESMM_COPY_A, ESMM_COPY_A},
    {{1800, 300, 517, 0, 0}, {3, 7}, ESMM_COPY_B, ESMM_COPY_B},
    {{1800, 1900, 300, 1, 1}, {2, 10}, ESMM_COPY_BOTH, ESMM_COPY_BOTH},
    {{1900, 1800, 300, 0, 0}, {2, 10}, ESMM_COPY_BOTH, ESMM_COPY_BOTH},
    {{37, 1777, 2051, 1, 1}, {2, 10}, ESMM_COPY_A, ESMM_COPY_A},
    {{1777, 37, 2051, 0, 0}, {2, 10}, ESMM_COPY_B, ESMM_COPY_B},
    {{900, 1800, 2700, 1, 1}, {2, 10}, ESMM_COPY_A, ESMM_COPY_BOTH},
};

/* The size gate (esmm_set_min_planned_work): a product below it, one whose C
 * is at most ESMM_NARROW_C_SIDE wide or tall, or one whose C is at most
 * ESMM_NARROW_PLANNED_C_SIDE wide or tall below ESMM_NARROW_WORK_FACTOR times
 * it, runs the dense kernel unplanned, at it (or with the minimum at 0) the
 * planner runs, with the same bits either way; a product given a pattern is
 * planned at any size and shape (its misuse statuses are in test_api). A is
 * zero over the first half of k, worth planning were the product large and
 * wide. Leaves the handle planning every product. */
typedef struct {
    int64_t limit;
    int with_pattern;
    esmm_masks_source_t masks; /* what esmm_get_last_info must report */
    const char *label;
} gate_case_t;

static void check_gate_shape(esmm_handle_t h, int64_t m, int64_t n, int64_t k,
                             const gate_case_t *cases, size_t count)
{
    float *host_a = host_alloc(m * k, sizeof(float));
    float *host_b = host_alloc(k * n, sizeof(float));
    uint64_t rng = 0x6A7Eu;
    for (int64_t i = 0; i < m * k; i++)
        host_a[i] = i % k < k / 2 ? 0.0f : nonzero_value(&rng);
    for (int64_t i = 0; i < k * n; i++)
        host_b[i] = nonzero_value(&rng);
    const size_t a_bytes = (size_t)(m * k) * sizeof(float);
    const size_t b_bytes = (size_t)(k * n) * sizeof(float);
    const size_t c_bytes = (size_t)(m * n) * sizeof(float);
    float *a = device_alloc(a_bytes), *b = device_alloc(b_bytes), *c = device_alloc(c_bytes);
    device_upload(a, host_a, a_bytes);
    device_upload(b, host_b, b_bytes);
    esmm_pattern_t pattern = NULL;
    CHECK(esmm_pattern_extract_a(h, ESMM_OP_N, m, k, a, k, &pattern) == ESMM_STATUS_SUCCESS,
          "pattern of A");
    const float one = 1.0f, zero = 0.0f;
    float *first = host_alloc(m * n, sizeof(float));
    float *result = host_alloc(m * n, sizeof(float));
    for (size_t i = 0; i < count; i++) {
        CHECK(esmm_set_min_planned_work(h, cases[i].limit) == ESMM_STATUS_SUCCESS, "set %s",
              cases[i].label);
        cuda_must(cudaMemset(c, 0xFF, c_bytes), "poison C");
        const esmm_status_t st =
            esmm_sgemm_patterns(h, ESMM_OP_N, ESMM_OP_N, m, n, k, &one, a, k,
                                cases[i].with_pattern ? pattern : NULL, b, n, NULL, &zero, c, n);
        esmm_info_t info;
        CHECK(st == ESMM_STATUS_SUCCESS &&
                  esmm_get_last_info(h, &info) == ESMM_STATUS_SUCCESS,
              "%lldx%lldx%lld with min planned work %s: %s", (long long)m, (long long)n,
              (long long)k, cases[i].label, esmm_status_string(st));
        const int planned = cases[i].masks == ESMM_MASKS_USED;
        CHECK(info.masks == cases[i].masks &&
                  (planned ? info.density_a > 0.4 && info.density_a < 0.6
                           : info.path == ESMM_PATH_DENSE && info.density_a < 0.0 &&
                                 info.work_fraction == 1.0),
              "%lldx%lldx%lld with min planned work %s: should report masks %d, reported "
              "masks %d, density of A %g, path %d",
              (long long)m, (long long)n, (long long)k, cases[i].label, (int)cases[i].masks,
              (int)info.masks, info.density_a, (int)info.path);
        device_download(i == 0 ? first : result, c, c_bytes);
        if (i == 0) {
            /* The first result itself: nothing left as the poison, and 64
             * sampled elements against float64. */
            int64_t wrong = 0;
            for (int64_t e = 0; e < m * n; e++)
                wrong += float_bits(first[e]) == 0xFFFFFFFFu;
            for (uint64_t s = 0; s < 64; s++) {
                const int64_t e = (int64_t)(s * 2654435761u % (uint64_t)(m * n));
                const int64_t row = e / n, col = e % n;
                double want = 0.0, magnitude = 0.0;
                for (int64_t kk = 0; kk < k; kk++) {
                    const double product = (double)host_a[row * k + kk] * host_b[kk * n + col];
                    want += product;
                    magnitude += fabs(product);
                }
                wrong += !close_enough(first[e], want, (double)k * FLT_EPSILON * magnitude);
            }
            CHECK(wrong == 0,
                  "%lldx%lldx%lld with min planned work %s: %lld elements unwritten or off "
                  "float64",
                  (long long)m, (long long)n, (long long)k, cases[i].label, (long long)wrong);
        }
        int64_t differ = 0;
        for (int64_t e = 0; i > 0 && e < m * n; e++)
            differ += float_bits(result[e]) != float_bits(first[e]);
        CHECK(differ == 0,
              "%lldx%lldx%lld with min planned work %s: %lld elements differ from the first "
              "case's result",
              (long long)m, (long long)n, (long long)k, cases[i].label, (long long)differ);
    }
    esmm_pattern_destroy(pattern);
    device_free(a);
    device_free(b);
    device_free(c);
    free(host_a);
    free(host_b);
    free(first);
    free(result);
}

static void check_size_gate(esmm_handle_t h)
{
    int64_t got = -1;
    CHECK(esmm_get_min_planned_work(h, &got) == ESMM_STATUS_SUCCESS &&
              got == ESMM_DEFAULT_MIN_PLANNED_WORK,
          "a new handle's min planned work: %lld", (long long)got);
    const int64_t work = 256 * 256 * 256;
    const gate_case_t cube[] = {
        {ESMM_DEFAULT_MIN_PLANNED_WORK, 0, ESMM_MASKS_SMALL, "default"},
        {0, 0, ESMM_MASKS_USED, "0"},
        {work, 0, ESMM_MASKS_USED, "the product's own work"},
        {work + 1, 0, ESMM_MASKS_SMALL, "one more than its work"},
        {ESMM_DEFAULT_MIN_PLANNED_WORK, 1, ESMM_MASKS_USED, "default, A's pattern given"},
    };
    check_gate_shape(h, 256, 256, 256, cube, COUNT_OF(cube));
    /* 2^28 multiply-adds: at the default minimum, only the narrow side decides. */
    const gate_case_t narrow[] = {
        {ESMM_DEFAULT_MIN_PLANNED_WORK, 0, ESMM_MASKS_NARROW, "default"},
        {0, 0, ESMM_MASKS_USED, "0"},
        {1, 0, ESMM_MASKS_NARROW, "1"},
        {ESMM_DEFAULT_MIN_PLANNED_WORK, 1, ESMM_MASKS_USED, "default, A's pattern given"},
    };
    check_gate_shape(h, ESMM_NARROW_C_SIDE, 4096, 2048, narrow, COUNT_OF(narrow));
    check_gate_shape(h, 4096, ESMM_NARROW_C_SIDE, 2048, narrow, COUNT_OF(narrow));
    /* Past ESMM_NARROW_C_SIDE and up to ESMM_NARROW_PLANNED_C_SIDE the product
     * is planned from ESMM_NARROW_WORK_FACTOR times the minimum on. */
    for (int64_t side = ESMM_NARROW_C_SIDE + 1; side <= ESMM_NARROW_PLANNED_C_SIDE;
         side += ESMM_NARROW_PLANNED_C_SIDE - ESMM_NARROW_C_SIDE - 1) {
        const int64_t at = side * 4096 * 2048 / ESMM_NARROW_WORK_FACTOR;
        const gate_case_t planned_from[] = {
            {ESMM_DEFAULT_MIN_PLANNED_WORK, 0, ESMM_MASKS_NARROW, "default"},
            {0, 0, ESMM_MASKS_USED, "0"},
            {at, 0, ESMM_MASKS_USED, "its work over the factor"},
            {at + 1, 0, ESMM_MASKS_NARROW, "one more than its work over the factor"},
            {ESMM_DEFAULT_MIN_PLANNED_WORK, 1, ESMM_MASKS_USED, "default, A's pattern given"},
        };
        check_gate_shape(h, side, 4096, 2048, planned_from, COUNT_OF(planned_from));
        check_gate_shape(h, 4096, side, 2048, planned_from, COUNT_OF(planned_from));
    }
    const gate_case_t wider[] = {
        {ESMM_DEFAULT_MIN_PLANNED_WORK, 0, ESMM_MASKS_USED, "default"},
        {work, 0, ESMM_MASKS_USED, "256^3"},
    };
    check_gate_shape(h, ESMM_NARROW_PLANNED_C_SIDE + 1, 4096, 2048, wider, COUNT_OF(wider));
    CHECK(esmm_set_min_planned_work(h, 0) == ESMM_STATUS_SUCCESS, "plan every product");
}

static void run_copy_cases(esmm_handle_t h)
{
    const density_t dense_data = {1.0, 1.0, 0, 0};
    for (size_t i = 0; i < COUNT_OF(copy_cases); i++) {
        const shape_t *s = &copy_cases[i].shape;
        for (int j = 0; j < 2; j++) {
            const int variant = copy_cases[i].variants[j];
            const esmm_operation_t op_a = both_ops[variant % 2];
            const esmm_operation_t op_b = both_ops[(variant / 2) % 2];
            CHECK(esmm_dense_copies(s->m, s->n, op_a, op_b) == copy_cases[i].copied &&
                      esmm_copies_held(s->m, s->n, s->k, op_a, op_b) == copy_cases[i].held,
                  "%lldx%lld variant %d: the dense path does not read the copies this case is "
                  "for",
                  (long long)s->m, (long long)s->n, variant);
            run_problem(h, s, &dense_data, variant, 0xC0C1u + 0x10u * i + (uint64_t)variant,
                        i == 2 && j == 0 ? CHECK_GRAPH : 0);
        }
    }
}

/* esmm_sgemm on problems whose plans differ, queued back to back on one
 * stream with no wait between calls, in both orders: a closed kernel may
 * read its plan before the kernel ahead of it has finished (plan_gate.cuh),
 * and each call must still run its own path alone. Every C equals the dense
 * path's bits (poison where no kernel wrote, as beta is 0). At the first
 * two shapes the closed skipping launches after the first have few enough
 * blocks to read the plan before waiting (settled_launch), as the closed
 * dense kernel always does; at 4096 x 4096 x 256 the closed pair-warp
 * launches (2048 blocks) have too many and wait. */
static void run_back_to_back(esmm_handle_t h)
{
    static const density_t mix[] = {{1.0, 1.0, 0, 0},   {0.125, 0.125, 0, 0}, {0.5, 0.5, 0, 0},
                                    {0.125, 1.0, 0, 0}, {1.0, 0.125, 0, 0},   {1.0, 1.0, 0, 0},
                                    {0.25, 0.25, 0, 0}, {1.0, 1.0, 4, 0}};
    static const size_t mix_shapes[] = {0, 6, 2};
    const path_t dense = {"pipelined", NULL, NULL, "pipelined"};
    const path_t planned = {NULL, NULL, NULL, "esmm_sgemm"};
    for (size_t si = 0; si < COUNT_OF(mix_shapes); si++) {
        const double start = now_seconds();
        problem_t p[COUNT_OF(mix)];
        for (size_t i = 0; i < COUNT_OF(mix); i++) {
            /* Variant 0: NN, alpha 1, beta 0. */
            p[i] = problem_make(&shapes[mix_shapes[si]], &mix[i], 0, 0xB2Bu + 0x10u * si + i);
            const esmm_status_t st = run_path(h, &p[i], &dense, NULL, p[i].dense);
            CHECK(st == ESMM_STATUS_SUCCESS, "%s pipelined: returned \"%s\"", p[i].label,
                  esmm_status_string(st));
        }
        for (int reversed = 0; reversed < 2; reversed++) {
            for (size_t i = 0; i < COUNT_OF(mix); i++)
                cuda_must(cudaMemcpy(p[i].c_dev, p[i].c_init, (size_t)p[i].c_len * sizeof(float),
                                     cudaMemcpyHostToDevice),
                          "cudaMemcpy C");
            cuda_must(cudaDeviceSynchronize(), "cudaDeviceSynchronize before the queue");
            for (size_t j = 0; j < COUNT_OF(mix); j++) {
                const size_t i = reversed ? COUNT_OF(mix) - 1 - j : j;
                const esmm_status_t st = call_path(h, &p[i], &planned);
                CHECK(st == ESMM_STATUS_SUCCESS, "%s queued: returned \"%s\"", p[i].label,
                      esmm_status_string(st));
            }
            cuda_must(cudaDeviceSynchronize(), "cudaDeviceSynchronize after the queue");
            for (size_t i = 0; i < COUNT_OF(mix); i++) {
                cuda_must(cudaMemcpy(p[i].got, p[i].c_dev, (size_t)p[i].c_len * sizeof(float),
                                     cudaMemcpyDeviceToHost),
                          "cudaMemcpy C back");
                verify_same_bits(&p[i], reversed ? "queued back to back, reversed"
                                                 : "queued back to back");
            }
        }
        printf("%lldx%lldx%lld: %zu plans queued back to back  %.2f s\n",
               (long long)shapes[mix_shapes[si]].m, (long long)shapes[mix_shapes[si]].n,
               (long long)shapes[mix_shapes[si]].k, COUNT_OF(mix), now_seconds() - start);
        for (size_t i = 0; i < COUNT_OF(mix); i++)
            problem_free(&p[i]);
    }
}

/* A product with tight row-major storage: op(A) m x k (A stored as op_a
 * says), B k x n, C m x n; host copies (dense: the dense kernel's C, got:
 * another path's) and device buffers. */
typedef struct {
    esmm_operation_t op_a;
    int64_t m, n, k, lda;
    size_t a_len, b_len, c_len;
    float *a, *b, *dense, *got;
    float *a_dev, *b_dev, *c_dev;
} tight_problem_t;

/* Host buffers of t, uninitialised; 0 (and a failed check) without memory. */
static int tight_alloc(tight_problem_t *t, esmm_operation_t op_a, int64_t m, int64_t n, int64_t k,
                       const char *what)
{
    *t = (tight_problem_t){op_a, m, n, k, op_a == ESMM_OP_N ? k : m, (size_t)(m * k),
                           (size_t)(k * n), (size_t)(m * n), NULL, NULL, NULL, NULL,
                           NULL, NULL, NULL};
    t->a = malloc(t->a_len * sizeof(float)), t->b = malloc(t->b_len * sizeof(float));
    t->dense = malloc(t->c_len * sizeof(float)), t->got = malloc(t->c_len * sizeof(float));
    if (t->a != NULL && t->b != NULL && t->dense != NULL && t->got != NULL)
        return 1;
    CHECK(0, "%s, %lldx%lldx%lld: out of host memory", what, (long long)m, (long long)n,
          (long long)k);
    free(t->a), free(t->b), free(t->dense), free(t->got);
    return 0;
}

/* Element (i, kk) of op(A) in t's host copy. */
static float *tight_a(const tight_problem_t *t, int64_t i, int64_t kk)
{
    return &t->a[t->op_a == ESMM_OP_N ? i * t->lda + kk : kk * t->lda + i];
}

static void tight_upload(tight_problem_t *t)
{
    t->a_dev = device_alloc(t->a_len * sizeof(float));
    t->b_dev = device_alloc(t->b_len * sizeof(float));
    t->c_dev = device_alloc(t->c_len * sizeof(float));
    device_upload(t->a_dev, t->a, t->a_len * sizeof(float));
    device_upload(t->b_dev, t->b, t->b_len * sizeof(float));
}

/* C = alpha op(A) B + beta C through kernel, or esmm_sgemm where kernel is
 * NULL, C poisoned first; waits for the device and checks the status (what
 * names the check). Fills *info with the call's report; whether it could. */
static int tight_run(esmm_handle_t h, const tight_problem_t *t, const char *kernel,
                     const float *alpha, const float *beta, const char *what, esmm_info_t *info)
{
    cuda_must(cudaMemset(t->c_dev, 0xff, t->c_len * sizeof(float)), "cudaMemset C");
    const esmm_status_t st =
        kernel != NULL ? esmm_sgemm_kernel(h, kernel, t->op_a, ESMM_OP_N, t->m, t->n, t->k, alpha,
                                           t->a_dev, t->lda, t->b_dev, t->n, beta, t->c_dev, t->n)
                       : esmm_sgemm(h, t->op_a, ESMM_OP_N, t->m, t->n, t->k, alpha, t->a_dev,
                                    t->lda, t->b_dev, t->n, beta, t->c_dev, t->n);
    cuda_must(cudaDeviceSynchronize(), "cudaDeviceSynchronize after a product");
    CHECK(st == ESMM_STATUS_SUCCESS, "%s, %lldx%lldx%lld, %s: returned \"%s\"", what,
          (long long)t->m, (long long)t->n, (long long)t->k,
          kernel != NULL ? kernel : "esmm_sgemm", esmm_status_string(st));
    return esmm_get_last_info(h, info) == ESMM_STATUS_SUCCESS;
}

/* t's got must hold the dense kernel's bits (NaN included) in every value;
 * what and name (the path) label the check. */
static void tight_check_dense_bits(const tight_problem_t *t, const char *what, const char *name)
{
    int64_t bad = 0, first = -1;
    for (size_t idx = 0; idx < t->c_len; idx++)
        if (float_bits(t->got[idx]) != float_bits(t->dense[idx]) && bad++ == 0)
            first = (int64_t)idx;
    CHECK(bad == 0, "%s, %lldx%lldx%lld, %s: %lld values differ from the dense kernel's bits, "
          "first C(%lld, %lld) = %g, dense %g", what, (long long)t->m, (long long)t->n,
          (long long)t->k, name, (long long)bad, (long long)(first / t->n),
          (long long)(first % t->n), first >= 0 ? (double)t->got[first] : 0.0,
          first >= 0 ? (double)t->dense[first] : 0.0);
}

static void tight_free(tight_problem_t *t)
{
    device_free(t->a_dev);
    device_free(t->b_dev);
    device_free(t->c_dev);
    free(t->a), free(t->b), free(t->dense), free(t->got);
}

/* Products too small for FP32 (esmm.h, "Zero-skipping"): every row of op(A)
 * holds 1e-30 at k < 8 and zeros past it, but for a 1 at k = 8 in row 0; B
 * holds -1e-30 at k < 8, 1 at k < 16 and zeros past (all 1 past k = 8 at
 * 64^3). Each fused sum rounds to -0 after the first 8 k; the dense kernel
 * then adds zero products and ends at +0 (1 in row 0), where a skipping
 * kernel that leaves out the zero k of rows 32 on may end at -0. Every value
 * must have the dense kernel's bits or both must be zeros; the zeros whose
 * sign differs are counted and printed. Run at 64^3 (NN) and on a product
 * whose warp lists split k into 5 ranges (TN; the ranges past the first
 * hold no products, so their sums stay -0), where forced joint skipping must
 * run the warp lists. */
static void check_underflowing_products(esmm_handle_t h, esmm_operation_t op_a, int64_t m,
                                        int64_t n, int64_t k)
{
    tight_problem_t t;
    if (!tight_alloc(&t, op_a, m, n, k, "underflowing products"))
        return;
    for (int64_t i = 0; i < m; i++)
        for (int64_t kk = 0; kk < k; kk++)
            *tight_a(&t, i, kk) = kk < 8 ? 1e-30f : i == 0 && kk == 8 ? 1.0f : 0.0f;
    for (int64_t kk = 0; kk < k; kk++)
        for (int64_t j = 0; j < n; j++)
            t.b[kk * n + j] = kk < 8 ? -1e-30f : kk < 16 || k <= 64 ? 1.0f : 0.0f;
    tight_upload(&t);
    const float alpha = 1.0f, beta = 0.0f;
    static const char *const kernels[] = {"pipelined",    "sparse-a", "sparse-b",
                                          "sparse-joint", "sparse-union", NULL};
    for (size_t q = 0; q < COUNT_OF(kernels); q++) {
        const char *name = kernels[q] != NULL ? kernels[q] : "esmm_sgemm";
        esmm_info_t info;
        const int have_info =
            tight_run(h, &t, kernels[q], &alpha, &beta, "underflowing products", &info);
        const char *form = have_info && info.form != NULL ? info.form : "no form";
        if (k > 64 && kernels[q] != NULL && strcmp(kernels[q], "sparse-joint") == 0)
            CHECK(strcmp(form, "warp lists") == 0 && esmm_k_split(m, n, k).splits > 1,
                  "underflowing products, %lldx%lldx%lld: sparse-joint ran \"%s\" over %lld "
                  "ranges of k, not the warp lists over several", (long long)m, (long long)n,
                  (long long)k, form, (long long)esmm_k_split(m, n, k).splits);
        float *out = q == 0 ? t.dense : t.got;
        device_download(out, t.c_dev, t.c_len * sizeof(float));
        int64_t bad = 0, signs = 0;
        for (size_t idx = 0; idx < t.c_len; idx++) {
            const int zeros = out[idx] == 0.0f && t.dense[idx] == 0.0f;
            const int want_ok = q != 0 || out[idx] == (idx < (size_t)n ? 1.0f : 0.0f);
            bad += !want_ok || (float_bits(out[idx]) != float_bits(t.dense[idx]) && !zeros);
            signs += zeros && float_bits(out[idx]) != float_bits(t.dense[idx]);
        }
        CHECK(bad == 0, "underflowing products, %lldx%lldx%lld, %s: %lld values off (C(0, j) "
              "must be 1, the rest zeros, each with the dense kernel's bits but for the sign of "
              "a zero)", (long long)m, (long long)n, (long long)k, name, (long long)bad);
        printf("underflowing products, %lldx%lldx%lld, %s (%s): %lld zeros of the other sign "
               "than the dense kernel's\n", (long long)m, (long long)n, (long long)k, name, form,
               (long long)signs);
    }
    tight_free(&t);
}

/* Dead channels with NaN and Inf beside them: op(A) is zero in every row
 * at the k that 3 does not divide, op(B) in every column at the k that 5
 * divides. NaN and Inf in op(B)'s rows where op(A) is dead, and in op(A)'s
 * columns where op(B) is dead, make those k needed all the same (0 x NaN
 * and 0 x Inf are NaN): the union path, forced and as the planner's choice,
 * must give the dense kernel's bits, NaN included. */
static void check_union_nonfinite(esmm_handle_t h, esmm_operation_t op_a, int64_t m, int64_t n,
                                  int64_t k)
{
    tight_problem_t t;
    if (!tight_alloc(&t, op_a, m, n, k, "union with NaN/Inf"))
        return;
    uint64_t rng = 0x0F1Eu + (uint64_t)m;
    for (int64_t i = 0; i < m; i++)
        for (int64_t kk = 0; kk < k; kk++)
            *tight_a(&t, i, kk) = kk % 3 == 0 ? nonzero_value(&rng) : 0.0f;
    for (int64_t kk = 0; kk < k; kk++)
        for (int64_t j = 0; j < n; j++)
            t.b[kk * n + j] = kk % 5 == 0 ? 0.0f : nonzero_value(&rng);
    t.b[1 * n + 7] = NAN;           /* op(A) dead at k = 1: column 7 of C is NaN */
    t.b[2 * n + 9] = INFINITY;      /* and at k = 2: column 9 */
    *tight_a(&t, 4, 10) = INFINITY; /* op(B) dead at k = 10: row 4 */
    *tight_a(&t, 6, 20) = NAN;      /* and at k = 20: row 6 */
    tight_upload(&t);
    const float alpha = 1.5f, beta = 0.0f;
    /* Planned at this size too: the union path lists a third of k less the
     * dead rows of op(B), and wins. */
    CHECK(esmm_set_min_planned_work(h, 0) == ESMM_STATUS_SUCCESS, "esmm_set_min_planned_work");
    static const char *const kernels[] = {"pipelined", "sparse-union", NULL};
    for (size_t q = 0; q < COUNT_OF(kernels); q++) {
        const char *name = kernels[q] != NULL ? kernels[q] : "esmm_sgemm";
        esmm_info_t info;
        const int have_info =
            tight_run(h, &t, kernels[q], &alpha, &beta, "union with NaN/Inf", &info);
        if (q > 0)
            CHECK(have_info && info.form != NULL && strcmp(info.form, "union") == 0,
                  "union with NaN/Inf, %lldx%lldx%lld, %s: ran \"%s\", not the union path",
                  (long long)m, (long long)n, (long long)k, name,
                  have_info && info.form ? info.form : "no form");
        float *out = q == 0 ? t.dense : t.got;
        device_download(out, t.c_dev, t.c_len * sizeof(float));
        if (q == 0) {
            /* The dense result has what the test is about. */
            CHECK(isnan(out[3 * n + 7]) && isnan(out[5 * n + 9]) && isnan(out[4 * n + 1]) &&
                      isnan(out[6 * n + 2]) && isfinite(out[0]),
                  "union with NaN/Inf, %lldx%lldx%lld: the dense kernel's C lacks the NaN of "
                  "0 x NaN and 0 x Inf", (long long)m, (long long)n, (long long)k);
            continue;
        }
        tight_check_dense_bits(&t, "union with NaN/Inf", name);
    }
    CHECK(esmm_set_min_planned_work(h, ESMM_DEFAULT_MIN_PLANNED_WORK) == ESMM_STATUS_SUCCESS,
          "esmm_set_min_planned_work back");
    tight_free(&t);
}

/* Both operands sparse in strip blocks (a strip of 32 lines holds nonzeros
 * at k with probability 0.25), and one of them, X, holding NaN and Inf at
 * k where a strip of the other is zero: those k are needed all the same
 * (0 x NaN and 0 x Inf are NaN). The extraction must mark X as holding
 * NaN/Inf, or the warp lists would leave its NaN/Inf bytes unread
 * (esmm_plan_stats_t's finite). nan_in_a: X is op(A), else B. Every
 * skipping kernel, forced and as the planner's choice, must give the dense
 * kernel's bits; lists_shape: forced joint skipping runs the warp lists. */
static void check_nonfinite_beside_zeros(esmm_handle_t h, esmm_operation_t op_a, int64_t m,
                                         int64_t n, int64_t k, int nan_in_a, int lists_shape)
{
    const char *what = nan_in_a ? "NaN/Inf in op(A)" : "NaN/Inf in op(B)";
    tight_problem_t t;
    if (!tight_alloc(&t, op_a, m, n, k, what))
        return;
    uint64_t rng = 0xF011u + (uint64_t)k;
    /* Strip s of op(A) (op(B)) holds nonzeros at kk where on_a (on_b). */
    const int64_t strips_a = esmm_pattern_strips(m), strips_b = esmm_pattern_strips(n);
    unsigned char *on_a = host_alloc(strips_a * k, 1), *on_b = host_alloc(strips_b * k, 1);
    for (int64_t i = 0; i < strips_a * k; i++)
        on_a[i] = rng_uniform(&rng) < 0.25;
    for (int64_t i = 0; i < strips_b * k; i++)
        on_b[i] = rng_uniform(&rng) < 0.25;
    for (int64_t i = 0; i < m; i++)
        for (int64_t kk = 0; kk < k; kk++)
            *tight_a(&t, i, kk) = on_a[i / ESMM_PATTERN_STRIP * k + kk] ? nonzero_value(&rng) : 0.0f;
    for (int64_t kk = 0; kk < k; kk++)
        for (int64_t j = 0; j < n; j++)
            t.b[kk * n + j] = on_b[j / ESMM_PATTERN_STRIP * k + kk] ? nonzero_value(&rng) : 0.0f;
    /* The first k where strips 0 and 1 of the other operand are zero. */
    const unsigned char *other = nan_in_a ? on_b : on_a;
    int64_t k0 = -1, k1 = -1;
    for (int64_t kk = 0; kk < k; kk++) {
        if (k0 < 0 && !other[kk])
            k0 = kk;
        if (k1 < 0 && !other[k + kk])
            k1 = kk;
    }
    free(on_a);
    free(on_b);
    /* NaN beside the other's strip 0 and Inf beside its strip 1: C(7, 0..31)
     * and C(9, 32..63) are NaN (nan_in_a), or C(0..31, 7) and C(32..63, 9). */
    if (nan_in_a) {
        *tight_a(&t, 7, k0) = NAN;
        *tight_a(&t, 9, k1) = INFINITY;
    } else {
        t.b[k0 * n + 7] = NAN;
        t.b[k1 * n + 9] = INFINITY;
    }
    tight_upload(&t);
    const float alpha = 1.0f, beta = 0.0f;
    CHECK(esmm_set_min_planned_work(h, 0) == ESMM_STATUS_SUCCESS, "esmm_set_min_planned_work");
    static const char *const kernels[] = {"pipelined", "sparse-a", "sparse-b", "sparse-joint",
                                          NULL};
    for (size_t q = 0; q < COUNT_OF(kernels); q++) {
        const char *name = kernels[q] != NULL ? kernels[q] : "esmm_sgemm";
        esmm_info_t info;
        const int have_info = tight_run(h, &t, kernels[q], &alpha, &beta, what, &info);
        float *out = q == 0 ? t.dense : t.got;
        device_download(out, t.c_dev, t.c_len * sizeof(float));
        if (q == 0) {
            const int64_t nan_0 = nan_in_a ? 7 * n + 0 : 0 * n + 7;
            const int64_t nan_1 = nan_in_a ? 9 * n + 32 : 32 * n + 9;
            CHECK(isnan(out[nan_0]) && isnan(out[nan_1]),
                  "%s, %lldx%lldx%lld: the dense kernel's C lacks the NaN of 0 x NaN and 0 x Inf",
                  what, (long long)m, (long long)n, (long long)k);
            continue;
        }
        if (lists_shape && kernels[q] != NULL && strcmp(kernels[q], "sparse-joint") == 0)
            CHECK(have_info && info.form != NULL && strcmp(info.form, "warp lists") == 0,
                  "%s, %lldx%lldx%lld: sparse-joint ran \"%s\", not the warp lists", what,
                  (long long)m, (long long)n, (long long)k,
                  have_info && info.form ? info.form : "no form");
        tight_check_dense_bits(&t, what, name);
    }
    CHECK(esmm_set_min_planned_work(h, ESMM_DEFAULT_MIN_PLANNED_WORK) == ESMM_STATUS_SUCCESS,
          "esmm_set_min_planned_work back");
    tight_free(&t);
}

int main(void)
{
    if (!cuda_device_present("GPU zero-skipping tests"))
        return check_finish();
    esmm_handle_t h = NULL;
    const esmm_status_t st = esmm_create(&h, ESMM_BACKEND_CUDA);
    CHECK(st == ESMM_STATUS_SUCCESS, "esmm_create(ESMM_BACKEND_CUDA) returned \"%s\"",
          esmm_status_string(st));
    if (st != ESMM_STATUS_SUCCESS)
        return check_finish();
    esmm_device_info_t info;
    if (esmm_get_device_info(h, &info) == ESMM_STATUS_SUCCESS)
        printf("device: %s, sm_%d, %d SMs\n", info.device_name, info.compute_capability,
               info.multiprocessors);

    const double start = now_seconds();
    check_size_gate(h);
    for (size_t si = 0; si < COUNT_OF(shapes); si++)
        for (size_t di = 0; di < COUNT_OF(densities); di++)
            run_case(h, si, di);
    run_copy_cases(h);
    run_nt_copy_cases(h);
    run_back_to_back(h);
    check_underflowing_products(h, ESMM_OP_N, 64, 64, 64);
    /* Warp lists, split along k in 5 ranges (as shape 2053 x 1031 x 2051 above). */
    check_underflowing_products(h, ESMM_OP_T, 2053, 1031, 2051);
    check_union_nonfinite(h, ESMM_OP_N, 300, 260, 515);
    check_union_nonfinite(h, ESMM_OP_T, 1000, 777, 2049);
    for (int nan_in_a = 0; nan_in_a < 2; nan_in_a++) {
        check_nonfinite_beside_zeros(h, ESMM_OP_N, 300, 260, 515, nan_in_a, 0);
        /* The shape whose forced joint skipping runs the warp lists (above). */
        check_nonfinite_beside_zeros(h, ESMM_OP_T, 2053, 1031, 2051, nan_in_a, 1);
    }
    /* Every form of the skipping kernel ran (as esmm_get_last_info reports),
     * each checked bit for bit above. */
    CHECK(forms_run[0] > 0 && forms_run[1] > 0 && forms_run[2] > 0 && forms_run[3] > 0,
          "planned calls ran the pair-warp form %d times, the strip-warp form %d times, the "
          "warp lists %d times, the union path %d times",
          forms_run[0], forms_run[1], forms_run[2], forms_run[3]);
    printf("planned skipping calls: %d pair-warp, %d strip-warp, %d warp-list, %d union\n",
           forms_run[0], forms_run[1], forms_run[2], forms_run[3]);
    CHECK(lists_with_two_copies > 0, "no planned call ran the warp lists on two copies (NT)");
    printf("planned warp-list calls on two copies: %d\n", lists_with_two_copies);
    CHECK(lists_split > 0, "no planned call ran the warp lists on a product that splits k");
    printf("planned warp-list calls that split k: %d\n", lists_split);
    /* The extraction wrote each copy it can (esmm_extraction_copy_made), and
     * both in one call, in some planned calls, every one of them checked bit
     * for bit above. */
    CHECK(extraction_copies[ESMM_COPY_A] > 0 && extraction_copies[ESMM_COPY_B] > 0 &&
              extraction_copies[ESMM_COPY_BOTH] > 0,
          "the extraction copied A alone in %d planned calls, B alone in %d, both in %d",
          extraction_copies[ESMM_COPY_A], extraction_copies[ESMM_COPY_B],
          extraction_copies[ESMM_COPY_BOTH]);
    printf("planned calls whose extraction copied A: %d, B: %d, both: %d\n",
           extraction_copies[ESMM_COPY_A], extraction_copies[ESMM_COPY_B],
           extraction_copies[ESMM_COPY_BOTH]);
    CHECK(both_copies_without_lists > 0,
          "no planned call's extraction copied both operands with the warp lists not queued");
    printf("planned calls whose extraction copied both, the warp lists not queued: %d\n",
           both_copies_without_lists);
    CHECK(esmm_destroy(h) == ESMM_STATUS_SUCCESS, "esmm_destroy failed");
    printf("total %.2f s\n", now_seconds() - start);
    return check_finish();
}
