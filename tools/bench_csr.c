#include "bench_csr.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "csr_workload.h"
#include "host_timing.h"
#include "json.h"
#include "progress.h"
#include "report.h"

#define CUDA_DEFAULT_WARMUP 5
#define CPU_DEFAULT_WARMUP 1
#define SWEEP_CASES 12

/* What every case of a run shares. */
typedef struct {
    const bench_csr_options_t *o;
    esmm_handle_t handle;
    bool cuda;
    esmm_device_info_t device;
    results_file_t json;
    report_json_t json_writer;
} csr_session_t;

/* One case's inputs, rows and results, released in one place. */
typedef struct {
    const csr_case_t *c;
    csr_workload_t wl;
    csr_problem_t p;
    csr_reference_t ref;
    bool checked; /* ref holds the reference */
    double reference_seconds;
    csr_runner_t *runner;
    float *out;
    double *ms;
    csr_kernel_t kernels[BENCH_CSR_KERNELS];
    bench_row_t rows[BENCH_CSR_KERNELS];
    int count;
    int64_t warmup;
    bench_summary_t s; /* what report.c's table needs */
    const char *baseline_kernel; /* cuSPARSE's fastest algorithm, or NULL */
} csr_bench_case_t;

/* One line of the sweep's closing table. */
typedef struct {
    const char *label;
    double target;
    double baseline_ms, esmm_ms;
    const char *baseline_kernel;
    const char *check;
} csr_sweep_line_t;

/* The hint names the op the command line asked for (the help is the same). */
static int usage_error(bench_op_t op, const cli_error_t *err)
{
    return cli_usage_error("esmm bench",
                           op == BENCH_OP_CSRMV ? "esmm bench --op csrmv --help"
                                                : "esmm bench --op csrmm --help",
                           err);
}

static int runtime_error(const cli_error_t *err)
{
    return cli_runtime_error("esmm bench", err);
}

static const char *op_name(bench_op_t op)
{
    return op == BENCH_OP_CSRMV ? "csrmv" : "csrmm";
}

static bool is_cusparse(const csr_kernel_t *k)
{
    return k->kind == CSR_KERNEL_CUSPARSE;
}

static csr_case_t case_from_options(const bench_csr_options_t *o)
{
    csr_case_t c;
    memset(&c, 0, sizeof c);
    c.op = o->op;
    c.transpose = o->transpose;
    c.rows = o->rows > 0 ? o->rows : CSR_DEFAULT_ROWS;
    c.cols = o->cols > 0 ? o->cols : CSR_DEFAULT_COLS;
    c.nnz_per_row = o->nnz_per_row >= 0 ? o->nnz_per_row : CSR_DEFAULT_NNZ_PER_ROW;
    c.homogeneous = o->homogeneous;
    c.weight = (float)o->weight;
    c.w_path = o->w_path;
    if (o->op == BENCH_OP_CSRMV)
        c.n = 1;
    else
        c.n = o->n > 0 ? o->n : (o->b_path != NULL ? 0 : CSR_DEFAULT_N);
    c.b_density = o->b_density >= 0.0 ? o->b_density : CSR_DEFAULT_B_DENSITY;
    c.b_path = o->b_path;
    c.seed = o->seed;
    c.alpha = (float)o->alpha;
    c.beta = (float)o->beta;
    return c;
}

/* ---- running the rows -------------------------------------------------- */

/* A checked run, then the timed runs. A cuSPARSE algorithm that refuses the
 * case is "not supported", not a failure. */
static void run_row(csr_bench_case_t *ctx, const bench_csr_options_t *o, int index)
{
    const csr_kernel_t *kernel = &ctx->kernels[index];
    bench_row_t *row = &ctx->rows[index];
    csr_runner_t *r = ctx->runner;
    cli_error_t err = {""};
    row->kernel = kernel->name;
    row->max_error = NAN;
    row->host_us = NAN; /* not measured for CSR products */
    row->check = "skipped";
    int status = r->run_checked(r, kernel, ctx->out, &err);
    if (status == CSR_RUN_UNSUPPORTED) {
        row->check = "not supported";
        snprintf(row->error, sizeof row->error, "%s", err.text);
        return;
    }
    if (status != 0) {
        bench_fail_row(row, &err);
        return;
    }
    if (ctx->checked) {
        row->max_error = csr_max_error(&ctx->ref, ctx->out);
        row->check = row->max_error <= CSR_TOLERANCE ? "pass" : "fail";
    }
    if (r->time_runs(r, kernel, ctx->warmup, o->runs, ctx->ms, &err) != 0) {
        bench_fail_row(row, &err);
        return;
    }
    row->ran = true;
    row->median_ms = bench_median_and_min(ctx->ms, o->runs, &row->min_ms);
}

static void print_row(const csr_bench_case_t *ctx, int index)
{
    const bench_row_t *row = &ctx->rows[index];
    report_print_row(stdout, &ctx->s, row);
    if (strcmp(row->check, "not supported") == 0)
        printf("    %s\n", row->error);
}

/* cuSPARSE's rows first; the fastest that ran and passed is the baseline. */
static void run_cusparse_rows(csr_bench_case_t *ctx, const bench_csr_options_t *o)
{
    int best = -1;
    for (int i = 0; i < ctx->count && is_cusparse(&ctx->kernels[i]); i++) {
        run_row(ctx, o, i);
        const bench_row_t *row = &ctx->rows[i];
        if (strcmp(row->check, "fail") == 0 && row->ran)
            fprintf(stderr, "esmm bench: %s failed its check; it is not a baseline\n", row->kernel);
        if (row->ran && strcmp(row->check, "fail") != 0 &&
            (best < 0 || row->median_ms < ctx->rows[best].median_ms))
            best = i;
    }
    if (best >= 0) {
        ctx->s.baseline_ms = ctx->rows[best].median_ms;
        ctx->baseline_kernel = csr_cusparse_algorithm_name(ctx->c->op, ctx->kernels[best].algorithm);
    }
    for (int i = 0; i < ctx->count && is_cusparse(&ctx->kernels[i]); i++)
        print_row(ctx, i);
}

/* ---- the report -------------------------------------------------------- */

static void print_header(const csr_session_t *session, const csr_bench_case_t *ctx)
{
    const csr_case_t *c = ctx->c;
    const csr_workload_t *wl = &ctx->wl;
    const bench_summary_t *s = &ctx->s;
    bool mv = c->op == BENCH_OP_CSRMV;
    if (c->label != NULL)
        printf("\n== %s ==\n", c->label);
    printf("esmm %s bench: %s %s, op(W) = %s: m=%" PRId64 " n=%" PRId64 " k=%" PRId64
           " alpha=%g beta=%g\n",
           esmm_version(), op_name(c->op),
           mv ? "y = alpha op(W) x + beta y" : "C = alpha op(W) B + beta C",
           c->transpose == ESMM_OP_T ? "W^T" : "W", wl->m, wl->n, wl->k, (double)c->alpha,
           (double)c->beta);
    printf("device: %s (%s backend)\n", s->device, s->backend);
    printf("inputs: seed %" PRIu64 "\n", c->seed);
    printf("  W: %s; %" PRId64 " stored entries (%.3g%% of W)\n", wl->w_source, wl->w.nnz,
           100.0 * (double)wl->w.nnz / ((double)wl->w.rows * (double)wl->w.cols));
    printf("  %s: %s; %.2f%% nonzero\n", mv ? "x" : "B", wl->b_source, 100.0 * wl->nonzero_b);
    printf("  useful products (b nonzero): %.2f%% of nnz(W) x n\n",
           s->flops > 0.0 ? 100.0 * s->effective_flops / s->flops : 0.0);
    printf("timing: median and min of %" PRId64 " runs after %" PRId64 " warm-up, %s", s->runs,
           s->warmup, s->clock);
    if (s->copies > 1)
        printf("; %s and %s cycle through %" PRId64 " copies (%.1f MiB each) to defeat the L2 "
               "cache",
               mv ? "x" : "B", mv ? "y" : "C", s->copies,
               (double)ctx->runner->copy_bytes / 0x1.0p20);
    printf("; W is one static copy for every row (not rotated)\n");
    if (session->cuda)
        printf("done once before timing: %scusparse%s_preprocess for each cuSPARSE algorithm\n",
               c->transpose == ESMM_OP_T ? "esmm_csr_prepare(W, T) for the esmm rows (not "
                                           "esmm-unprepared), "
                                         : "",
               mv ? "SpMV" : "SpMM");
    if (ctx->checked) {
        printf("check: vs the float64 CPU reference");
        if (ctx->reference_seconds >= 0.1)
            printf(" (computed in %.1f s)", ctx->reference_seconds);
        printf(", error |x-ref| / (sum |alpha w b| + |beta c|), tolerance %.2e, NaN where the "
               "reference has NaN\n",
               CSR_TOLERANCE);
    } else {
        printf("check: skipped\n");
    }
}

static void print_baseline(const csr_session_t *session, const csr_bench_case_t *ctx)
{
    if (!session->cuda)
        printf("baseline: none (cuSPARSE needs a CUDA device)\n");
    else if (ctx->baseline_kernel == NULL)
        printf("baseline: none (no cuSPARSE algorithm ran and passed)\n");
    else
        printf("baseline: %s, %.4f ms (the fastest cuSPARSE algorithm here)\n",
               ctx->baseline_kernel, ctx->s.baseline_ms);
}

/* W-only work done before timing: esmm_csr_prepare for T (all but the
 * unprepared row), cuSPARSE's preprocessing. */
static bool prepared(const csr_case_t *c, const csr_kernel_t *k)
{
    if (is_cusparse(k))
        return true;
    return c->transpose == ESMM_OP_T && k->kind != CSR_KERNEL_ESMM_UNPREPARED;
}

static void write_result(FILE *f, const csr_session_t *session, const csr_bench_case_t *ctx,
                         int index)
{
    const csr_case_t *c = ctx->c;
    const csr_workload_t *wl = &ctx->wl;
    const csr_kernel_t *k = &ctx->kernels[index];
    const bench_row_t *row = &ctx->rows[index];
    const double ms = row->ran ? row->median_ms : NAN;
    fprintf(f, "    {\"op\": \"%s\"", op_name(c->op));
    json_field_string(f, "kernel", row->kernel);
    if (c->label != NULL)
        json_field_string(f, "case", c->label);
    json_field_integer(f, "m", wl->m);
    json_field_integer(f, "n", wl->n);
    json_field_integer(f, "k", wl->k);
    json_field_string(f, "transpose", c->transpose == ESMM_OP_T ? "T" : "N");
    json_field_integer(f, "rows", wl->w.rows);
    json_field_integer(f, "cols", wl->w.cols);
    json_field_integer(f, "nnz", wl->w.nnz);
    json_field_number(f, "nnz_per_row", (double)wl->w.nnz / (double)wl->w.rows);
    json_field_bool(f, "homogeneous", wl->homogeneous);
    if (wl->homogeneous)
        json_field_number(f, "weight", (double)wl->weight);
    json_field_string(f, "generator", c->w_path != NULL || c->b_path != NULL ? "file" : "density");
    json_field_number(f, "density_a",
                      (double)wl->w.nnz / ((double)wl->w.rows * (double)wl->w.cols));
    json_field_number(f, "density_b", c->b_path != NULL ? wl->nonzero_b : c->b_density);
    json_field_number(f, "nonzero_b", wl->nonzero_b);
    if (c->w_path != NULL)
        json_field_string(f, "file_w", c->w_path);
    if (c->b_path != NULL)
        json_field_string(f, "file_b", c->b_path);
    fprintf(f, ", \"seed\": %" PRIu64, c->seed);
    json_field_number(f, "alpha", (double)c->alpha);
    json_field_number(f, "beta", (double)c->beta);
    json_field_bool(f, "cached_b", false);
    json_field_bool(f, "prepared", prepared(c, k));
    if (is_cusparse(k))
        json_field_string(f, "algorithm", csr_cusparse_algorithm_name(c->op, k->algorithm));
    json_field_number(f, "ms", ms);
    json_field_number(f, "min_ms", row->ran ? row->min_ms : NAN);
    json_field_number(f, "tflops", ctx->s.flops / ms * 1e-9);
    json_field_number(f, "effective_tflops", ctx->s.effective_flops / ms * 1e-9);
    json_field_string(f, "baseline", session->cuda ? "cusparse" : "none");
    json_field_number(f, "baseline_ms", ctx->s.baseline_ms);
    json_field_string(f, "baseline_kernel", ctx->baseline_kernel);
    json_field_number(f, "speedup", ctx->s.baseline_ms / ms);
    if (c->target > 0.0 && k->kind == CSR_KERNEL_ESMM)
        json_field_number(f, "target_speedup", c->target);
    json_field_number(f, "max_rel_error", row->max_error);
    json_field_number(f, "tolerance", ctx->checked ? CSR_TOLERANCE : NAN);
    json_field_string(f, "reference", ctx->checked ? "cpu-float64" : "none");
    bool unsupported = strcmp(row->check, "not supported") == 0;
    json_field_string(f, "check", unsupported ? "skipped" : row->check);
    if (unsupported)
        json_field_bool(f, "not_supported", true);
    json_field_integer(f, "runs", ctx->s.runs);
    json_field_integer(f, "warmup", ctx->s.warmup);
    json_field_integer(f, "copies", ctx->s.copies);
    json_field_string(f, "backend", ctx->s.backend);
    if (!row->ran)
        json_field_string(f, "error", row->error);
    fputc('}', f);
}

static void write_results(csr_session_t *session, const csr_bench_case_t *ctx)
{
    report_json_t *j = &session->json_writer;
    for (int i = 0; i < ctx->count; i++) {
        fputs(j->results++ > 0 ? ",\n" : "\n", j->f);
        write_result(j->f, session, ctx, i);
    }
}

/* ---- one case ---------------------------------------------------------- */

static void describe_case(const csr_session_t *session, csr_bench_case_t *ctx)
{
    const bench_csr_options_t *o = session->o;
    bench_summary_t *s = &ctx->s;
    memset(s, 0, sizeof *s);
    s->device = session->cuda ? session->device.device_name : "cpu";
    s->backend = session->cuda ? "cuda" : "cpu";
    s->m = ctx->wl.m;
    s->n = ctx->wl.n;
    s->k = ctx->wl.k;
    s->seed = ctx->c->seed;
    s->runs = o->runs;
    s->warmup = ctx->warmup;
    s->flops = 2.0 * (double)ctx->wl.w.nnz * (double)ctx->wl.n;
    s->effective_flops = 2.0 * ctx->wl.useful_products;
    s->baseline = session->cuda ? "cusparse" : "none";
    s->baseline_ms = NAN;
    s->reference = ctx->checked ? "cpu-float64" : "none";
    s->tolerance = ctx->checked ? CSR_TOLERANCE : 0.0;
    s->case_label = ctx->c->label;
    s->target = ctx->c->target;
}

/* Inputs, reference and runner of a case. Returns an exit code. */
static int prepare_case(const csr_session_t *session, csr_bench_case_t *ctx)
{
    const bench_csr_options_t *o = session->o;
    cli_error_t err = {""};
    int exit_code = csr_workload_build(ctx->c, &ctx->wl, &err);
    if (exit_code == ESMM_EXIT_USAGE)
        return usage_error(ctx->c->op, &err);
    if (exit_code != ESMM_EXIT_OK)
        return runtime_error(&err);
    ctx->p = csr_workload_problem(&ctx->wl, ctx->c, session->handle);
    ctx->out = malloc((size_t)(ctx->wl.m * ctx->wl.n > 0 ? ctx->wl.m * ctx->wl.n : 1) * sizeof(float));
    ctx->ms = malloc((size_t)o->runs * sizeof(double));
    if (ctx->out == NULL || ctx->ms == NULL) {
        cli_error_set(&err, "out of host memory for the results");
        return runtime_error(&err);
    }
    if (o->check) {
        double start = host_now_ms();
        if (csr_reference_compute(&ctx->p, ctx->out, &ctx->ref, &err) != 0)
            return runtime_error(&err);
        ctx->reference_seconds = (host_now_ms() - start) * 1e-3;
        ctx->checked = true;
    }
    ctx->runner = session->cuda ? csr_runner_cuda_create(&ctx->p, &err)
                                : csr_runner_cpu_create(&ctx->p, &err);
    if (ctx->runner == NULL)
        return runtime_error(&err);
    if (session->cuda && !ctx->runner->has_cusparse)
        printf("cusparse: cuSPARSE could not be initialised; no baseline\n");
    return ESMM_EXIT_OK;
}

static void free_case(csr_bench_case_t *ctx)
{
    if (ctx->runner != NULL)
        ctx->runner->destroy(ctx->runner);
    csr_reference_free(&ctx->ref);
    csr_workload_free(&ctx->wl);
    free(ctx->out);
    free(ctx->ms);
}

/* The sweep table's line of a case. */
static void summarise_case(const csr_bench_case_t *ctx, csr_sweep_line_t *line)
{
    bool failed = false, checked = false;
    for (int i = 0; i < ctx->count; i++) {
        const bench_row_t *row = &ctx->rows[i];
        if (ctx->kernels[i].kind == CSR_KERNEL_ESMM && row->ran)
            line->esmm_ms = row->median_ms;
        if (!is_cusparse(&ctx->kernels[i]))
            failed = failed || !row->ran || strcmp(row->check, "fail") == 0;
        checked = checked || strcmp(row->check, "pass") == 0;
    }
    line->baseline_ms = ctx->s.baseline_ms;
    line->baseline_kernel = ctx->baseline_kernel;
    line->check = failed ? "fail" : checked ? "pass" : "skipped";
}

static int run_case_steps(csr_session_t *session, csr_bench_case_t *ctx, csr_sweep_line_t *line)
{
    const bench_csr_options_t *o = session->o;
    const csr_case_t *c = ctx->c;
    if (c->label != NULL)
        printf("\n");
    ctx->count = bench_csr_select_kernels(o->kernels, c->op, c->transpose, session->cuda,
                                          ctx->kernels, stdout);
    if (ctx->count == 0) {
        cli_error_t err;
        cli_error_set(&err, "none of the kernels of --kernel %s applies to %s, op(W) = %s%s",
                      o->kernels, op_name(c->op), c->transpose == ESMM_OP_T ? "W^T" : "W",
                      session->cuda ? "" : " on the CPU backend");
        if (line != NULL) {
            printf("%s; case skipped\n", err.text);
            return ESMM_EXIT_OK;
        }
        return usage_error(c->op, &err);
    }
    ctx->warmup = o->warmup >= 0 ? o->warmup : session->cuda ? CUDA_DEFAULT_WARMUP : CPU_DEFAULT_WARMUP;
    int exit_code = prepare_case(session, ctx);
    if (exit_code != ESMM_EXIT_OK)
        return exit_code;
    describe_case(session, ctx);
    ctx->s.copies = ctx->runner->copies;
    ctx->s.clock = ctx->runner->clock;
    print_header(session, ctx);
    report_print_table_header(stdout, &ctx->s);
    run_cusparse_rows(ctx, o);
    for (int i = 0; i < ctx->count; i++) {
        if (is_cusparse(&ctx->kernels[i]))
            continue;
        run_row(ctx, o, i);
        print_row(ctx, i);
        if (!ctx->rows[i].ran || strcmp(ctx->rows[i].check, "fail") == 0)
            exit_code = ESMM_EXIT_CHECK_FAILED;
    }
    print_baseline(session, ctx);
    fflush(stdout);
    if (session->json.file != NULL)
        write_results(session, ctx);
    if (line != NULL)
        summarise_case(ctx, line);
    return exit_code;
}

static int run_case(csr_session_t *session, const csr_case_t *c, csr_sweep_line_t *line)
{
    csr_bench_case_t *ctx = calloc(1, sizeof *ctx);
    if (ctx == NULL) {
        cli_error_t err;
        cli_error_set(&err, "out of host memory");
        return runtime_error(&err);
    }
    ctx->c = c;
    int exit_code = run_case_steps(session, ctx, line);
    free_case(ctx);
    free(ctx);
    return exit_code;
}

/* ---- the sweep --------------------------------------------------------- */

/* The target table of issue 4, each row N and T, around a base workload (the
 * reference one unless --rows/--cols/--nnz-per-row/--n change it). */
static int sweep_cases(const csr_case_t *base, csr_case_t *cases, char labels[][48])
{
    typedef enum { REFERENCE, HOMOGENEOUS, HALF_N, WIDE_ROWS, DENSE_B, SPMV } variant_t;
    static const double variant_targets[] = {3.0, 3.0, 2.5, 2.5, 1.0, 4.0};
    int count = 0;
    for (int v = REFERENCE; v <= SPMV; v++) {
        for (int t = 0; t < 2; t++) {
            csr_case_t c = *base;
            const char *op = t == 0 ? "N" : "T";
            c.transpose = t == 0 ? ESMM_OP_N : ESMM_OP_T;
            char *label = labels[count];
            switch ((variant_t)v) {
            case REFERENCE: snprintf(label, 48, "reference %s", op); break;
            case HOMOGENEOUS:
                c.homogeneous = true;
                snprintf(label, 48, "homogeneous %s", op);
                break;
            case HALF_N:
                c.n = base->n / 2 > 0 ? base->n / 2 : 1;
                snprintf(label, 48, "n = %" PRId64 " %s", c.n, op);
                break;
            case WIDE_ROWS:
                c.nnz_per_row = 5 * base->nnz_per_row;
                snprintf(label, 48, "%" PRId64 " nnz/row %s", c.nnz_per_row, op);
                break;
            case DENSE_B:
                c.b_density = 1.0;
                snprintf(label, 48, "B dense %s", op);
                break;
            case SPMV:
                c.op = BENCH_OP_CSRMV;
                c.n = 1;
                snprintf(label, 48, "SpMV %s", op);
                break;
            }
            c.label = label;
            c.target = variant_targets[v];
            cases[count++] = c;
        }
    }
    return count;
}

static void print_sweep(const csr_sweep_line_t *lines, int count, bool cuda)
{
    printf("\nsweep csr-targets (medians; x = cuSPARSE's fastest algorithm / esmm):\n");
    printf("%-20s %-26s %10s %10s %6s %6s %4s  %s\n", "case", "cuSPARSE fastest", "ms", "esmm ms",
           "x", "target", "met", "check");
    int met = 0;
    for (int i = 0; i < count; i++) {
        const csr_sweep_line_t *l = &lines[i];
        char base[24] = "-", esmm[24] = "-", ratio[24] = "-";
        bool both = isfinite(l->baseline_ms) && isfinite(l->esmm_ms);
        if (isfinite(l->baseline_ms))
            snprintf(base, sizeof base, "%.4f", l->baseline_ms);
        if (isfinite(l->esmm_ms))
            snprintf(esmm, sizeof esmm, "%.4f", l->esmm_ms);
        if (both)
            snprintf(ratio, sizeof ratio, "%.2f", l->baseline_ms / l->esmm_ms);
        bool ok = both && l->baseline_ms / l->esmm_ms >= l->target;
        met += ok;
        printf("%-20s %-26s %10s %10s %6s %6.2f %4s  %s\n", l->label,
               l->baseline_kernel != NULL ? l->baseline_kernel : "-", base, esmm, ratio,
               l->target, both ? (ok ? "yes" : "NO") : "-", l->check);
    }
    if (cuda)
        printf("targets met: %d of %d (esmm x cuSPARSE's fastest algorithm)\n", met, count);
    else
        printf("(no cuSPARSE on the CPU backend: the targets are not judged)\n");
}

static int run_sweep(csr_session_t *session)
{
    const bench_csr_options_t *o = session->o;
    bool base_given = o->rows > 0 || o->cols > 0 || o->nnz_per_row >= 0 || o->n > 0;
    if (!session->cuda && !base_given) {
        printf("--sweep csr-targets: the targets are set for the reference workload on a GPU, and "
               "this is the CPU backend: nothing run. Give --rows/--cols/--nnz-per-row/--n to run "
               "its cases around that base workload.\n");
        return ESMM_EXIT_OK;
    }
    csr_case_t base = case_from_options(o);
    base.op = BENCH_OP_CSRMM;
    base.n = o->n > 0 ? o->n : CSR_DEFAULT_N;
    csr_case_t cases[SWEEP_CASES];
    char labels[SWEEP_CASES][48];
    csr_sweep_line_t lines[SWEEP_CASES];
    int count = sweep_cases(&base, cases, labels);
    int exit_code = ESMM_EXIT_OK;
    const progress_t progress = progress_begin("sweep csr-targets");
    for (int i = 0; i < count; i++) {
        progress_step(&progress, i, count, "%s", labels[i]);
        memset(&lines[i], 0, sizeof lines[i]);
        lines[i].label = labels[i];
        lines[i].target = cases[i].target;
        lines[i].baseline_ms = lines[i].esmm_ms = NAN;
        lines[i].check = "fail";
        exit_code = cli_worse_exit(exit_code, run_case(session, &cases[i], &lines[i]));
    }
    print_sweep(lines, count, session->cuda);
    if (base.rows != CSR_DEFAULT_ROWS || base.cols != CSR_DEFAULT_COLS ||
        base.nnz_per_row != CSR_DEFAULT_NNZ_PER_ROW || base.n != CSR_DEFAULT_N)
        printf("(the targets are set for the reference workload, W %dx%d with %d per row and "
               "n = %d; this ran around W %" PRId64 "x%" PRId64 " with %" PRId64 " per row and "
               "n = %" PRId64 ")\n",
               CSR_DEFAULT_ROWS, CSR_DEFAULT_COLS, CSR_DEFAULT_NNZ_PER_ROW, CSR_DEFAULT_N,
               base.rows, base.cols, base.nnz_per_row, base.n);
    fflush(stdout);
    progress_end(&progress);
    return exit_code;
}

/* ---- the command ------------------------------------------------------- */

static int run_session(csr_session_t *session)
{
    const bench_csr_options_t *o = session->o;
    cli_error_t err = {""};
    esmm_backend_t backend = ESMM_BACKEND_CPU;
    esmm_get_backend(session->handle, &backend);
    session->cuda = backend == ESMM_BACKEND_CUDA;
    esmm_get_device_info(session->handle, &session->device);
    if (!session->cuda)
        printf(o->backend == ESMM_BACKEND_AUTO ? "no CUDA device: benchmarking the CPU backend\n"
                                               : "benchmarking the CPU backend\n");
    /* Opened before the runs so a bad path fails now, not after them. */
    const char *const inputs[] = {o->w_path, o->b_path};
    if (o->json_path != NULL &&
        bench_json_open(&session->json, o->json_path, inputs, 2, &session->json_writer,
                        session->cuda ? session->device.device_name : "cpu",
                        bench_commit_string(o->commit), &err) != 0)
        return runtime_error(&err);
    int exit_code;
    if (o->sweep_targets) {
        exit_code = run_sweep(session);
    } else {
        csr_case_t c = case_from_options(o);
        exit_code = run_case(session, &c, NULL);
    }
    /* A run that stopped before its rows leaves no results worth a file. */
    if (session->json.file != NULL &&
        (exit_code <= ESMM_EXIT_CHECK_FAILED || o->sweep_targets))
        exit_code = cli_worse_exit(
            exit_code, bench_json_finish(&session->json_writer, &session->json, o->json_path));
    return exit_code;
}

int bench_csr_run(esmm_handle_t handle, const bench_csr_options_t *o)
{
    csr_session_t session;
    memset(&session, 0, sizeof session);
    session.o = o;
    session.handle = handle;
    int exit_code = run_session(&session);
    results_file_discard(&session.json);
    return exit_code;
}

int bench_csr_command(int argc, char **argv)
{
    bench_csr_options_t o;
    cli_error_t err = {""};
    if (bench_csr_parse_args(argc, argv, &o, &err) != 0)
        return usage_error(o.op, &err);
    if (o.help) {
        bench_csr_print_usage(stdout);
        return ESMM_EXIT_OK;
    }
    esmm_handle_t handle = NULL;
    int exit_code = bench_create_handle(o.backend, &handle);
    if (exit_code != ESMM_EXIT_OK)
        return exit_code;
    exit_code = bench_csr_run(handle, &o);
    esmm_destroy(handle);
    return exit_code;
}
