#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "host_timing.h"
#include "runner.h"

typedef struct {
    bench_runner_t base; /* first, so the runner pointer is this struct's */
    float *c;
} cpu_runner_t;

static int cpu_launch(bench_runner_t *r, const bench_kernel_t *kernel, int64_t copy,
                      cli_error_t *err)
{
    if (!bench_kernel_is_library(kernel->name))
        return cli_error_set(err, "%s: not available on the CPU backend", kernel->name);
    esmm_status_t st = bench_runner_library(r, kernel, copy);
    if (st != ESMM_STATUS_SUCCESS)
        return cli_error_set(err, "%s: %s", kernel->name, esmm_status_string(st));
    return 0;
}

/* CPU calls return when they are done: nothing is ever pending. */
static int cpu_wait(bench_runner_t *r, const char *what, cli_error_t *err)
{
    (void)r;
    (void)what;
    (void)err;
    return 0;
}

static int cpu_run_checked(bench_runner_t *r, const bench_kernel_t *kernel, float *out,
                           cli_error_t *err)
{
    size_t count = (size_t)(r->p.m * r->p.n);
    if (r->p.c0 != NULL) {
        memcpy(r->c, r->p.c0, count * sizeof *r->c);
    } else {
        for (size_t i = 0; i < count; i++)
            r->c[i] = NAN;
    }
    if (cpu_launch(r, kernel, 0, err) != 0)
        return -1;
    memcpy(out, r->c, count * sizeof *out);
    return 0;
}

typedef struct {
    bench_runner_t *runner;
    const bench_kernel_t *kernel;
} cpu_call_t;

static int cpu_call(void *ctx, cli_error_t *err)
{
    const cpu_call_t *call = ctx;
    return cpu_launch(call->runner, call->kernel, 0, err);
}

static int cpu_time_runs(bench_runner_t *r, const bench_kernel_t *kernel, int64_t warmup,
                         int64_t runs, double *ms, cli_error_t *err)
{
    cpu_call_t call = {r, kernel};
    return host_time_runs(cpu_call, &call, warmup, runs, ms, err);
}

static void cpu_destroy(bench_runner_t *base)
{
    cpu_runner_t *r = (cpu_runner_t *)base;
    bench_runner_release_patterns(base);
    free(r->c);
    free(r);
}

bench_runner_t *bench_runner_cpu_create(const bench_problem_t *p, cli_error_t *err)
{
    cpu_runner_t *r = calloc(1, sizeof *r);
    if (r != NULL)
        r->c = calloc((size_t)(p->m * p->n), sizeof *r->c);
    if (r == NULL || r->c == NULL) {
        free(r);
        cli_error_set(err, "out of host memory for C (%lld x %lld)", (long long)p->m, (long long)p->n);
        return NULL;
    }
    if (p->c0 != NULL)
        memcpy(r->c, p->c0, (size_t)(p->m * p->n) * sizeof *r->c);
    bench_runner_t *b = &r->base;
    b->p = *p;
    b->a = p->a;
    b->b = p->b;
    b->c = r->c;
    b->launch = cpu_launch;
    b->wait = cpu_wait;
    b->run_checked = cpu_run_checked;
    b->time_runs = cpu_time_runs;
    b->destroy = cpu_destroy;
    b->has_cublas = false;
    b->times_extraction = false;
    b->copies = 1;
    b->clock = "host wall clock (CLOCK_MONOTONIC)";
    return b;
}
