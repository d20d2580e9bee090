/* `esmm bench`: times kernels on generated or loaded inputs (see
 * bench_print_usage in cli_args.c for the options). */
#ifndef ESMM_TOOLS_BENCH_H
#define ESMM_TOOLS_BENCH_H

/* argv are the arguments after "bench". Returns an ESMM_EXIT_* code. */
int bench_command(int argc, char **argv);

#endif
