/* Which path a product takes, from the masks' statistics. The rule is the one
 * the device applies (ESMM_SPARSE_WORK_* in cuda/cuda_backend.h), so the
 * host's report and the device's choice agree. */
#ifndef ESMM_PLAN_H
#define ESMM_PLAN_H

#include <stdint.h>

#include "cuda/cuda_backend.h"
#include "patterns/pattern_layout.h"

/* (strip of A, strip of B, k) triples of a dense m x n x k product. */
unsigned long long esmm_plan_total(int64_t m, int64_t n, int64_t k);

/* Nonzero when the zero-skipping kernel should run. */
int esmm_plan_selects_sparse(const esmm_plan_stats_t *stats, int64_t m, int64_t n, int64_t k);

/* The statistics on the host, from host masks (CPU backend). */
void esmm_plan_count(const esmm_strip_masks_t *a, const esmm_strip_masks_t *b, int64_t k,
                     esmm_skip_by_t skip, esmm_plan_stats_t *stats);

#endif
