/* Checking a result against a reference.
 *
 * The error of element (i, j) is |x - ref| / (|ref| + scale), with
 *   scale = |alpha| * ||op(A) row i||_2 * ||op(B) column j||_2 + |beta| * |C0(i, j)|.
 * By Cauchy-Schwarz the scale bounds sum_k |a_ik b_kj| (the quantity FP32
 * rounding errors are proportional to) up to the beta term, so the measure is
 * neither fooled by cancellation (ref near zero) nor blind to it.
 *
 * A result passes when the largest error is within
 *   tolerance = 8 * 2^-24 * (sqrt(k) + 1),
 * doubled when the reference is itself an FP32 result (cuBLAS): the
 * probabilistic bound of FP32 accumulation over k terms (errors grow like
 * sqrt(k) u), with a margin, while a single missing or doubled product of a
 * dense operand shows up as roughly 1/k, far above it for the sizes we run. */
#ifndef ESMM_TOOLS_VERIFY_H
#define ESMM_TOOLS_VERIFY_H

#include <stdbool.h>
#include <stdint.h>

double verify_tolerance(int64_t k, bool reference_is_fp32);

typedef struct {
    int64_t m, n;
    const double *ref;      /* m x n, leading dimension n */
    const double *row_norm; /* m: ||op(A) row i|| */
    const double *col_norm; /* n: ||op(B) column j|| */
    double alpha, beta;
    const float *c0; /* m x n initial C (leading dimension n); NULL when beta == 0 */
} verify_reference_t;

/* Largest error of x (m x n, leading dimension n) over all elements. A
 * non-finite value where the reference has the same non-finite value (NaN for
 * NaN, the same infinity, a reference beyond the float range counting as
 * infinity) is exact; any other disagreement involving a non-finite value is
 * +infinity. */
double verify_max_error(const verify_reference_t *r, const float *x);

#endif
