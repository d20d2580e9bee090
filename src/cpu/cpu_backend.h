/* CPU backend (C11 + OpenMP): the reference every other path is checked against,
 * and a working fallback where no GPU exists. */
#ifndef ESMM_CPU_BACKEND_H
#define ESMM_CPU_BACKEND_H

#include <stdint.h>

#include "esmm.h"
#include "gemm_problem.h"
#include "patterns/pattern_layout.h"

/* Which operand's masks the skip-GEMM uses to skip K-slices. */
typedef enum {
    ESMM_SKIP_NONE = 0, /* dense: every K-slice */
    ESMM_SKIP_A = 1,
    ESMM_SKIP_B = 2,
    ESMM_SKIP_JOINT = 3
} esmm_skip_mode_t;

/* Blocked single-precision GEMM. Each C element accumulates its products in
 * increasing k order in one float (no FMA contraction), so the skip-GEMM below
 * reproduces it bit for bit. Returns ESMM_STATUS_ALLOC_FAILED if its packing
 * buffers cannot be allocated. */
esmm_status_t esmm_cpu_sgemm(const esmm_gemm_problem_t *p);

/* Same arithmetic as esmm_cpu_sgemm, skipping the K-slices the masks prove
 * contribute nothing. pa must describe op(A) (m x k) for SKIP_A/SKIP_JOINT,
 * pb op(B) (k x n) for SKIP_B/SKIP_JOINT; the other may be NULL. */
esmm_status_t esmm_cpu_skip_sgemm(const esmm_gemm_problem_t *p, esmm_skip_mode_t mode,
                                  const esmm_strip_masks_t *pa, const esmm_strip_masks_t *pb);

/* Float64 reference: out[i * ldo + j] = alpha * sum_k op(A)(i,k) * op(B)(k,j)
 * + beta * C(i,j) in double (beta == 0 ignores C; k == 0 or alpha == 0 gives
 * beta * C). Used by tests and by `esmm bench --check`. */
void esmm_cpu_reference_gemm(const esmm_gemm_problem_t *p, double *out, int64_t ldo);

/* Pattern extraction into the layout of patterns/pattern_layout.h. The
 * esmm_strip_masks_t must have bits/nonfinite buffers of strips * kblocks bytes. */
void esmm_cpu_extract_a(esmm_operation_t op, const float *a, int64_t lda, int64_t m, int64_t k,
                        esmm_strip_masks_t *out);
void esmm_cpu_extract_b(esmm_operation_t op, const float *b, int64_t ldb, int64_t k, int64_t n,
                        esmm_strip_masks_t *out);

/* Allocates the buffers of a pattern for `rows` strips-rows and k; free with
 * esmm_strip_masks_free. Returns ESMM_STATUS_ALLOC_FAILED on failure. */
esmm_status_t esmm_strip_masks_alloc(esmm_strip_masks_t *pattern, int64_t rows, int64_t k);
void esmm_strip_masks_free(esmm_strip_masks_t *pattern);

#endif
