#define _POSIX_C_SOURCE 200809L /* sysconf, clock_gettime */

#include "bench.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_args.h"
#include "cpu/cpu_backend.h"
#include "gemm_problem.h"
#include "npy.h"
#include "report.h"
#include "runner.h"
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

/* Everything a run allocates, released in one place, and what the steps of
 * the run share. */
typedef struct {
    esmm_handle_t handle;
    bool cuda;
    npy_matrix_t file_a, file_b;
    float *a, *b, *c0, *out;
    double *ref, *row_norm, *col_norm, *ms;
    int64_t *nnz_a, *nnz_b;
    bench_runner_t *runner;
    bench_row_t *rows;
    FILE *json;
    esmm_device_info_t device;
    operand_view_t view_a, view_b;
    char source_a[320], source_b[320]; /* descriptions for the report */
} bench_context_t;

static int usage_error(const cli_error_t *err)
{
    fprintf(stderr, "esmm bench: %s\n(run 'esmm bench --help' for the options)\n", err->text);
    return ESMM_EXIT_USAGE;
}

static int runtime_error(const cli_error_t *err)
{
    fprintf(stderr, "esmm bench: %s\n", err->text);
    return ESMM_EXIT_RUNTIME;
}

static int compare_doubles(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Sorts ms in place; returns the median, *min gets the smallest. */
static double median_and_min(double *ms, int64_t count, double *min)
{
    qsort(ms, (size_t)count, sizeof *ms, compare_doubles);
    *min = ms[0];
    return count % 2 ? ms[count / 2] : 0.5 * (ms[count / 2 - 1] + ms[count / 2]);
}

/* The kernel list to run: the resolved names, minus cublas without a GPU,
 * with the baseline first so every later row can be compared with it. */
static int choose_kernels(const bench_options_t *o, bench_context_t *ctx, const char **names,
                          cli_error_t *err)
{
    const char *available[MAX_KERNELS];
    int available_count = esmm_kernel_count(ctx->handle);
    if (available_count > MAX_KERNELS)
        available_count = MAX_KERNELS;
    for (int i = 0; i < available_count; i++)
        available[i] = esmm_kernel_name(ctx->handle, i);
    const char *resolved[MAX_KERNELS + 2];
    int resolved_count = bench_resolve_kernels(o->kernels, available, available_count, resolved, err);
    if (resolved_count < 0)
        return -1;
    const char *baseline = ctx->cuda ? "cublas" : "cpu";
    int count = 0;
    names[count++] = baseline;
    for (int i = 0; i < resolved_count; i++) {
        if (!ctx->cuda && strcmp(resolved[i], "cublas") == 0)
            printf("cublas: unavailable without a CUDA device; skipped\n");
        else if (strcmp(resolved[i], baseline) != 0)
            names[count++] = resolved[i];
    }
    return count;
}

static stored_shape_t stored_shape(const npy_matrix_t *file, const char *path)
{
    stored_shape_t s = {file->rows, file->cols, path};
    return s;
}

/* Refuses sizes whose buffers cannot exist here, before anything is allocated
 * or generated. device_bytes is the GPU's memory (0 on the CPU backend). */
static int check_memory(const bench_options_t *o, bool cuda, size_t device_bytes, int64_t m,
                        int64_t n, int64_t k, cli_error_t *err)
{
    double dm = (double)m, dn = (double)n, dk = (double)k;
    /* Every element count must be addressable in int64 bytes (and size_t). */
    const double limit = 0x1.0p60;
    if (dm * dk > limit || dk * dn > limit || dm * dn > limit)
        return cli_error_set(err, "m=%" PRId64 " n=%" PRId64 " k=%" PRId64 " is too large: the "
                                  "matrices could not even be addressed", m, n, k);
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
    long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page_size > 0) {
        double available = HOST_MEMORY_SHARE * (double)pages * (double)page_size;
        if (bytes > available)
            return cli_error_set(err, "m=%" PRId64 " n=%" PRId64 " k=%" PRId64 " needs %.1f GiB of "
                                      "host memory; this machine has %.1f GiB",
                                 m, n, k, bytes / 0x1.0p30, (double)pages * (double)page_size / 0x1.0p30);
    }
    return 0;
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

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
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

/* Runs one kernel: a checked run, then the timed runs. */
static void run_row(bench_context_t *ctx, const bench_options_t *o, const bench_summary_t *s,
                    const verify_reference_t *ref, int64_t warmup, bench_row_t *row)
{
    cli_error_t err = {""};
    bench_runner_t *r = ctx->runner;
    row->max_error = NAN;
    row->check = "skipped";
    if (ref != NULL && !row->is_reference) {
        if (r->run_checked(r, row->kernel, ctx->out, &err) != 0) {
            row->check = "fail";
            snprintf(row->error, sizeof row->error, "%s", err.text);
            fprintf(stderr, "esmm bench: %s\n", err.text);
            return;
        }
        row->max_error = verify_max_error(ref, ctx->out);
        row->check = row->max_error <= s->tolerance ? "pass" : "fail";
    }
    if (r->time_runs(r, row->kernel, warmup, o->runs, ctx->ms, &err) != 0) {
        row->check = "fail";
        snprintf(row->error, sizeof row->error, "%s", err.text);
        fprintf(stderr, "esmm bench: %s\n", err.text);
        return;
    }
    row->ran = true;
    row->median_ms = median_and_min(ctx->ms, o->runs, &row->min_ms);
}

static const char *commit_string(const bench_options_t *o)
{
    if (o->commit != NULL)
        return o->commit;
    const char *env = getenv("ESMM_COMMIT");
    return env != NULL && *env != '\0' ? env : "unknown";
}

/* Loads or generates A, B and C0 and settles m, n, k. Returns an exit code. */
static int prepare_inputs(const bench_options_t *o, bench_context_t *ctx, bench_problem_t *p)
{
    cli_error_t err = {""};
    if (o->load_a != NULL && npy_load_f32(o->load_a, &ctx->file_a, &err) != NPY_OK)
        return runtime_error(&err);
    if (o->load_b != NULL && npy_load_f32(o->load_b, &ctx->file_b, &err) != NPY_OK)
        return runtime_error(&err);
    int64_t m, n, k;
    if (bench_resolve_shape(o, stored_shape(&ctx->file_a, o->load_a),
                            stored_shape(&ctx->file_b, o->load_b),
                            ctx->cuda ? CUDA_DEFAULT_SIZE : CPU_DEFAULT_SIZE, &m, &n, &k, &err) != 0)
        return usage_error(&err);
    if (check_memory(o, ctx->cuda, ctx->device.global_memory_bytes, m, n, k, &err) != 0)
        return runtime_error(&err);

    bench_problem_t problem = {ctx->handle, o->transa, o->transb, m, n, k, (float)o->alpha,
                               (float)o->beta, NULL, NULL, NULL};
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

/* Everything the report says about the run except the reference and timing. */
static void describe_run(const bench_options_t *o, bench_context_t *ctx, const bench_problem_t *p,
                         const char *baseline, bench_summary_t *s)
{
    bool any_file = o->load_a != NULL || o->load_b != NULL;
    generator_kind_t kind = o->gen_a.kind != GENERATOR_DENSE ? o->gen_a.kind : o->gen_b.kind;
    memset(s, 0, sizeof *s);
    s->device = ctx->cuda ? ctx->device.device_name : "cpu";
    s->backend = ctx->cuda ? "cuda" : "cpu";
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
    s->warmup = o->warmup >= 0 ? o->warmup : (ctx->cuda ? CUDA_DEFAULT_WARMUP : CPU_DEFAULT_WARMUP);
    s->flops = 2.0 * (double)p->m * (double)p->n * (double)p->k;
    s->effective_flops = effective_flops(ctx->nnz_a, ctx->nnz_b, p->k);
    s->baseline = baseline;
    s->baseline_ms = NAN;
    s->reference = "none";
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
static int prepare_check(const bench_options_t *o, bench_context_t *ctx, const bench_problem_t *p,
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
        double start = now_seconds();
        compute_cpu_reference(p, ctx->ref, ctx->out);
        s->reference_seconds = now_seconds() - start;
        s->reference = "cpu-float64";
    }
    s->tolerance = verify_tolerance(p->k, !cpu_reference);
    return ESMM_EXIT_OK;
}

/* The cuBLAS result as the reference; without it nothing is checked. */
static bool take_cublas_reference(bench_context_t *ctx, const bench_problem_t *p,
                                  bench_summary_t *s)
{
    cli_error_t err = {""};
    if (ctx->runner->has_cublas &&
        ctx->runner->run_checked(ctx->runner, "cublas", ctx->out, &err) == 0) {
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

static int write_json(const bench_options_t *o, bench_context_t *ctx, const bench_summary_t *s,
                      int count)
{
    char date[32];
    report_utc_now(date, sizeof date);
    report_write_json(ctx->json, s, ctx->rows, count, commit_string(o), date);
    int failed = ferror(ctx->json);
    if (fclose(ctx->json) != 0)
        failed = 1;
    ctx->json = NULL;
    if (failed) {
        cli_error_t err;
        cli_error_set(&err, "%s: writing the results failed", o->json_path);
        return runtime_error(&err);
    }
    printf("\nresults written to %s\n", o->json_path);
    return ESMM_EXIT_OK;
}

static int bench_run(const bench_options_t *o, bench_context_t *ctx)
{
    cli_error_t err = {""};
    esmm_backend_t backend = ESMM_BACKEND_CPU;
    esmm_get_backend(ctx->handle, &backend);
    ctx->cuda = backend == ESMM_BACKEND_CUDA;
    esmm_get_device_info(ctx->handle, &ctx->device);
    if (!ctx->cuda)
        printf(o->backend == ESMM_BACKEND_AUTO ? "no CUDA device: benchmarking the CPU backend\n"
                                               : "benchmarking the CPU backend\n");
    if (o->reference == BENCH_REFERENCE_CUBLAS && !ctx->cuda) {
        cli_error_set(&err, "--reference cublas needs a CUDA device");
        return usage_error(&err);
    }
    const char *names[MAX_KERNELS + 3];
    int kernel_count = choose_kernels(o, ctx, names, &err);
    if (kernel_count < 0)
        return usage_error(&err);
    ctx->rows = calloc((size_t)kernel_count, sizeof *ctx->rows);
    if (ctx->rows == NULL) {
        cli_error_set(&err, "out of host memory");
        return runtime_error(&err);
    }

    bench_problem_t p;
    int exit_code = prepare_inputs(o, ctx, &p);
    if (exit_code != ESMM_EXIT_OK)
        return exit_code;
    bench_summary_t s;
    describe_run(o, ctx, &p, names[0], &s);
    verify_reference_t ref;
    bool cpu_reference = use_cpu_reference(o, ctx->cuda, &p);
    if (o->check && (exit_code = prepare_check(o, ctx, &p, cpu_reference, &s, &ref)) != ESMM_EXIT_OK)
        return exit_code;

    /* Opened before the runs so a bad path fails now, not after them. */
    if (o->json_path != NULL && (ctx->json = fopen(o->json_path, "w")) == NULL) {
        cli_error_set(&err, "%s: cannot create: %s", o->json_path, strerror(errno));
        return runtime_error(&err);
    }
    ctx->runner = ctx->cuda ? bench_runner_cuda_create(&p, &err) : bench_runner_cpu_create(&p, &err);
    if (ctx->runner == NULL)
        return runtime_error(&err);
    s.copies = ctx->runner->copies;
    s.clock = ctx->runner->clock;
    if (ctx->cuda && !ctx->runner->has_cublas)
        printf("cublas: cuBLAS could not be initialised; no baseline\n");
    bool cublas_is_reference = o->check && !cpu_reference && take_cublas_reference(ctx, &p, &s);
    bool checking = o->check && s.tolerance > 0.0;

    report_print_header(stdout, &s);
    report_print_table_header(stdout, &s);
    for (int i = 0; i < kernel_count; i++) {
        bench_row_t *row = &ctx->rows[i];
        row->kernel = names[i];
        row->is_reference = cublas_is_reference && strcmp(names[i], "cublas") == 0;
        run_row(ctx, o, &s, checking ? &ref : NULL, s.warmup, row);
        if (i == 0 && row->ran)
            s.baseline_ms = row->median_ms;
        report_print_row(stdout, &s, row);
        if (!row->ran || strcmp(row->check, "fail") == 0)
            exit_code = ESMM_EXIT_CHECK_FAILED;
    }
    if (ctx->json != NULL) {
        int json_exit = write_json(o, ctx, &s, kernel_count);
        if (json_exit != ESMM_EXIT_OK)
            return json_exit;
    }
    return exit_code;
}

int bench_command(int argc, char **argv)
{
    bench_options_t o;
    cli_error_t err = {""};
    if (bench_parse_args(argc, argv, &o, &err) != 0)
        return usage_error(&err);
    if (o.help) {
        bench_print_usage(stdout);
        return ESMM_EXIT_OK;
    }
    bench_context_t ctx;
    memset(&ctx, 0, sizeof ctx);
    esmm_status_t st = esmm_create(&ctx.handle, o.backend);
    if (st != ESMM_STATUS_SUCCESS) {
        cli_error_set(&err, "cannot create an esmm handle: %s", esmm_status_string(st));
        return runtime_error(&err);
    }
    int exit_code = bench_run(&o, &ctx);
    if (ctx.runner != NULL)
        ctx.runner->destroy(ctx.runner);
    if (ctx.json != NULL) {
        fclose(ctx.json);
        remove(o.json_path);
    }
    esmm_destroy(ctx.handle);
    npy_matrix_free(&ctx.file_a);
    npy_matrix_free(&ctx.file_b);
    free(ctx.a);
    free(ctx.b);
    free(ctx.c0);
    free(ctx.out);
    free(ctx.ref);
    free(ctx.row_norm);
    free(ctx.col_norm);
    free(ctx.ms);
    free(ctx.nnz_a);
    free(ctx.nnz_b);
    free(ctx.rows);
    return exit_code;
}
