#include "analyze.h"

#include <cuda_runtime.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cli_args.h"
#include "generate.h"
#include "npy.h"
#include "runner.h"
#include "operand_stats.h"
#include "report.h"

typedef enum {
    AOPT_HELP,
    AOPT_TRANSA,
    AOPT_TRANSB,
    AOPT_N,
    AOPT_SEED,
    AOPT_BENCH,
    AOPT_RUNS,
    AOPT_WARMUP,
    AOPT_NO_CHECK,
    AOPT_JSON,
    AOPT_COMMIT,
    AOPT_BACKEND
} analyze_option_id_t;

/* Starts the help of every option that only --bench uses; the parser refuses
 * those options without --bench. */
#define BENCH_ONLY "--bench: "

static const cli_option_t analyze_option_specs[] = {
    {"--transa", AOPT_TRANSA, "N|T", "op(A) = A or A^T: A.npy is stored m x k for N, k x m for T [N]"},
    {"--transb", AOPT_TRANSB, "N|T", "op(B) = B or B^T: B.npy is stored k x n for N, n x k for T [N]"},
    {"--n", AOPT_N, "N", "without B.npy: columns of the dense random op(B) that esmm_sgemm\n"
                         "                     multiplies A with [k]"},
    {"--seed", AOPT_SEED, "S", "seed of that random B [1]"},
    {"--bench", AOPT_BENCH, NULL,
     "also time esmm (end-to-end and with B's pattern cached) against cuBLAS\n"
     "                     on these matrices, checked like esmm bench"},
    {"--runs", AOPT_RUNS, "R", BENCH_ONLY "timed runs [20]"},
    {"--warmup", AOPT_WARMUP, "W", BENCH_ONLY "untimed runs before timing [CUDA 5, CPU 1]"},
    {"--no-check", AOPT_NO_CHECK, NULL, BENCH_ONLY "skip verification"},
    {"--json", AOPT_JSON, "FILE", BENCH_ONLY "also write its results as JSON"},
    {"--commit", AOPT_COMMIT, "STR", BENCH_ONLY "commit recorded in the JSON"},
    {"--backend", AOPT_BACKEND, "auto|cpu|cuda", "[auto: CUDA when a GPU is present]"},
    {"--help", AOPT_HELP, NULL, "this text"},
};
#define ANALYZE_OPTION_COUNT ((int)(sizeof analyze_option_specs / sizeof analyze_option_specs[0]))

void analyze_print_usage(FILE *f)
{
    fputs("usage: esmm analyze A.npy [B.npy] [options]\n"
          "\n"
          "Loads float32 matrices (2-D .npy, '<f4') and prints, for op(A) and op(B): the share of\n"
          "zero elements, the slice density esmm's extraction finds (slices are (32-row strip of\n"
          "op(A), k column) and (k row, 32-column strip of op(B)); this is what esmm can skip by),\n"
          "the share of k that is zero in every strip (\"dead\" k), and the spread of the density\n"
          "over strips. Then it runs esmm_sgemm once on the handle's backend and reports what it\n"
          "did: path, kernel, the share of the dense work it ran and skipped. Without B.npy, A is\n"
          "multiplied with a dense random B (k x n).\n"
          "\n"
          "options:\n",
          f);
    cli_print_options(f, analyze_option_specs, ANALYZE_OPTION_COUNT);
    fputs("\n"
          "exit status: 0 all good, 1 the library's extraction disagrees with the host's count or\n"
          "a run failed, 2 bad command line or shapes, 3 unreadable, malformed or empty file,\n"
          "out of memory or CUDA error.\n",
          f);
}

static int apply_option(const cli_option_t *s, const char *value, void *context, cli_error_t *err)
{
    analyze_options_t *o = context;
    if (o->bench_option == NULL && strncmp(s->help, BENCH_ONLY, strlen(BENCH_ONLY)) == 0)
        o->bench_option = s->name;
    switch ((analyze_option_id_t)s->id) {
    case AOPT_HELP: o->help = true; return 1;
    case AOPT_TRANSA: return cli_parse_operation(s->name, value, &o->transa, err);
    case AOPT_TRANSB: return cli_parse_operation(s->name, value, &o->transb, err);
    case AOPT_N: return cli_parse_int64(s->name, value, 1, INT64_MAX, &o->n, err);
    case AOPT_SEED: return cli_parse_uint64(s->name, value, &o->seed, err);
    case AOPT_BENCH: o->bench = true; return 0;
    case AOPT_RUNS: return cli_parse_int64(s->name, value, 1, 1000000, &o->runs, err);
    case AOPT_WARMUP: return cli_parse_int64(s->name, value, 0, 1000000, &o->warmup, err);
    case AOPT_NO_CHECK: o->check = false; return 0;
    case AOPT_JSON:
        if (*value == '\0')
            return cli_error_set(err, "--json: empty file name");
        o->json_path = value;
        return 0;
    case AOPT_COMMIT: o->commit = value; return 0;
    case AOPT_BACKEND: return cli_parse_backend(value, &o->backend, err);
    }
    return cli_error_set(err, "internal error: unhandled option %s", s->name);
}

static int take_file(const char *arg, void *context, cli_error_t *err)
{
    analyze_options_t *o = context;
    if (o->path_a == NULL)
        o->path_a = arg;
    else if (o->path_b == NULL)
        o->path_b = arg;
    else
        return cli_error_set(err, "unexpected argument '%.64s': at most two files, A.npy and B.npy",
                             arg);
    return 0;
}

int analyze_parse_args(int argc, char **argv, analyze_options_t *o, cli_error_t *err)
{
    memset(o, 0, sizeof *o);
    o->transa = o->transb = ESMM_OP_N;
    o->seed = 1;
    o->runs = BENCH_DEFAULT_RUNS;
    o->warmup = -1;
    o->check = true;
    o->backend = ESMM_BACKEND_AUTO;
    int status = cli_parse_command_line(argc, argv, analyze_option_specs, ANALYZE_OPTION_COUNT,
                                        apply_option, take_file, o, err);
    if (status < 0)
        return -1;
    if (o->help)
        return 0;
    if (o->path_a == NULL)
        return cli_error_set(err, "no matrix given: esmm analyze A.npy [B.npy]");
    if (o->path_b != NULL && o->n > 0)
        return cli_error_set(err, "--n is for a run without B.npy; B's file fixes n");
    if (o->bench_option != NULL && !o->bench)
        return cli_error_set(err, "%s is an option of --bench, which is not given; add --bench",
                             o->bench_option);
    return 0;
}

/* What the analysis holds; released in one place. */
typedef struct {
    esmm_handle_t handle;
    bool cuda;
    npy_matrix_t file_a, file_b;
    float *random_b;             /* without B.npy */
    float *a, *b, *c;            /* on the backend (device memory on CUDA) */
    bool a_owned, b_owned;       /* a, b are copies to free */
    int64_t *strips_a, *strips_b; /* strips holding a nonzero, per k */
    int64_t m, n, k;
} analysis_t;

static int usage_error(const cli_error_t *err)
{
    return cli_usage_error("esmm analyze", "esmm analyze --help", err);
}

static int runtime_error(const cli_error_t *err)
{
    return cli_runtime_error("esmm analyze", err);
}

static double percent(double fraction)
{
    return 100.0 * fraction;
}

/* op(A) is m x k: A stored m x k for N, k x m for T (and B alike). Returns an
 * ESMM_EXIT_* code, having said what was wrong: too little host memory is a
 * runtime error, operands that disagree a usage one. */
static int settle_shapes(const analyze_options_t *o, analysis_t *an)
{
    cli_error_t err = {""};
    bool ta = o->transa == ESMM_OP_T, tb = o->transb == ESMM_OP_T;
    an->m = ta ? an->file_a.cols : an->file_a.rows;
    an->k = ta ? an->file_a.rows : an->file_a.cols;
    double host_bytes;
    if (o->path_b == NULL) {
        an->n = o->n > 0 ? o->n : an->k;
        /* A random B and C, on the host beside A. */
        const double dm = (double)an->m, dn = (double)an->n, dk = (double)an->k;
        host_bytes = 4.0 * (dk * dn + dm * dn);
    } else {
        int64_t k_b = tb ? an->file_b.cols : an->file_b.rows;
        an->n = tb ? an->file_b.rows : an->file_b.cols;
        if (k_b != an->k) {
            cli_error_set(&err, "sizes disagree: op(A) from %s (stored %" PRId64 " x %" PRId64
                                ", op %c) has k = %" PRId64 ", op(B) from %s (stored %" PRId64
                                " x %" PRId64 ", op %c) has k = %" PRId64,
                          o->path_a, an->file_a.rows, an->file_a.cols, ta ? 'T' : 'N', an->k,
                          o->path_b, an->file_b.rows, an->file_b.cols, tb ? 'T' : 'N', k_b);
            return usage_error(&err);
        }
        /* C, on the host beside A and B. */
        host_bytes = 4.0 * (double)an->m * (double)an->n;
    }
    if (bench_check_host_memory(an->m, an->n, an->k, host_bytes, &err) != 0)
        return runtime_error(&err);
    return ESMM_EXIT_OK;
}

/* The operand where the backend reads it: the host data itself on the CPU
 * backend, a device copy on CUDA. */
static int place(const analysis_t *an, const float *host, int64_t count, float **out, bool *owned,
                 const char *what, cli_error_t *err)
{
    *owned = false;
    if (!an->cuda) {
        *out = (float *)host;
        return 0;
    }
    size_t bytes = (size_t)count * sizeof(float);
    cudaError_t e = cudaMalloc((void **)out, bytes > 0 ? bytes : 1);
    if (e == cudaSuccess) {
        *owned = true;
        e = cudaMemcpy(*out, host, bytes, cudaMemcpyHostToDevice);
    }
    if (e != cudaSuccess) {
        cudaGetLastError();
        return cli_error_set(err, "uploading %s (%.1f MiB): %s", what, (double)bytes / (1 << 20),
                             cudaGetErrorString(e));
    }
    return 0;
}

static void release_buffer(bool cuda, void *p)
{
    if (cuda)
        cudaFree(p);
    else
        free(p);
}

static void release(analysis_t *an)
{
    if (an->a_owned)
        release_buffer(an->cuda, an->a);
    if (an->b_owned)
        release_buffer(an->cuda, an->b);
    release_buffer(an->cuda, an->c);
    npy_matrix_free(&an->file_a);
    npy_matrix_free(&an->file_b);
    free(an->random_b);
    free(an->strips_a);
    free(an->strips_b);
    memset(an, 0, sizeof *an);
}

/* The library's density of one operand through esmm_pattern_*; compares it
 * with the host's. Returns 0 when they agree, 1 when not, -1 on error. */
static int library_density(const analysis_t *an, bool is_b, esmm_operation_t op, double expected,
                           double *density, cli_error_t *err)
{
    esmm_pattern_t pattern = NULL;
    const esmm_status_t st =
        is_b ? esmm_pattern_extract_b(an->handle, op, an->k, an->n, an->b,
                                      op == ESMM_OP_N ? an->n : an->k, &pattern)
             : esmm_pattern_extract_a(an->handle, op, an->m, an->k, an->a,
                                      op == ESMM_OP_N ? an->k : an->m, &pattern);
    if (bench_pattern_density(st, pattern, is_b ? "esmm_pattern_extract_b"
                                                : "esmm_pattern_extract_a",
                              density, err) != 0)
        return -1;
    return fabs(*density - expected) <= 1e-12 ? 0 : 1;
}

/* Prints one operand's statistics. Returns an exit code. */
static int report_operand(analysis_t *an, bool is_b, const analyze_options_t *o)
{
    cli_error_t err = {""};
    esmm_operation_t op = is_b ? o->transb : o->transa;
    const npy_matrix_t *file = is_b ? &an->file_b : &an->file_a;
    const char *path = is_b ? o->path_b : o->path_a;
    operand_view_t view = is_b ? operand_view_b(file->data, op, an->k, an->n)
                               : operand_view_a(file->data, op, an->m, an->k);
    int64_t **strips = is_b ? &an->strips_b : &an->strips_a;
    *strips = malloc((size_t)an->k * sizeof **strips);
    operand_stats_t s;
    if (*strips == NULL || operand_stats(&view, &s, *strips) != 0) {
        cli_error_set(&err, "out of host memory for the statistics of %s", path);
        return runtime_error(&err);
    }
    const char *name = is_b ? "B" : "A";
    if (is_b)
        printf("\nB: %s, stored %" PRId64 " x %" PRId64 ", op(B) = %s: k = %" PRId64 ", n = %" PRId64
               "\n", path, file->rows, file->cols, op == ESMM_OP_N ? "B" : "B^T", an->k, an->n);
    else
        printf("\nA: %s, stored %" PRId64 " x %" PRId64 ", op(A) = %s: m = %" PRId64 ", k = %" PRId64
               "\n", path, file->rows, file->cols, op == ESMM_OP_N ? "A" : "A^T", an->m, an->k);
    printf("  zero elements:     %.2f%%\n", percent(operand_zero_fraction(&s)));
    double expected = operand_slice_density(&s), density = NAN;
    int agree = library_density(an, is_b, op, expected, &density, &err);
    printf("  slice density:     %.2f%% of the (%s, k) slices hold a nonzero", percent(expected),
           is_b ? "32-column strip" : "32-row strip");
    if (agree == 0)
        printf(" (esmm's extraction agrees)\n");
    else if (agree > 0)
        printf("\n                     but esmm's extraction says %.4f%%: DIFFERENT\n",
               percent(density));
    else
        printf("\n                     esmm's extraction failed: %s\n", err.text);
    printf("  dead k:            %.2f%% (%" PRId64 " of %" PRId64 " k %s are zero in every strip)\n",
           percent(operand_dead_k_fraction(&s)), s.dead_k, s.k, is_b ? "rows" : "columns");
    printf("  per-strip density: min %.2f%%, median %.2f%%, max %.2f%% over %" PRId64 " strip%s\n",
           percent(s.strip_density_min), percent(s.strip_density_median),
           percent(s.strip_density_max), s.strips, s.strips == 1 ? "" : "s");
    if (agree != 0) {
        fprintf(stderr, "esmm analyze: %s: %s\n", name,
                agree > 0 ? "the library's slice density differs from the host's count" : err.text);
        return ESMM_EXIT_CHECK_FAILED;
    }
    return ESMM_EXIT_OK;
}

static void report_joint(const analysis_t *an)
{
    int64_t strips_a = (an->m + GENERATE_STRIP - 1) / GENERATE_STRIP;
    int64_t strips_b = (an->n + GENERATE_STRIP - 1) / GENERATE_STRIP;
    int64_t unused = 0;
    for (int64_t kk = 0; kk < an->k; kk++)
        unused += an->strips_a[kk] == 0 || an->strips_b[kk] == 0;
    printf("\nboth: %.2f%% of k is dead in A or in B (no product needs it);\n"
           "  joint slice density %.2f%%: the share of (A strip, B strip, k) that skipping by\n"
           "  both masks still has to multiply\n",
           percent(an->k > 0 ? (double)unused / (double)an->k : 0.0),
           percent(joint_slice_density(an->strips_a, strips_a, an->strips_b, strips_b, an->k)));
}

/* One esmm_sgemm on the backend, and what esmm_get_last_info says of it. */
static int report_esmm_run(analysis_t *an, const analyze_options_t *o)
{
    cli_error_t err = {""};
    size_t c_bytes = (size_t)(an->m * an->n) * sizeof(float);
    cudaError_t e = cudaSuccess;
    if (an->cuda)
        e = cudaMalloc((void **)&an->c, c_bytes > 0 ? c_bytes : 1);
    else
        an->c = malloc(c_bytes > 0 ? c_bytes : 1);
    if (an->c == NULL || e != cudaSuccess) {
        an->c = NULL;
        cudaGetLastError();
        cli_error_set(&err, "out of %s memory for C (%.1f MiB)", an->cuda ? "device" : "host",
                      (double)c_bytes / (1 << 20));
        return runtime_error(&err);
    }
    const float one = 1.0f, zero = 0.0f;
    bool timing = esmm_set_timing(an->handle, 1) == ESMM_STATUS_SUCCESS;
    esmm_status_t st = esmm_sgemm(an->handle, o->transa, o->transb, an->m, an->n, an->k, &one,
                                  an->a, o->transa == ESMM_OP_N ? an->k : an->m, an->b,
                                  o->transb == ESMM_OP_N ? an->n : an->k, &zero, an->c, an->n);
    esmm_info_t info;
    if (st == ESMM_STATUS_SUCCESS)
        st = esmm_get_last_info(an->handle, &info);
    if (timing)
        esmm_set_timing(an->handle, 0);
    if (st != ESMM_STATUS_SUCCESS) {
        fprintf(stderr, "esmm analyze: esmm_sgemm: %s\n", esmm_status_string(st));
        return ESMM_EXIT_CHECK_FAILED;
    }
    printf("\nesmm_sgemm m = %" PRId64 ", n = %" PRId64 ", k = %" PRId64 ": path %s, kernel %s\n",
           an->m, an->n, an->k, report_path_name(info.path), info.kernel != NULL ? info.kernel : "?");
    if (info.density_a >= 0.0 && info.density_b >= 0.0)
        printf("  slice density A %.2f%%, B %.2f%%; ran %.2f%% of the dense work, skipped "
               "%.2f%%\n",
               percent(info.density_a), percent(info.density_b), percent(info.work_fraction),
               percent(1.0 - info.work_fraction));
    else
        printf("  no masks extracted: %s\n", report_masks_reason(info.masks));
    if (info.extraction_ms >= 0.0)
        printf("  probe and pattern extraction (both operands): %.4f ms\n", info.extraction_ms);
    return ESMM_EXIT_OK;
}

/* Loads, measures and runs; the bench comes after, once this is released. */
static int analyze(const analyze_options_t *o, analysis_t *an)
{
    cli_error_t err = {""};
    if (npy_load_operand(o->path_a, "A", &an->file_a, &err) != 0)
        return runtime_error(&err);
    if (o->path_b != NULL && npy_load_operand(o->path_b, "B", &an->file_b, &err) != 0)
        return runtime_error(&err);
    const int shapes = settle_shapes(o, an);
    if (shapes != ESMM_EXIT_OK)
        return shapes;
    if (o->path_b == NULL) {
        an->random_b = malloc((size_t)(an->k * an->n) * sizeof(float));
        if (an->random_b == NULL) {
            cli_error_set(&err, "out of host memory for a random B (%" PRId64 " x %" PRId64 ")",
                          an->k, an->n);
            return runtime_error(&err);
        }
        operand_view_t view = operand_view_b(an->random_b, o->transb, an->k, an->n);
        generator_t dense = {GENERATOR_DENSE, "", 1.0, 0.0};
        generate_operand(&view, &dense, o->seed, GENERATE_STREAM_B);
    }
    const float *host_b = o->path_b != NULL ? an->file_b.data : an->random_b;
    if (place(an, an->file_a.data, an->m * an->k, &an->a, &an->a_owned, "A", &err) != 0 ||
        place(an, host_b, an->k * an->n, &an->b, &an->b_owned, "B", &err) != 0)
        return runtime_error(&err);

    esmm_device_info_t device;
    esmm_get_device_info(an->handle, &device);
    printf("esmm %s analyze: %s backend%s%s%s\n", esmm_version(), an->cuda ? "cuda" : "cpu",
           an->cuda ? " (" : "", an->cuda ? device.device_name : "", an->cuda ? ")" : "");
    int exit_code = report_operand(an, false, o);
    if (exit_code == ESMM_EXIT_RUNTIME)
        return exit_code;
    if (o->path_b != NULL) {
        int b_exit = report_operand(an, true, o);
        if (b_exit == ESMM_EXIT_RUNTIME)
            return b_exit;
        exit_code = exit_code > b_exit ? exit_code : b_exit;
        report_joint(an);
    } else {
        printf("\nB: no file; esmm_sgemm below multiplies with a dense random op(B), k = %" PRId64
               " x n = %" PRId64 " (seed %" PRIu64 ")\n", an->k, an->n, o->seed);
    }
    int run_exit = report_esmm_run(an, o);
    return exit_code > run_exit ? exit_code : run_exit;
}

/* --bench: the same matrices through `esmm bench`. */
static int run_bench(esmm_handle_t handle, const analyze_options_t *o, int64_t n)
{
    bench_options_t b;
    cli_error_t err = {""};
    bench_parse_args(0, NULL, &b, &err); /* the defaults */
    b.backend = o->backend;
    b.kernels = "esmm";
    b.kernels_given = true;
    b.both_esmm_rows = true;
    b.load_a = o->path_a;
    b.load_b = o->path_b;
    b.transa = o->transa;
    b.transb = o->transb;
    if (o->path_b == NULL)
        b.n = n;
    b.seed = o->seed;
    b.runs = o->runs;
    b.warmup = o->warmup;
    b.check = o->check;
    b.json_path = o->json_path;
    b.commit = o->commit;
    printf("\n");
    return bench_run(handle, &b);
}

int analyze_command(int argc, char **argv)
{
    analyze_options_t o;
    cli_error_t err = {""};
    if (analyze_parse_args(argc, argv, &o, &err) != 0)
        return usage_error(&err);
    if (o.help) {
        analyze_print_usage(stdout);
        return ESMM_EXIT_OK;
    }
    analysis_t an;
    memset(&an, 0, sizeof an);
    esmm_status_t st = esmm_create(&an.handle, o.backend);
    if (st != ESMM_STATUS_SUCCESS) {
        cli_error_set(&err, "cannot create an esmm handle: %s", esmm_status_string(st));
        return runtime_error(&err);
    }
    esmm_backend_t backend = ESMM_BACKEND_CPU;
    esmm_get_backend(an.handle, &backend);
    an.cuda = backend == ESMM_BACKEND_CUDA;
    esmm_handle_t handle = an.handle;
    int exit_code = analyze(&o, &an);
    int64_t n = an.n;
    release(&an);
    if (o.bench && exit_code != ESMM_EXIT_RUNTIME && exit_code != ESMM_EXIT_USAGE) {
        int bench_exit = run_bench(handle, &o, n);
        exit_code = exit_code > bench_exit ? exit_code : bench_exit;
    }
    esmm_destroy(handle);
    return exit_code;
}
