/* What `esmm bench` prints: a description of the run, a table with one row
 * per kernel, and the JSON results file of DESIGN.md ("Benchmark results
 * files"). */
#ifndef ESMM_TOOLS_REPORT_H
#define ESMM_TOOLS_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "esmm.h"

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
    bool show_gbps;          /* the table has extraction rows and a GB/s column */
    const char *case_label;  /* the sweep case, else NULL */
    double target;           /* the sweep case's speedup target for esmm end-to-end; 0: none */
} bench_summary_t;

typedef struct {
    const char *kernel;
    bool cached_b;      /* esmm with B's pattern extracted before timing */
    bool copy_kept;     /* that pattern keeps B's copy (--keep-copy) */
    char operand;       /* 'A' or 'B' for a row timing pattern extraction, else 0 */
    double bytes;       /* what an extraction row reads */
    bool ran;           /* timed successfully */
    char error[512];    /* why not, when it did not */
    double median_ms, min_ms;
    double host_us;     /* host time of one timed call (queuing it), NaN where not measured */
    double max_error;   /* NaN when not checked */
    const char *check;  /* "pass", "fail" or "skipped" */
    bool is_reference;  /* its output is the reference of the other rows */
    /* What esmm_get_last_info said of the row's extra run (--skip-stats). */
    bool has_info;
    esmm_info_t info;
    char info_kernel[64]; /* info.kernel, copied */
    char info_error[256]; /* why there is no info, when it was asked for */
} bench_row_t;

void report_print_header(FILE *f, const bench_summary_t *s);
void report_print_table_header(FILE *f, const bench_summary_t *s);
/* The row, and below it what esmm_get_last_info said when it was asked. */
void report_print_row(FILE *f, const bench_summary_t *s, const bench_row_t *row);

/* "esmm", or "esmm (cached B)" for a row with cached_b. */
void report_row_label(const bench_row_t *row, char *out, size_t cap);

/* "none", "dense" or "sparse". */
const char *report_path_name(esmm_path_t path);

/* esmm_info_t.masks: a short name ("used", "probe-dense", "small",
 * "narrow", "k-too-long" or "none") for results files, and a sentence saying why no
 * masks were used. */
const char *report_masks_name(esmm_masks_source_t masks);
const char *report_masks_reason(esmm_masks_source_t masks);

/* A results file written piece by piece: begin, then the rows of each run,
 * then end. date: ISO 8601 UTC, e.g. 2025-01-31T12:00:00Z. */
typedef struct {
    FILE *f;
    int results; /* written so far */
} report_json_t;

void report_json_begin(report_json_t *j, FILE *f, const char *device, const char *commit,
                       const char *date);
void report_json_add(report_json_t *j, const bench_summary_t *s, const bench_row_t *rows,
                     int count);
void report_json_end(report_json_t *j);

/* All three for one run. */
void report_write_json(FILE *f, const bench_summary_t *s, const bench_row_t *rows, int count,
                       const char *commit, const char *date);

/* One line of the closing table of a sweep. Times are NaN where a row did
 * not run or was not asked for. */
typedef struct {
    const char *label;
    int64_t size;
    double target;
    double baseline_ms, esmm_ms, cached_ms;
    bool has_info; /* what esmm end-to-end did */
    esmm_info_t info;
    const char *check; /* "fail" if any row of the case failed, else "pass" or "skipped" */
} sweep_line_t;

void report_print_sweep(FILE *f, const char *name, const char *baseline, const sweep_line_t *lines,
                        int count);

/* The current time as ISO 8601 UTC into out (at least 21 bytes). */
void report_utc_now(char *out, size_t cap);

#endif
