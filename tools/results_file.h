/* The results file of --json. It is written beside its path and moved onto
 * it only once complete, so a run that fails leaves whatever the path held
 * (a symbolic link is followed, as a plain write would, even a dangling one;
 * the file it replaces keeps its permissions, but a hard link to it keeps
 * the old contents, as the file is replaced rather than rewritten);
 * a path naming something other than a regular file (a terminal, a pipe,
 * /dev/null) is written directly and never removed. A path naming one of the
 * run's input files is refused. */
#ifndef ESMM_TOOLS_RESULTS_FILE_H
#define ESMM_TOOLS_RESULTS_FILE_H

#include <stddef.h>
#include <stdio.h>

#include "cli_error.h"

typedef struct {
    FILE *file;      /* NULL when no results file is open */
    char *temp_path; /* where it is written; NULL when writing the path itself */
    char *final_path; /* where it goes: the path, through its symbolic links */
} results_file_t;

/* Opens the file for path; inputs (count entries, NULL ones skipped) are the
 * run's input files. Returns 0, or -1 with err set. */
int results_file_open(results_file_t *rf, const char *path, const char *const *inputs,
                      size_t count, cli_error_t *err);

/* Closes the file and moves it onto path (path names it in messages).
 * Returns 0, or -1 with err set (the partial file removed). */
int results_file_commit(results_file_t *rf, const char *path, cli_error_t *err);

/* Closes the file and removes what was written, if it was written beside the
 * path. Nothing when none is open. */
void results_file_discard(results_file_t *rf);

#endif
