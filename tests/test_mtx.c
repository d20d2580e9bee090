/* Tests of the Matrix Market reader and writer: exact CSR arrays for general,
 * pattern, integer, symmetric and skew-symmetric files, the entry count the
 * size check is asked (mirrors included), the warning on symmetric files
 * storing entries above the diagonal, comments, blank lines and line
 * endings, a bit-exact write/read round trip, writer errors, and a table of
 * malformed files that must each be refused with a message naming the file
 * and the line, leaving the output empty. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mtx.h"
#include "test_support.h"

static char temp_dir[256];

static const char *temp_path(const char *name)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", temp_dir, name);
    return path;
}

static bool write_file(const char *path, const char *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return false;
    bool ok = fwrite(bytes, 1, n, f) == n;
    return fclose(f) == 0 && ok;
}

static bool csr_is_empty(const mtx_csr_t *m)
{
    return m->rows == 0 && m->cols == 0 && m->nnz == 0 && m->row_ptr == NULL && m->col_idx == NULL &&
           m->values == NULL;
}

/* Writes text to a temporary file and reads it back through
 * mtx_read_csr_checked; returns the reader's result. */
static int read_text_checked(const char *text, mtx_size_check_t check, const void *context,
                             mtx_csr_t *m, cli_error_t *warning, cli_error_t *err)
{
    const char *path = temp_path("case.mtx");
    if (!write_file(path, text, strlen(text))) {
        CHECK(0, "cannot write %s", path);
        return -2;
    }
    err->text[0] = '\0';
    return mtx_read_csr_checked(path, check, context, m, warning, err);
}

/* The same through mtx_read_csr. */
static int read_text(const char *text, mtx_csr_t *m, cli_error_t *err)
{
    return read_text_checked(text, NULL, NULL, m, NULL, err);
}

/* Checks m against expected arrays; values NULL expects a pattern matrix.
 * Values compare bit for bit. */
static void check_csr(const char *label, const mtx_csr_t *m, int64_t rows, int64_t cols, int64_t nnz,
                      const int32_t *row_ptr, const int32_t *col_idx, const float *values)
{
    CHECK(m->rows == rows && m->cols == cols && m->nnz == nnz,
          "%s: shape %lld x %lld, nnz %lld; expected %lld x %lld, nnz %lld", label, (long long)m->rows,
          (long long)m->cols, (long long)m->nnz, (long long)rows, (long long)cols, (long long)nnz);
    if (m->rows != rows || m->nnz != nnz || m->row_ptr == NULL || (nnz > 0 && m->col_idx == NULL))
        return;
    for (int64_t r = 0; r <= rows; r++)
        CHECK(m->row_ptr[r] == row_ptr[r], "%s: row_ptr[%lld] = %d, expected %d", label, (long long)r,
              m->row_ptr[r], row_ptr[r]);
    for (int64_t k = 0; k < nnz; k++)
        CHECK(m->col_idx[k] == col_idx[k], "%s: col_idx[%lld] = %d, expected %d", label, (long long)k,
              m->col_idx[k], col_idx[k]);
    if (values == NULL) {
        CHECK(m->values == NULL, "%s: a pattern matrix has values", label);
        return;
    }
    CHECK(m->values != NULL, "%s: values missing", label);
    if (m->values == NULL)
        return;
    for (int64_t k = 0; k < nnz; k++)
        CHECK(float_bits(m->values[k]) == float_bits(values[k]), "%s: values[%lld] = %.9g, expected %.9g",
              label, (long long)k, (double)m->values[k], (double)values[k]);
}

/* Reads text, which must succeed, and checks the result. */
static void check_read(const char *label, const char *text, int64_t rows, int64_t cols, int64_t nnz,
                       const int32_t *row_ptr, const int32_t *col_idx, const float *values)
{
    mtx_csr_t m;
    cli_error_t err;
    int status = read_text(text, &m, &err);
    CHECK(status == 0, "%s: read failed: %s", label, err.text);
    if (status == 0)
        check_csr(label, &m, rows, cols, nnz, row_ptr, col_idx, values);
    mtx_csr_free(&m);
    CHECK(csr_is_empty(&m), "%s: mtx_csr_free left something behind", label);
}

static void test_general(void)
{
    /* Rows keep the order of the file; the repeated (1, 2) stays two entries. */
    static const int32_t row_ptr[] = {0, 4, 4, 6};
    static const int32_t col_idx[] = {1, 3, 0, 1, 0, 2};
    static const float values[] = {-1.0f, 2.25f, 7.0f, 3.0f, 5.5f, 0.125f};
    check_read("real general",
               "%%MatrixMarket matrix coordinate real general\n"
               "% a comment\n"
               "3 4 6\n"
               "3 1 5.5\n"
               "1 2 -1\n"
               "1 4 2.25e0\n"
               "3 3 0.125\n"
               "1 1 7\n"
               "1 2 3\n",
               3, 4, 6, row_ptr, col_idx, values);

    check_read("pattern general",
               "%%MatrixMarket matrix coordinate pattern general\n"
               "3 4 6\n"
               "3 1\n1 2\n1 4\n3 3\n1 1\n1 2\n",
               3, 4, 6, row_ptr, col_idx, NULL);

    static const int32_t int_row_ptr[] = {0, 2, 4};
    static const int32_t int_col_idx[] = {0, 1, 1, 0};
    static const float int_values[] = {-3.0f, 12.0f, 16777216.0f, 0.0f};
    check_read("integer general",
               "%%MatrixMarket matrix coordinate integer general\n"
               "2 2 4\n"
               "1 1 -3\n1 2 +12\n2 2 16777217\n2 1 0\n",
               2, 2, 4, int_row_ptr, int_col_idx, int_values);

    static const int32_t empty_row_ptr[] = {0, 0, 0, 0, 0, 0};
    check_read("no entries", "%%MatrixMarket matrix coordinate real general\n5 3 0\n", 5, 3, 0,
               empty_row_ptr, NULL, (const float[]){0.0f});
    check_read("0 x 0", "%%MatrixMarket matrix coordinate real general\n0 0 0\n", 0, 0, 0,
               empty_row_ptr, NULL, (const float[]){0.0f});
}

static void test_symmetric(void)
{
    /* Expanded in file order, each off-diagonal entry followed by its mirror:
     * (0,0,1) (2,0,2) (0,2,2) (1,0,3) (0,1,3) (2,2,4), then sorted stably by row. */
    static const int32_t row_ptr[] = {0, 3, 4, 6};
    static const int32_t col_idx[] = {0, 2, 1, 0, 0, 2};
    static const float values[] = {1.0f, 2.0f, 3.0f, 3.0f, 2.0f, 4.0f};
    check_read("real symmetric",
               "%%MatrixMarket matrix coordinate real symmetric\n"
               "3 3 4\n"
               "1 1 1\n3 1 2\n2 1 3\n3 3 4\n",
               3, 3, 6, row_ptr, col_idx, values);

    /* An entry above the diagonal is mirrored like one below. */
    static const int32_t pattern_row_ptr[] = {0, 1, 3};
    static const int32_t pattern_col_idx[] = {1, 0, 1};
    check_read("pattern symmetric, upper entry",
               "%%MatrixMarket matrix coordinate pattern symmetric\n2 2 2\n1 2\n2 2\n", 2, 2, 3,
               pattern_row_ptr, pattern_col_idx, NULL);

    /* (1,0,4) (0,1,-4) (2,1,-1) (1,2,1). */
    static const int32_t skew_row_ptr[] = {0, 1, 3, 4};
    static const int32_t skew_col_idx[] = {1, 0, 2, 1};
    static const float skew_values[] = {-4.0f, 4.0f, 1.0f, -1.0f};
    check_read("real skew-symmetric",
               "%%MatrixMarket matrix coordinate real skew-symmetric\n"
               "3 3 2\n"
               "2 1 4\n3 2 -1\n",
               3, 3, 4, skew_row_ptr, skew_col_idx, skew_values);
    check_read("integer skew-symmetric",
               "%%MatrixMarket matrix coordinate integer skew-symmetric\n"
               "3 3 2\n"
               "2 1 4\n3 2 -1\n",
               3, 3, 4, skew_row_ptr, skew_col_idx, skew_values);
}

/* A size check that refuses more entries than *context and records what it
 * was asked in `asked`. */
static int64_t asked;

static int refuse_past(const void *context, int64_t rows, int64_t cols, int64_t entries,
                       cli_error_t *err)
{
    (void)rows;
    (void)cols;
    asked = entries;
    if (entries <= *(const int64_t *)context)
        return 0;
    return cli_error_set(err, "%lld entries is more than %lld", (long long)entries,
                         (long long)*(const int64_t *)context);
}

static void test_size_check_counts_mirrors(void)
{
    static const struct {
        const char *label, *text;
        int64_t limit, asked;
        int status;
    } cases[] = {
        {"general: the declared count",
         "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n2 1 1\n3 1 1\n", 3, 3, 0},
        {"symmetric: twice the declared count",
         "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 1\n2 1 1\n3 1 1\n", 6, 6, 0},
        {"symmetric: refused where its mirrors do not fit",
         "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 1\n2 1 1\n3 1 1\n", 5, 6, -1},
        {"skew-symmetric: twice the declared count, refused past 3",
         "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1\n3 1 1\n", 3, 4, -1},
        {"pattern symmetric, 2e9 declared: INT32_MAX, the most the reader takes",
         "%%MatrixMarket matrix coordinate pattern symmetric\n1000 1000 2000000000\n1 1\n",
         INT32_MAX, INT32_MAX, -1},
    };
    for (size_t i = 0; i < COUNT_OF(cases); i++) {
        mtx_csr_t m;
        cli_error_t err;
        asked = -1;
        int status = read_text_checked(cases[i].text, refuse_past, &cases[i].limit, &m, NULL, &err);
        CHECK(status == cases[i].status && asked == cases[i].asked,
              "%s: status %d (expected %d), the check was asked %lld entries (expected %lld): %s",
              cases[i].label, status, cases[i].status, (long long)asked, (long long)cases[i].asked,
              err.text);
        if (cases[i].asked > cases[i].limit)
            CHECK(strstr(err.text, "line 2: the size line") != NULL,
                  "%s: the refusal names the size line: '%s'", cases[i].label, err.text);
        if (status == 0)
            mtx_csr_free(&m);
    }
}

/* Reads text, which must succeed, and checks what the reader warns of: a
 * warning holding every one of expect (NULL ends them), or none when expect[0]
 * is NULL. */
static void check_warning(const char *label, const char *text, const char *const *expect)
{
    mtx_csr_t m;
    cli_error_t warning, err;
    snprintf(warning.text, sizeof warning.text, "left from before");
    int status = read_text_checked(text, NULL, NULL, &m, &warning, &err);
    CHECK(status == 0, "%s: read failed: %s", label, err.text);
    if (status == 0)
        mtx_csr_free(&m);
    if (expect[0] == NULL)
        CHECK(warning.text[0] == '\0', "%s: unexpected warning '%s'", label, warning.text);
    for (int i = 0; expect[i] != NULL; i++)
        CHECK(strstr(warning.text, expect[i]) != NULL, "%s: warning '%s' lacks '%s'", label,
              warning.text, expect[i]);
}

static void test_upper_triangle_warning(void)
{
    /* Both triangles listed: (2, 1) and (1, 2) each mirrored, so W[0][1] and
     * W[1][0] each get two entries of 0.5, kept as the file says. */
    const char *both = "%%MatrixMarket matrix coordinate real symmetric\n"
                       "3 3 4\n"
                       "1 1 2.0\n2 1 0.5\n1 2 0.5\n3 3 1.0\n";
    check_read("symmetric, both triangles listed", both, 3, 3, 6, (const int32_t[]){0, 3, 5, 6},
               (const int32_t[]){0, 1, 1, 0, 0, 2},
               (const float[]){2.0f, 0.5f, 0.5f, 0.5f, 0.5f, 1.0f});
    check_warning("symmetric, both triangles listed", both,
                  (const char *const[]){"case.mtx: 1 of the 4 entries of this symmetric matrix lie "
                                        "above the diagonal (the first on line 5)",
                                        "lower triangle only", "counted twice", NULL});
    check_warning("skew-symmetric, an entry above the diagonal",
                  "%%MatrixMarket matrix coordinate real skew-symmetric\n"
                  "3 3 3\n% comment\n1 2 4\n2 1 -4\n1 3 1\n",
                  (const char *const[]){"2 of the 3 entries of this skew-symmetric matrix",
                                        "(the first on line 4)", NULL});
    check_warning("symmetric, lower triangle only",
                  "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n1 1\n3 1\n3 2\n",
                  (const char *const[]){NULL});
    check_warning("general, entries above the diagonal",
                  "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 2 1\n2 1 1\n",
                  (const char *const[]){NULL});
}

static void test_layout(void)
{
    static const int32_t row_ptr[] = {0, 1, 2};
    static const int32_t col_idx[] = {1, 0};
    static const float values[] = {0.5f, -0.25f};
    check_read("CRLF, tabs, blank lines, comments between and after entries, banner case",
               "%%MATRIXMARKET Matrix Coordinate REAL General\r\n"
               "%comment\r\n"
               "\r\n"
               "   \t\r\n"
               "  2 2\t2  \r\n"
               "% between\n"
               "\n"
               "  1\t2   0.5\r\n"
               "  % indented comment\n"
               "2 1 -0.25\n"
               "% after the last entry\n"
               "\n   \n",
               2, 2, 2, row_ptr, col_idx, values);
    check_read("no newline at the end",
               "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 2 0.5\n2 1 -0.25", 2, 2, 2,
               row_ptr, col_idx, values);

    /* A comment far longer than a line or a read chunk is skipped whole. */
    const size_t comment_length = 200000;
    const char *head = "%%MatrixMarket matrix coordinate real general\n%";
    const char *tail = "\n2 2 2\n1 2 0.5\n2 1 -0.25\n";
    size_t head_length = strlen(head), tail_length = strlen(tail);
    char *text = host_alloc((int64_t)(head_length + comment_length + tail_length + 1), 1);
    memcpy(text, head, head_length);
    memset(text + head_length, 'c', comment_length);
    memcpy(text + head_length + comment_length, tail, tail_length + 1);
    check_read("long comment line", text, 2, 2, 2, row_ptr, col_idx, values);
    free(text);

    check_read("nan and inf values",
               "%%MatrixMarket matrix coordinate real general\n1 3 3\n1 1 inf\n1 2 -Infinity\n1 3 -0\n",
               1, 3, 3, (const int32_t[]){0, 3}, (const int32_t[]){0, 1, 2},
               (const float[]){INFINITY, -INFINITY, -0.0f});
    mtx_csr_t m;
    cli_error_t err;
    int status = read_text("%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 nan\n", &m, &err);
    CHECK(status == 0 && m.values != NULL && isnan(m.values[0]), "nan value: %s", err.text);
    mtx_csr_free(&m);
}

/* A random CSR matrix: about a third of the rows empty, repeated and
 * unsorted columns, values from random bit patterns (subnormals, -0 and the
 * extremes included, NaN and Inf excluded). */
static mtx_csr_t random_csr(uint64_t *rng, int64_t rows, int64_t cols, bool with_values)
{
    mtx_csr_t m = {rows, cols, 0, NULL, NULL, NULL};
    m.row_ptr = host_alloc(rows + 1, sizeof *m.row_ptr);
    m.row_ptr[0] = 0;
    for (int64_t r = 0; r < rows; r++)
        m.row_ptr[r + 1] = m.row_ptr[r] + (int32_t)(rng_below(rng, 3) == 0 ? 0 : rng_below(rng, 60));
    m.nnz = m.row_ptr[rows];
    m.col_idx = host_alloc(m.nnz, sizeof *m.col_idx);
    m.values = with_values ? host_alloc(m.nnz, sizeof *m.values) : NULL;
    for (int64_t k = 0; k < m.nnz; k++) {
        m.col_idx[k] = (int32_t)rng_below(rng, cols);
        if (!with_values)
            continue;
        uint32_t bits;
        do
            bits = (uint32_t)rng_next(rng);
        while ((bits & 0x7F800000u) == 0x7F800000u);
        switch (k % 16) {
        case 0: bits &= 0x807FFFFFu; break; /* subnormal or zero */
        case 1: bits = 0x80000000u; break;  /* -0 */
        case 2: bits = 0x7F7FFFFFu; break;  /* FLT_MAX */
        default: break;
        }
        memcpy(&m.values[k], &bits, sizeof bits);
    }
    return m;
}

static void test_round_trip(void)
{
    uint64_t rng = 20240611u;
    const char *path = temp_path("round.mtx");
    for (int with_values = 1; with_values >= 0; with_values--) {
        /* About 200 KiB of text, so lines cross read chunks. */
        mtx_csr_t m = random_csr(&rng, 300, 211, with_values != 0);
        const char *label = with_values ? "round trip real" : "round trip pattern";
        cli_error_t err;
        int status = mtx_write_csr(path, &m, &err);
        CHECK(status == 0, "%s: write failed: %s", label, err.text);
        mtx_csr_t back;
        status = mtx_read_csr(path, &back, &err);
        CHECK(status == 0, "%s: read failed: %s", label, err.text);
        if (status == 0)
            check_csr(label, &back, m.rows, m.cols, m.nnz, m.row_ptr, m.col_idx, m.values);
        mtx_csr_free(&back);
        mtx_csr_free(&m);
    }

    float special[] = {NAN, INFINITY, -INFINITY};
    mtx_csr_t m = {1, 3, 3, (int32_t[]){0, 3}, (int32_t[]){2, 0, 1}, special};
    cli_error_t err;
    mtx_csr_t back;
    int status = mtx_write_csr(path, &m, &err);
    if (status == 0)
        status = mtx_read_csr(path, &back, &err);
    CHECK(status == 0 && isnan(back.values[0]) && back.values[1] == INFINITY &&
              back.values[2] == -INFINITY && back.col_idx[0] == 2,
          "round trip of nan and inf: %s", status == 0 ? "wrong values" : err.text);
    if (status == 0)
        mtx_csr_free(&back);
    remove(path);
}

static void test_write_errors(void)
{
    cli_error_t err;
    mtx_csr_t m = {2, 2, 1, (int32_t[]){0, 1, 1}, (int32_t[]){0}, (float[]){1.0f}};
    int status = mtx_write_csr("/nonexistent-dir/out.mtx", &m, &err);
    CHECK(status == -1 && strstr(err.text, "cannot create") != NULL &&
              strstr(err.text, "/nonexistent-dir/out.mtx") != NULL,
          "unwritable path: %d '%s'", status, err.text);

    const struct {
        const char *label;
        mtx_csr_t m;
    } broken[] = {
        {"column out of range", {2, 2, 1, (int32_t[]){0, 1, 1}, (int32_t[]){2}, NULL}},
        {"row_ptr decreases", {2, 2, 1, (int32_t[]){0, 2, 1}, (int32_t[]){0, 0}, NULL}},
        {"row_ptr ends before nnz", {2, 2, 2, (int32_t[]){0, 1, 1}, (int32_t[]){0, 0}, NULL}},
        {"negative rows", {-1, 2, 0, (int32_t[]){0}, NULL, NULL}},
        {"no row_ptr", {2, 2, 0, NULL, NULL, NULL}},
    };
    const char *path = temp_path("broken.mtx");
    for (size_t i = 0; i < COUNT_OF(broken); i++) {
        status = mtx_write_csr(path, &broken[i].m, &err);
        CHECK(status == -1 && strstr(err.text, "not valid CSR") != NULL, "%s: %d '%s'", broken[i].label,
              status, err.text);
        CHECK(access(path, F_OK) != 0, "%s: a file was written", broken[i].label);
    }
}

typedef struct {
    const char *label;
    const char *text;
    size_t length; /* 0: strlen(text) */
    const char *expect[2];
} malformed_case_t;

#define BANNER "%%MatrixMarket matrix coordinate real general\n"
/* A literal with NUL bytes inside and its exact length (strlen would stop at
 * the first). */
#define WITH_NUL(literal) literal, sizeof(literal) - 1

static void test_malformed(void)
{
    static char long_line[2200];
    snprintf(long_line, sizeof long_line, "%s1 1 1\n1 1 %02000d\n", BANNER, 1);

    const malformed_case_t cases[] = {
        {"empty file", "", 0, {"empty", "line 1"}},
        {"no banner", "3 3 1\n1 1 1\n", 0, {"line 1:", "banner"}},
        {"misspelt banner", "%%MatrixMarkt matrix coordinate real general\n1 1 0\n", 0,
         {"line 1:", "not a Matrix Market file"}},
        {"binary file", "\x93NUMPY\x01\x00v\x00{'descr': '<f4'}\n", 0, {"line 1:", "banner"}},
        {"NUL in the banner", WITH_NUL("%%MatrixMarket\0 matrix coordinate real general\n1 1 0\n"),
         {"line 1:", "not a Matrix Market file"}},
        {"incomplete banner", "%%MatrixMarket matrix coordinate real\n1 1 0\n", 0,
         {"line 1:", "incomplete banner"}},
        {"vector object", "%%MatrixMarket vector coordinate real general\n1 1 0\n", 0,
         {"line 1:", "'vector' is not supported"}},
        {"array format", "%%MatrixMarket matrix array real general\n1 1\n1.0\n", 0,
         {"line 1:", "'array' format is not supported"}},
        {"complex field", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", 0,
         {"line 1:", "complex values are not supported"}},
        {"hermitian", "%%MatrixMarket matrix coordinate real hermitian\n1 1 0\n", 0,
         {"line 1:", "hermitian matrices are not supported"}},
        {"unknown field", "%%MatrixMarket matrix coordinate double general\n1 1 0\n", 0,
         {"line 1:", "unknown field 'double'"}},
        {"unknown symmetry", "%%MatrixMarket matrix coordinate real diagonal\n1 1 0\n", 0,
         {"line 1:", "unknown symmetry 'diagonal'"}},
        {"text after the banner", "%%MatrixMarket matrix coordinate real general extra\n1 1 0\n", 0,
         {"line 1:", "unexpected text 'extra'"}},
        {"pattern skew-symmetric", "%%MatrixMarket matrix coordinate pattern skew-symmetric\n1 1 0\n", 0,
         {"line 1:", "contradictory"}},
        {"no size line", BANNER "% only a comment\n\n", 0, {"line 3:", "before the size line"}},
        {"size line with 2 fields", BANNER "3 3\n", 0, {"line 2:", "3 integers"}},
        {"size line with 4 fields", BANNER "3 3 1 1\n1 1 1\n", 0, {"line 2:", "it has 4 fields"}},
        {"size not a number", BANNER "3 x 1\n1 1 1\n", 0, {"line 2:", "column count 'x' is not an integer"}},
        {"size with a fraction", BANNER "3 3 1.5\n1 1 1\n", 0, {"line 2:", "entry count '1.5'"}},
        {"negative size", BANNER "-3 3 1\n1 1 1\n", 0, {"line 2:", "row count -3 is out of range"}},
        {"size overflows int64", BANNER "3 3 99999999999999999999\n", 0,
         {"line 2:", "entry count 99999999999999999999 is out of range"}},
        {"rows beyond int32", BANNER "2147483648 1 0\n", 0,
         {"line 2:", "row count 2147483648 is out of range 0..2147483647"}},
        {"columns beyond int32", BANNER "1 2147483648 0\n", 0, {"line 2:", "column count 2147483648"}},
        {"entries beyond int32", BANNER "1 1 2147483648\n1 1 1\n", 0, {"line 2:", "entry count 2147483648"}},
        {"symmetric, not square", "%%MatrixMarket matrix coordinate real symmetric\n3 4 1\n1 1 1\n", 0,
         {"line 2:", "must be square"}},
        {"row index 0", BANNER "3 4 2\n1 1 1\n0 1 1\n", 0, {"line 4:", "row index 0 is out of range 1..3"}},
        {"row index too large", BANNER "3 4 1\n4 1 1\n", 0, {"line 3:", "row index 4 is out of range 1..3"}},
        {"column index too large", BANNER "3 4 1\n1 5 1\n", 0,
         {"line 3:", "column index 5 is out of range 1..4"}},
        {"column index 0", BANNER "3 4 1\n1 0 1\n", 0, {"line 3:", "column index 0"}},
        {"negative index", BANNER "3 4 1\n-1 1 1\n", 0, {"line 3:", "row index -1"}},
        {"index not a number", BANNER "3 4 1\na 1 1\n", 0, {"line 3:", "row index 'a' is not an integer"}},
        {"fractional index", BANNER "3 4 1\n1 1.0 1\n", 0, {"line 3:", "column index '1.0'"}},
        {"missing value", BANNER "3 4 1\n1 1\n", 0, {"line 3:", "row, column and value; found 2 fields"}},
        {"only one field", BANNER "3 4 1\n1\n", 0, {"line 3:", "found 1 field"}},
        {"extra field", BANNER "3 4 1\n1 1 1.0 2.0\n", 0, {"line 3:", "unexpected text '2.0'"}},
        {"pattern with a value", "%%MatrixMarket matrix coordinate pattern general\n3 4 1\n1 1 1.0\n", 0,
         {"line 3:", "unexpected text '1.0'"}},
        {"value not a number", BANNER "3 4 1\n1 1 abc\n", 0, {"line 3:", "value 'abc' is not a number"}},
        {"value with junk", BANNER "3 4 1\n1 1 1.5x\n", 0, {"line 3:", "value '1.5x' is not a number"}},
        {"value beyond float32", BANNER "3 4 1\n1 1 1e50\n", 0, {"line 3:", "beyond the float32 range"}},
        {"integer field, fraction", "%%MatrixMarket matrix coordinate integer general\n3 4 1\n1 1 1.5\n", 0,
         {"line 3:", "value '1.5' is not an integer"}},
        {"skew-symmetric diagonal",
         "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1\n2 2 1\n", 0,
         {"line 4:", "diagonal entry (2, 2)"}},
        {"truncated", BANNER "3 4 3\n1 1 1\n% note\n2 2 2\n", 0,
         {"line 5:", "end of file after 2 of the 3 entries that line 2 declares"}},
        {"huge declared count, tiny file", BANNER "1000 1000 2000000000\n1 1 1\n", 0,
         {"line 3:", "end of file after 1 of the 2000000000 entries"}},
        {"entry after the last", BANNER "3 4 1\n1 1 1\n\n2 2 2\n", 0,
         {"line 5:", "unexpected text after the last of the 1 entries"}},
        {"junk after the last", BANNER "3 4 1\n1 1 1\n% fine\nthe end\n", 0,
         {"line 5:", "unexpected text after the last"}},
        {"line too long", long_line, 0, {"line 3:", "longer than 1024 characters"}},
        {"NUL in an entry", WITH_NUL(BANNER "3 4 1\n1 1\0 2\n"), {"line 3:", "NUL byte"}},
    };

    const char *path = temp_path("malformed.mtx");
    for (size_t i = 0; i < COUNT_OF(cases); i++) {
        const malformed_case_t *c = &cases[i];
        size_t length = c->length > 0 ? c->length : strlen(c->text);
        if (!write_file(path, c->text, length)) {
            CHECK(0, "%s: cannot write %s", c->label, path);
            continue;
        }
        int32_t dummy = 7;
        mtx_csr_t m = {9, 9, 9, &dummy, &dummy, NULL};
        cli_error_t err;
        err.text[0] = '\0';
        int status = mtx_read_csr(path, &m, &err);
        CHECK(status == -1, "%s: status %d, expected -1", c->label, status);
        CHECK(csr_is_empty(&m), "%s: output not left empty", c->label);
        CHECK(strstr(err.text, path) != NULL, "%s: message does not name the file: '%s'", c->label,
              err.text);
        for (int j = 0; j < 2; j++)
            CHECK(strstr(err.text, c->expect[j]) != NULL, "%s: message '%s' lacks '%s'", c->label, err.text,
                  c->expect[j]);
        if (status == 0)
            mtx_csr_free(&m);
    }
    remove(path);

    /* Files that cannot be read at all. */
    const char *unreadable[][2] = {{temp_path("no-such-file.mtx"), "cannot open"},
                                   {temp_dir, "read error"}};
    for (size_t i = 0; i < COUNT_OF(unreadable); i++) {
        mtx_csr_t m;
        cli_error_t err;
        int status = mtx_read_csr(unreadable[i][0], &m, &err);
        CHECK(status == -1 && csr_is_empty(&m) && strstr(err.text, unreadable[i][1]) != NULL &&
                  strstr(err.text, unreadable[i][0]) != NULL,
              "%s: %d '%s'", unreadable[i][0], status, err.text);
    }
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(temp_dir, sizeof temp_dir, "%s/esmm-test-mtx-XXXXXX", tmp != NULL && *tmp ? tmp : "/tmp");
    if (mkdtemp(temp_dir) == NULL) {
        fprintf(stderr, "test_mtx: cannot create a temporary directory\n");
        return 1;
    }
    test_general();
    test_symmetric();
    test_size_check_counts_mirrors();
    test_upper_triangle_warning();
    test_layout();
    test_round_trip();
    test_write_errors();
    test_malformed();
    remove(temp_path("case.mtx"));
    rmdir(temp_dir);
    return check_finish();
}
