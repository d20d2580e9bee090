#include "verify.h"

#include <float.h>
#include <math.h>
#include <stddef.h>

double verify_tolerance(int64_t k, bool reference_is_fp32)
{
    double tolerance = 8.0 * 0x1.0p-24 * (sqrt((double)k) + 1.0);
    return reference_is_fp32 ? 2.0 * tolerance : tolerance;
}

static double element_error(double x, double ref, double scale)
{
    if (isnan(ref))
        return isnan(x) ? 0.0 : INFINITY;
    /* A reference beyond FLT_MAX is infinity once rounded to float. */
    if (fabs(ref) > FLT_MAX)
        ref = copysign(INFINITY, ref);
    if (isinf(ref) || !isfinite(x))
        return x == ref ? 0.0 : INFINITY;
    double difference = fabs(x - ref);
    double denominator = fabs(ref) + scale;
    if (difference == 0.0)
        return 0.0;
    /* A zero or non-finite scale (overflowing norms, NaN in a row whose
     * product is still finite) leaves nothing to measure against. */
    if (!(denominator > 0.0) || !isfinite(denominator))
        return INFINITY;
    return difference / denominator;
}

double verify_max_error(const verify_reference_t *r, const float *x)
{
    double worst = 0.0;
    double abs_alpha = fabs(r->alpha), abs_beta = fabs(r->beta);
#pragma omp parallel for reduction(max : worst) schedule(static)
    for (int64_t i = 0; i < r->m; i++) {
        double row_scale = abs_alpha == 0.0 ? 0.0 : abs_alpha * r->row_norm[i];
        for (int64_t j = 0; j < r->n; j++) {
            int64_t at = i * r->n + j;
            double scale = row_scale == 0.0 ? 0.0 : row_scale * r->col_norm[j];
            if (r->c0 != NULL && abs_beta != 0.0)
                scale += abs_beta * fabs((double)r->c0[at]);
            double e = element_error((double)x[at], r->ref[at], scale);
            if (e > worst)
                worst = e;
        }
    }
    return worst;
}
