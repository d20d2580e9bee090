/* CPU backend (C11 + OpenMP): the reference every other path is checked against,
 * and a working fallback where no GPU exists. */
#ifndef ESMM_CPU_BACKEND_H
#define ESMM_CPU_BACKEND_H

#include <stdint.h>

#include "esmm.h"
#include "csr_problem.h"
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

/* The dense probe (patterns/pattern_layout.h) of op(X), is_b = 0: op(A),
 * m = rows x k; is_b = 1: op(B), k x n = rows: adds the sampled slices to
 * *slices and the zero ones among them to *zero, reading x, or the bits of
 * a given pattern instead when given is not NULL. */
void esmm_cpu_probe(int is_b, esmm_operation_t op, const float *x, int64_t ld, int64_t rows,
                    int64_t k, const uint8_t *given, unsigned *zero, unsigned *slices);

/* Allocates the buffers of a pattern for `rows` strips-rows and k; free with
 * esmm_strip_masks_free. Returns ESMM_STATUS_ALLOC_FAILED on failure. */
esmm_status_t esmm_strip_masks_alloc(esmm_strip_masks_t *pattern, int64_t rows, int64_t k);
void esmm_strip_masks_free(esmm_strip_masks_t *pattern);

/* CSR products, C = alpha * op(W) * B + beta * C. Each C element sums its
 * products in one float in a fixed order, without FMA contraction:
 * acc = acc + w * b over W's stored entries in storage order (N: along row i;
 * T: by increasing row of W, storage order within a row), then
 * alpha * acc (+ beta * C when beta != 0). The CUDA gather paths use the same
 * order and arithmetic, so they reproduce it bit for bit. */
esmm_status_t esmm_cpu_csrmm(const esmm_csrmm_problem_t *p);

/* Float64 reference of the same product into out[i * ldo + j]. */
void esmm_cpu_reference_csrmm(const esmm_csrmm_problem_t *p, double *out, int64_t ldo);

/* ESMM_STATUS_SUCCESS when w is valid CSR (esmm.h), else
 * ESMM_STATUS_INVALID_VALUE; reads nothing out of bounds whatever it holds. */
esmm_status_t esmm_cpu_csr_validate(const esmm_csr_view_t *w);

/* The transpose of w (cols x rows) into t_row_ptr[cols + 1], t_col_idx[nnz]
 * and, when w->values != NULL, t_values[nnz]. Stable: entries of a transposed
 * row keep the order of W's rows (and storage order within a row), so gathers
 * over it sum in the order of esmm_cpu_csrmm's T product. w must be valid. */
void esmm_cpu_csr_transpose(const esmm_csr_view_t *w, int32_t *t_row_ptr, int32_t *t_col_idx,
                            float *t_values);

#endif
