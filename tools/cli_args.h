/* Command-line parsing for `esmm bench`: every value is checked in full
 * (whole string, range, overflow) and every problem becomes a message. */
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

/* An 8-character string of '0' and '1'. */
int cli_parse_pattern(const char *what, const char *text, char out[9], cli_error_t *err);

/* What results are checked against. */
typedef enum {
    BENCH_REFERENCE_AUTO = 0, /* float64 CPU up to a size, cuBLAS beyond it */
    BENCH_REFERENCE_CPU = 1,  /* always the float64 CPU reference */
    BENCH_REFERENCE_CUBLAS = 2
} bench_reference_t;

typedef struct {
    bool help;
    esmm_backend_t backend;
    const char *kernels; /* comma list as given ("all" by default) */
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
} bench_options_t;

#define BENCH_DEFAULT_RUNS 20

/* Parses the arguments after "bench". Returns 0, or -1 with err set. */
int bench_parse_args(int argc, char **argv, bench_options_t *options, cli_error_t *err);

void bench_print_usage(FILE *f);

/* Expands and checks a kernel list. `available` are the backend's kernels;
 * "esmm" (esmm_sgemm's default path) and "cublas" are always valid names and
 * "all" is every available kernel, then esmm, then cublas. Duplicates are
 * dropped. out must hold available_count + 2 names; the names point into
 * `available` or to static strings. Returns the count, or -1 with err set. */
int bench_resolve_kernels(const char *list, const char *const *available, int available_count,
                          const char **out, cli_error_t *err);

/* Shape of a loaded matrix as stored; rows == 0 when that operand is generated. */
typedef struct {
    int64_t rows, cols;
    const char *path;
} stored_shape_t;

/* m, n, k from the options (--size, --m, --n, --k, default_size) and the
 * loaded files, which must all agree. Returns 0, or -1 with err set. */
int bench_resolve_shape(const bench_options_t *options, stored_shape_t a, stored_shape_t b,
                        int64_t default_size, int64_t *m, int64_t *n, int64_t *k, cli_error_t *err);

#endif
