/* What the file-format harnesses share: the fuzzer's bytes as a file (the
 * readers take paths), one per process. */
#ifndef ESMM_FUZZ_INPUT_H
#define ESMM_FUZZ_INPUT_H

#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

static const char *fuzz_input_file(const uint8_t *data, size_t size)
{
    static char path[64];
    if (path[0] == '\0')
        snprintf(path, sizeof path, "/tmp/esmm-fuzz-%ld", (long)getpid());
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return NULL;
    const size_t written = fwrite(data, 1, size, f);
    return fclose(f) == 0 && written == size ? path : NULL;
}

#endif
