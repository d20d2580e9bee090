/* Which path a product takes, from the masks' statistics. The CUDA backend
 * decides on the device (esmm_plan_decide in cuda/cuda_backend.h, for its
 * skipping kernel); the CPU backend's skip-GEMM follows the rule here. */
#ifndef ESMM_PLAN_H
#define ESMM_PLAN_H

#include <stdint.h>

#include "cuda/cuda_backend.h"
#include "patterns/pattern_layout.h"

/* The CPU skip-GEMM runs when at most this fraction of the strip-pair work is
 * left: its cost follows that work closely. */
#define ESMM_PLAN_CPU_SKIP_BELOW 0.6

/* (strip of A, strip of B, k) triples of a dense m x n x k product. */
unsigned long long esmm_plan_total(int64_t m, int64_t n, int64_t k);

/* Nonzero when the CPU backend should run its skip-GEMM. */
int esmm_plan_cpu_selects_skip(const esmm_plan_stats_t *stats, int64_t m, int64_t n, int64_t k);

/* The statistics on the host, from host masks (CPU backend): work and set bits. */
void esmm_plan_count(const esmm_strip_masks_t *a, const esmm_strip_masks_t *b, int64_t k,
                     esmm_skip_by_t skip, esmm_plan_stats_t *stats);

#endif
