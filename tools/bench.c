#define _POSIX_C_SOURCE 200809L /* sysconf */

#include "bench.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_csr.h"
#include "cpu/cpu_backend.h"
#include "gemm_problem.h"
#include "host_timing.h"
#include "npy.h"
#include "operand_stats.h"
#include "progress.h"
#include "report.h"
#include "runner.h"
#include "sweep.h"
#include "verify.h"

#define CUDA_DEFAULT_SIZE 4096
#define CPU_DEFAULT_SIZE 512
#define CUDA_DEFAULT_WARMUP 5
#define CPU_DEFAULT_WARMUP 1
/* The float64 CPU reference is used up to this many multiply-adds (a few
 * seconds on a small machine) and this many C elements (1 GiB of doubles);
 * past either, a CUDA run is checked against cuBLAS instead. */
#define CPU_REFERENCE_MAX_MACS 2147483648.0
#define CPU_REFERENCE_MAX_ELEMENTS 134217728.0
/* Leave this share of the machine's memory to everything else. */
#define HOST_MEMORY_SHARE 0.9
#define MAX_KERNELS 64
/* Every library kernel, the extra names, and esmm twice (end-to-end and
 * with B cached). */
#define MAX_ROWS (MAX_KERNELS + BENCH_EXTRA_KERNELS + 2)

/* What every case of a run shares: the handle, the kernels, the JSON file. */
typedef struct {
    esmm_handle_t handle;
    bool cuda;
    esmm_device_info_t device;
    bench_kernel_t kernels[MAX_ROWS];
    int kernel_count;
    results_file_t json;
    report_json_t json_writer;
} bench_session_t;

/* Everything one case allocates, released in one place, and what the steps
 * of the case share. */
typedef struct {
    npy_matrix_t file_a, file_b;
    float *a, *b, *c0, *out;
    double *ref, *row_norm, *col_norm, *ms;
    int64_t *nnz_a, *nnz_b;
    bench_runner_t *runner;
    bench_row_t *rows;
    operand_view_t view_a, view_b;
    char source_a[320], source_b[320]; /* descriptions for the report */
} bench_case_t;

static int usage_error(const cli_error_t *err)
{
    return cli_usage_error("esmm bench", "esmm bench --help", err);
}

static int runtime_error(const cli_error_t *err)
{
    return cli_runtime_error("esmm bench", err);
}

static int compare_doubles(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

double bench_median_and_min(double *ms, int64_t count, double *min)
{
    qsort(ms, (size_t)count, sizeof *ms, compare_doubles);
    *min = ms[0];
    return count % 2 ? ms[count / 2] : 0.5 * (ms[count / 2 - 1] + ms[count / 2]);
}

static bool is_esmm(const char *name)
{
    return strcmp(name, "esmm") == 0;
}

static void add_row(bench_session_t *session, const char *name, bool cached_b)
{
    bench_kernel_t kernel = {name, cached_b};
    session->kernels[session->kernel_count++] = kernel;
}

/* The rows to run: the baseline first (so every later row can be compared
 * with it), then the resolved kernels; esmm end-to-end and/or with B cached;
 * minus what this backend cannot run, with a notice. */
static int choose_kernels(const bench_options_t *o, bench_session_t *session, cli_error_t *err)
{
    const char *available[MAX_KERNELS];
    int available_count = esmm_kernel_count(session->handle);
    if (available_count > MAX_KERNELS)
        available_count = MAX_KERNELS;
    for (int i = 0; i < available_count; i++)
        available[i] = esmm_kernel_name(session->handle, i);
    const char *list = o->sweep != SWEEP_NONE && !o->kernels_given ? "esmm" : o->kernels;
    const char *resolved[MAX_KERNELS + BENCH_EXTRA_KERNELS + 1];
    int resolved_count = bench_resolve_kernels(list, available, available_count, session->cuda,
                                               resolved, err);
    if (resolved_count < 0)
        return -1;
    /* A sweep is about esmm: it always runs. */
    bool has_esmm = false;
    for (int i = 0; i < resolved_count; i++)
        has_esmm = has_esmm || is_esmm(resolved[i]);
    if (o->sweep != SWEEP_NONE && !has_esmm)
        resolved[resolved_count++] = "esmm";
    else if (o->cached_b && !has_esmm)
        return cli_error_set(err, "--cached-b times esmm with B's pattern extracted once, but "
                                  "--kernel leaves esmm out");

    /* The target table asks for both figures; a density sweep adds the
     * cached one when asked. */
    bool both = o->both_esmm_rows || o->sweep == SWEEP_TARGETS ||
                (o->sweep == SWEEP_DENSITY && o->cached_b);
    bool end_to_end = both || !o->cached_b;
    bool cached = both || o->cached_b;
    if (o->keep_copy && !cached)
        return cli_error_set(err, "--keep-copy keeps a copy in B's cached pattern: it needs "
                                  "--cached-b");
    const char *baseline = session->cuda ? "cublas" : "cpu";
    session->kernel_count = 0;
    add_row(session, baseline, false);
    for (int i = 0; i < resolved_count; i++) {
        const char *name = resolved[i];
        if (!session->cuda && strcmp(name, "cublas") == 0) {
            printf("cublas: unavailable without a CUDA device; skipped\n");
        } else if (!session->cuda && bench_kernel_extracts(name) != BENCH_OPERAND_NONE) {
            printf("%s: extraction is timed on the CUDA backend only; skipped\n", name);
        } else if (is_esmm(name)) {
            if (end_to_end)
                add_row(session, name, false);
            if (cached)
                add_row(session, name, true);
        } else if (strcmp(name, baseline) != 0) {
            add_row(session, name, false);
        }
    }
    return 0;
}

static stored_shape_t stored_shape(const npy_matrix_t *file, const char *path)
{
    stored_shape_t s = {file->rows, file->cols, path};
    return s;
}

int bench_check_host_memory(int64_t m, int64_t n, int64_t k, double bytes, cli_error_t *err)
{
    double dm = (double)m, dn = (double)n, dk = (double)k;
    /* Every element count must be addressable in int64 bytes (and size_t). */
    const double limit = 0x1.0p60;
    if (dm * dk > limit || dk * dn > limit || dm * dn > limit)
        return cli_error_set(err, "m=%" PRId64 " n=%" PRId64 " k=%" PRId64 " is too large: the "
                                  "matrices could not even be addressed", m, n, k);
    double memory = 0.0;
    if (!bench_host_memory_fits(bytes, &memory))
        return cli_error_set(err, "m=%" PRId64 " n=%" PRId64 " k=%" PRId64 " needs %.1f GiB of "
                                  "host memory; this machine has %.1f GiB",
                             m, n, k, bytes / 0x1.0p30, memory / 0x1.0p30);
    return 0;
}

bool bench_host_memory_fits(double bytes, double *memory)
{
    long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
    *memory = pages > 0 && page_size > 0 ? (double)pages * (double)page_size : 0.0;
    return *memory == 0.0 || bytes <= HOST_MEMORY_SHARE * *memory;
}

/* Refuses sizes whose buffers cannot exist here, before anything is allocated
 * or generated. device_bytes is the GPU's memory (0 on the CPU backend). */
static int check_memory(const bench_options_t *o, bool cuda, size_t device_bytes, int64_t m,
                        int64_t n, int64_t k, cli_error_t *err)
{
    if (bench_check_host_memory(m, n, k, 0.0, err) != 0) /* addressable at all */
        return -1;
    double dm = (double)m, dn = (double)n, dk = (double)k;
    double device_need = 4.0 * (dm * dk + dk * dn + dm * dn);
    if (cuda && device_bytes > 0 && device_need > (double)device_bytes)
        return cli_error_set(err, "m=%" PRId64 " n=%" PRId64 " k=%" PRId64 " needs %.1f GiB of "
                                  "device memory; the GPU has %.1f GiB",
                             m, n, k, device_need / 0x1.0p30, (double)device_bytes / 0x1.0p30);
    double floats = dm * dk + dk * dn + dm * dn /* result copy */;
    if (o->beta != 0.0)
        floats += dm * dn;
    if (!cuda)
        floats += dm * dn; /* the runner's C */
    double bytes = 4.0 * floats + 16.0 * dk;
    if (o->check)
        bytes += 8.0 * (dm * dn + dm + dn);
    return bench_check_host_memory(m, n, k, bytes, err);
}

static void *allocate(size_t count, size_t size, const char *what, cli_error_t *err)
{
    void *p = count > 0 ? malloc(count * size) : malloc(1);
    if (p == NULL)
        cli_error_set(err, "out of host memory allocating %s (%.1f MiB)", what,
                      (double)count * (double)size / (1 << 20));
    return p;
}

/* A or B: the loaded file's data, or a freshly generated operand. */
static float *operand_data(const char *what, const npy_matrix_t *file, int64_t count,
                           const generator_t *g, operand_view_t *view, uint64_t seed,
                           uint64_t stream, float **owned, cli_error_t *err)
{
    if (file->data != NULL) {
        view->data = file->data;
        return file->data;
    }
    *owned = allocate((size_t)count, sizeof(float), what, err);
    if (*owned == NULL)
        return NULL;
    view->data = *owned;
    generate_operand(view, g, seed, stream);
    return *owned;
}

static double nonzero_fraction(const int64_t *counts, int64_t k, int64_t outer)
{
    double nonzeros = 0.0;
    for (int64_t kk = 0; kk < k; kk++)
        nonzeros += (double)counts[kk];
    return nonzeros / ((double)k * (double)outer);
}

static void describe_source(const char *file, const generator_t *g, char *out, size_t cap)
{
    if (file != NULL)
        snprintf(out, cap, "from %s", file);
    else
        generator_describe(g, out, cap);
}

static void compute_cpu_reference(const bench_problem_t *p, double *ref, float *scratch_c)
{
    esmm_gemm_problem_t g;
    g.op_a = p->transa;
    g.op_b = p->transb;
    g.m = p->m;
    g.n = p->n;
    g.k = p->k;
    g.alpha = p->alpha;
    g.beta = p->beta;
    g.a = p->a;
    g.lda = p->transa == ESMM_OP_N ? p->k : p->m;
    g.b = p->b;
    g.ldb = p->transb == ESMM_OP_N ? p->n : p->k;
    /* beta == 0 ignores C; a valid buffer is passed all the same. */
    g.c = p->c0 != NULL ? (float *)p->c0 : scratch_c;
    g.ldc = p->n;
    esmm_cpu_reference_gemm(&g, ref, p->n);
}


/* Extraction rows are checked by comparing the library's slice density with
 * the one counted here from the values. */
static void check_extraction(bench_case_t *ctx, bench_row_t *row)
{
    cli_error_t err = {""};
    bench_operand_t operand = row->operand == 'A' ? BENCH_OPERAND_A : BENCH_OPERAND_B;
    operand_stats_t stats;
    double density = NAN;
    if (operand_stats(operand == BENCH_OPERAND_A ? &ctx->view_a : &ctx->view_b, &stats, NULL) != 0) {
        cli_error_set(&err, "%s: out of host memory for the check", row->kernel);
    } else if (bench_runner_extracted_density(ctx->runner, operand, &density, &err) == 0) {
        double expected = operand_slice_density(&stats);
        if (fabs(density - expected) <= 1e-12) {
            row->check = "pass";
            return;
        }
        cli_error_set(&err, "%s: the library's slice density %.9g differs from %.9g counted on "
                            "the host", row->kernel, density, expected);
    }
    row->check = "fail";
    snprintf(row->error, sizeof row->error, "%s", err.text);
    fprintf(stderr, "esmm bench: %s\n", err.text);
}

/* The --skip-stats run: one more run with extraction timing, then the info. */
static void collect_info(bench_case_t *ctx, const bench_kernel_t *kernel, bench_row_t *row)
{
    cli_error_t err = {""};
    if (bench_runner_stats(ctx->runner, kernel, &row->info, &err) != 0) {
        snprintf(row->info_error, sizeof row->info_error, "%s", err.text);
        return;
    }
    row->has_info = true;
    snprintf(row->info_kernel, sizeof row->info_kernel, "%s",
             row->info.kernel != NULL ? row->info.kernel : "?");
    row->info.kernel = row->info_kernel;
}

void bench_fail_row(bench_row_t *row, const cli_error_t *err)
{
    row->check = "fail";
    snprintf(row->error, sizeof row->error, "%s", err->text);
    fprintf(stderr, "esmm bench: %s\n", err->text);
}

/* Runs one row: a checked run, the timed runs, then the --skip-stats run. */
static void run_row(bench_case_t *ctx, const bench_options_t *o, const bench_summary_t *s,
                    const verify_reference_t *ref, bench_row_t *row)
{
    cli_error_t err = {""};
    bench_runner_t *r = ctx->runner;
    bench_kernel_t kernel = {row->kernel, row->cached_b};
    row->max_error = NAN;
    row->host_us = NAN;
    row->check = "skipped";
    if (row->cached_b && bench_runner_cache_b(r, &err) != 0) {
        bench_fail_row(row, &err);
        return;
    }
    if (row->operand != 0) {
        if (o->check)
            check_extraction(ctx, row);
    } else if (ref != NULL && !row->is_reference) {
        if (r->run_checked(r, &kernel, ctx->out, &err) != 0) {
            bench_fail_row(row, &err);
            return;
        }
        row->max_error = verify_max_error(ref, ctx->out);
        row->check = row->max_error <= s->tolerance ? "pass" : "fail";
    }
    r->host_us = NAN;
    if (r->time_runs(r, &kernel, s->warmup, o->runs, ctx->ms, &err) != 0) {
        bench_fail_row(row, &err);
        return;
    }
    row->ran = true;
    row->host_us = r->host_us;
    row->median_ms = bench_median_and_min(ctx->ms, o->runs, &row->min_ms);
    /* After the timed runs, so that its extraction time holds no first-launch
     * costs even when nothing was checked first. */
    if ((o->skip_stats || o->sweep != SWEEP_NONE) && bench_kernel_is_library(row->kernel))
        collect_info(ctx, &kernel, row);
}

const char *bench_commit_string(const char *given)
{
    if (given != NULL)
        return given;
    const char *env = getenv("ESMM_COMMIT");
    return env != NULL && *env != '\0' ? env : "unknown";
}

/* Loads or generates A, B and C0 and settles m, n, k. Returns an exit code. */
static int prepare_inputs(const bench_options_t *o, const bench_session_t *session,
                          bench_case_t *ctx, bench_problem_t *p)
{
    cli_error_t err = {""};
    if (o->load_a != NULL && npy_load_operand(o->load_a, "A", &ctx->file_a, &err) != 0)
        return runtime_error(&err);
    if (o->load_b != NULL && npy_load_operand(o->load_b, "B", &ctx->file_b, &err) != 0)
        return runtime_error(&err);
    int64_t m, n, k;
    if (bench_resolve_shape(o, stored_shape(&ctx->file_a, o->load_a),
                            stored_shape(&ctx->file_b, o->load_b),
                            session->cuda ? CUDA_DEFAULT_SIZE : CPU_DEFAULT_SIZE, &m, &n, &k,
                            &err) != 0)
        return usage_error(&err);
    if (check_memory(o, session->cuda, session->device.global_memory_bytes, m, n, k, &err) != 0)
        return runtime_error(&err);

    bench_problem_t problem = {session->handle, o->transa, o->transb, m, n, k, (float)o->alpha,
                               (float)o->beta, NULL, NULL, NULL, o->keep_copy};
    *p = problem;
    ctx->view_a = operand_view_a(NULL, o->transa, m, k);
    ctx->view_b = operand_view_b(NULL, o->transb, k, n);
    p->a = operand_data("A", &ctx->file_a, m * k, &o->gen_a, &ctx->view_a, o->seed,
                        GENERATE_STREAM_A, &ctx->a, &err);
    if (p->a == NULL)
        return runtime_error(&err);
    p->b = operand_data("B", &ctx->file_b, k * n, &o->gen_b, &ctx->view_b, o->seed,
                        GENERATE_STREAM_B, &ctx->b, &err);
    if (p->b == NULL)
        return runtime_error(&err);
    if (o->beta != 0.0) {
        ctx->c0 = allocate((size_t)(m * n), sizeof(float), "C", &err);
        if (ctx->c0 == NULL)
            return runtime_error(&err);
        operand_view_t view_c = {ctx->c0, n, m, n, true};
        generator_t dense = {GENERATOR_DENSE, "", 1.0, 0.0};
        generate_operand(&view_c, &dense, o->seed, GENERATE_STREAM_C);
        p->c0 = ctx->c0;
    }
    ctx->out = allocate((size_t)(m * n), sizeof(float), "the result copy", &err);
    ctx->nnz_a = allocate((size_t)k, sizeof(int64_t), "counts", &err);
    ctx->nnz_b = allocate((size_t)k, sizeof(int64_t), "counts", &err);
    ctx->ms = allocate((size_t)o->runs, sizeof(double), "timings", &err);
    if (ctx->out == NULL || ctx->nnz_a == NULL || ctx->nnz_b == NULL || ctx->ms == NULL)
        return runtime_error(&err);
    count_nonzeros_per_k(&ctx->view_a, ctx->nnz_a);
    count_nonzeros_per_k(&ctx->view_b, ctx->nnz_b);
    return ESMM_EXIT_OK;
}

/* Everything the report says about the case except the reference and timing. */
static void describe_run(const bench_options_t *o, const bench_session_t *session,
                         bench_case_t *ctx, const bench_problem_t *p, bench_summary_t *s)
{
    bool any_file = o->load_a != NULL || o->load_b != NULL;
    generator_kind_t kind = o->gen_a.kind != GENERATOR_DENSE ? o->gen_a.kind : o->gen_b.kind;
    memset(s, 0, sizeof *s);
    s->device = session->cuda ? session->device.device_name : "cpu";
    s->backend = session->cuda ? "cuda" : "cpu";
    s->m = p->m;
    s->n = p->n;
    s->k = p->k;
    s->transa = o->transa == ESMM_OP_N ? 'N' : 'T';
    s->transb = o->transb == ESMM_OP_N ? 'N' : 'T';
    s->alpha = p->alpha;
    s->beta = p->beta;
    s->generator = any_file ? "file" : generator_name(kind);
    s->nonzero_a = nonzero_fraction(ctx->nnz_a, p->k, p->m);
    s->nonzero_b = nonzero_fraction(ctx->nnz_b, p->k, p->n);
    s->density_a = o->load_a != NULL ? s->nonzero_a : generator_density(&o->gen_a);
    s->density_b = o->load_b != NULL ? s->nonzero_b : generator_density(&o->gen_b);
    s->pattern_a = o->load_a == NULL && o->gen_a.kind == GENERATOR_PATTERN ? o->gen_a.pattern : NULL;
    s->pattern_b = o->load_b == NULL && o->gen_b.kind == GENERATOR_PATTERN ? o->gen_b.pattern : NULL;
    s->file_a = o->load_a;
    s->file_b = o->load_b;
    describe_source(o->load_a, &o->gen_a, ctx->source_a, sizeof ctx->source_a);
    describe_source(o->load_b, &o->gen_b, ctx->source_b, sizeof ctx->source_b);
    s->source_a = ctx->source_a;
    s->source_b = ctx->source_b;
    s->seed = o->seed;
    s->runs = o->runs;
    s->warmup = o->warmup >= 0 ? o->warmup
                               : (session->cuda ? CUDA_DEFAULT_WARMUP : CPU_DEFAULT_WARMUP);
    s->flops = 2.0 * (double)p->m * (double)p->n * (double)p->k;
    s->effective_flops = effective_flops(ctx->nnz_a, ctx->nnz_b, p->k);
    s->baseline = session->kernels[0].name;
    s->baseline_ms = NAN;
    s->reference = "none";
    for (int i = 0; i < session->kernel_count; i++)
        s->show_gbps = s->show_gbps || bench_kernel_extracts(session->kernels[i].name) != BENCH_OPERAND_NONE;
}

static bool use_cpu_reference(const bench_options_t *o, bool cuda, const bench_problem_t *p)
{
    if (!cuda || o->reference == BENCH_REFERENCE_CPU)
        return true;
    return o->reference == BENCH_REFERENCE_AUTO &&
           (double)p->m * (double)p->n * (double)p->k <= CPU_REFERENCE_MAX_MACS &&
           (double)p->m * (double)p->n <= CPU_REFERENCE_MAX_ELEMENTS;
}

/* Norms for the error scale and the float64 CPU reference; the cuBLAS
 * reference needs the runner and comes later. Returns an exit code. */
static int prepare_check(const bench_options_t *o, bench_case_t *ctx, const bench_problem_t *p,
                         bool cpu_reference, bench_summary_t *s, verify_reference_t *ref)
{
    cli_error_t err = {""};
    ctx->ref = allocate((size_t)(p->m * p->n), sizeof(double), "the reference", &err);
    ctx->row_norm = allocate((size_t)p->m, sizeof(double), "norms", &err);
    ctx->col_norm = allocate((size_t)p->n, sizeof(double), "norms", &err);
    if (ctx->ref == NULL || ctx->row_norm == NULL || ctx->col_norm == NULL)
        return runtime_error(&err);
    operand_norms(&ctx->view_a, ctx->row_norm);
    operand_norms(&ctx->view_b, ctx->col_norm);
    verify_reference_t r = {p->m, p->n, ctx->ref, ctx->row_norm, ctx->col_norm,
                            o->alpha, o->beta, p->c0};
    *ref = r;
    if (cpu_reference) {
        double start = host_now_ms();
        compute_cpu_reference(p, ctx->ref, ctx->out);
        s->reference_seconds = (host_now_ms() - start) * 1e-3;
        s->reference = "cpu-float64";
    }
    s->tolerance = verify_tolerance(p->k, !cpu_reference);
    return ESMM_EXIT_OK;
}

/* The cuBLAS result as the reference; without it nothing is checked. */
static bool take_cublas_reference(bench_case_t *ctx, const bench_problem_t *p,
                                  bench_summary_t *s)
{
    cli_error_t err = {""};
    const bench_kernel_t cublas = {"cublas", false};
    if (ctx->runner->has_cublas &&
        ctx->runner->run_checked(ctx->runner, &cublas, ctx->out, &err) == 0) {
        for (int64_t i = 0; i < p->m * p->n; i++)
            ctx->ref[i] = ctx->out[i];
        s->reference = "cublas";
        return true;
    }
    printf("check: no reference (cuBLAS failed%s%s); results are not checked\n",
           err.text[0] ? ": " : "", err.text);
    s->tolerance = 0.0;
    return false;
}

static void free_case(bench_case_t *ctx)
{
    if (ctx->runner != NULL)
        ctx->runner->destroy(ctx->runner);
    npy_matrix_free(&ctx->file_a);
    npy_matrix_free(&ctx->file_b);
    free(ctx->a);
    free(ctx->b);
    free(ctx->c0);
    free(ctx->out);
    free(ctx->ref);
    free(ctx->row_norm);
    free(ctx->col_norm);
    free(ctx->ms);
    free(ctx->nnz_a);
    free(ctx->nnz_b);
    free(ctx->rows);
}

/* The sweep table's line of a case, from its rows. */
static void summarise_case(const bench_case_t *ctx, int count, sweep_line_t *line)
{
    bool failed = false, checked = false;
    line->baseline_ms = line->esmm_ms = line->cached_ms = NAN;
    for (int i = 0; i < count; i++) {
        const bench_row_t *row = &ctx->rows[i];
        failed = failed || !row->ran || strcmp(row->check, "fail") == 0;
        checked = checked || strcmp(row->check, "pass") == 0;
        double ms = row->ran ? row->median_ms : NAN;
        if (i == 0)
            line->baseline_ms = ms;
        else if (is_esmm(row->kernel) && row->cached_b)
            line->cached_ms = ms;
        else if (is_esmm(row->kernel)) {
            line->esmm_ms = ms;
            line->has_info = row->has_info;
            line->info = row->info;
        }
    }
    line->check = failed ? "fail" : checked ? "pass" : "skipped";
}

/* Runs the rows of one case. Returns an exit code; line (may be NULL) gets
 * the case's summary. */
static int run_case_steps(bench_session_t *session, const bench_options_t *o, bench_case_t *ctx,
                          const sweep_case_t *sweep_case, sweep_line_t *line)
{
    cli_error_t err = {""};
    int count = session->kernel_count;
    ctx->rows = calloc((size_t)count, sizeof *ctx->rows);
    if (ctx->rows == NULL) {
        cli_error_set(&err, "out of host memory");
        return runtime_error(&err);
    }
    bench_problem_t p;
    int exit_code = prepare_inputs(o, session, ctx, &p);
    if (exit_code != ESMM_EXIT_OK)
        return exit_code;
    bench_summary_t s;
    describe_run(o, session, ctx, &p, &s);
    if (sweep_case != NULL) {
        s.case_label = sweep_case->label;
        s.target = sweep_case->target;
    }
    verify_reference_t ref;
    bool cpu_reference = use_cpu_reference(o, session->cuda, &p);
    if (o->check && (exit_code = prepare_check(o, ctx, &p, cpu_reference, &s, &ref)) != ESMM_EXIT_OK)
        return exit_code;
    ctx->runner = session->cuda ? bench_runner_cuda_create(&p, &err)
                                : bench_runner_cpu_create(&p, &err);
    if (ctx->runner == NULL)
        return runtime_error(&err);
    s.copies = ctx->runner->copies;
    s.clock = ctx->runner->clock;
    if (session->cuda && !ctx->runner->has_cublas)
        printf("cublas: cuBLAS could not be initialised; no baseline\n");
    bool cublas_is_reference = o->check && !cpu_reference && take_cublas_reference(ctx, &p, &s);
    bool checking = o->check && s.tolerance > 0.0;

    report_print_header(stdout, &s);
    report_print_table_header(stdout, &s);
    for (int i = 0; i < count; i++) {
        bench_row_t *row = &ctx->rows[i];
        row->kernel = session->kernels[i].name;
        row->cached_b = session->kernels[i].cached_b;
        row->copy_kept = row->cached_b && o->keep_copy && o->transb == ESMM_OP_T;
        bench_operand_t operand = bench_kernel_extracts(row->kernel);
        row->operand = operand == BENCH_OPERAND_A ? 'A' : operand == BENCH_OPERAND_B ? 'B' : 0;
        row->bytes = 4.0 * (double)(operand == BENCH_OPERAND_A ? p.m : p.n) * (double)p.k;
        row->is_reference = cublas_is_reference && strcmp(row->kernel, "cublas") == 0;
        run_row(ctx, o, &s, checking ? &ref : NULL, row);
        if (i == 0 && row->ran)
            s.baseline_ms = row->median_ms;
        report_print_row(stdout, &s, row);
        if (!row->ran || strcmp(row->check, "fail") == 0)
            exit_code = ESMM_EXIT_CHECK_FAILED;
    }
    if (session->json.file != NULL)
        report_json_add(&session->json_writer, &s, ctx->rows, count);
    if (line != NULL)
        summarise_case(ctx, count, line);
    return exit_code;
}

static int run_case(bench_session_t *session, const bench_options_t *o,
                    const sweep_case_t *sweep_case, sweep_line_t *line)
{
    bench_case_t ctx;
    memset(&ctx, 0, sizeof ctx);
    int exit_code = run_case_steps(session, o, &ctx, sweep_case, line);
    free_case(&ctx);
    return exit_code;
}

/* Runs every case of the sweep, each a bench run of its own, then prints the
 * sweep's table. A case that cannot run is reported and the sweep goes on. */
static int run_sweep(bench_session_t *session, const bench_options_t *o)
{
    if (o->sweep == SWEEP_TARGETS && !session->cuda && o->size == 0) {
        printf("--sweep targets: the target table is defined at 4096^3 (up to 8192^3) on a GPU, and "
               "this is the CPU backend: nothing run. Give --size to run its cases scaled to that "
               "base size (e.g. --size 64).\n");
        return ESMM_EXIT_OK;
    }
    int64_t base = o->size > 0 ? o->size : (session->cuda ? CUDA_DEFAULT_SIZE : CPU_DEFAULT_SIZE);
    sweep_case_t cases[SWEEP_MAX_CASES];
    sweep_line_t lines[SWEEP_MAX_CASES];
    int count = sweep_cases(o->sweep, base, cases);
    int exit_code = ESMM_EXIT_OK;
    for (int i = 0; i < count && !session->cuda; i++)
        cases[i].target = 0.0; /* they are speedups over cuBLAS */
    char title[48];
    snprintf(title, sizeof title, "sweep %s", sweep_name(o->sweep));
    const progress_t progress = progress_begin(title);
    for (int i = 0; i < count; i++) {
        progress_step(&progress, i, count, "%s, %" PRId64 "^3", cases[i].label, cases[i].size);
        bench_options_t case_options = *o;
        case_options.size = cases[i].size;
        case_options.gen_a = cases[i].gen_a;
        case_options.gen_b = cases[i].gen_b;
        memset(&lines[i], 0, sizeof lines[i]);
        lines[i].label = cases[i].label;
        lines[i].size = cases[i].size;
        lines[i].target = cases[i].target;
        lines[i].baseline_ms = lines[i].esmm_ms = lines[i].cached_ms = NAN;
        lines[i].check = "fail";
        exit_code = cli_worse_exit(exit_code,
                                   run_case(session, &case_options, &cases[i], &lines[i]));
    }
    report_print_sweep(stdout, sweep_name(o->sweep), session->kernels[0].name, lines, count);
    if (o->sweep == SWEEP_TARGETS && base != CUDA_DEFAULT_SIZE)
        printf("(the targets are set for a base size of %d on the H100; this ran at %" PRId64 ")\n",
               CUDA_DEFAULT_SIZE, base);
    fflush(stdout);
    progress_end(&progress);
    return exit_code;
}

int bench_json_open(results_file_t *file, const char *path, const char *const *inputs,
                    size_t count, report_json_t *writer, const char *device, const char *commit,
                    cli_error_t *err)
{
    if (results_file_open(file, path, inputs, count, err) != 0)
        return -1;
    char date[32];
    report_utc_now(date, sizeof date);
    report_json_begin(writer, file->file, device, commit, date);
    return 0;
}

int bench_json_finish(report_json_t *writer, results_file_t *file, const char *path)
{
    if (writer->results == 0) {
        results_file_discard(file);
        printf("\nno results: %s left as it was\n", path);
        return ESMM_EXIT_OK;
    }
    report_json_end(writer);
    cli_error_t err;
    if (results_file_commit(file, path, &err) != 0)
        return runtime_error(&err);
    printf("\nresults written to %s\n", path);
    return ESMM_EXIT_OK;
}

static int run_session(const bench_options_t *o, bench_session_t *session)
{
    cli_error_t err = {""};
    esmm_backend_t backend = ESMM_BACKEND_CPU;
    esmm_get_backend(session->handle, &backend);
    session->cuda = backend == ESMM_BACKEND_CUDA;
    esmm_get_device_info(session->handle, &session->device);
    if (!session->cuda)
        printf(o->backend == ESMM_BACKEND_AUTO ? "no CUDA device: benchmarking the CPU backend\n"
                                               : "benchmarking the CPU backend\n");
    if (o->reference == BENCH_REFERENCE_CUBLAS && !session->cuda) {
        cli_error_set(&err, "--reference cublas needs a CUDA device");
        return usage_error(&err);
    }
    if (choose_kernels(o, session, &err) != 0)
        return usage_error(&err);
    /* Opened before the runs so a bad path fails now, not after them. */
    const char *const inputs[] = {o->load_a, o->load_b};
    if (o->json_path != NULL &&
        bench_json_open(&session->json, o->json_path, inputs, 2, &session->json_writer,
                        session->cuda ? session->device.device_name : "cpu",
                        bench_commit_string(o->commit), &err) != 0)
        return runtime_error(&err);
    int exit_code = o->sweep != SWEEP_NONE ? run_sweep(session, o) : run_case(session, o, NULL, NULL);
    /* A run that stopped before its rows leaves no results worth a file. */
    if (session->json.file != NULL &&
        (exit_code <= ESMM_EXIT_CHECK_FAILED || o->sweep != SWEEP_NONE))
        exit_code = cli_worse_exit(
            exit_code, bench_json_finish(&session->json_writer, &session->json, o->json_path));
    return exit_code;
}

int bench_run(esmm_handle_t handle, const bench_options_t *o)
{
    bench_session_t session;
    memset(&session, 0, sizeof session);
    session.handle = handle;
    int exit_code = run_session(o, &session);
    results_file_discard(&session.json);
    return exit_code;
}

int bench_create_handle(esmm_backend_t backend, esmm_handle_t *handle)
{
    esmm_status_t st = esmm_create(handle, backend);
    if (st == ESMM_STATUS_SUCCESS)
        return ESMM_EXIT_OK;
    cli_error_t err = {""};
    cli_error_set(&err, "cannot create an esmm handle: %s", esmm_status_string(st));
    return runtime_error(&err);
}

int bench_command(int argc, char **argv)
{
    bench_options_t o;
    cli_error_t err = {""};
    bench_op_t op = BENCH_OP_SGEMM;
    if (bench_find_op(argc, argv, &op, &err) != 0)
        return usage_error(&err);
    if (op != BENCH_OP_SGEMM)
        return bench_csr_command(argc, argv);
    if (bench_parse_args(argc, argv, &o, &err) != 0)
        return usage_error(&err);
    if (o.help) {
        bench_print_usage(stdout);
        return ESMM_EXIT_OK;
    }
    esmm_handle_t handle = NULL;
    int exit_code = bench_create_handle(o.backend, &handle);
    if (exit_code != ESMM_EXIT_OK)
        return exit_code;
    exit_code = bench_run(handle, &o);
    esmm_destroy(handle);
    return exit_code;
}
