#define _XOPEN_SOURCE 700 /* mkstemp, fdopen, fchmod, realpath */

#include "results_file.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int same_file(const struct stat *a, const char *path)
{
    struct stat b;
    return stat(path, &b) == 0 && a->st_dev == b.st_dev && a->st_ino == b.st_ino;
}

static void release(results_file_t *rf)
{
    free(rf->temp_path);
    free(rf->final_path);
    rf->temp_path = rf->final_path = NULL;
}

/* Where a plain write to a path that does not exist lands: the path, or the
 * end of the chain of dangling symbolic links it starts (NULL when that
 * cannot be told). */
static char *creation_path(const char *path)
{
    char *at = strdup(path);
    for (int hops = 0; at != NULL && hops < 40; hops++) {
        struct stat st;
        if (lstat(at, &st) != 0 || !S_ISLNK(st.st_mode))
            return at;
        char to[PATH_MAX];
        const ssize_t length = readlink(at, to, sizeof to - 1);
        if (length <= 0)
            break;
        to[length] = '\0';
        /* A relative link is relative to the directory that holds it. */
        const char *slash = strrchr(at, '/');
        const size_t dir = to[0] == '/' || slash == NULL ? 0 : (size_t)(slash - at) + 1;
        char *next = malloc(dir + (size_t)length + 1);
        if (next != NULL) {
            memcpy(next, at, dir);
            memcpy(next + dir, to, (size_t)length + 1);
        }
        free(at);
        at = next;
    }
    free(at);
    return NULL;
}

int results_file_open(results_file_t *rf, const char *path, const char *const *inputs,
                      size_t count, cli_error_t *err)
{
    memset(rf, 0, sizeof *rf);
    struct stat target;
    const int exists = stat(path, &target) == 0;
    for (size_t i = 0; exists && i < count; i++)
        if (inputs[i] != NULL && same_file(&target, inputs[i]))
            return cli_error_set(err, "%s: the results file would replace the input %s", path,
                                 inputs[i]);
    if (exists && !S_ISREG(target.st_mode)) {
        rf->file = fopen(path, "w");
        if (rf->file == NULL)
            return cli_error_set(err, "%s: cannot write: %s", path, strerror(errno));
        return 0;
    }
    /* An existing file is replaced where its links lead; a new one is made
     * where a dangling link leads, or at the path. */
    rf->final_path = exists ? realpath(path, NULL) : creation_path(path);
    if (rf->final_path == NULL)
        rf->final_path = strdup(path);
    static const char suffix[] = ".partial-XXXXXX";
    const size_t length = rf->final_path != NULL ? strlen(rf->final_path) : 0;
    rf->temp_path = rf->final_path != NULL ? malloc(length + sizeof suffix) : NULL;
    if (rf->temp_path == NULL) {
        release(rf);
        return cli_error_set(err, "%s: out of memory", path);
    }
    memcpy(rf->temp_path, rf->final_path, length);
    memcpy(rf->temp_path + length, suffix, sizeof suffix);
    const int fd = mkstemp(rf->temp_path);
    if (fd >= 0)
        rf->file = fdopen(fd, "w");
    if (rf->file == NULL) {
        cli_error_set(err, "%s: cannot create: %s", path, strerror(errno));
        if (fd >= 0) {
            close(fd);
            remove(rf->temp_path);
        }
        release(rf);
        return -1;
    }
    /* mkstemp makes the file private; a results file gets the permissions a
     * plain write would give it: those of the file it replaces, else the
     * umask's. */
    const mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, exists ? target.st_mode & 07777 : 0666 & ~mask);
    return 0;
}

int results_file_commit(results_file_t *rf, const char *path, cli_error_t *err)
{
    int failed = ferror(rf->file);
    if (fclose(rf->file) != 0)
        failed = 1;
    rf->file = NULL;
    if (failed)
        cli_error_set(err, "%s: writing the results failed", path);
    else if (rf->temp_path != NULL && rename(rf->temp_path, rf->final_path) != 0)
        failed = cli_error_set(err, "%s: cannot move the results there: %s", path,
                               strerror(errno));
    if (failed && rf->temp_path != NULL)
        remove(rf->temp_path);
    release(rf);
    return failed ? -1 : 0;
}

void results_file_discard(results_file_t *rf)
{
    if (rf->file == NULL)
        return;
    fclose(rf->file);
    rf->file = NULL;
    if (rf->temp_path != NULL)
        remove(rf->temp_path);
    release(rf);
}
