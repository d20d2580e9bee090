/* Float64 reference GEMM: plain loops, no blocking, so it shares nothing with
 * the code it checks but the operand accessors. */
#include <stdint.h>

#include "cpu/cpu_backend.h"

void esmm_cpu_reference_gemm(const esmm_gemm_problem_t *p, double *out, int64_t ldo)
{
    const int multiply = p->k > 0 && p->alpha != 0.0f;
    /* Small products stay on one thread: a team costs more than it saves. */
    const int parallel = (double)p->m * (double)p->n * (double)(p->k + 1) >= 1e6;
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t i = 0; i < p->m; i++) {
        double *row = out + i * ldo;
        for (int64_t j = 0; j < p->n; j++)
            row[j] = 0.0;
        /* i-k-j order: the row of C is the accumulator and op(B) is read by rows. */
        for (int64_t kk = 0; multiply && kk < p->k; kk++) {
            const double a = esmm_op_a_at(p, i, kk);
            for (int64_t j = 0; j < p->n; j++)
                row[j] += a * (double)esmm_op_b_at(p, kk, j);
        }
        const float *c = p->c + i * p->ldc;
        for (int64_t j = 0; j < p->n; j++) {
            double scaled_c = p->beta == 0.0f ? 0.0 : (double)p->beta * (double)c[j];
            row[j] = multiply ? (double)p->alpha * row[j] + scaled_c : scaled_c;
        }
    }
}
