#include "runner.h"

#include <string.h>

esmm_status_t bench_run_library(const bench_problem_t *p, const char *kernel, const float *a,
                                const float *b, float *c)
{
    int64_t lda = p->transa == ESMM_OP_N ? p->k : p->m;
    int64_t ldb = p->transb == ESMM_OP_N ? p->n : p->k;
    if (strcmp(kernel, "esmm") == 0)
        return esmm_sgemm(p->handle, p->transa, p->transb, p->m, p->n, p->k, &p->alpha, a, lda, b,
                          ldb, &p->beta, c, p->n);
    return esmm_sgemm_kernel(p->handle, kernel, p->transa, p->transb, p->m, p->n, p->k, &p->alpha,
                             a, lda, b, ldb, &p->beta, c, p->n);
}
