/* The inputs of one `esmm bench --op csrmm|csrmv` case (W generated or read
 * from Matrix Market, B generated or read from .npy, C0), what the report
 * says about them, and the float64 reference its results are checked
 * against. */
#ifndef ESMM_TOOLS_CSR_WORKLOAD_H
#define ESMM_TOOLS_CSR_WORKLOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "cli_args.h"
#include "cli_error.h"
#include "csr_runner.h"
#include "mtx.h"
#include "npy.h"

/* What one case multiplies. */
typedef struct {
    const char *label; /* the sweep case, else NULL */
    double target;     /* the speedup esmm must reach over cuSPARSE's fastest; 0: none */
    bench_op_t op;
    esmm_operation_t transpose;
    int64_t rows, cols, nnz_per_row; /* the generator of W */
    bool homogeneous;
    float weight;
    const char *w_path; /* W from this file instead */
    int64_t n;          /* 1 for csrmv; 0: from the B file */
    double b_density;   /* the generator of B */
    const char *b_path; /* B from this file instead */
    uint64_t seed;
    float alpha, beta;
} csr_case_t;

typedef struct {
    mtx_csr_t w; /* values NULL when homogeneous */
    bool homogeneous;
    float weight;
    int64_t sorted_rows; /* rows of a file W whose entries were put in column order */
    npy_matrix_t b_file;
    float *b_generated;
    const float *b; /* k x n */
    float *c0;      /* m x n; NULL when beta == 0 */
    int64_t m, n, k;
    double nonzero_b;       /* measured fraction of B's elements that are nonzero */
    double useful_products; /* (stored entry, column of C) pairs whose b is nonzero */
    char w_source[400], b_source[400]; /* descriptions for the report */
} csr_workload_t;

/* Generates or loads the case's inputs. Returns ESMM_EXIT_OK, or with err
 * set ESMM_EXIT_USAGE (B does not match op(W)) or ESMM_EXIT_RUNTIME (an
 * unreadable, malformed or empty file, out of memory). */
int csr_workload_build(const csr_case_t *c, csr_workload_t *w, cli_error_t *err);

void csr_workload_free(csr_workload_t *w);

/* The product for the runners, over the workload's host arrays. */
csr_problem_t csr_workload_problem(const csr_workload_t *w, const csr_case_t *c,
                                   esmm_handle_t handle);

/* Every element x of a result is checked against the float64 reference:
 * error = |x - ref| / scale, scale = sum |alpha w b| + |beta c0| over the
 * element's products (0 / 0 counts as 0). A NaN must be where the reference
 * has one, an infinity where the reference is beyond the float range with
 * that sign; anything else involving a non-finite value is +infinity. */
#define CSR_TOLERANCE 1e-5

typedef struct {
    int64_t count; /* m x n */
    double *ref, *scale;
} csr_reference_t;

/* scratch_c: m x n floats the reference may be handed as C when beta == 0.
 * Returns 0, or -1 with err set (out of memory). */
int csr_reference_compute(const csr_problem_t *p, float *scratch_c, csr_reference_t *ref,
                          cli_error_t *err);

void csr_reference_free(csr_reference_t *ref);

/* The largest error of x (m x n) over all elements. */
double csr_max_error(const csr_reference_t *ref, const float *x);

#endif
