/* `esmm bench`: times kernels on generated or loaded inputs (see
 * bench_print_usage in cli_args.c for the options). */
#ifndef ESMM_TOOLS_BENCH_H
#define ESMM_TOOLS_BENCH_H

#include <stdio.h>

#include "cli_args.h"
#include "esmm.h"
#include "report.h"
#include "results_file.h"

/* argv are the arguments after "bench". Returns an ESMM_EXIT_* code. */
int bench_command(int argc, char **argv);

/* The benchmark the options describe, on an existing handle (the handle's
 * stream is left at its default afterwards). Returns an ESMM_EXIT_* code. */
int bench_run(esmm_handle_t handle, const bench_options_t *options);

/* Pieces every bench operation shares. */

/* Creates a handle on backend, or says why not on stderr. Returns an
 * ESMM_EXIT_* code. */
int bench_create_handle(esmm_backend_t backend, esmm_handle_t *handle);

/* Marks the row failed with err's text and reports it on stderr. */
void bench_fail_row(bench_row_t *row, const cli_error_t *err);

/* Refuses m x n x k where its matrices could not be addressed, or where
 * bytes of host buffers exceed the share of this machine's memory a run may
 * take. Returns 0, or -1 with err set. */
int bench_check_host_memory(int64_t m, int64_t n, int64_t k, double bytes, cli_error_t *err);

/* Whether bytes of host buffers fit in the share of this machine's memory a
 * run may take (they do where the memory cannot be told); *memory gets that
 * memory in bytes, 0 where it cannot be told. */
bool bench_host_memory_fits(double bytes, double *memory);

/* Sorts ms in place; returns the median, *min gets the smallest. */
double bench_median_and_min(double *ms, int64_t count, double *min);

/* The commit a results file records: given (--commit), else $ESMM_COMMIT,
 * else "unknown". */
const char *bench_commit_string(const char *given);

/* Opens the results file for path (results_file.h; inputs, count: the run's
 * input files) and writes its head (device, commit, date). Returns 0, or -1
 * with err set. */
int bench_json_open(results_file_t *file, const char *path, const char *const *inputs,
                    size_t count, report_json_t *writer, const char *device, const char *commit,
                    cli_error_t *err);

/* Writes the tail, moves the file onto its path and says where the results
 * went; with no results written, discards it (the path keeps what it held).
 * Returns an ESMM_EXIT_* code. */
int bench_json_finish(report_json_t *writer, results_file_t *file, const char *path);

#endif
