/* `esmm analyze A.npy [B.npy]`: the zero statistics of real matrices, what
 * esmm_sgemm does with them, and (--bench) how it compares with cuBLAS. */
#ifndef ESMM_TOOLS_ANALYZE_H
#define ESMM_TOOLS_ANALYZE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cli_error.h"
#include "esmm.h"

typedef struct {
    bool help;
    const char *path_a, *path_b; /* path_b NULL: no B file */
    esmm_operation_t transa, transb;
    int64_t n; /* columns of op(B) without a B file; 0: k */
    uint64_t seed;
    bool bench;
    int64_t runs;
    int64_t warmup; /* -1: the backend's default */
    bool check;
    const char *json_path;
    const char *commit;
    esmm_backend_t backend;
    const char *bench_option; /* the first option given that only --bench uses, else NULL */
} analyze_options_t;

/* Parses the arguments after "analyze". Returns 0, or -1 with err set. */
int analyze_parse_args(int argc, char **argv, analyze_options_t *options, cli_error_t *err);

void analyze_print_usage(FILE *f);

/* argv are the arguments after "analyze". Returns an ESMM_EXIT_* code. */
int analyze_command(int argc, char **argv);

#endif
