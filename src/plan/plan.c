#include "plan/plan.h"

unsigned long long esmm_plan_total(int64_t m, int64_t n, int64_t k)
{
    return (unsigned long long)esmm_pattern_strips(m) * (unsigned long long)esmm_pattern_strips(n) *
           (unsigned long long)k;
}

int esmm_plan_cpu_selects_skip(const esmm_plan_stats_t *stats, int64_t m, int64_t n, int64_t k)
{
    return (double)stats->work <= ESMM_PLAN_CPU_SKIP_BELOW * (double)esmm_plan_total(m, n, k);
}

/* Adds, for each bit of k-block kb, the strips of `masks` that have it (or
 * all strips, when the operand is not skipped by); returns its set bits. */
static unsigned long long count_block(const esmm_strip_masks_t *masks, int64_t kb, int64_t k,
                                      int skipped_by, unsigned long long counts[8])
{
    unsigned long long set = 0;
    for (int64_t s = 0; s < masks->strips; s++) {
        const unsigned bits = masks->bits[s * masks->kblocks + kb];
        const unsigned used = skipped_by ? bits : esmm_pattern_existing_k(kb, k);
        for (int i = 0; i < 8; i++) {
            set += (bits >> i) & 1u;
            counts[i] += (used >> i) & 1u;
        }
    }
    return set;
}

void esmm_plan_count(const esmm_strip_masks_t *a, const esmm_strip_masks_t *b, int64_t k,
                     esmm_skip_by_t skip, esmm_plan_stats_t *stats)
{
    *stats = (esmm_plan_stats_t){0};
    for (int64_t kb = 0; kb < a->kblocks; kb++) {
        unsigned long long count_a[8] = {0}, count_b[8] = {0};
        stats->bits_a += count_block(a, kb, k, skip & ESMM_SKIP_BY_A, count_a);
        stats->bits_b += count_block(b, kb, k, skip & ESMM_SKIP_BY_B, count_b);
        for (int i = 0; i < 8; i++)
            stats->work += count_a[i] * count_b[i];
    }
}
