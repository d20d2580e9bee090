#include "csr_runner.h"
#include "host_timing.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int csr_runner_describe_w(csr_runner_t *r, const int32_t *row_ptr, const int32_t *col_idx,
                          const float *values, cli_error_t *err)
{
    const csr_problem_t *p = &r->p;
    esmm_status_t st = esmm_csr_create(p->handle, p->rows, p->cols, p->nnz, row_ptr, col_idx,
                                       values, p->value, &r->prepared);
    if (st == ESMM_STATUS_SUCCESS)
        st = esmm_csr_create(p->handle, p->rows, p->cols, p->nnz, row_ptr, col_idx, values,
                             p->value, &r->plain);
    if (st != ESMM_STATUS_SUCCESS)
        return cli_error_set(err, "esmm_csr_create: %s", esmm_status_string(st));
    return 0;
}

esmm_status_t csr_runner_esmm(csr_runner_t *r, const csr_kernel_t *kernel, const float *b,
                              float *c)
{
    const csr_problem_t *p = &r->p;
    esmm_csr_t w = kernel->kind == CSR_KERNEL_ESMM_UNPREPARED ? r->plain : r->prepared;
    if (w == r->prepared && !r->prepare_done) {
        esmm_status_t st = esmm_csr_prepare(p->handle, w, p->transpose);
        if (st != ESMM_STATUS_SUCCESS)
            return st;
        r->prepare_done = true;
    }
    switch (kernel->kind) {
    case CSR_KERNEL_ESMM:
    case CSR_KERNEL_ESMM_UNPREPARED:
        if (p->op == BENCH_OP_CSRMV)
            return esmm_scsrmv(p->handle, p->transpose, w, &p->alpha, b, &p->beta, c);
        return esmm_scsrmm(p->handle, p->transpose, w, p->n, &p->alpha, b, p->n, &p->beta, c,
                           p->n);
    case CSR_KERNEL_DENSE_B:
    case CSR_KERNEL_SPARSE_B:
        return esmm_scsrmm_kernel(p->handle, kernel->name, p->transpose, w, p->n, &p->alpha, b,
                                  p->n, &p->beta, c, p->n);
    case CSR_KERNEL_CUSPARSE:
        break;
    }
    return ESMM_STATUS_INVALID_VALUE;
}

void csr_runner_release_w(csr_runner_t *r)
{
    esmm_csr_destroy(r->prepared);
    esmm_csr_destroy(r->plain);
    r->prepared = r->plain = NULL;
}

/* The CPU backend: esmm on host buffers, timed by the wall clock. */
typedef struct {
    csr_runner_t base; /* first, so the runner pointer is this struct's */
    float *c;
} cpu_runner_t;

static int cpu_launch(csr_runner_t *r, const csr_kernel_t *kernel, float *c, cli_error_t *err)
{
    if (kernel->kind == CSR_KERNEL_CUSPARSE)
        return cli_error_set(err, "%s: not available on the CPU backend", kernel->name);
    esmm_status_t st = csr_runner_esmm(r, kernel, r->p.b, c);
    if (st != ESMM_STATUS_SUCCESS)
        return cli_error_set(err, "%s: %s", kernel->name, esmm_status_string(st));
    return 0;
}

static int cpu_run_checked(csr_runner_t *base, const csr_kernel_t *kernel, float *out,
                           cli_error_t *err)
{
    cpu_runner_t *r = (cpu_runner_t *)base;
    size_t count = (size_t)(base->p.m * base->p.n);
    if (base->p.c0 != NULL) {
        memcpy(r->c, base->p.c0, count * sizeof *r->c);
    } else {
        for (size_t i = 0; i < count; i++)
            r->c[i] = NAN;
    }
    if (cpu_launch(base, kernel, r->c, err) != 0)
        return -1;
    memcpy(out, r->c, count * sizeof *out);
    return 0;
}

typedef struct {
    csr_runner_t *runner;
    const csr_kernel_t *kernel;
} cpu_call_t;

static int cpu_call(void *ctx, cli_error_t *err)
{
    const cpu_call_t *call = ctx;
    return cpu_launch(call->runner, call->kernel, ((cpu_runner_t *)call->runner)->c, err);
}

static int cpu_time_runs(csr_runner_t *base, const csr_kernel_t *kernel, int64_t warmup,
                         int64_t runs, double *ms, cli_error_t *err)
{
    cpu_call_t call = {base, kernel};
    return host_time_runs(cpu_call, &call, warmup, runs, ms, err);
}

static void cpu_destroy(csr_runner_t *base)
{
    cpu_runner_t *r = (cpu_runner_t *)base;
    csr_runner_release_w(base);
    free(r->c);
    free(r);
}

csr_runner_t *csr_runner_cpu_create(const csr_problem_t *p, cli_error_t *err)
{
    cpu_runner_t *r = calloc(1, sizeof *r);
    size_t count = (size_t)(p->m * p->n);
    if (r != NULL)
        r->c = malloc((count > 0 ? count : 1) * sizeof *r->c);
    if (r == NULL || r->c == NULL) {
        free(r);
        cli_error_set(err, "out of host memory for C (%lld x %lld)", (long long)p->m,
                      (long long)p->n);
        return NULL;
    }
    if (p->c0 != NULL)
        memcpy(r->c, p->c0, count * sizeof *r->c);
    csr_runner_t *b = &r->base;
    b->p = *p;
    b->run_checked = cpu_run_checked;
    b->time_runs = cpu_time_runs;
    b->destroy = cpu_destroy;
    b->copies = 1;
    b->copy_bytes = (int64_t)sizeof(float) * (p->k * p->n + p->m * p->n);
    b->clock = "host wall clock (CLOCK_MONOTONIC)";
    if (csr_runner_describe_w(b, p->row_ptr, p->col_idx, p->values, err) != 0) {
        cpu_destroy(b);
        return NULL;
    }
    return b;
}
