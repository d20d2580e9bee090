#include "cli_args.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RUNS 1000000

static bool starts_with_space(const char *text)
{
    return *text == ' ' || *text == '\t' || *text == '\n' || *text == '\r' || *text == '\v' ||
           *text == '\f';
}

int cli_parse_int64(const char *what, const char *text, int64_t min, int64_t max, int64_t *out,
                    cli_error_t *err)
{
    if (*text == '\0' || starts_with_space(text))
        return cli_error_set(err, "%s: expected an integer, got '%.64s'", what, text);
    char *end;
    errno = 0;
    long long value = strtoll(text, &end, 10);
    if (end == text || *end != '\0')
        return cli_error_set(err, "%s: '%.64s' is not an integer", what, text);
    if (errno == ERANGE || value < min || value > max) {
        if (max == INT64_MAX)
            return cli_error_set(err, "%s: %.64s is out of range (it must be at least %" PRId64
                                      " and fit in 64 bits)", what, text, min);
        return cli_error_set(err, "%s: %.64s is out of range (%" PRId64 " to %" PRId64 ")", what,
                             text, min, max);
    }
    *out = (int64_t)value;
    return 0;
}

int cli_parse_uint64(const char *what, const char *text, uint64_t *out, cli_error_t *err)
{
    /* strtoull accepts "-1" and wraps it; a seed is never negative. */
    if (*text == '\0' || starts_with_space(text) || *text == '-')
        return cli_error_set(err, "%s: expected a non-negative integer, got '%.64s'", what, text);
    char *end;
    errno = 0;
    unsigned long long value = strtoull(text, &end, 10);
    if (end == text || *end != '\0')
        return cli_error_set(err, "%s: '%.64s' is not an integer", what, text);
    if (errno == ERANGE)
        return cli_error_set(err, "%s: %.64s does not fit in 64 bits", what, text);
    *out = (uint64_t)value;
    return 0;
}

int cli_parse_double(const char *what, const char *text, double min, double max, double *out,
                     cli_error_t *err)
{
    if (*text == '\0' || starts_with_space(text))
        return cli_error_set(err, "%s: expected a number, got '%.64s'", what, text);
    char *end;
    errno = 0;
    double value = strtod(text, &end);
    if (end == text || *end != '\0')
        return cli_error_set(err, "%s: '%.64s' is not a number", what, text);
    if (!isfinite(value) || (errno == ERANGE && fabs(value) > 1.0))
        return cli_error_set(err, "%s: %.64s is not a finite number", what, text);
    if (value < min || value > max)
        return cli_error_set(err, "%s: %.64s is out of range (%.9g to %.9g)", what, text, min, max);
    *out = value;
    return 0;
}

int cli_parse_float(const char *what, const char *text, double *out, cli_error_t *err)
{
    /* Judged as the float32 the value becomes: up to half a unit past FLT_MAX
     * (numpy prints FLT_MAX as 3.4028235e38, above it) it rounds to FLT_MAX. */
    const double limit = nextafter((double)FLT_MAX + 0x1p103, 0.0);
    double value;
    if (cli_parse_double(what, text, -limit, limit, &value, err) != 0)
        return -1;
    if (fabs(value) > FLT_MAX)
        value = copysign((double)FLT_MAX, value);
    if (value == 0.0) {
        /* A zero read from a nonzero number: strtod says so with ERANGE. */
        errno = 0;
        (void)strtod(text, NULL);
        if (errno == ERANGE)
            return cli_error_set(err, "%s: %.64s underflows to zero", what, text);
    }
    if (value != 0.0 && (float)value == 0.0f)
        return cli_error_set(err, "%s: %.64s rounds to zero in float32", what, text);
    /* Products of subnormals keep fewer than 24 bits, past the checks' bound.
     * (Just below FLT_MIN, as numpy prints it, rounds up to it.) */
    if (value != 0.0 && fabsf((float)value) < FLT_MIN)
        return cli_error_set(err, "%s: %.64s is subnormal in float32 (below %g)", what, text,
                             (double)FLT_MIN);
    *out = value;
    return 0;
}

int cli_parse_pattern(const char *what, const char *text, char out[9], cli_error_t *err)
{
    size_t length = strlen(text);
    bool binary = length == 8;
    for (size_t i = 0; binary && i < 8; i++)
        binary = text[i] == '0' || text[i] == '1';
    if (!binary)
        return cli_error_set(err, "%s: '%.64s' is not a pattern: it must be 8 characters, each 0 or 1 "
                                  "(e.g. 11110000)", what, text);
    memcpy(out, text, 9);
    return 0;
}

typedef enum {
    OPT_HELP,
    OPT_BACKEND,
    OPT_KERNEL,
    OPT_SIZE,
    OPT_M,
    OPT_N,
    OPT_K,
    OPT_TRANSA,
    OPT_TRANSB,
    OPT_RUNS,
    OPT_WARMUP,
    OPT_SEED,
    OPT_ALPHA,
    OPT_BETA,
    OPT_PATTERN,
    OPT_PATTERN_A,
    OPT_PATTERN_B,
    OPT_DENSITY_A,
    OPT_DENSITY_B,
    OPT_RANDOM,
    OPT_LOAD_A,
    OPT_LOAD_B,
    OPT_NO_CHECK,
    OPT_REFERENCE,
    OPT_JSON,
    OPT_COMMIT,
    OPT_SKIP_STATS,
    OPT_CACHED_B,
    OPT_KEEP_COPY,
    OPT_SWEEP,
    OPT_OP
} option_id_t;

static const cli_option_t bench_option_specs[] = {
    {"--op", OPT_OP, "sgemm|csrmm|csrmv",
     "the product [sgemm]; csrmm and csrmv (CSR x dense against cuSPARSE)\n"
     "                     have options of their own: esmm bench --op csrmm --help"},
    {"--kernel", OPT_KERNEL, "LIST",
     "comma-separated kernels [all]; 'all' = every kernel of the backend,\n"
     "                     then esmm, then cublas, then (CUDA) extract-a and extract-b\n"
     "                     (CUDA: naive, coalesced, smem, blocktile1d, blocktile2d, vectorized,\n"
     "                     warptile, pipelined, sparse-a, sparse-b, sparse-joint,\n"
     "                     sparse-union; CPU: cpu,\n"
     "                     cpu-skip-a, cpu-skip-b, cpu-skip-joint; esmm = esmm_sgemm's default\n"
     "                     path; cublas = cublasSgemm FP32, no TF32; extract-a, extract-b =\n"
     "                     pattern extraction of one operand alone, CUDA only)"},
    {"--size", OPT_SIZE, "S", "m = n = k = S [CUDA 4096, CPU 512]"},
    {"--m", OPT_M, "M", "rows of op(A) and C (overrides --size)"},
    {"--n", OPT_N, "N", "columns of op(B) and C (overrides --size)"},
    {"--k", OPT_K, "K", "columns of op(A), rows of op(B) (overrides --size)"},
    {"--transa", OPT_TRANSA, "N|T", "op(A) = A or A^T [N]"},
    {"--transb", OPT_TRANSB, "N|T", "op(B) = B or B^T [N]"},
    {"--alpha", OPT_ALPHA, "X", "C = alpha op(A) op(B) + beta C [1]"},
    {"--beta", OPT_BETA, "X", "[0]"},
    {"--runs", OPT_RUNS, "R", "timed runs; the median and the minimum are reported [20]"},
    {"--warmup", OPT_WARMUP, "W", "untimed runs before timing [CUDA 5, CPU 1]"},
    {"--seed", OPT_SEED, "S", "seed of the generators [1]"},
    {"--pattern", OPT_PATTERN, "P",
     "8 characters of 0/1 for both operands: column kk of op(A) and row kk\n"
     "                     of op(B) are zero where P[kk % 8] == '0'"},
    {"--pattern-a", OPT_PATTERN_A, "P", "the same, A only"},
    {"--pattern-b", OPT_PATTERN_B, "P", "the same, B only"},
    {"--density-a", OPT_DENSITY_A, "D",
     "per K column, each 32-row strip of op(A) is kept with probability D,\n"
     "                     else all zero there"},
    {"--density-b", OPT_DENSITY_B, "D",
     "per K row, each 32-column strip of op(B) is kept with probability D"},
    {"--random", OPT_RANDOM, "D", "each element of both operands is zero with probability D"},
    {"--load-a", OPT_LOAD_A, "FILE", "A from a 2-D float32 .npy file, stored as op(A) needs it\n"
                                     "                     (m x k for N, k x m for T); sizes come from the files"},
    {"--load-b", OPT_LOAD_B, "FILE", "B from a .npy file (k x n for N, n x k for T)"},
    {"--no-check", OPT_NO_CHECK, NULL, "skip verification"},
    {"--reference", OPT_REFERENCE, "auto|cpu|cublas",
     "check against the float64 CPU reference or cuBLAS\n"
     "                     [auto: CPU when m*n*k <= 2^31 or without a GPU, else cuBLAS]"},
    {"--skip-stats", OPT_SKIP_STATS, NULL,
     "after each library kernel's check, one more run with extraction timing\n"
     "                     on, and print what esmm_get_last_info says: path, kernel, densities,\n"
     "                     share of the dense work run and skipped, extraction time (sweeps\n"
     "                     always do, for their closing table)"},
    {"--cached-b", OPT_CACHED_B, NULL,
     "time esmm with B's pattern extracted once before timing\n"
     "                     (esmm_sgemm_patterns); without it esmm extracts both operands per call"},
    {"--keep-copy", OPT_KEEP_COPY, NULL,
     "with --cached-b: B's pattern also keeps B's copy laid out along n\n"
     "                     (esmm_pattern_keep_copy; a copy only where --transb T, the only\n"
     "                     rows labelled so)"},
    {"--sweep", OPT_SWEEP, "targets|density",
     "run a set of cases in one process (generator flags, --load-*, --m/--n/--k\n"
     "                     not allowed; --kernel adds kernels to esmm and cublas):\n"
     "                     targets = every row of the README's zero-skipping target table at --size [CUDA 4096;\n"
     "                     its 1024/2048/8192 rows are --size/4, /2, *2), esmm end-to-end and with\n"
     "                     B cached; density = both operands at d = 1, 0.875, ..., 0.125, 0.0625\n"
     "                     at --size (with --cached-b also the cached-B figure)"},
    {"--json", OPT_JSON, "FILE", "also write the results as JSON (DESIGN.md format)"},
    {"--commit", OPT_COMMIT, "STR", "commit recorded in the JSON [$ESMM_COMMIT, else unknown]"},
    {"--backend", OPT_BACKEND, "auto|cpu|cuda", "[auto: CUDA when a GPU is present]"},
    {"--help", OPT_HELP, NULL, "this text"},
};
#define BENCH_OPTION_COUNT ((int)(sizeof bench_option_specs / sizeof bench_option_specs[0]))

void cli_print_options(FILE *f, const cli_option_t *options, int count)
{
    for (int i = 0; i < count; i++) {
        const cli_option_t *s = &options[i];
        char left[40];
        snprintf(left, sizeof left, "%s%s%s", s->name, s->value_name ? " " : "",
                 s->value_name ? s->value_name : "");
        if (strlen(left) > 18)
            fprintf(f, "  %s\n  %-18s %s\n", left, "", s->help);
        else
            fprintf(f, "  %-18s %s\n", left, s->help);
    }
}

void bench_print_usage(FILE *f)
{
    fputs("usage: esmm bench [options]\n"
          "\n"
          "Times GEMM kernels on one set of inputs, C = alpha op(A) op(B) + beta C (row-major,\n"
          "FP32), checks every result and prints median/min ms, on the GPU the host time one\n"
          "call costs the calling thread (host us, the mean of the timed calls), TFLOP/s,\n"
          "effective TFLOP/s (counting only products whose operands are both nonzero), the\n"
          "speed relative to cuBLAS (to the dense 'cpu' kernel on the CPU backend) and the\n"
          "largest relative error.\n"
          "That baseline is always timed, first. Without a GPU it benchmarks the CPU backend.\n"
          "Rows extract-a/extract-b time the pattern extraction of one operand alone (ms and GB/s\n"
          "of the operand read, between L2 flushes) and are checked against the host's count.\n"
          "\n"
          "options (--opt VALUE or --opt=VALUE):\n",
          f);
    cli_print_options(f, bench_option_specs, BENCH_OPTION_COUNT);
    fputs("\n"
          "Only one kind of generator (pattern, density or random) may be used at a time; the\n"
          "default is dense uniform values in [-1, 1] that are never zero. Fortran-order .npy\n"
          "files are transposed on load; only dtype '<f4' and 2-D arrays are accepted.\n"
          "\n"
          "Verification (see --reference): error = |x - ref| / (|ref| + |alpha| |op(A) row|\n"
          "|op(B) col| + |beta| |C|), tolerance 8 * 2^-24 * (sqrt(k) + 1), doubled against cuBLAS.\n"
          "C starts as NaN (beta = 0) so unwritten elements fail.\n"
          "\n"
          ESMM_EXIT_STATUS_HELP,
          f);
}

static const cli_option_t *find_option(const cli_option_t *options, int count, const char *arg,
                                       size_t name_length)
{
    for (int i = 0; i < count; i++) {
        const char *name = options[i].name;
        if (strlen(name) == name_length && strncmp(name, arg, name_length) == 0)
            return &options[i];
    }
    return NULL;
}

int cli_parse_command_line(int argc, char **argv, const cli_option_t *options, int count,
                           cli_apply_fn apply, cli_positional_fn positional, void *context,
                           cli_error_t *err)
{
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        const char *name = strcmp(arg, "-h") == 0 ? "--help" : arg;
        if (strncmp(name, "--", 2) != 0) {
            if (positional == NULL || arg[0] == '-')
                return cli_error_set(err, "unexpected argument '%.64s' (options start with --)", arg);
            if (positional(arg, context, err) != 0)
                return -1;
            continue;
        }
        const char *equals = strchr(name, '=');
        size_t name_length = equals ? (size_t)(equals - name) : strlen(name);
        const cli_option_t *s = find_option(options, count, name, name_length);
        if (s == NULL)
            return cli_error_set(err, "unknown option '%.*s'", (int)(name_length > 64 ? 64 : name_length),
                                 name);
        const char *value = NULL;
        if (s->value_name == NULL) {
            if (equals != NULL)
                return cli_error_set(err, "%s takes no value", s->name);
        } else if (equals != NULL) {
            value = equals + 1;
        } else if (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0) {
            value = argv[++i];
        } else {
            return cli_error_set(err, "%s needs a value (%s)", s->name, s->value_name);
        }
        int status = apply(s, value, context, err);
        if (status != 0)
            return status;
    }
    return 0;
}

/* Generator flags as given, resolved into gen_a/gen_b after all are seen. */
typedef struct {
    char pattern[9], pattern_a[9], pattern_b[9]; /* "" when not given */
    double density_a, density_b, random;         /* < 0 when not given */
} generator_flags_t;

int cli_parse_operation(const char *what, const char *text, esmm_operation_t *out,
                        cli_error_t *err)
{
    if (strcmp(text, "N") == 0 || strcmp(text, "n") == 0)
        *out = ESMM_OP_N;
    else if (strcmp(text, "T") == 0 || strcmp(text, "t") == 0)
        *out = ESMM_OP_T;
    else
        return cli_error_set(err, "%s: expected N or T, got '%.64s'", what, text);
    return 0;
}

int cli_parse_backend(const char *text, esmm_backend_t *out, cli_error_t *err)
{
    if (strcmp(text, "auto") == 0)
        *out = ESMM_BACKEND_AUTO;
    else if (strcmp(text, "cpu") == 0)
        *out = ESMM_BACKEND_CPU;
    else if (strcmp(text, "cuda") == 0)
        *out = ESMM_BACKEND_CUDA;
    else
        return cli_error_set(err, "--backend: expected auto, cpu or cuda, got '%.64s'", text);
    return 0;
}

static int parse_reference(const char *text, bench_reference_t *out, cli_error_t *err)
{
    if (strcmp(text, "auto") == 0)
        *out = BENCH_REFERENCE_AUTO;
    else if (strcmp(text, "cpu") == 0)
        *out = BENCH_REFERENCE_CPU;
    else if (strcmp(text, "cublas") == 0)
        *out = BENCH_REFERENCE_CUBLAS;
    else
        return cli_error_set(err, "--reference: expected auto, cpu or cublas, got '%.64s'", text);
    return 0;
}

int cli_parse_sweep(const char *text, sweep_kind_t *out, cli_error_t *err)
{
    if (strcmp(text, "targets") == 0)
        *out = SWEEP_TARGETS;
    else if (strcmp(text, "density") == 0)
        *out = SWEEP_DENSITY;
    else
        return cli_error_set(err, "--sweep: expected targets or density, got '%.64s'", text);
    return 0;
}

int cli_parse_bench_op(const char *text, bench_op_t *out, cli_error_t *err)
{
    if (strcmp(text, "sgemm") == 0)
        *out = BENCH_OP_SGEMM;
    else if (strcmp(text, "csrmm") == 0)
        *out = BENCH_OP_CSRMM;
    else if (strcmp(text, "csrmv") == 0)
        *out = BENCH_OP_CSRMV;
    else
        return cli_error_set(err, "--op: expected sgemm, csrmm or csrmv, got '%.64s'", text);
    return 0;
}

int bench_find_op(int argc, char **argv, bench_op_t *out, cli_error_t *err)
{
    *out = BENCH_OP_SGEMM;
    for (int i = 0; i < argc; i++) {
        const char *value = NULL;
        if (strncmp(argv[i], "--op=", 5) == 0)
            value = argv[i] + 5;
        else if (strcmp(argv[i], "--op") == 0) {
            if (i + 1 >= argc || strncmp(argv[i + 1], "--", 2) == 0)
                return cli_error_set(err, "--op needs a value (sgemm|csrmm|csrmv)");
            value = argv[++i];
        }
        if (value != NULL && cli_parse_bench_op(value, out, err) != 0)
            return -1;
    }
    return 0;
}

static int parse_path(const char *what, const char *text, const char **out, cli_error_t *err)
{
    if (*text == '\0')
        return cli_error_set(err, "%s: empty file name", what);
    *out = text;
    return 0;
}

/* What bench_parse_args collects. */
typedef struct {
    bench_options_t *options;
    generator_flags_t generators;
    const char *last_op; /* the last --op's value, if any */
} bench_parse_state_t;

static int apply_option(const cli_option_t *s, const char *value, void *context, cli_error_t *err)
{
    bench_parse_state_t *state = context;
    bench_options_t *o = state->options;
    generator_flags_t *g = &state->generators;
    const char *what = s->name;
    switch ((option_id_t)s->id) {
    case OPT_HELP: o->help = true; return 1;
    case OPT_SKIP_STATS: o->skip_stats = true; return 0;
    case OPT_CACHED_B: o->cached_b = true; return 0;
    case OPT_KEEP_COPY: o->keep_copy = true; return 0;
    case OPT_SWEEP: return cli_parse_sweep(value, &o->sweep, err);
    case OPT_NO_CHECK: o->check = false; return 0;
    case OPT_BACKEND: return cli_parse_backend(value, &o->backend, err);
    case OPT_REFERENCE: return parse_reference(value, &o->reference, err);
    case OPT_KERNEL:
        if (*value == '\0')
            return cli_error_set(err, "--kernel: empty kernel list");
        o->kernels = value;
        o->kernels_given = true;
        return 0;
    case OPT_SIZE: return cli_parse_int64(what, value, 1, INT64_MAX, &o->size, err);
    case OPT_M: return cli_parse_int64(what, value, 1, INT64_MAX, &o->m, err);
    case OPT_N: return cli_parse_int64(what, value, 1, INT64_MAX, &o->n, err);
    case OPT_K: return cli_parse_int64(what, value, 1, INT64_MAX, &o->k, err);
    case OPT_TRANSA: return cli_parse_operation(what, value, &o->transa, err);
    case OPT_TRANSB: return cli_parse_operation(what, value, &o->transb, err);
    case OPT_RUNS: return cli_parse_int64(what, value, 1, MAX_RUNS, &o->runs, err);
    case OPT_WARMUP: return cli_parse_int64(what, value, 0, MAX_RUNS, &o->warmup, err);
    case OPT_SEED: return cli_parse_uint64(what, value, &o->seed, err);
    case OPT_ALPHA: return cli_parse_float(what, value, &o->alpha, err);
    case OPT_BETA: return cli_parse_float(what, value, &o->beta, err);
    case OPT_PATTERN: return cli_parse_pattern(what, value, g->pattern, err);
    case OPT_PATTERN_A: return cli_parse_pattern(what, value, g->pattern_a, err);
    case OPT_PATTERN_B: return cli_parse_pattern(what, value, g->pattern_b, err);
    case OPT_DENSITY_A: return cli_parse_double(what, value, 0.0, 1.0, &g->density_a, err);
    case OPT_DENSITY_B: return cli_parse_double(what, value, 0.0, 1.0, &g->density_b, err);
    case OPT_RANDOM: return cli_parse_double(what, value, 0.0, 1.0, &g->random, err);
    case OPT_LOAD_A: return parse_path(what, value, &o->load_a, err);
    case OPT_LOAD_B: return parse_path(what, value, &o->load_b, err);
    case OPT_JSON: return parse_path(what, value, &o->json_path, err);
    case OPT_COMMIT: o->commit = value; return 0;
    case OPT_OP: {
        /* The last --op decides, as for any repeated option (bench_find_op). */
        bench_op_t op;
        state->last_op = value;
        return cli_parse_bench_op(value, &op, err);
    }
    }
    return cli_error_set(err, "internal error: unhandled option %s", what);
}

/* The generator of one operand from the flags; `own_pattern` and
 * `own_density` are the operand's --pattern-x / --density-x. */
static generator_t operand_generator(const generator_flags_t *g, const char *own_pattern,
                                     double own_density)
{
    generator_t gen = {GENERATOR_DENSE, "", 1.0, 0.0};
    const char *pattern = own_pattern[0] ? own_pattern : g->pattern;
    if (pattern[0]) {
        gen.kind = GENERATOR_PATTERN;
        memcpy(gen.pattern, pattern, 9);
    } else if (own_density >= 0.0) {
        gen.kind = GENERATOR_DENSITY;
        gen.keep = own_density;
    } else if (g->random >= 0.0) {
        gen.kind = GENERATOR_RANDOM;
        gen.zero_probability = g->random;
    }
    return gen;
}

/* The first flag given that generates this operand, or NULL. */
static const char *flag_changing_operand(const generator_flags_t *g, const char *own_pattern,
                                         double own_density, const char *pattern_flag,
                                         const char *density_flag)
{
    if (g->pattern[0])
        return "--pattern";
    if (own_pattern[0])
        return pattern_flag;
    if (own_density >= 0.0)
        return density_flag;
    if (g->random >= 0.0)
        return "--random";
    return NULL;
}

static int resolve_generators(const generator_flags_t *g, bench_options_t *o, cli_error_t *err)
{
    bool any_pattern = g->pattern[0] || g->pattern_a[0] || g->pattern_b[0];
    bool any_density = g->density_a >= 0.0 || g->density_b >= 0.0;
    bool any_random = g->random >= 0.0;
    if (any_pattern + any_density + any_random > 1)
        return cli_error_set(err, "--pattern*, --density-* and --random are different generators; "
                                  "use one kind at a time");
    /* Flags that would change a loaded operand are refused, not ignored. */
    const char *touches_a = flag_changing_operand(g, g->pattern_a, g->density_a, "--pattern-a",
                                                  "--density-a");
    const char *touches_b = flag_changing_operand(g, g->pattern_b, g->density_b, "--pattern-b",
                                                  "--density-b");
    if (o->load_a != NULL && touches_a != NULL)
        return cli_error_set(err, "%s would change A, which --load-a reads from a file", touches_a);
    if (o->load_b != NULL && touches_b != NULL)
        return cli_error_set(err, "%s would change B, which --load-b reads from a file", touches_b);
    o->gen_a = operand_generator(g, g->pattern_a, g->density_a);
    o->gen_b = operand_generator(g, g->pattern_b, g->density_b);
    return 0;
}

/* A sweep chooses its own inputs and sizes: flags that would too are refused. */
static int check_sweep_flags(const bench_options_t *o, const generator_flags_t *g, cli_error_t *err)
{
    const char *clash = NULL;
    if (g->pattern[0] || g->pattern_a[0] || g->pattern_b[0])
        clash = "--pattern*";
    else if (g->density_a >= 0.0 || g->density_b >= 0.0)
        clash = "--density-*";
    else if (g->random >= 0.0)
        clash = "--random";
    else if (o->load_a != NULL || o->load_b != NULL)
        clash = "--load-*";
    else if (o->m > 0 || o->n > 0 || o->k > 0)
        clash = "--m/--n/--k";
    if (clash != NULL)
        return cli_error_set(err, "--sweep chooses the inputs and sizes of its cases: %s cannot be "
                                  "used with it (--size sets the base size)", clash);
    return 0;
}

int bench_parse_args(int argc, char **argv, bench_options_t *o, cli_error_t *err)
{
    memset(o, 0, sizeof *o);
    o->backend = ESMM_BACKEND_AUTO;
    o->kernels = "all";
    o->transa = o->transb = ESMM_OP_N;
    o->runs = BENCH_DEFAULT_RUNS;
    o->warmup = -1;
    o->seed = 1;
    o->alpha = 1.0;
    o->beta = 0.0;
    o->check = true;
    bench_parse_state_t state;
    memset(&state.generators, 0, sizeof state.generators);
    state.options = o;
    state.last_op = NULL;
    state.generators.density_a = state.generators.density_b = state.generators.random = -1.0;
    int status = cli_parse_command_line(argc, argv, bench_option_specs, BENCH_OPTION_COUNT,
                                        apply_option, NULL, &state, err);
    if (status < 0)
        return -1;
    if (state.last_op != NULL && strcmp(state.last_op, "sgemm") != 0)
        return cli_error_set(err, "--op %s takes the CSR options (esmm bench --op %s --help)",
                             state.last_op, state.last_op);
    if (o->help)
        return 0;
    if (o->sweep != SWEEP_NONE && check_sweep_flags(o, &state.generators, err) != 0)
        return -1;
    return resolve_generators(&state.generators, o, err);
}

/* Adds name to out unless it is there already. */
static void add_kernel(const char **out, int *count, const char *name)
{
    for (int i = 0; i < *count; i++)
        if (strcmp(out[i], name) == 0)
            return;
    out[(*count)++] = name;
}

static int unknown_kernel(const char *name, size_t length, const char *const *available,
                          int available_count, cli_error_t *err)
{
    char names[320] = "";
    size_t used = 0;
    for (int i = 0; i < available_count && used < sizeof names; i++)
        used += (size_t)snprintf(names + used, sizeof names - used, "%s, ", available[i]);
    return cli_error_set(err, "--kernel: unknown kernel '%.*s' (this backend has: %sesmm, cublas, "
                              BENCH_EXTRACT_A ", " BENCH_EXTRACT_B ", all)",
                         (int)(length > 64 ? 64 : length), name, names);
}

int bench_resolve_kernels(const char *list, const char *const *available, int available_count,
                          bool with_extraction, const char **out, cli_error_t *err)
{
    static const char *const extra[BENCH_EXTRA_KERNELS] = {"esmm", "cublas", BENCH_EXTRACT_A,
                                                           BENCH_EXTRACT_B};
    int count = 0;
    const char *p = list;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t length = comma ? (size_t)(comma - p) : strlen(p);
        if (length == 0)
            return cli_error_set(err, "--kernel: empty name in the list '%.64s'", list);
        if (length == 3 && strncmp(p, "all", 3) == 0) {
            for (int i = 0; i < available_count; i++)
                add_kernel(out, &count, available[i]);
            for (int i = 0; i < (with_extraction ? BENCH_EXTRA_KERNELS : 2); i++)
                add_kernel(out, &count, extra[i]);
        } else {
            const char *found = NULL;
            for (int i = 0; i < available_count && found == NULL; i++)
                if (strlen(available[i]) == length && strncmp(available[i], p, length) == 0)
                    found = available[i];
            for (int i = 0; i < BENCH_EXTRA_KERNELS && found == NULL; i++)
                if (strlen(extra[i]) == length && strncmp(extra[i], p, length) == 0)
                    found = extra[i];
            if (found == NULL)
                return unknown_kernel(p, length, available, available_count, err);
            add_kernel(out, &count, found);
        }
        if (comma == NULL)
            return count;
        p = comma + 1;
    }
}

/* One dimension and where its value came from, for messages. */
typedef struct {
    const char *name;
    int64_t value; /* 0: not settled */
    char source[200];
} dimension_t;

static int settle(dimension_t *d, int64_t value, const char *source, cli_error_t *err)
{
    if (d->value == 0) {
        d->value = value;
        snprintf(d->source, sizeof d->source, "%s", source);
        return 0;
    }
    if (d->value != value)
        return cli_error_set(err, "sizes disagree: %s = %" PRId64 " from %s, but %s = %" PRId64
                                  " from %s", d->name, d->value, d->source, d->name, value, source);
    return 0;
}

/* Settles the two dimensions a loaded operand fixes: `first` comes from its
 * rows when the operand is not transposed, `second` from its columns. */
static int settle_from_file(stored_shape_t s, const char *operand, bool transposed,
                            dimension_t *first, dimension_t *second, cli_error_t *err)
{
    if (s.path == NULL)
        return 0;
    char source[200];
    snprintf(source, sizeof source, "%s (%s stored %" PRId64 " x %" PRId64 ", op %s)", s.path,
             operand, s.rows, s.cols, transposed ? "T" : "N");
    if (settle(first, transposed ? s.cols : s.rows, source, err) != 0)
        return -1;
    return settle(second, transposed ? s.rows : s.cols, source, err);
}

int bench_resolve_shape(const bench_options_t *o, stored_shape_t a, stored_shape_t b,
                        int64_t default_size, int64_t *m, int64_t *n, int64_t *k, cli_error_t *err)
{
    dimension_t dm = {"m", 0, ""}, dn = {"n", 0, ""}, dk = {"k", 0, ""};
    dimension_t *dims[3] = {&dm, &dn, &dk};
    const int64_t given[3] = {o->m, o->n, o->k};
    const char *flags[3] = {"--m", "--n", "--k"};
    /* Nothing is settled yet, so these cannot disagree. */
    for (int i = 0; i < 3; i++) {
        if (given[i] > 0)
            settle(dims[i], given[i], flags[i], err);
        else if (o->size > 0)
            settle(dims[i], o->size, "--size", err);
    }
    if (settle_from_file(a, "A", o->transa == ESMM_OP_T, &dm, &dk, err) != 0 ||
        settle_from_file(b, "B", o->transb == ESMM_OP_T, &dk, &dn, err) != 0)
        return -1;
    for (int i = 0; i < 3; i++)
        if (dims[i]->value == 0)
            dims[i]->value = default_size;
    *m = dm.value;
    *n = dn.value;
    *k = dk.value;
    return 0;
}
