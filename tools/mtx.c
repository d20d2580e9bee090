#include "mtx.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MTX_BANNER "%%MatrixMarket"
#define MTX_BANNER_FORM MTX_BANNER " matrix coordinate <real|integer|pattern> <general|symmetric|skew-symmetric>"
/* The Matrix Market definition limits lines to 1024 characters. A longer
 * comment line is skipped; any other line that long is refused. */
#define MTX_MAX_LINE 1024
#define MTX_CHUNK_BYTES (64 * 1024)
/* The first allocation for entries when the size line declares more: a
 * declared count is only trusted as an upper bound, and storage grows with
 * what the file really holds. */
#define MTX_FIRST_CAPACITY 4096

typedef enum { FIELD_REAL, FIELD_INTEGER, FIELD_PATTERN } mtx_field_t;
typedef enum { SYMMETRY_GENERAL, SYMMETRY_SYMMETRIC, SYMMETRY_SKEW } mtx_symmetry_t;

static const char *const field_names[] = {"real", "integer", "pattern"};

/* Hands out the file's lines one at a time from a chunk buffer, keeping at
 * most MTX_MAX_LINE characters of each. */
typedef struct {
    FILE *file;
    const char *path;
    cli_error_t *err;
    char *chunk;
    size_t chunk_pos, chunk_len;
    bool at_eof;
    int64_t line_number; /* of the line in `line` */
    char line[MTX_MAX_LINE + 1];
    size_t line_len;
    bool line_too_long;
} line_reader_t;

typedef enum { LINE_END_OF_FILE, LINE_DATA, LINE_ERROR } line_kind_t;

/* The file's entries, zero-based, in file order. */
typedef struct {
    int32_t *row, *col;
    float *value; /* NULL for a pattern file */
    int64_t count, capacity;
} entry_list_t;

typedef struct {
    mtx_field_t field;
    mtx_symmetry_t symmetry;
    int64_t rows, cols, declared;
    int64_t size_line; /* where the size line is, for messages */
} mtx_header_t;

/* Entries a symmetric or skew-symmetric file stores above the diagonal, where
 * the format stores none. */
typedef struct {
    int64_t count;
    int64_t first_line; /* of the first of them */
} upper_entries_t;

static int reader_fail(const line_reader_t *r, const char *fmt, ...) CLI_PRINTF_LIKE(2, 3);

static int reader_fail(const line_reader_t *r, const char *fmt, ...)
{
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return cli_error_set(r->err, "%s: line %" PRId64 ": %s", r->path, r->line_number, what);
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

static void append_to_line(line_reader_t *r, const char *text, size_t n)
{
    size_t room = MTX_MAX_LINE - r->line_len;
    if (n > room) {
        r->line_too_long = true;
        n = room;
    }
    memcpy(r->line + r->line_len, text, n);
    r->line_len += n;
}

/* Reads the next line into r->line (without its '\n'). Returns 1, 0 at the
 * end of the file, or -1 with the error set when reading fails. */
static int read_line(line_reader_t *r)
{
    bool any = false;
    r->line_len = 0;
    r->line_too_long = false;
    for (;;) {
        if (r->chunk_pos == r->chunk_len) {
            if (r->at_eof)
                break;
            r->chunk_len = fread(r->chunk, 1, MTX_CHUNK_BYTES, r->file);
            r->chunk_pos = 0;
            if (r->chunk_len == 0) {
                if (ferror(r->file))
                    return cli_error_set(r->err, "%s: line %" PRId64 ": read error: %s", r->path,
                                         r->line_number + 1, strerror(errno));
                r->at_eof = true;
                break;
            }
        }
        const char *start = r->chunk + r->chunk_pos;
        size_t available = r->chunk_len - r->chunk_pos;
        const char *newline = memchr(start, '\n', available);
        size_t taken = newline != NULL ? (size_t)(newline - start) : available;
        append_to_line(r, start, taken);
        any = true;
        r->chunk_pos += taken + (newline != NULL ? 1 : 0);
        if (newline != NULL)
            break;
    }
    if (!any)
        return 0;
    r->line_number++;
    r->line[r->line_len] = '\0';
    return 1;
}

/* Skips blank and comment lines; a data line must be whole text. */
static line_kind_t next_data_line(line_reader_t *r)
{
    for (;;) {
        int got = read_line(r);
        if (got < 0)
            return LINE_ERROR;
        if (got == 0)
            return LINE_END_OF_FILE;
        const char *p = r->line;
        while (is_space(*p))
            p++;
        if (*p == '%' || (*p == '\0' && !r->line_too_long && p == r->line + r->line_len))
            continue;
        if (r->line_too_long) {
            reader_fail(r, "line longer than %d characters (the Matrix Market limit)", MTX_MAX_LINE);
            return LINE_ERROR;
        }
        if (memchr(r->line, '\0', r->line_len) != NULL) {
            reader_fail(r, "NUL byte in the line (is this a text file?)");
            return LINE_ERROR;
        }
        return LINE_DATA;
    }
}

/* Splits line in place at whitespace; stores up to cap tokens and returns how
 * many there are in all. */
static int split_tokens(char *line, char **tokens, int cap)
{
    int count = 0;
    char *p = line;
    for (;;) {
        while (is_space(*p))
            p++;
        if (*p == '\0')
            return count;
        if (count < cap)
            tokens[count] = p;
        count++;
        while (*p != '\0' && !is_space(*p))
            p++;
        if (*p != '\0')
            *p++ = '\0';
    }
}

/* ASCII case-insensitive equality. */
static bool same_word(const char *a, const char *b)
{
    for (; *a != '\0' && *b != '\0'; a++, b++) {
        char x = *a >= 'A' && *a <= 'Z' ? (char)(*a - 'A' + 'a') : *a;
        char y = *b >= 'A' && *b <= 'Z' ? (char)(*b - 'A' + 'a') : *b;
        if (x != y)
            return false;
    }
    return *a == *b;
}

typedef enum { INTEGER_OK, INTEGER_MALFORMED, INTEGER_OVERFLOW } integer_parse_t;

/* A decimal integer: optional sign, then digits only. */
static integer_parse_t parse_int64(const char *token, int64_t *value)
{
    const char *p = token;
    bool negative = false;
    if (*p == '+' || *p == '-')
        negative = *p++ == '-';
    if (*p == '\0')
        return INTEGER_MALFORMED;
    for (const char *q = p; *q != '\0'; q++)
        if (*q < '0' || *q > '9')
            return INTEGER_MALFORMED;
    const uint64_t limit = negative ? (uint64_t)INT64_MAX + 1u : (uint64_t)INT64_MAX;
    uint64_t magnitude = 0;
    for (; *p != '\0'; p++) {
        uint64_t digit = (uint64_t)(*p - '0');
        if (magnitude > (limit - digit) / 10u)
            return INTEGER_OVERFLOW;
        magnitude = magnitude * 10u + digit;
    }
    if (!negative)
        *value = (int64_t)magnitude;
    else
        *value = magnitude > (uint64_t)INT64_MAX ? INT64_MIN : -(int64_t)magnitude;
    return INTEGER_OK;
}

/* An integer in [min, max]; `what` names it in the message. */
static int parse_bounded(const line_reader_t *r, const char *token, const char *what, int64_t min,
                         int64_t max, int64_t *out)
{
    int64_t value = 0;
    integer_parse_t status = parse_int64(token, &value);
    if (status == INTEGER_MALFORMED)
        return reader_fail(r, "%s '%.40s' is not an integer", what, token);
    if (status == INTEGER_OVERFLOW || value < min || value > max)
        return reader_fail(r, "%s %.40s is out of range %" PRId64 "..%" PRId64, what, token, min, max);
    *out = value;
    return 0;
}

static int parse_value(const line_reader_t *r, const char *token, mtx_field_t field, float *out)
{
    if (field == FIELD_INTEGER) {
        int64_t value = 0;
        if (parse_int64(token, &value) != INTEGER_OK)
            return reader_fail(r, "value '%.40s' is not an integer in the int64 range (the banner says "
                                  "integer)", token);
        *out = (float)value;
        return 0;
    }
    char *end = NULL;
    errno = 0;
    float value = strtof(token, &end);
    if (end == token || *end != '\0')
        return reader_fail(r, "value '%.40s' is not a number", token);
    if (errno == ERANGE && isinf(value))
        return reader_fail(r, "value %.40s is beyond the float32 range", token);
    *out = value;
    return 0;
}

static int read_banner(line_reader_t *r, mtx_header_t *h)
{
    int got = read_line(r);
    if (got < 0)
        return -1;
    if (got == 0)
        return cli_error_set(r->err, "%s: the file is empty; line 1 should be the banner '%s'", r->path,
                             MTX_BANNER_FORM);
    if (r->line_too_long)
        return reader_fail(r, "line longer than %d characters; expected the banner '%s'", MTX_MAX_LINE,
                           MTX_BANNER_FORM);
    char *tokens[6];
    bool binary = memchr(r->line, '\0', r->line_len) != NULL;
    int count = split_tokens(r->line, tokens, 6);
    if (binary || count == 0 || !same_word(tokens[0], MTX_BANNER))
        return reader_fail(r, "not a Matrix Market file: expected the banner '%s'", MTX_BANNER_FORM);
    if (count < 5)
        return reader_fail(r, "incomplete banner; expected '%s'", MTX_BANNER_FORM);
    if (!same_word(tokens[1], "matrix"))
        return reader_fail(r, "object '%.40s' is not supported (only 'matrix')", tokens[1]);
    if (same_word(tokens[2], "array"))
        return reader_fail(r, "the dense 'array' format is not supported (only 'coordinate')");
    if (!same_word(tokens[2], "coordinate"))
        return reader_fail(r, "unknown format '%.40s' (expected 'coordinate')", tokens[2]);
    if (same_word(tokens[3], "real"))
        h->field = FIELD_REAL;
    else if (same_word(tokens[3], "integer"))
        h->field = FIELD_INTEGER;
    else if (same_word(tokens[3], "pattern"))
        h->field = FIELD_PATTERN;
    else if (same_word(tokens[3], "complex"))
        return reader_fail(r, "complex values are not supported (only real, integer and pattern)");
    else
        return reader_fail(r, "unknown field '%.40s' (expected real, integer or pattern)", tokens[3]);
    if (same_word(tokens[4], "general"))
        h->symmetry = SYMMETRY_GENERAL;
    else if (same_word(tokens[4], "symmetric"))
        h->symmetry = SYMMETRY_SYMMETRIC;
    else if (same_word(tokens[4], "skew-symmetric"))
        h->symmetry = SYMMETRY_SKEW;
    else if (same_word(tokens[4], "hermitian"))
        return reader_fail(r, "hermitian matrices are not supported (only general, symmetric and "
                              "skew-symmetric)");
    else
        return reader_fail(r, "unknown symmetry '%.40s' (expected general, symmetric or skew-symmetric)",
                           tokens[4]);
    if (count > 5)
        return reader_fail(r, "unexpected text '%.40s' after the banner", tokens[5]);
    if (h->field == FIELD_PATTERN && h->symmetry == SYMMETRY_SKEW)
        return reader_fail(r, "'pattern skew-symmetric' is contradictory (pattern entries are all 1)");
    return 0;
}

static int read_size_line(line_reader_t *r, mtx_header_t *h)
{
    line_kind_t kind = next_data_line(r);
    if (kind == LINE_ERROR)
        return -1;
    if (kind == LINE_END_OF_FILE)
        return reader_fail(r, "end of file before the size line (rows columns entries)");
    char *tokens[4];
    int count = split_tokens(r->line, tokens, 4);
    if (count != 3)
        return reader_fail(r, "the size line needs 3 integers (rows columns entries); it has %d fields",
                           count);
    if (parse_bounded(r, tokens[0], "row count", 0, INT32_MAX, &h->rows) != 0 ||
        parse_bounded(r, tokens[1], "column count", 0, INT32_MAX, &h->cols) != 0 ||
        parse_bounded(r, tokens[2], "entry count", 0, INT32_MAX, &h->declared) != 0)
        return -1;
    if (h->symmetry != SYMMETRY_GENERAL && h->rows != h->cols)
        return reader_fail(r, "a %s matrix must be square; the size line gives %" PRId64 " x %" PRId64,
                           h->symmetry == SYMMETRY_SKEW ? "skew-symmetric" : "symmetric", h->rows,
                           h->cols);
    h->size_line = r->line_number;
    return 0;
}

static void free_entries(entry_list_t *e)
{
    free(e->row);
    free(e->col);
    free(e->value);
    memset(e, 0, sizeof *e);
}

/* Room for one more entry, growing geometrically but never past `limit`. */
static bool reserve_entry(entry_list_t *e, int64_t limit, bool with_values)
{
    if (e->count < e->capacity)
        return true;
    int64_t capacity = e->capacity < MTX_FIRST_CAPACITY / 2 ? MTX_FIRST_CAPACITY : 2 * e->capacity;
    if (capacity > limit)
        capacity = limit;
    int32_t *row = realloc(e->row, (size_t)capacity * sizeof *row);
    if (row == NULL)
        return false;
    e->row = row;
    int32_t *col = realloc(e->col, (size_t)capacity * sizeof *col);
    if (col == NULL)
        return false;
    e->col = col;
    if (with_values) {
        float *value = realloc(e->value, (size_t)capacity * sizeof *value);
        if (value == NULL)
            return false;
        e->value = value;
    }
    e->capacity = capacity;
    return true;
}

/* Reads the declared entries; *expanded counts them with their mirrors. */
static int read_entries(line_reader_t *r, const mtx_header_t *h, entry_list_t *e, int64_t *expanded,
                        upper_entries_t *upper)
{
    const bool pattern = h->field == FIELD_PATTERN;
    const int wanted = pattern ? 2 : 3;
    *expanded = 0;
    while (e->count < h->declared) {
        line_kind_t kind = next_data_line(r);
        if (kind == LINE_ERROR)
            return -1;
        if (kind == LINE_END_OF_FILE)
            return reader_fail(r, "end of file after %" PRId64 " of the %" PRId64
                                  " entries that line %" PRId64 " declares (truncated file?)",
                               e->count, h->declared, h->size_line);
        char *tokens[4];
        int count = split_tokens(r->line, tokens, 4);
        if (count < wanted)
            return reader_fail(r, "an entry needs %s; found %d field%s",
                               pattern ? "row and column" : "row, column and value", count,
                               count == 1 ? "" : "s");
        if (count > wanted)
            return reader_fail(r, "unexpected text '%.40s' after the entry (a %s entry has %d fields)",
                               tokens[wanted], field_names[h->field], wanted);
        int64_t row = 0, col = 0;
        float value = 1.0f;
        if (parse_bounded(r, tokens[0], "row index", 1, h->rows, &row) != 0 ||
            parse_bounded(r, tokens[1], "column index", 1, h->cols, &col) != 0 ||
            (!pattern && parse_value(r, tokens[2], h->field, &value) != 0))
            return -1;
        if (h->symmetry == SYMMETRY_SKEW && row == col)
            return reader_fail(r, "diagonal entry (%" PRId64 ", %" PRId64 ") in a skew-symmetric "
                                  "matrix (its diagonal is zero and is not stored)", row, col);
        if (h->symmetry != SYMMETRY_GENERAL && row < col) {
            if (upper->count == 0)
                upper->first_line = r->line_number;
            upper->count++;
        }
        *expanded += h->symmetry != SYMMETRY_GENERAL && row != col ? 2 : 1;
        if (*expanded > INT32_MAX)
            return reader_fail(r, "with the mirrored entries the matrix has more than %d entries "
                                  "(CSR indices are int32)", INT32_MAX);
        if (!reserve_entry(e, h->declared, !pattern))
            return reader_fail(r, "out of memory after %" PRId64 " entries", e->count);
        e->row[e->count] = (int32_t)(row - 1);
        e->col[e->count] = (int32_t)(col - 1);
        if (!pattern)
            e->value[e->count] = value;
        e->count++;
    }
    return 0;
}

static int check_nothing_follows(line_reader_t *r, const mtx_header_t *h)
{
    line_kind_t kind = next_data_line(r);
    if (kind == LINE_ERROR)
        return -1;
    if (kind == LINE_DATA)
        return reader_fail(r, "unexpected text after the last of the %" PRId64
                              " entries that line %" PRId64 " declares", h->declared, h->size_line);
    return 0;
}

static void place_entry(int32_t *row_ptr, int32_t *col_idx, float *values, int32_t row, int32_t col,
                        float value)
{
    int32_t at = row_ptr[row]++;
    col_idx[at] = col;
    if (values != NULL)
        values[at] = value;
}

/* A stable counting sort by row of the entries, each followed by its mirror
 * where the matrix is symmetric or skew-symmetric. */
static int build_csr(const entry_list_t *e, const mtx_header_t *h, int64_t expanded, mtx_csr_t *out)
{
    const bool mirrored = h->symmetry != SYMMETRY_GENERAL;
    const float mirror_sign = h->symmetry == SYMMETRY_SKEW ? -1.0f : 1.0f;
    const size_t slots = (size_t)(expanded > 0 ? expanded : 1);
    int32_t *row_ptr = calloc((size_t)h->rows + 1, sizeof *row_ptr);
    int32_t *col_idx = malloc(slots * sizeof *col_idx);
    float *values = h->field == FIELD_PATTERN ? NULL : malloc(slots * sizeof *values);
    if (row_ptr == NULL || col_idx == NULL || (h->field != FIELD_PATTERN && values == NULL)) {
        free(row_ptr);
        free(col_idx);
        free(values);
        return -1;
    }
    for (int64_t k = 0; k < e->count; k++) {
        row_ptr[e->row[k] + 1]++;
        if (mirrored && e->row[k] != e->col[k])
            row_ptr[e->col[k] + 1]++;
    }
    for (int64_t r = 0; r < h->rows; r++)
        row_ptr[r + 1] += row_ptr[r];
    /* row_ptr[r] is now where row r starts; placing advances it to where row
     * r + 1 starts, and the shift below restores the starts. */
    for (int64_t k = 0; k < e->count; k++) {
        float value = values != NULL ? e->value[k] : 1.0f;
        place_entry(row_ptr, col_idx, values, e->row[k], e->col[k], value);
        if (mirrored && e->row[k] != e->col[k])
            place_entry(row_ptr, col_idx, values, e->col[k], e->row[k], mirror_sign * value);
    }
    for (int64_t r = h->rows; r > 0; r--)
        row_ptr[r] = row_ptr[r - 1];
    row_ptr[0] = 0;
    out->rows = h->rows;
    out->cols = h->cols;
    out->nnz = expanded;
    out->row_ptr = row_ptr;
    out->col_idx = col_idx;
    out->values = values;
    return 0;
}

/* Hands the declared sizes to the caller's check, with the entries the file
 * can hold once mirrored; the refusal names the size line (the reader is
 * still on it). */
static int check_declared_sizes(const line_reader_t *r, const mtx_header_t *h,
                                mtx_size_check_t check, const void *context)
{
    cli_error_t refusal = {""};
    /* Every off-diagonal entry gains its mirror; read_entries refuses more than INT32_MAX. */
    int64_t most = h->symmetry == SYMMETRY_GENERAL ? h->declared : 2 * h->declared;
    if (most > INT32_MAX)
        most = INT32_MAX;
    if (check == NULL || check(context, h->rows, h->cols, most, &refusal) == 0)
        return 0;
    return reader_fail(r, "the size line '%" PRId64 " %" PRId64 " %" PRId64 "' is refused: %s",
                       h->rows, h->cols, h->declared, refusal.text);
}

/* A file that lists both triangles has each off-diagonal value counted
 * twice: worth saying, though the file is well formed. */
static void warn_upper_entries(const line_reader_t *r, const mtx_header_t *h,
                               const upper_entries_t *upper, cli_error_t *warning)
{
    if (warning == NULL || upper->count == 0)
        return;
    cli_error_set(warning, "%s: %" PRId64 " of the %" PRId64 " entries of this %s matrix lie above "
                           "the diagonal (the first on line %" PRId64 "); the format stores the "
                           "lower triangle only, and each entry is mirrored, so an entry listed "
                           "on both sides of the diagonal is counted twice",
                  r->path, upper->count, h->declared,
                  h->symmetry == SYMMETRY_SKEW ? "skew-symmetric" : "symmetric", upper->first_line);
}

int mtx_read_csr(const char *path, mtx_csr_t *out, cli_error_t *err)
{
    return mtx_read_csr_checked(path, NULL, NULL, out, NULL, err);
}

int mtx_read_csr_checked(const char *path, mtx_size_check_t check, const void *context,
                         mtx_csr_t *out, cli_error_t *warning, cli_error_t *err)
{
    if (warning != NULL)
        warning->text[0] = '\0';
    memset(out, 0, sizeof *out);
    line_reader_t r;
    memset(&r, 0, sizeof r);
    r.path = path;
    r.err = err;
    r.file = fopen(path, "rb");
    if (r.file == NULL)
        return cli_error_set(err, "%s: cannot open: %s", path, strerror(errno));
    r.chunk = malloc(MTX_CHUNK_BYTES);
    if (r.chunk == NULL) {
        fclose(r.file);
        return cli_error_set(err, "%s: out of memory for the read buffer", path);
    }
    mtx_header_t h;
    memset(&h, 0, sizeof h);
    entry_list_t entries;
    memset(&entries, 0, sizeof entries);
    int64_t expanded = 0;
    upper_entries_t upper = {0, 0};
    int status = read_banner(&r, &h);
    if (status == 0)
        status = read_size_line(&r, &h);
    if (status == 0)
        status = check_declared_sizes(&r, &h, check, context);
    if (status == 0)
        status = read_entries(&r, &h, &entries, &expanded, &upper);
    if (status == 0)
        status = check_nothing_follows(&r, &h);
    if (status == 0 && build_csr(&entries, &h, expanded, out) != 0)
        status = cli_error_set(err, "%s: out of memory for a %" PRId64 " x %" PRId64 " CSR matrix with %"
                               PRId64 " entries", path, h.rows, h.cols, expanded);
    if (status == 0)
        warn_upper_entries(&r, &h, &upper, warning);
    free_entries(&entries);
    free(r.chunk);
    fclose(r.file);
    return status;
}

/* NULL when m is consistent CSR within the int32 limits, else what is wrong. */
static const char *csr_problem(const mtx_csr_t *m)
{
    if (m->rows < 0 || m->rows > INT32_MAX || m->cols < 0 || m->cols > INT32_MAX || m->nnz < 0 ||
        m->nnz > INT32_MAX)
        return "rows, cols or nnz is negative or beyond int32";
    if (m->row_ptr == NULL || (m->nnz > 0 && m->col_idx == NULL))
        return "row_ptr or col_idx is NULL";
    if (m->row_ptr[0] != 0 || m->row_ptr[m->rows] != m->nnz)
        return "row_ptr does not start at 0 and end at nnz";
    for (int64_t r = 0; r < m->rows; r++)
        if (m->row_ptr[r + 1] < m->row_ptr[r])
            return "row_ptr decreases";
    for (int64_t k = 0; k < m->nnz; k++)
        if (m->col_idx[k] < 0 || m->col_idx[k] >= m->cols)
            return "a column index is out of range";
    return NULL;
}

int mtx_write_csr(const char *path, const mtx_csr_t *m, cli_error_t *err)
{
    const char *problem = csr_problem(m);
    if (problem != NULL)
        return cli_error_set(err, "%s: not written: the matrix is not valid CSR (%s)", path, problem);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return cli_error_set(err, "%s: cannot create: %s", path, strerror(errno));
    fprintf(f, "%s matrix coordinate %s general\n", MTX_BANNER, m->values != NULL ? "real" : "pattern");
    fprintf(f, "%" PRId64 " %" PRId64 " %" PRId64 "\n", m->rows, m->cols, m->nnz);
    for (int64_t r = 0; r < m->rows; r++) {
        for (int32_t k = m->row_ptr[r]; k < m->row_ptr[r + 1]; k++) {
            /* %.9g: nine significant digits identify every float exactly. */
            if (m->values != NULL)
                fprintf(f, "%" PRId64 " %" PRId32 " %.9g\n", r + 1, m->col_idx[k] + 1,
                        (double)m->values[k]);
            else
                fprintf(f, "%" PRId64 " %" PRId32 "\n", r + 1, m->col_idx[k] + 1);
        }
    }
    bool failed = ferror(f) != 0;
    int saved_errno = errno;
    if (fclose(f) != 0 && !failed) {
        failed = true;
        saved_errno = errno;
    }
    if (failed)
        return cli_error_set(err, "%s: write error: %s", path, strerror(saved_errno));
    return 0;
}

typedef struct {
    int32_t column;
    int32_t position; /* within the row, so equal columns keep their order */
} entry_key_t;

static int compare_entries(const void *x, const void *y)
{
    const entry_key_t *a = x, *b = y;
    if (a->column != b->column)
        return (a->column > b->column) - (a->column < b->column);
    return (a->position > b->position) - (a->position < b->position);
}

int64_t mtx_sort_rows(mtx_csr_t *m, cli_error_t *err)
{
    int64_t widest = 0, changed = 0;
    for (int64_t i = 0; i < m->rows; i++)
        if (m->row_ptr[i + 1] - m->row_ptr[i] > widest)
            widest = m->row_ptr[i + 1] - m->row_ptr[i];
    entry_key_t *keys = malloc((size_t)(widest > 0 ? widest : 1) * sizeof *keys);
    float *values = malloc((size_t)(widest > 0 ? widest : 1) * sizeof *values);
    if (keys == NULL || values == NULL) {
        free(keys);
        free(values);
        cli_error_set(err, "out of host memory sorting a row of %" PRId64 " entries", widest);
        return -1;
    }
    for (int64_t i = 0; i < m->rows; i++) {
        const int64_t start = m->row_ptr[i], length = m->row_ptr[i + 1] - start;
        int32_t *columns = m->col_idx + start;
        bool sorted = true;
        for (int64_t e = 1; e < length && sorted; e++)
            sorted = columns[e - 1] <= columns[e];
        if (sorted)
            continue;
        changed++;
        for (int64_t e = 0; e < length; e++)
            keys[e] = (entry_key_t){columns[e], (int32_t)e};
        qsort(keys, (size_t)length, sizeof *keys, compare_entries);
        for (int64_t e = 0; e < length; e++) {
            columns[e] = keys[e].column;
            if (m->values != NULL)
                values[e] = m->values[start + keys[e].position];
        }
        if (m->values != NULL)
            memcpy(m->values + start, values, (size_t)length * sizeof *values);
    }
    free(keys);
    free(values);
    return changed;
}

void mtx_csr_free(mtx_csr_t *m)
{
    if (m == NULL)
        return;
    free(m->row_ptr);
    free(m->col_idx);
    free(m->values);
    memset(m, 0, sizeof *m);
}
