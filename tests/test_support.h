/* Host-side helpers the test programs share: allocation that stops the test
 * when memory runs out, the seeded random stream, the poison NaN, float bits,
 * timing and labels. No CUDA here, so CPU-only tests include it as is;
 * test_support_cuda.h adds the device side. */
#ifndef ESMM_TEST_SUPPORT_H
#define ESMM_TEST_SUPPORT_H

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "esmm.h"

#define COUNT_OF(x) (sizeof(x) / sizeof((x)[0]))

/* A quiet NaN whose payload no arithmetic produces: poison around and inside
 * buffers, so a path that reads it gets NaN and one that writes it changes
 * the bits. */
#define POISON_BITS 0x7FDEAD01u

/* count elements of size bytes (at least one byte's worth, so a zero count
 * still gives a pointer to free). Out of memory is a failed check and ends
 * the test with the summary. */
static inline void *host_alloc(int64_t count, size_t size)
{
    void *p = malloc((size_t)(count > 0 ? count : 1) * size);
    if (p == NULL) {
        CHECK(0, "out of host memory");
        exit(check_finish());
    }
    return p;
}

static inline int64_t min_i64(int64_t x, int64_t y)
{
    return x < y ? x : y;
}

static inline int64_t max_i64(int64_t x, int64_t y)
{
    return x > y ? x : y;
}

/* 1 when all n bytes at p equal value: guards after output buffers. */
static inline int bytes_all_equal(const uint8_t *p, int64_t n, uint8_t value)
{
    for (int64_t i = 0; i < n; i++)
        if (p[i] != value)
            return 0;
    return 1;
}

static inline uint32_t float_bits(float x)
{
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    return bits;
}

static inline float poison_value(void)
{
    const uint32_t bits = POISON_BITS;
    float x;
    memcpy(&x, &bits, sizeof x);
    return x;
}

/* A result that is NaN and not the poison: a NaN some code wrote, where the
 * poison is what a buffer held before and so never written. Results compare
 * NaN to NaN through this, since a NaN's payload depends on the hardware. */
static inline int written_nan(float x)
{
    return isnan(x) && float_bits(x) != POISON_BITS;
}

/* Wall-clock seconds, for timeouts and rough timings. */
static inline double now_seconds(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* SplitMix64: a seeded, portable stream, so a failure reproduces from its
 * seed on any machine. */
static inline uint64_t rng_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1), 53 random bits. */
static inline double rng_uniform(uint64_t *state)
{
    return (double)(rng_next(state) >> 11) * 0x1.0p-53;
}

/* In [0, bound), bound > 0. */
static inline int64_t rng_below(uint64_t *state, int64_t bound)
{
    return (int64_t)(rng_next(state) % (uint64_t)bound);
}

/* Magnitude in [0.25, 1), random sign: never zero, and no product underflows.
 * Takes two draws. */
static inline float nonzero_value(uint64_t *state)
{
    const float magnitude = (float)(0.25 + 0.75 * rng_uniform(state));
    return rng_next(state) & 1 ? -magnitude : magnitude;
}

/* "?" for a value that is neither op: misuse tests pass such values. */
static inline const char *op_label(esmm_operation_t op)
{
    return op == ESMM_OP_N ? "N" : op == ESMM_OP_T ? "T" : "?";
}

/* got within tol of the float64 want; NaN and Inf must come out where want
 * has them. */
static inline int close_enough(float got, double want, double tol)
{
    if (isnan(want))
        return written_nan(got);
    if (isinf(want))
        return (double)got == want;
    return isfinite(got) && fabs((double)got - want) <= tol;
}

/* The command line of the stress tests: `cpu|cuda [problems [seed]]`.
 * problems must be a positive integer and seed an integer (0x... allowed),
 * both read whole; the defaults fill what is left out. Returns 0, or prints
 * the usage and returns -1. */
typedef struct {
    int cuda;
    int64_t problems;
    uint64_t seed;
} stress_args_t;

static inline int stress_parse_args(int argc, char **argv, int64_t cpu_problems,
                                    int64_t gpu_problems, uint64_t seed, stress_args_t *out)
{
    int ok = argc >= 2 && argc <= 4 &&
             (strcmp(argv[1], "cpu") == 0 || strcmp(argv[1], "cuda") == 0);
    out->cuda = ok && strcmp(argv[1], "cuda") == 0;
    out->problems = out->cuda ? gpu_problems : cpu_problems;
    out->seed = seed;
    char *end = NULL;
    if (ok && argc > 2) {
        errno = 0;
        const long long problems = strtoll(argv[2], &end, 10);
        ok = errno == 0 && end != argv[2] && *end == '\0' && problems > 0;
        out->problems = problems;
    }
    if (ok && argc > 3) {
        errno = 0;
        out->seed = strtoull(argv[3], &end, 0);
        ok = errno == 0 && end != argv[3] && *end == '\0' && argv[3][0] != '-';
    }
    if (!ok)
        fprintf(stderr, "usage: %s cpu|cuda [problems (> 0) [seed]]\n", argv[0]);
    return ok ? 0 : -1;
}

#endif
