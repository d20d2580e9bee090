/* What `esmm bench` prints: a description of the run, a table with one row
 * per kernel, and the JSON results file of DESIGN.md ("Benchmark results
 * files"). */
#ifndef ESMM_TOOLS_REPORT_H
#define ESMM_TOOLS_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct {
    const char *device;  /* the GPU's name, or "cpu" */
    const char *backend; /* "cuda" or "cpu" */
    int64_t m, n, k;
    char transa, transb; /* 'N' or 'T' */
    double alpha, beta;
    const char *generator;         /* dense, pattern, density, random or file */
    double density_a, density_b;   /* the generator's parameters (1.0 where dense) */
    double nonzero_a, nonzero_b;   /* measured fraction of nonzero elements */
    const char *pattern_a;         /* the pattern when A comes from one, else NULL */
    const char *pattern_b;
    const char *file_a, *file_b;   /* loaded files, else NULL */
    const char *source_a;          /* where A comes from, in words */
    const char *source_b;
    uint64_t seed;
    int64_t runs, warmup, copies;
    const char *clock;
    double flops;           /* 2 m n k */
    double effective_flops; /* 2 * products with both factors nonzero */
    const char *baseline;   /* "cublas" or "cpu" */
    double baseline_ms;     /* median of the baseline; NaN when it did not run */
    const char *reference;  /* "cpu-float64", "cublas" or "none" */
    double reference_seconds; /* time the CPU reference took (shown from 0.1 s) */
    double tolerance;
} bench_summary_t;

typedef struct {
    const char *kernel;
    bool ran;           /* timed successfully */
    char error[512];    /* why not, when it did not */
    double median_ms, min_ms;
    double max_error;   /* NaN when not checked */
    const char *check;  /* "pass", "fail" or "skipped" */
    bool is_reference;  /* its output is the reference of the other rows */
} bench_row_t;

void report_print_header(FILE *f, const bench_summary_t *s);
void report_print_table_header(FILE *f, const bench_summary_t *s);
void report_print_row(FILE *f, const bench_summary_t *s, const bench_row_t *row);

/* date: ISO 8601 UTC, e.g. 2025-01-31T12:00:00Z. */
void report_write_json(FILE *f, const bench_summary_t *s, const bench_row_t *rows, int count,
                       const char *commit, const char *date);

/* The current time as ISO 8601 UTC into out (at least 21 bytes). */
void report_utc_now(char *out, size_t cap);

#endif
