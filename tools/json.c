#include "json.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s (1 to 4), or 0 if it is invalid
 * (overlong forms, surrogates and code points past U+10FFFF included). */
static size_t utf8_sequence_length(const unsigned char *s)
{
    unsigned char c = s[0];
    size_t length;
    unsigned char low = 0x80, high = 0xbf; /* allowed range of the second byte */
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        length = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
        length = 3;
        if (c == 0xe0)
            low = 0xa0;
        if (c == 0xed)
            high = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        length = 4;
        if (c == 0xf0)
            low = 0x90;
        if (c == 0xf4)
            high = 0x8f;
    } else {
        return 0;
    }
    if (s[1] < low || s[1] > high)
        return 0;
    for (size_t i = 2; i < length; i++)
        if (s[i] < 0x80 || s[i] > 0xbf)
            return 0;
    return length;
}

/* Appends text to out[0..cap) at *used, always counting the full length. */
static void append(char *out, size_t cap, size_t *used, const char *text, size_t length)
{
    for (size_t i = 0; i < length; i++, (*used)++)
        if (*used + 1 < cap)
            out[*used] = text[i];
}

size_t json_escape(const char *s, char *out, size_t cap)
{
    static const char hex[] = "0123456789abcdef";
    size_t used = 0;
    const unsigned char *p = (const unsigned char *)s;
    while (*p != '\0') {
        unsigned char c = *p;
        char escaped[7] = {'\\', 0, 0, 0, 0, 0, 0};
        size_t escaped_length = 2;
        switch (c) {
        case '"': escaped[1] = '"'; break;
        case '\\': escaped[1] = '\\'; break;
        case '\b': escaped[1] = 'b'; break;
        case '\f': escaped[1] = 'f'; break;
        case '\n': escaped[1] = 'n'; break;
        case '\r': escaped[1] = 'r'; break;
        case '\t': escaped[1] = 't'; break;
        default:
            if (c < 0x20) {
                memcpy(escaped + 1, "u00", 3);
                escaped[4] = hex[c >> 4];
                escaped[5] = hex[c & 0xf];
                escaped_length = 6;
            } else {
                escaped_length = 0;
            }
        }
        if (escaped_length > 0) {
            append(out, cap, &used, escaped, escaped_length);
            p++;
            continue;
        }
        size_t length = utf8_sequence_length(p);
        if (length == 0) {
            append(out, cap, &used, "\\ufffd", 6);
            p++;
        } else {
            append(out, cap, &used, (const char *)p, length);
            p += length;
        }
    }
    if (cap > 0)
        out[used < cap ? used : cap - 1] = '\0';
    return used;
}

void json_write_string(FILE *f, const char *s)
{
    size_t length = json_escape(s, NULL, 0);
    char *escaped = malloc(length + 1);
    fputc('"', f);
    if (escaped != NULL) {
        json_escape(s, escaped, length + 1);
        fputs(escaped, f);
        free(escaped);
    }
    fputc('"', f);
}

void json_write_number(FILE *f, double value)
{
    if (isfinite(value))
        fprintf(f, "%.6g", value);
    else
        fputs("null", f);
}

void json_field_string(FILE *f, const char *key, const char *value)
{
    fprintf(f, ", \"%s\": ", key);
    if (value != NULL)
        json_write_string(f, value);
    else
        fputs("null", f);
}

void json_field_number(FILE *f, const char *key, double value)
{
    fprintf(f, ", \"%s\": ", key);
    json_write_number(f, value);
}

void json_field_integer(FILE *f, const char *key, int64_t value)
{
    fprintf(f, ", \"%s\": %" PRId64, key, value);
}

void json_field_bool(FILE *f, const char *key, bool value)
{
    fprintf(f, ", \"%s\": %s", key, value ? "true" : "false");
}
