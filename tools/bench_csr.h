/* `esmm bench --op csrmm|csrmv`: times esmm's CSR products against every
 * cuSPARSE CSR algorithm on generated or loaded inputs and checks each result
 * against the float64 CPU reference (see bench_csr_print_usage for the
 * options). */
#ifndef ESMM_TOOLS_BENCH_CSR_H
#define ESMM_TOOLS_BENCH_CSR_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cli_args.h"
#include "cli_error.h"
#include "csr_runner.h"
#include "esmm.h"

/* The reference workload of the CSR targets (issue 4): W 10000 x 10000 with
 * 200 nonzeros per row, B 10000 x 128 with 10% nonzeros. */
#define CSR_DEFAULT_ROWS 10000
#define CSR_DEFAULT_COLS 10000
#define CSR_DEFAULT_NNZ_PER_ROW 200
#define CSR_DEFAULT_N 128
#define CSR_DEFAULT_B_DENSITY 0.1
#define CSR_DEFAULT_WEIGHT 0.5

typedef struct {
    bool help;
    bench_op_t op; /* BENCH_OP_CSRMM or BENCH_OP_CSRMV */
    esmm_backend_t backend;
    const char *kernels; /* comma list as given ("all" by default) */
    /* W: generated (0 / -1 where not given: the defaults above) or loaded. */
    int64_t rows, cols, nnz_per_row;
    bool homogeneous;
    double weight; /* the shared weight of a homogeneous W */
    const char *w_path;
    /* B: generated or loaded. */
    int64_t n;        /* 0 when not given */
    double b_density; /* < 0 when not given */
    const char *b_path;
    esmm_operation_t transpose;
    double alpha, beta;
    uint64_t seed;
    int64_t runs;
    int64_t warmup; /* -1: the backend's default */
    bool check;
    bool sweep_targets; /* --sweep csr-targets */
    const char *json_path;
    const char *commit;
} bench_csr_options_t;

/* Parses the arguments after "bench" (--op csrmm|csrmv among them). Returns
 * 0, or -1 with err set. */
int bench_csr_parse_args(int argc, char **argv, bench_csr_options_t *options, cli_error_t *err);

void bench_csr_print_usage(FILE *f);

/* Every kernel name --kernel accepts, besides "all" and "cusparse". */
#define BENCH_CSR_KERNELS 8

/* The rows a kernel list selects for one case, cuSPARSE's first (they make
 * the baseline), leaving out what does not apply to the case: a kernel named
 * on its own that does not apply gets a line on `notices` saying why. The list
 * must have passed bench_csr_parse_args. Returns the count (at most
 * BENCH_CSR_KERNELS). */
int bench_csr_select_kernels(const char *list, bench_op_t op, esmm_operation_t transpose,
                             bool cuda, csr_kernel_t *out, FILE *notices);

/* The benchmark the options describe, on an existing handle (the handle's
 * stream is left at its default afterwards). Returns an ESMM_EXIT_* code. */
int bench_csr_run(esmm_handle_t handle, const bench_csr_options_t *options);

/* argv are the arguments after "bench". Returns an ESMM_EXIT_* code. */
int bench_csr_command(int argc, char **argv);

#endif
