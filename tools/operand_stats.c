#include "operand_stats.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static int compare_doubles(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Marks in live[kk] the k indices where strip rows [first, last) hold a
 * nonzero and returns how many elements of the strip are zero. */
static int64_t scan_strip(const operand_view_t *v, int64_t first, int64_t last, uint8_t *live)
{
    int64_t zeros = 0;
    if (v->k_contiguous) {
        for (int64_t x = first; x < last; x++) {
            const float *row = v->data + x * v->ld;
            for (int64_t kk = 0; kk < v->k; kk++) {
                bool zero = row[kk] == 0.0f;
                zeros += zero;
                live[kk] |= (uint8_t)!zero;
            }
        }
        return zeros;
    }
    for (int64_t kk = 0; kk < v->k; kk++) {
        const float *line = v->data + kk * v->ld;
        for (int64_t x = first; x < last; x++) {
            bool zero = line[x] == 0.0f;
            zeros += zero;
            live[kk] |= (uint8_t)!zero;
        }
    }
    return zeros;
}

int operand_stats(const operand_view_t *v, operand_stats_t *s, int64_t *strips_per_k)
{
    memset(s, 0, sizeof *s);
    s->outer = v->outer;
    s->k = v->k;
    s->strips = (v->outer + GENERATE_STRIP - 1) / GENERATE_STRIP;
    if (s->strips == 0 || v->k == 0)
        return 0;
    uint8_t *live = malloc((size_t)v->k);
    int64_t *live_strips = calloc((size_t)v->k, sizeof *live_strips);
    double *strip_density = malloc((size_t)s->strips * sizeof *strip_density);
    if (live == NULL || live_strips == NULL || strip_density == NULL) {
        free(live);
        free(live_strips);
        free(strip_density);
        return -1;
    }
    for (int64_t strip = 0; strip < s->strips; strip++) {
        int64_t first = strip * GENERATE_STRIP;
        int64_t last = first + GENERATE_STRIP < v->outer ? first + GENERATE_STRIP : v->outer;
        memset(live, 0, (size_t)v->k);
        s->zero_elements += scan_strip(v, first, last, live);
        int64_t live_count = 0;
        for (int64_t kk = 0; kk < v->k; kk++) {
            live_count += live[kk];
            live_strips[kk] += live[kk];
        }
        s->nonzero_slices += live_count;
        strip_density[strip] = (double)live_count / (double)v->k;
    }
    for (int64_t kk = 0; kk < v->k; kk++)
        s->dead_k += live_strips[kk] == 0;
    qsort(strip_density, (size_t)s->strips, sizeof *strip_density, compare_doubles);
    s->strip_density_min = strip_density[0];
    s->strip_density_max = strip_density[s->strips - 1];
    int64_t half = s->strips / 2;
    s->strip_density_median = s->strips % 2 ? strip_density[half]
                                            : 0.5 * (strip_density[half - 1] + strip_density[half]);
    if (strips_per_k != NULL)
        memcpy(strips_per_k, live_strips, (size_t)v->k * sizeof *strips_per_k);
    free(live);
    free(live_strips);
    free(strip_density);
    return 0;
}

static double share(double part, double whole)
{
    return whole > 0.0 ? part / whole : 0.0;
}

double operand_slice_density(const operand_stats_t *s)
{
    return share((double)s->nonzero_slices, (double)s->strips * (double)s->k);
}

double operand_zero_fraction(const operand_stats_t *s)
{
    return share((double)s->zero_elements, (double)s->outer * (double)s->k);
}

double operand_dead_k_fraction(const operand_stats_t *s)
{
    return share((double)s->dead_k, (double)s->k);
}

double joint_slice_density(const int64_t *a_strips_per_k, int64_t a_strips,
                           const int64_t *b_strips_per_k, int64_t b_strips, int64_t k)
{
    double both = 0.0;
    for (int64_t kk = 0; kk < k; kk++)
        both += (double)a_strips_per_k[kk] * (double)b_strips_per_k[kk];
    return share(both, (double)a_strips * (double)b_strips * (double)k);
}
