/* `esmm bench`: times kernels on generated or loaded inputs (see
 * bench_print_usage in cli_args.c for the options). */
#ifndef ESMM_TOOLS_BENCH_H
#define ESMM_TOOLS_BENCH_H

#include <stdio.h>

#include "cli_args.h"
#include "esmm.h"
#include "report.h"

/* argv are the arguments after "bench". Returns an ESMM_EXIT_* code. */
int bench_command(int argc, char **argv);

/* The benchmark the options describe, on an existing handle (the handle's
 * stream is left at its default afterwards). Returns an ESMM_EXIT_* code. */
int bench_run(esmm_handle_t handle, const bench_options_t *options);

/* Pieces every bench operation shares. */

/* Sorts ms in place; returns the median, *min gets the smallest. */
double bench_median_and_min(double *ms, int64_t count, double *min);

/* The commit a results file records: given (--commit), else $ESMM_COMMIT,
 * else "unknown". */
const char *bench_commit_string(const char *given);

/* Creates a results file and writes its head (device, commit, date); NULL
 * with err set when the file cannot be created. */
FILE *bench_json_open(const char *path, report_json_t *writer, const char *device,
                      const char *commit, cli_error_t *err);

/* Writes the tail, closes *file (then NULL) and says where the results went.
 * Returns an ESMM_EXIT_* code. */
int bench_json_finish(report_json_t *writer, FILE **file, const char *path);

#endif
