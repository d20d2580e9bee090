/* `esmm bench`: times kernels on generated or loaded inputs (see
 * bench_print_usage in cli_args.c for the options). */
#ifndef ESMM_TOOLS_BENCH_H
#define ESMM_TOOLS_BENCH_H

#include "cli_args.h"
#include "esmm.h"

/* argv are the arguments after "bench". Returns an ESMM_EXIT_* code. */
int bench_command(int argc, char **argv);

/* The benchmark the options describe, on an existing handle (the handle's
 * stream is left at its default afterwards). Returns an ESMM_EXIT_* code. */
int bench_run(esmm_handle_t handle, const bench_options_t *options);

#endif
