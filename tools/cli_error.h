/* Error messages and exit codes shared by the esmm command-line tool. Parsing
 * and file code report into a cli_error_t instead of printing, so tests can
 * check both the outcome and the message. */
#ifndef ESMM_CLI_ERROR_H
#define ESMM_CLI_ERROR_H

/* Exit codes of the esmm command (also listed in `esmm --help`). */
enum {
    ESMM_EXIT_OK = 0,
    ESMM_EXIT_CHECK_FAILED = 1, /* a result failed verification, or a kernel failed */
    ESMM_EXIT_USAGE = 2,        /* bad command line: flag, value, kernel name, sizes */
    ESMM_EXIT_RUNTIME = 3       /* unreadable, malformed or empty input file, out of
                                 * memory, CUDA error */
};

/* The codes as `esmm --help` and `esmm bench --help` state them (the CSR
 * bench and analyze word codes 1 and 2 for what they check). */
#define ESMM_EXIT_STATUS_HELP                                                     \
    "exit status: 0 all good, 1 a check or a kernel failed, 2 bad command line,\n" \
    "3 unreadable, malformed or empty input file, out of memory or CUDA error.\n"

typedef struct {
    char text[512];
} cli_error_t;

#if defined(__GNUC__)
#define CLI_PRINTF_LIKE(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#else
#define CLI_PRINTF_LIKE(fmt_index, first_arg)
#endif

/* Sets the message (printf-style); err may be NULL. Always returns -1 so
 * callers can `return cli_error_set(...)`. */
int cli_error_set(cli_error_t *err, const char *fmt, ...) CLI_PRINTF_LIKE(2, 3);

/* Prints "COMMAND: message" and where the options are described to stderr;
 * returns ESMM_EXIT_USAGE. */
int cli_usage_error(const char *command, const char *help, const cli_error_t *err);
/* Prints "COMMAND: message" to stderr; returns ESMM_EXIT_RUNTIME. */
int cli_runtime_error(const char *command, const cli_error_t *err);
/* The more serious of two exit codes: the ESMM_EXIT_* codes grow with it. */
int cli_worse_exit(int a, int b);

#endif
