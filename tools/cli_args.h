/* Command-line parsing for `esmm bench` and `esmm analyze`: every value is
 * checked in full (whole string, range, overflow) and every problem becomes a
 * message. */
#ifndef ESMM_TOOLS_CLI_ARGS_H
#define ESMM_TOOLS_CLI_ARGS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cli_error.h"
#include "esmm.h"
#include "generate.h"

/* Numbers: base 10, the whole text, no leading space. `what` names the value
 * in the message (e.g. "--size"). Return 0, or -1 with err set. */
int cli_parse_int64(const char *what, const char *text, int64_t min, int64_t max, int64_t *out,
                    cli_error_t *err);
int cli_parse_uint64(const char *what, const char *text, uint64_t *out, cli_error_t *err);
int cli_parse_double(const char *what, const char *text, double min, double max, double *out,
                     cli_error_t *err);

/* A float32 value (alpha, beta, a weight): zero (written as zero, not a
 * number that underflows), or a finite number of float32's normal range
 * (FLT_MIN to FLT_MAX in magnitude). */
int cli_parse_float(const char *what, const char *text, double *out, cli_error_t *err);

/* An 8-character string of '0' and '1'. */
int cli_parse_pattern(const char *what, const char *text, char out[9], cli_error_t *err);

/* One option of a command. */
typedef struct {
    const char *name; /* "--size" */
    int id;           /* the command's own identifier */
    const char *value_name; /* NULL for a flag without a value */
    const char *help;
} cli_option_t;

/* Applies one option; value is NULL for a flag. Returns 0, 1 to stop parsing
 * (--help), or -1 with err set. */
typedef int (*cli_apply_fn)(const cli_option_t *option, const char *value, void *context,
                            cli_error_t *err);
/* Takes one argument that is not an option; returns 0 or -1 with err set. */
typedef int (*cli_positional_fn)(const char *arg, void *context, cli_error_t *err);

/* Walks argv: "--opt VALUE", "--opt=VALUE" and flags go to apply, "-h" is
 * --help, other arguments starting with '-' are refused, and the rest go to
 * positional (refused when it is NULL). Returns 0, 1 when apply stopped the
 * parse, or -1 with err set. */
int cli_parse_command_line(int argc, char **argv, const cli_option_t *options, int count,
                           cli_apply_fn apply, cli_positional_fn positional, void *context,
                           cli_error_t *err);

/* The option list of a usage text: "  --name VALUE   help", one per option. */
void cli_print_options(FILE *f, const cli_option_t *options, int count);

int cli_parse_operation(const char *what, const char *text, esmm_operation_t *out,
                        cli_error_t *err);
int cli_parse_backend(const char *text, esmm_backend_t *out, cli_error_t *err);

/* The product `esmm bench` times (--op). Each has options of its own, so the
 * operation is looked up before the rest of the command line is parsed. */
typedef enum {
    BENCH_OP_SGEMM = 0,
    BENCH_OP_CSRMM = 1, /* CSR W times dense B (bench_csr.h) */
    BENCH_OP_CSRMV = 2  /* CSR W times a dense vector */
} bench_op_t;

/* "sgemm", "csrmm" or "csrmv"; -1 with err set for anything else. */
int cli_parse_bench_op(const char *text, bench_op_t *out, cli_error_t *err);

/* The value of the last --op among the bench arguments (sgemm when there is
 * none). Returns 0, or -1 with err set. */
int bench_find_op(int argc, char **argv, bench_op_t *out, cli_error_t *err);

/* What results are checked against. */
typedef enum {
    BENCH_REFERENCE_AUTO = 0, /* float64 CPU up to a size, cuBLAS beyond it */
    BENCH_REFERENCE_CPU = 1,  /* always the float64 CPU reference */
    BENCH_REFERENCE_CUBLAS = 2
} bench_reference_t;

/* Sets of cases `esmm bench --sweep` runs in one process (see sweep.h). */
typedef enum {
    SWEEP_NONE = 0,
    SWEEP_TARGETS = 1, /* every row of the zero-skipping target table (README) */
    SWEEP_DENSITY = 2  /* both operands at densities 1 down to 1/16 */
} sweep_kind_t;

typedef struct {
    bool help;
    esmm_backend_t backend;
    const char *kernels; /* comma list as given ("all" by default) */
    bool kernels_given;  /* --kernel was used */
    int64_t size;        /* 0 when not given; so are m, n, k */
    int64_t m, n, k;
    esmm_operation_t transa, transb;
    int64_t runs;
    int64_t warmup; /* -1: the backend's default */
    uint64_t seed;
    double alpha, beta;
    generator_t gen_a, gen_b; /* for the operands that are not loaded */
    const char *load_a, *load_b;
    bool check;
    bench_reference_t reference;
    const char *json_path;
    const char *commit; /* NULL: ESMM_COMMIT or "unknown" */
    bool skip_stats;    /* print what esmm_get_last_info says of each library kernel (sweeps always do) */
    bool cached_b;      /* time the esmm kernel with B's pattern extracted beforehand */
    bool keep_copy;     /* that pattern keeps B's copy (esmm_pattern_keep_copy) */
    bool both_esmm_rows; /* esmm both end-to-end and with B cached (not a flag: analyze) */
    sweep_kind_t sweep;
} bench_options_t;

#define BENCH_DEFAULT_RUNS 20

/* Parses the arguments after "bench". Returns 0, or -1 with err set. */
int bench_parse_args(int argc, char **argv, bench_options_t *options, cli_error_t *err);

void bench_print_usage(FILE *f);

/* "targets" or "density"; -1 with err set for anything else. */
int cli_parse_sweep(const char *text, sweep_kind_t *out, cli_error_t *err);

/* The rows that time pattern extraction alone (CUDA only). */
#define BENCH_EXTRACT_A "extract-a"
#define BENCH_EXTRACT_B "extract-b"

/* Expands and checks a kernel list. `available` are the backend's kernels;
 * "esmm" (esmm_sgemm's default path), "cublas", "extract-a" and "extract-b"
 * are always valid names, and "all" is every available kernel, then esmm,
 * then cublas, then (when with_extraction) extract-a and extract-b.
 * Duplicates are dropped. out must hold available_count + BENCH_EXTRA_KERNELS
 * names; the names point into `available` or to static strings. Returns the
 * count, or -1 with err set. */
#define BENCH_EXTRA_KERNELS 4
int bench_resolve_kernels(const char *list, const char *const *available, int available_count,
                          bool with_extraction, const char **out, cli_error_t *err);

/* Shape of a loaded matrix as stored; rows == 0 when that operand is generated. */
typedef struct {
    int64_t rows, cols;
    const char *path;
} stored_shape_t;

/* m, n, k from the options (--size, --m, --n, --k, default_size) and the
 * loaded files (each with an element: npy_load_operand), which must all
 * agree. Returns 0, or -1 with err set. */
int bench_resolve_shape(const bench_options_t *options, stored_shape_t a, stored_shape_t b,
                        int64_t default_size, int64_t *m, int64_t *n, int64_t *k, cli_error_t *err);

#endif
