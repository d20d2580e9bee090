/* The cases `esmm bench --sweep` runs in one process.
 *
 * targets: every row of the zero-skipping target table (README), at a base size S (4096 on
 * the GPU): the density generator at d = 1, 0.5, 0.25, 0.125 on both
 * operands, on A only and on B only (the other dense) at 0.5, 0.25, 0.125,
 * d = 0.25 on both at S/4, S/2 and 2S, and element-wise random zeros at 0.5.
 * density: both operands at d = 1, 0.875, ..., 0.125 and 0.0625, at S. */
#ifndef ESMM_TOOLS_SWEEP_H
#define ESMM_TOOLS_SWEEP_H

#include <stdint.h>

#include "cli_args.h"
#include "generate.h"

#define SWEEP_MAX_CASES 16

typedef struct {
    char label[48];   /* e.g. "d = 0.25 (both)", "A only d = 0.5" */
    int64_t size;     /* m = n = k */
    generator_t gen_a, gen_b;
    double target;    /* the speedup esmm end-to-end must reach over cuBLAS; 0: none */
} sweep_case_t;

/* Fills out (at least SWEEP_MAX_CASES entries) with the cases of a sweep at
 * base size `size` and returns how many; 0 for SWEEP_NONE. */
int sweep_cases(sweep_kind_t kind, int64_t size, sweep_case_t *out);

/* "targets" or "density". */
const char *sweep_name(sweep_kind_t kind);

#endif
