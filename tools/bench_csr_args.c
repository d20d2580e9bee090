/* Command-line parsing of `esmm bench --op csrmm|csrmv` and its kernel list. */
#include <string.h>

#include "bench_csr.h"

#define MAX_RUNS 1000000

/* Table order is row order: cuSPARSE first, so its fastest algorithm is known
 * before the esmm rows are compared with it. */
static const csr_kernel_t csr_kernels[BENCH_CSR_KERNELS] = {
    {"cusparse-default", CSR_KERNEL_CUSPARSE, 0},
    {"cusparse-alg1", CSR_KERNEL_CUSPARSE, 1},
    {"cusparse-alg2", CSR_KERNEL_CUSPARSE, 2},
    {"cusparse-alg3", CSR_KERNEL_CUSPARSE, 3},
    {"esmm", CSR_KERNEL_ESMM, 0},
    {"esmm-unprepared", CSR_KERNEL_ESMM_UNPREPARED, 0},
    {"csr-dense-b", CSR_KERNEL_DENSE_B, 0},
    {"csr-sparse-b", CSR_KERNEL_SPARSE_B, 0},
};

typedef enum {
    OPT_HELP,
    OPT_OP,
    OPT_BACKEND,
    OPT_KERNEL,
    OPT_ROWS,
    OPT_COLS,
    OPT_NNZ_PER_ROW,
    OPT_HOMOGENEOUS,
    OPT_WEIGHT,
    OPT_W,
    OPT_N,
    OPT_B_DENSITY,
    OPT_B,
    OPT_TRANSPOSE,
    OPT_ALPHA,
    OPT_BETA,
    OPT_RUNS,
    OPT_WARMUP,
    OPT_SEED,
    OPT_NO_CHECK,
    OPT_SWEEP,
    OPT_JSON,
    OPT_COMMIT
} option_id_t;

static const cli_option_t csr_option_specs[] = {
    {"--op", OPT_OP, "csrmm|csrmv",
     "C = alpha op(W) B + beta C, or y = alpha op(W) x + beta y (n = 1)"},
    {"--kernel", OPT_KERNEL, "LIST",
     "comma-separated rows [all]: esmm (the library's default path; for T\n"
     "                     on a W prepared once with esmm_csr_prepare), esmm-unprepared (T, CUDA:\n"
     "                     no prepare, atomics), csr-dense-b, csr-sparse-b (csrmm, CUDA: forced\n"
     "                     paths), cusparse-default, cusparse-alg1, -alg2, -alg3 (CUDA; SpMV has\n"
     "                     no alg3), cusparse = all of cuSPARSE's, all = everything that applies"},
    {"--rows", OPT_ROWS, "R", "rows of the generated W [10000]"},
    {"--cols", OPT_COLS, "C", "columns of the generated W [10000]"},
    {"--nnz-per-row", OPT_NNZ_PER_ROW, "P",
     "stored entries per row of W, at distinct uniform random columns [200]"},
    {"--homogeneous", OPT_HOMOGENEOUS, NULL,
     "one weight shared by every entry of W (esmm gets no values array;\n"
     "                     cuSPARSE, which has no such form, an array of it) [per-entry random]"},
    {"--weight", OPT_WEIGHT, "X", "the shared weight; implies --homogeneous [0.5]"},
    {"--w", OPT_W, "FILE.mtx",
     "W from a Matrix Market file (coordinate real|integer|pattern; rows are\n"
     "                     sorted by column; a pattern file is homogeneous with weight 1)\n"
     "                     [generated: --rows, --cols, --nnz-per-row]"},
    {"--n", OPT_N, "N", "columns of B and C [128; csrmv: 1]"},
    {"--b-density", OPT_B_DENSITY, "D",
     "each element of B (csrmv: x) is nonzero with probability D, random\n"
     "                     nonzero values there and exact zeros elsewhere [0.1]"},
    {"--b", OPT_B, "FILE.npy",
     "B from a 2-D float32 .npy file, k x n (csrmv: x, k x 1 or 1 x k)\n"
     "                     [generated: --n, --b-density]"},
    {"--transpose", OPT_TRANSPOSE, "N|T", "op(W) = W or W^T [N]"},
    {"--alpha", OPT_ALPHA, "X", "C = alpha op(W) B + beta C (csrmv: y, x) [1]"},
    {"--beta", OPT_BETA, "X", "[0]"},
    {"--runs", OPT_RUNS, "R", "timed runs; the median and the minimum are reported [20]"},
    {"--warmup", OPT_WARMUP, "W", "untimed runs before timing [CUDA 5, CPU 1]"},
    {"--seed", OPT_SEED, "S", "seed of the generators [1]"},
    {"--no-check", OPT_NO_CHECK, NULL, "skip verification"},
    {"--sweep", OPT_SWEEP, "csr-targets",
     "every row of the CSR target table in one process: the reference\n"
     "                     workload, homogeneous, n/2, 5x nonzeros per row, B dense, SpMV, each\n"
     "                     N and T (--rows/--cols/--nnz-per-row/--n set the base workload)"},
    {"--json", OPT_JSON, "FILE", "also write the results as JSON (DESIGN.md format)"},
    {"--commit", OPT_COMMIT, "STR", "commit recorded in the JSON [$ESMM_COMMIT, else unknown]"},
    {"--backend", OPT_BACKEND, "auto|cpu|cuda", "[auto: CUDA when a GPU is present]"},
    {"--help", OPT_HELP, NULL, "this text"},
};
#define CSR_OPTION_COUNT ((int)(sizeof csr_option_specs / sizeof csr_option_specs[0]))

void bench_csr_print_usage(FILE *f)
{
    fputs("usage: esmm bench --op csrmm|csrmv [options]\n"
          "\n"
          "Times esmm's CSR products, C = alpha op(W) B + beta C (W sparse in CSR, B and C dense\n"
          "row-major, FP32), against every cuSPARSE CSR algorithm that accepts the case\n"
          "(cusparseSpMM / cusparseSpMV, row-major dense operands, preprocessing done once before\n"
          "timing) on the same data in the same process. Each esmm row is compared with the\n"
          "fastest of them. Every result is checked against the float64 CPU reference. Without a\n"
          "GPU it times the CPU backend, with no baseline.\n"
          "\n"
          "options (--opt VALUE or --opt=VALUE):\n",
          f);
    cli_print_options(f, csr_option_specs, CSR_OPTION_COUNT);
    fputs("\n"
          "Timing (CUDA): events around each run after warm-up, on one stream; B and C cycle\n"
          "through copies that together exceed twice the L2 cache, W is one static copy.\n"
          "\n"
          "Verification: error = |x - ref| / (sum |alpha w b| + |beta c|) per element, tolerance\n"
          "1e-5; NaN must appear exactly where the reference has it. C starts as NaN (beta = 0)\n"
          "so unwritten elements fail.\n"
          "\n"
          "exit status: 0 all good, 1 an esmm row failed its check or did not run, 2 bad command\n"
          "line or B not matching op(W), 3 unreadable, malformed or empty input file, out of\n"
          "memory or CUDA error.\n",
          f);
}

static bool is_group(const char *name, size_t length, const char *group)
{
    return strlen(group) == length && strncmp(name, group, length) == 0;
}

/* The table index of a kernel name, or -1. */
static int find_kernel(const char *name, size_t length)
{
    for (int i = 0; i < BENCH_CSR_KERNELS; i++)
        if (is_group(name, length, csr_kernels[i].name))
            return i;
    return -1;
}

/* What a kernel list names: chosen[i] for every kernel it selects, alone[i]
 * for the ones named on their own, cusparse_named when it names any of
 * cuSPARSE's (not through "all"). */
typedef struct {
    bool chosen[BENCH_CSR_KERNELS], alone[BENCH_CSR_KERNELS];
    bool cusparse_named;
} kernel_list_t;

/* Returns 0, or -1 with err set. */
static int read_kernel_list(const char *list, kernel_list_t *out, cli_error_t *err)
{
    memset(out, 0, sizeof *out);
    const char *p = list;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t length = comma ? (size_t)(comma - p) : strlen(p);
        int index = find_kernel(p, length);
        if (length == 0)
            return cli_error_set(err, "--kernel: empty name in the list '%.64s'", list);
        if (is_group(p, length, "all") || is_group(p, length, "cusparse")) {
            bool all = is_group(p, length, "all");
            out->cusparse_named = out->cusparse_named || !all;
            for (int i = 0; i < BENCH_CSR_KERNELS; i++)
                out->chosen[i] = out->chosen[i] || all || csr_kernels[i].kind == CSR_KERNEL_CUSPARSE;
        } else if (index >= 0) {
            out->chosen[index] = out->alone[index] = true;
            out->cusparse_named = out->cusparse_named || csr_kernels[index].kind == CSR_KERNEL_CUSPARSE;
        } else {
            return cli_error_set(err, "--kernel: unknown kernel '%.*s' (csrmm and csrmv have: esmm, "
                                      "esmm-unprepared, csr-dense-b, csr-sparse-b, cusparse-default, "
                                      "cusparse-alg1, cusparse-alg2, cusparse-alg3, cusparse, all)",
                                 (int)(length > 64 ? 64 : length), p);
        }
        if (comma == NULL)
            return 0;
        p = comma + 1;
    }
}

/* Why a kernel does not apply to a case, or NULL when it does. */
static const char *not_applicable(const csr_kernel_t *k, bench_op_t op, esmm_operation_t transpose,
                                  bool cuda)
{
    switch (k->kind) {
    case CSR_KERNEL_CUSPARSE:
        if (!cuda)
            return "unavailable without a CUDA device";
        return csr_cusparse_algorithm_name(op, k->algorithm) == NULL
                   ? "cuSPARSE's SpMV has no such algorithm"
                   : NULL;
    case CSR_KERNEL_ESMM:
        return NULL;
    case CSR_KERNEL_ESMM_UNPREPARED:
        if (transpose != ESMM_OP_T)
            return "only op(W) = W^T has a path without esmm_csr_prepare";
        return cuda ? NULL : "the CPU backend has one path; CUDA only";
    case CSR_KERNEL_DENSE_B:
    case CSR_KERNEL_SPARSE_B:
        if (op != BENCH_OP_CSRMM)
            return "a csrmm path (esmm_scsrmm_kernel)";
        return cuda ? NULL : "a CUDA path";
    }
    return "unknown";
}

int bench_csr_select_kernels(const char *list, bench_op_t op, esmm_operation_t transpose,
                             bool cuda, csr_kernel_t *out, FILE *notices)
{
    kernel_list_t named;
    cli_error_t err;
    if (read_kernel_list(list, &named, &err) != 0)
        return 0;
    if (!cuda && named.cusparse_named)
        fprintf(notices, "cusparse: unavailable without a CUDA device; skipped\n");
    int count = 0;
    for (int i = 0; i < BENCH_CSR_KERNELS; i++) {
        const csr_kernel_t *k = &csr_kernels[i];
        if (!named.chosen[i])
            continue;
        const char *why = not_applicable(k, op, transpose, cuda);
        if (why == NULL)
            out[count++] = *k;
        else if (named.alone[i] && (cuda || k->kind != CSR_KERNEL_CUSPARSE))
            fprintf(notices, "%s: %s; skipped\n", k->name, why);
    }
    return count;
}

static int parse_path(const char *what, const char *text, const char **out, cli_error_t *err)
{
    if (*text == '\0')
        return cli_error_set(err, "%s: empty file name", what);
    *out = text;
    return 0;
}

static int parse_sweep(const char *text, bool *out, cli_error_t *err)
{
    if (strcmp(text, "csr-targets") != 0)
        return cli_error_set(err, "--sweep: expected csr-targets, got '%.64s'", text);
    *out = true;
    return 0;
}

static int apply_option(const cli_option_t *s, const char *value, void *context, cli_error_t *err)
{
    bench_csr_options_t *o = context;
    const char *what = s->name;
    switch ((option_id_t)s->id) {
    case OPT_HELP: o->help = true; return 1;
    case OPT_OP:
        /* The last --op decides, as for any repeated option (bench_find_op). */
        return cli_parse_bench_op(value, &o->op, err);
    case OPT_BACKEND: return cli_parse_backend(value, &o->backend, err);
    case OPT_KERNEL:
        if (*value == '\0')
            return cli_error_set(err, "--kernel: empty kernel list");
        o->kernels = value;
        return 0;
    case OPT_ROWS: return cli_parse_int64(what, value, 1, INT32_MAX, &o->rows, err);
    case OPT_COLS: return cli_parse_int64(what, value, 1, INT32_MAX, &o->cols, err);
    case OPT_NNZ_PER_ROW: return cli_parse_int64(what, value, 0, INT32_MAX, &o->nnz_per_row, err);
    case OPT_HOMOGENEOUS: o->homogeneous = true; return 0;
    case OPT_WEIGHT:
        o->homogeneous = true;
        return cli_parse_float(what, value, &o->weight, err);
    case OPT_W: return parse_path(what, value, &o->w_path, err);
    case OPT_N: return cli_parse_int64(what, value, 1, INT32_MAX, &o->n, err);
    case OPT_B_DENSITY: return cli_parse_double(what, value, 0.0, 1.0, &o->b_density, err);
    case OPT_B: return parse_path(what, value, &o->b_path, err);
    case OPT_TRANSPOSE: return cli_parse_operation(what, value, &o->transpose, err);
    case OPT_ALPHA: return cli_parse_float(what, value, &o->alpha, err);
    case OPT_BETA: return cli_parse_float(what, value, &o->beta, err);
    case OPT_RUNS: return cli_parse_int64(what, value, 1, MAX_RUNS, &o->runs, err);
    case OPT_WARMUP: return cli_parse_int64(what, value, 0, MAX_RUNS, &o->warmup, err);
    case OPT_SEED: return cli_parse_uint64(what, value, &o->seed, err);
    case OPT_NO_CHECK: o->check = false; return 0;
    case OPT_SWEEP: return parse_sweep(value, &o->sweep_targets, err);
    case OPT_JSON: return parse_path(what, value, &o->json_path, err);
    case OPT_COMMIT: o->commit = value; return 0;
    }
    return cli_error_set(err, "internal error: unhandled option %s", what);
}

/* Flags that would change an input read from a file, or chosen by the sweep. */
static int check_conflicts(const bench_csr_options_t *o, cli_error_t *err)
{
    const char *w_flag = o->rows > 0          ? "--rows"
                         : o->cols > 0        ? "--cols"
                         : o->nnz_per_row >= 0 ? "--nnz-per-row"
                                              : NULL;
    if (o->w_path != NULL && w_flag != NULL)
        return cli_error_set(err, "%s would change W, which --w reads from %s", w_flag, o->w_path);
    if (o->b_path != NULL && o->b_density >= 0.0)
        return cli_error_set(err, "--b-density would change B, which --b reads from %s", o->b_path);
    if (o->op == BENCH_OP_CSRMV && o->n > 1 && !o->sweep_targets)
        return cli_error_set(err, "--op csrmv multiplies by a vector: n is 1, not --n %lld",
                             (long long)o->n);
    if (!o->sweep_targets)
        return 0;
    const char *clash = o->w_path != NULL        ? "--w"
                        : o->b_path != NULL      ? "--b"
                        : o->b_density >= 0.0    ? "--b-density"
                        : o->homogeneous         ? "--homogeneous/--weight"
                        : o->transpose != ESMM_OP_N ? "--transpose"
                                                 : NULL;
    if (clash != NULL)
        return cli_error_set(err, "--sweep csr-targets chooses the inputs of its cases: %s cannot "
                                  "be used with it (--rows, --cols, --nnz-per-row and --n set the "
                                  "base workload)", clash);
    return 0;
}

/* W's generated size: at most cols entries per row, and nnz within int32. */
static int check_w_size(const bench_csr_options_t *o, cli_error_t *err)
{
    if (o->w_path != NULL)
        return 0;
    int64_t rows = o->rows > 0 ? o->rows : CSR_DEFAULT_ROWS;
    int64_t cols = o->cols > 0 ? o->cols : CSR_DEFAULT_COLS;
    int64_t per_row = o->nnz_per_row >= 0 ? o->nnz_per_row : CSR_DEFAULT_NNZ_PER_ROW;
    /* The sweep's widest case has five times the base's nonzeros per row. */
    int64_t widest = o->sweep_targets ? 5 * per_row : per_row;
    if (widest > cols)
        return cli_error_set(err, "%s%lld nonzeros per row do not fit in %lld columns%s%s",
                             o->sweep_targets ? "the sweep's 5 x " : "", (long long)per_row,
                             (long long)cols, o->cols > 0 ? "" : " (--cols's default)",
                             o->sweep_targets ? " (its 5x nonzeros per row case)" : "");
    if (widest > INT32_MAX / rows)
        return cli_error_set(err, "%lld rows x %lld nonzeros per row is more than the 2^31 - 1 "
                                  "entries CSR with int32 indices holds",
                             (long long)rows, (long long)widest);
    return 0;
}

int bench_csr_parse_args(int argc, char **argv, bench_csr_options_t *o, cli_error_t *err)
{
    memset(o, 0, sizeof *o);
    o->op = BENCH_OP_CSRMM;
    o->backend = ESMM_BACKEND_AUTO;
    o->kernels = "all";
    o->nnz_per_row = -1;
    o->weight = CSR_DEFAULT_WEIGHT;
    o->b_density = -1.0;
    o->transpose = ESMM_OP_N;
    o->alpha = 1.0;
    o->runs = BENCH_DEFAULT_RUNS;
    o->warmup = -1;
    o->seed = 1;
    o->check = true;
    int status = cli_parse_command_line(argc, argv, csr_option_specs, CSR_OPTION_COUNT,
                                        apply_option, NULL, o, err);
    if (status < 0)
        return -1;
    if (o->op == BENCH_OP_SGEMM)
        return cli_error_set(err, "--op sgemm has options of its own (esmm bench --help)");
    if (o->help)
        return 0;
    kernel_list_t named;
    if (read_kernel_list(o->kernels, &named, err) != 0)
        return -1;
    if (check_conflicts(o, err) != 0)
        return -1;
    return check_w_size(o, err);
}
