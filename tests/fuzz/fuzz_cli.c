/* libFuzzer harness: the esmm tool's argument parsers (bench for sgemm and
 * the CSR products, analyze) on arbitrary argument lists: the bytes split at
 * NULs into up to 32 arguments. Parsing only; nothing runs. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "bench_csr.h"
#include "cli_args.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MAX_ARGS = 32 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char *argv[MAX_ARGS + 1];
    int argc = 0;
    for (size_t at = 0; at < size && argc < MAX_ARGS; at += strlen(text + at) + 1)
        argv[argc++] = text + at;
    argv[argc] = NULL;

    cli_error_t err;
    bench_op_t op;
    if (bench_find_op(argc, argv, &op, &err) == 0) {
        if (op == BENCH_OP_SGEMM) {
            bench_options_t o;
            (void)bench_parse_args(argc, argv, &o, &err);
        } else {
            bench_csr_options_t o;
            (void)bench_csr_parse_args(argc, argv, &o, &err);
        }
    }
    analyze_options_t a;
    (void)analyze_parse_args(argc, argv, &a, &err);
    free(text);
    return 0;
}
