/* esmm: the command-line tool. `esmm bench` times and checks GEMM kernels
 * (and, with --op csrmm|csrmv, CSR products against cuSPARSE),
 * `esmm analyze` describes the zeros of real matrices and what esmm does with
 * them, `esmm info` describes the build and the device. */
#include <stdio.h>
#include <string.h>

#include "analyze.h"
#include "bench.h"
#include "cli_error.h"
#include "esmm.h"
#include "info.h"

static void print_usage(FILE *f)
{
    fputs("usage: esmm <command> [options]\n"
          "\n"
          "commands:\n"
          "  bench    time and check GEMM kernels against cuBLAS (or the CPU backend);\n"
          "           --op csrmm|csrmv: CSR x dense products against cuSPARSE\n"
          "  analyze  zero statistics of .npy matrices and what esmm does with them\n"
          "  info     library version, build architectures, device\n"
          "\n"
          "  esmm <command> --help   options of a command\n"
          "  esmm --version          the library version\n"
          "\n"
          ESMM_EXIT_STATUS_HELP,
          f);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_usage(stderr);
        return ESMM_EXIT_USAGE;
    }
    const char *command = argv[1];
    if (strcmp(command, "bench") == 0)
        return bench_command(argc - 2, argv + 2);
    if (strcmp(command, "analyze") == 0)
        return analyze_command(argc - 2, argv + 2);
    if (strcmp(command, "info") == 0)
        return info_command(argc - 2, argv + 2);
    if (strcmp(command, "--help") == 0 || strcmp(command, "-h") == 0 ||
        strcmp(command, "help") == 0) {
        print_usage(stdout);
        return ESMM_EXIT_OK;
    }
    if (strcmp(command, "--version") == 0) {
        printf("esmm %s\n", esmm_version());
        return ESMM_EXIT_OK;
    }
    fprintf(stderr, "esmm: unknown command '%.64s'\n\n", command);
    print_usage(stderr);
    return ESMM_EXIT_USAGE;
}
