#include "runner.h"

#include <stdlib.h>
#include <string.h>

#include "cli_args.h"

bench_operand_t bench_kernel_extracts(const char *name)
{
    if (strcmp(name, BENCH_EXTRACT_A) == 0)
        return BENCH_OPERAND_A;
    if (strcmp(name, BENCH_EXTRACT_B) == 0)
        return BENCH_OPERAND_B;
    return BENCH_OPERAND_NONE;
}

bool bench_kernel_is_library(const char *name)
{
    return strcmp(name, "cublas") != 0 && bench_kernel_extracts(name) == BENCH_OPERAND_NONE;
}

static int64_t lda_of(const bench_problem_t *p)
{
    return p->transa == ESMM_OP_N ? p->k : p->m;
}

static int64_t ldb_of(const bench_problem_t *p)
{
    return p->transb == ESMM_OP_N ? p->n : p->k;
}

esmm_status_t bench_runner_library(bench_runner_t *r, const bench_kernel_t *kernel, int64_t copy)
{
    const bench_problem_t *p = &r->p;
    const float *a = r->a + copy * r->a_stride;
    const float *b = r->b + copy * r->b_stride;
    float *c = r->c + copy * r->c_stride;
    if (strcmp(kernel->name, "esmm") != 0)
        return esmm_sgemm_kernel(p->handle, kernel->name, p->transa, p->transb, p->m, p->n, p->k,
                                 &p->alpha, a, lda_of(p), b, ldb_of(p), &p->beta, c, p->n);
    if (!kernel->cached_b)
        return esmm_sgemm(p->handle, p->transa, p->transb, p->m, p->n, p->k, &p->alpha, a,
                          lda_of(p), b, ldb_of(p), &p->beta, c, p->n);
    if (r->patterns_b == NULL)
        return ESMM_STATUS_INVALID_VALUE;
    return esmm_sgemm_patterns(p->handle, p->transa, p->transb, p->m, p->n, p->k, &p->alpha, a,
                               lda_of(p), NULL, b, ldb_of(p), r->patterns_b[copy], &p->beta, c,
                               p->n);
}

esmm_status_t bench_runner_extract(bench_runner_t *r, bench_operand_t operand, int64_t copy,
                                   esmm_pattern_t *pattern)
{
    const bench_problem_t *p = &r->p;
    if (operand == BENCH_OPERAND_A)
        return esmm_pattern_extract_a(p->handle, p->transa, p->m, p->k, r->a + copy * r->a_stride,
                                      lda_of(p), pattern);
    return esmm_pattern_extract_b(p->handle, p->transb, p->k, p->n, r->b + copy * r->b_stride,
                                  ldb_of(p), pattern);
}

int bench_runner_cache_b(bench_runner_t *r, cli_error_t *err)
{
    if (r->patterns_b != NULL)
        return 0;
    r->patterns_b = calloc((size_t)r->copies, sizeof *r->patterns_b);
    if (r->patterns_b == NULL)
        return cli_error_set(err, "out of host memory for B's patterns");
    for (int64_t copy = 0; copy < r->copies; copy++) {
        esmm_status_t st = bench_runner_extract(r, BENCH_OPERAND_B, copy, &r->patterns_b[copy]);
        if (st != ESMM_STATUS_SUCCESS) {
            bench_runner_release_patterns(r);
            return cli_error_set(err, "esmm_pattern_extract_b: %s", esmm_status_string(st));
        }
        if (r->p.keep_copy)
            st = esmm_pattern_keep_copy(r->p.handle, r->patterns_b[copy],
                                        r->b + copy * r->b_stride, ldb_of(&r->p));
        if (st != ESMM_STATUS_SUCCESS) {
            bench_runner_release_patterns(r);
            return cli_error_set(err, "esmm_pattern_keep_copy: %s", esmm_status_string(st));
        }
    }
    return r->wait(r, "extracting B's pattern", err);
}

int bench_runner_stats(bench_runner_t *r, const bench_kernel_t *kernel, esmm_info_t *info,
                       cli_error_t *err)
{
    esmm_handle_t handle = r->p.handle;
    /* A backend that cannot time extraction still reports the rest. */
    bool timing = esmm_set_timing(handle, 1) == ESMM_STATUS_SUCCESS;
    int status = r->launch(r, kernel, 0, err);
    if (status == 0)
        status = r->wait(r, kernel->name, err);
    if (timing)
        esmm_set_timing(handle, 0);
    if (status != 0)
        return -1;
    esmm_status_t st = esmm_get_last_info(handle, info);
    if (st != ESMM_STATUS_SUCCESS)
        return cli_error_set(err, "esmm_get_last_info: %s", esmm_status_string(st));
    return 0;
}

int bench_pattern_density(esmm_status_t extracted, esmm_pattern_t pattern, const char *extractor,
                          double *density, cli_error_t *err)
{
    const char *what = extractor;
    esmm_status_t st = extracted;
    if (st == ESMM_STATUS_SUCCESS) {
        what = "esmm_pattern_density";
        st = esmm_pattern_density(pattern, density);
    }
    esmm_pattern_destroy(pattern);
    if (st != ESMM_STATUS_SUCCESS)
        return cli_error_set(err, "%s: %s", what, esmm_status_string(st));
    return 0;
}

int bench_runner_extracted_density(bench_runner_t *r, bench_operand_t operand, double *density,
                                   cli_error_t *err)
{
    esmm_pattern_t pattern = NULL;
    const char *extractor = operand == BENCH_OPERAND_A ? "esmm_pattern_extract_a"
                                                       : "esmm_pattern_extract_b";
    const esmm_status_t st = bench_runner_extract(r, operand, 0, &pattern);
    const int status = bench_pattern_density(st, pattern, extractor, density, err);
    return status != 0 ? status : r->wait(r, "esmm_pattern_density", err);
}

void bench_runner_release_patterns(bench_runner_t *r)
{
    if (r->patterns_b == NULL)
        return;
    for (int64_t copy = 0; copy < r->copies; copy++)
        esmm_pattern_destroy(r->patterns_b[copy]);
    free(r->patterns_b);
    r->patterns_b = NULL;
}
