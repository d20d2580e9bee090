/* Zero statistics of one operand computed on the host from its values, in
 * the terms of the pattern metadata (DESIGN.md, "Pattern metadata"): a
 * slice is (32-wide strip, k index), a strip runs over rows of op(A) or
 * columns of op(B). `esmm analyze` prints them and `esmm bench` checks the
 * library's extraction against them. */
#ifndef ESMM_TOOLS_OPERAND_STATS_H
#define ESMM_TOOLS_OPERAND_STATS_H

#include <stdint.h>

#include "generate.h"

typedef struct {
    int64_t outer, k, strips;
    int64_t zero_elements;  /* x == 0.0f: -0.0 is zero, NaN is not */
    int64_t nonzero_slices; /* slices holding a nonzero */
    int64_t dead_k;         /* k indices that are zero in every strip */
    /* Per strip, the share of k indices where it holds a nonzero. */
    double strip_density_min, strip_density_median, strip_density_max;
} operand_stats_t;

/* Fills s; strips_per_k (k entries, or NULL) gets, for each k index, the
 * number of strips holding a nonzero there. Returns 0, or -1 when host memory
 * ran out. */
int operand_stats(const operand_view_t *v, operand_stats_t *s, int64_t *strips_per_k);

/* Shares in [0, 1]: nonzero slices of all slices, zero elements of all
 * elements, dead k indices of k. 0 for an empty operand. */
double operand_slice_density(const operand_stats_t *s);
double operand_zero_fraction(const operand_stats_t *s);
double operand_dead_k_fraction(const operand_stats_t *s);

/* Share of (A strip, B strip, k) triples where both slices hold a nonzero:
 * the work that skipping by both masks at strip granularity leaves. */
double joint_slice_density(const int64_t *a_strips_per_k, int64_t a_strips,
                           const int64_t *b_strips_per_k, int64_t b_strips, int64_t k);

#endif
