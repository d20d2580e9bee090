/* Just enough JSON writing for the benchmark results files. */
#ifndef ESMM_TOOLS_JSON_H
#define ESMM_TOOLS_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Escapes s for use between JSON double quotes: '"', '\\' and control
 * characters are escaped, valid UTF-8 passes through, and each byte that is
 * not part of valid UTF-8 becomes U+FFFD. Writes at most cap bytes including
 * the terminating NUL (out may be NULL when cap is 0) and returns the length
 * of the full escaped text, like snprintf. */
size_t json_escape(const char *s, char *out, size_t cap);

/* Writes s as a quoted, escaped JSON string. */
void json_write_string(FILE *f, const char *s);

/* Writes a number, or null when it is NaN or infinite. */
void json_write_number(FILE *f, double value);

/* Object members after the first: `, "key": value`. A NULL string and a
 * number that is NaN or infinite are written as null. */
void json_field_string(FILE *f, const char *key, const char *value);
void json_field_number(FILE *f, const char *key, double value);
void json_field_integer(FILE *f, const char *key, int64_t value);
void json_field_bool(FILE *f, const char *key, bool value);

#endif
