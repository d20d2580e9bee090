#define _POSIX_C_SOURCE 200809L /* fseeko, ftello */

#include "npy.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LENGTH 6
/* numpy writes headers of a few hundred bytes; anything far larger is garbage. */
#define NPY_MAX_HEADER_LENGTH (1u << 20)
#define NPY_MAX_RANK 16
/* The first buffer for data read from a stream of unknown length. */
#define NPY_FIRST_STREAM_CAPACITY ((size_t)1 << 20)

typedef struct {
    char descr[32];
    bool fortran_order;
    int rank; /* may exceed NPY_MAX_RANK (the header is at most 1 MiB); only the first
               * NPY_MAX_RANK dimensions are kept */
    int64_t shape[NPY_MAX_RANK];
} npy_header_t;

typedef struct {
    const char *at, *begin, *end;
    const char *path;
    cli_error_t *err;
} header_cursor_t;

static bool host_is_little_endian(void)
{
    const uint32_t one = 1;
    unsigned char first;
    memcpy(&first, &one, 1);
    return first == 1;
}

static void swap_bytes_f32(float *data, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        uint32_t u;
        memcpy(&u, &data[i], 4);
        u = (u >> 24) | ((u >> 8) & 0xff00u) | ((u << 8) & 0xff0000u) | (u << 24);
        memcpy(&data[i], &u, 4);
    }
}

static bool header_fail(header_cursor_t *c, const char *what)
{
    /* Quote the header, non-printable bytes replaced, so the user sees what was there. */
    char shown[81];
    size_t n = 0;
    for (const char *p = c->begin; p < c->end && n < sizeof shown - 1; p++) {
        unsigned char ch = (unsigned char)*p;
        shown[n++] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
    }
    shown[n] = '\0';
    cli_error_set(c->err, "%s: malformed .npy header: %s at byte %td of \"%s%s\"", c->path, what,
                  c->at - c->begin, shown, c->end - c->begin > 80 ? "..." : "");
    return false;
}

static void skip_space(header_cursor_t *c)
{
    while (c->at < c->end && (*c->at == ' ' || *c->at == '\t' || *c->at == '\n' || *c->at == '\r'))
        c->at++;
}

static bool expect_char(header_cursor_t *c, char ch, const char *what)
{
    skip_space(c);
    if (c->at >= c->end || *c->at != ch)
        return header_fail(c, what);
    c->at++;
    return true;
}

/* A Python string literal without escapes, quoted with ' or ". */
static bool parse_string(header_cursor_t *c, char *out, size_t cap)
{
    skip_space(c);
    if (c->at >= c->end || (*c->at != '\'' && *c->at != '"'))
        return header_fail(c, "expected a quoted string");
    char quote = *c->at++;
    size_t n = 0;
    while (c->at < c->end && *c->at != quote) {
        if (*c->at == '\\' || *c->at == '\0')
            return header_fail(c, "unsupported character in a string");
        if (n + 1 >= cap)
            return header_fail(c, "string too long");
        out[n++] = *c->at++;
    }
    if (c->at >= c->end)
        return header_fail(c, "unterminated string");
    c->at++;
    out[n] = '\0';
    return true;
}

static bool parse_word(header_cursor_t *c, const char *word)
{
    size_t len = strlen(word);
    if ((size_t)(c->end - c->at) < len || memcmp(c->at, word, len) != 0)
        return false;
    c->at += len;
    return true;
}

static bool parse_bool(header_cursor_t *c, bool *out)
{
    skip_space(c);
    if (parse_word(c, "True"))
        *out = true;
    else if (parse_word(c, "False"))
        *out = false;
    else
        return header_fail(c, "expected True or False");
    return true;
}

static bool parse_dimension(header_cursor_t *c, int64_t *out)
{
    skip_space(c);
    if (c->at >= c->end || *c->at < '0' || *c->at > '9')
        return header_fail(c, "expected a non-negative integer dimension");
    int64_t value = 0;
    while (c->at < c->end && *c->at >= '0' && *c->at <= '9') {
        int digit = *c->at - '0';
        if (value > (INT64_MAX - digit) / 10)
            return header_fail(c, "dimension too large");
        value = value * 10 + digit;
        c->at++;
    }
    *out = value;
    return true;
}

/* "()", "(3,)", "(3, 4)", "(3, 4,)". */
static bool parse_shape(header_cursor_t *c, npy_header_t *h)
{
    if (!expect_char(c, '(', "expected '(' to open the shape"))
        return false;
    h->rank = 0;
    skip_space(c);
    if (c->at < c->end && *c->at == ')') {
        c->at++;
        return true;
    }
    for (;;) {
        int64_t dim;
        if (!parse_dimension(c, &dim))
            return false;
        if (h->rank < NPY_MAX_RANK)
            h->shape[h->rank] = dim;
        h->rank++;
        skip_space(c);
        if (c->at < c->end && *c->at == ')') {
            c->at++;
            return true;
        }
        if (!expect_char(c, ',', "expected ',' or ')' in the shape"))
            return false;
        skip_space(c);
        if (c->at < c->end && *c->at == ')') {
            c->at++;
            return true;
        }
    }
}

static bool parse_header(header_cursor_t *c, npy_header_t *h)
{
    bool has_descr = false, has_order = false, has_shape = false;
    if (!expect_char(c, '{', "expected '{'"))
        return false;
    skip_space(c);
    while (c->at < c->end && *c->at != '}') {
        char key[32];
        if (!parse_string(c, key, sizeof key))
            return false;
        if (!expect_char(c, ':', "expected ':' after a key"))
            return false;
        bool *seen;
        bool ok;
        if (strcmp(key, "descr") == 0) {
            seen = &has_descr;
            ok = parse_string(c, h->descr, sizeof h->descr);
        } else if (strcmp(key, "fortran_order") == 0) {
            seen = &has_order;
            ok = parse_bool(c, &h->fortran_order);
        } else if (strcmp(key, "shape") == 0) {
            seen = &has_shape;
            ok = parse_shape(c, h);
        } else {
            return header_fail(c, "unknown key (only 'descr', 'fortran_order', 'shape' exist)");
        }
        if (!ok)
            return false;
        if (*seen)
            return header_fail(c, "repeated key");
        *seen = true;
        skip_space(c);
        if (c->at < c->end && *c->at == ',') {
            c->at++;
            skip_space(c);
        } else if (c->at >= c->end || *c->at != '}') {
            return header_fail(c, "expected ',' or '}'");
        }
    }
    if (!expect_char(c, '}', "expected '}'"))
        return false;
    skip_space(c);
    if (c->at != c->end)
        return header_fail(c, "unexpected text after '}'");
    if (!has_descr || !has_order || !has_shape)
        return header_fail(c, "missing key ('descr', 'fortran_order' and 'shape' are required)");
    return true;
}

static void format_shape(const npy_header_t *h, char *out, size_t cap)
{
    size_t used = (size_t)snprintf(out, cap, "(");
    for (int i = 0; i < h->rank && i < NPY_MAX_RANK && used < cap; i++)
        used += (size_t)snprintf(out + used, cap - used, i == 0 ? "%" PRId64 : ", %" PRId64,
                                 h->shape[i]);
    if (used < cap)
        snprintf(out + used, cap - used, "%s)",
                 h->rank > NPY_MAX_RANK ? ", ..." : (h->rank == 1 ? "," : ""));
}

/* The error of a read that stopped after got of the n bytes it wanted: a read
 * error, or short_status when the file ended. */
static npy_status_t short_read(FILE *f, size_t got, size_t n, const char *path,
                               npy_status_t short_status, const char *short_what, cli_error_t *err)
{
    if (ferror(f)) {
        cli_error_set(err, "%s: read error: %s", path, strerror(errno));
        return NPY_ERR_IO;
    }
    cli_error_set(err, "%s: %s (%zu of %zu bytes present)", path, short_what, got, n);
    return short_status;
}

/* Reads exactly n bytes; distinguishes a read error from a short file. */
static npy_status_t read_exact(FILE *f, void *buf, size_t n, const char *path, npy_status_t short_status,
                               const char *short_what, cli_error_t *err)
{
    size_t got = fread(buf, 1, n, f);
    return got == n ? NPY_OK : short_read(f, got, n, path, short_status, short_what, err);
}

/* Bytes left from the current position, or -1 when the file cannot seek. */
static int64_t bytes_remaining(FILE *f)
{
    off_t here = ftello(f);
    if (here < 0 || fseeko(f, 0, SEEK_END) != 0)
        return -1;
    off_t end = ftello(f);
    if (end < 0 || fseeko(f, here, SEEK_SET) != 0)
        return -1;
    return (int64_t)(end - here);
}

static npy_status_t read_header(FILE *f, const char *path, npy_header_t *h, cli_error_t *err)
{
    unsigned char prefix[NPY_MAGIC_LENGTH + 2];
    npy_status_t st = read_exact(f, prefix, sizeof prefix, path, NPY_ERR_MAGIC,
                                 "too short to be a .npy file", err);
    if (st != NPY_OK)
        return st;
    if (memcmp(prefix, NPY_MAGIC, NPY_MAGIC_LENGTH) != 0) {
        cli_error_set(err, "%s: not a .npy file (it does not start with \"\\x93NUMPY\")", path);
        return NPY_ERR_MAGIC;
    }
    unsigned major = prefix[6], minor = prefix[7];
    if (minor != 0 || major < 1 || major > 3) {
        cli_error_set(err, "%s: unsupported .npy format version %u.%u (1.0, 2.0 and 3.0 are supported)",
                      path, major, minor);
        return NPY_ERR_VERSION;
    }
    unsigned char len_bytes[4] = {0, 0, 0, 0};
    size_t len_size = major == 1 ? 2 : 4;
    st = read_exact(f, len_bytes, len_size, path, NPY_ERR_HEADER,
                    "malformed .npy header: the file ends inside the header length", err);
    if (st != NPY_OK)
        return st;
    uint32_t header_length = (uint32_t)len_bytes[0] | (uint32_t)len_bytes[1] << 8 |
                             (uint32_t)len_bytes[2] << 16 | (uint32_t)len_bytes[3] << 24;
    if (header_length > NPY_MAX_HEADER_LENGTH) {
        cli_error_set(err, "%s: malformed .npy header: header length %" PRIu32 " is implausible",
                      path, header_length);
        return NPY_ERR_HEADER;
    }
    char *text = malloc(header_length + 1u);
    if (text == NULL) {
        cli_error_set(err, "%s: out of memory reading the header", path);
        return NPY_ERR_ALLOC;
    }
    st = read_exact(f, text, header_length, path, NPY_ERR_HEADER,
                    "malformed .npy header: the file ends inside the header", err);
    if (st == NPY_OK) {
        header_cursor_t c = {text, text, text + header_length, path, err};
        if (!parse_header(&c, h))
            st = NPY_ERR_HEADER;
    }
    free(text);
    return st;
}

/* Row-major copy of a column-major rows x cols matrix. */
static float *transpose_copy(const float *col_major, int64_t rows, int64_t cols)
{
    float *out = malloc((size_t)(rows * cols) * sizeof *out + 1);
    if (out == NULL)
        return NULL;
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++)
            out[i * cols + j] = col_major[j * rows + i];
    return out;
}

/* Reads the need data bytes into *out (allocated here; NULL on failure). A
 * file whose length was checked gets its buffer at once. A stream of unknown
 * length (a pipe) gets one that grows with the bytes that arrive, so a header
 * declaring more than is sent costs no more memory than was sent. */
static npy_status_t read_data(FILE *f, size_t need, bool length_checked, const char *path,
                              const char *shape, float **out, cli_error_t *err)
{
    size_t capacity = need;
    if (!length_checked && capacity > NPY_FIRST_STREAM_CAPACITY)
        capacity = NPY_FIRST_STREAM_CAPACITY;
    size_t got = 0;
    unsigned char *data = NULL;
    for (;;) {
        unsigned char *grown = realloc(data, capacity + 1);
        if (grown == NULL) {
            free(data);
            cli_error_set(err, "%s: cannot allocate %zu bytes for shape %s", path, capacity, shape);
            return NPY_ERR_ALLOC;
        }
        data = grown;
        got += fread(data + got, 1, capacity - got, f);
        if (got == need) {
            *out = (float *)data;
            return NPY_OK;
        }
        if (got < capacity)
            break;
        capacity = capacity > need - capacity ? need : 2 * capacity;
    }
    free(data);
    char what[256];
    snprintf(what, sizeof what, "truncated: shape %s needs %zu data bytes", shape, need);
    return short_read(f, got, need, path, NPY_ERR_TRUNCATED, what, err);
}

static npy_status_t load_body(FILE *f, const char *path, npy_matrix_t *out, cli_error_t *err)
{
    npy_header_t h;
    memset(&h, 0, sizeof h);
    npy_status_t st = read_header(f, path, &h, err);
    if (st != NPY_OK)
        return st;
    char shape[160];
    format_shape(&h, shape, sizeof shape);
    if (strcmp(h.descr, "<f4") != 0) {
        cli_error_set(err, "%s: dtype '%s' is not supported: only little-endian float32 ('<f4') is "
                           "(in numpy: a.astype('<f4'))", path, h.descr);
        return NPY_ERR_DTYPE;
    }
    if (h.rank != 2) {
        cli_error_set(err, "%s: a matrix needs 2 dimensions; this array has %d, shape %s", path,
                      h.rank, shape);
        return NPY_ERR_RANK;
    }
    int64_t rows = h.shape[0], cols = h.shape[1];
    if ((rows > 0 && cols > INT64_MAX / 4 / rows) || (uint64_t)(rows * cols) > SIZE_MAX / 4) {
        cli_error_set(err, "%s: shape %s is too large", path, shape);
        return NPY_ERR_SHAPE;
    }
    int64_t count = rows * cols;
    int64_t need = count * 4;
    int64_t remaining = bytes_remaining(f);
    if (remaining >= 0 && remaining < need) {
        cli_error_set(err, "%s: truncated: shape %s needs %" PRId64 " data bytes, the file has %" PRId64,
                      path, shape, need, remaining);
        return NPY_ERR_TRUNCATED;
    }
    if (remaining > need) {
        cli_error_set(err, "%s: %" PRId64 " unexpected bytes after the data of shape %s", path,
                      remaining - need, shape);
        return NPY_ERR_TRAILING;
    }
    float *data = NULL;
    st = read_data(f, (size_t)need, remaining >= 0, path, shape, &data, err);
    if (st == NPY_OK && fgetc(f) != EOF) {
        cli_error_set(err, "%s: unexpected bytes after the data of shape %s", path, shape);
        st = NPY_ERR_TRAILING;
    }
    if (st != NPY_OK) {
        free(data);
        return st;
    }
    if (!host_is_little_endian())
        swap_bytes_f32(data, (size_t)count);
    if (h.fortran_order) {
        float *row_major = transpose_copy(data, rows, cols);
        free(data);
        if (row_major == NULL) {
            cli_error_set(err, "%s: cannot allocate memory to transpose the Fortran-order data", path);
            return NPY_ERR_ALLOC;
        }
        data = row_major;
    }
    out->rows = rows;
    out->cols = cols;
    out->data = data;
    return NPY_OK;
}

npy_status_t npy_load_f32(const char *path, npy_matrix_t *out, cli_error_t *err)
{
    out->rows = out->cols = 0;
    out->data = NULL;
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        cli_error_set(err, "%s: cannot open: %s", path, strerror(errno));
        return NPY_ERR_IO;
    }
    npy_status_t st = load_body(f, path, out, err);
    fclose(f);
    return st;
}

int npy_load_operand(const char *path, const char *operand, npy_matrix_t *out, cli_error_t *err)
{
    if (npy_load_f32(path, out, err) != NPY_OK)
        return -1;
    if (out->rows > 0 && out->cols > 0)
        return 0;
    cli_error_set(err, "%s: %s is empty (%" PRId64 " x %" PRId64 ")", path, operand, out->rows,
                  out->cols);
    npy_matrix_free(out);
    return -1;
}

npy_status_t npy_save_f32(const char *path, const float *data, int64_t rows, int64_t cols,
                          int64_t ld, cli_error_t *err)
{
    if (rows < 0 || cols < 0 || ld < (cols > 1 ? cols : 1) || (rows > 0 && cols > 0 && data == NULL)) {
        cli_error_set(err, "%s: invalid matrix to save (%" PRId64 " x %" PRId64 ", ld %" PRId64 ")",
                      path, rows, cols, ld);
        return NPY_ERR_SHAPE;
    }
    char dict[160];
    int dict_length = snprintf(dict, sizeof dict,
                               "{'descr': '<f4', 'fortran_order': False, 'shape': (%" PRId64
                               ", %" PRId64 "), }", rows, cols);
    /* The data starts 64-byte aligned; the header ends with '\n'. */
    size_t unpadded = NPY_MAGIC_LENGTH + 2 + 2 + (size_t)dict_length + 1;
    size_t padding = (64 - unpadded % 64) % 64;
    size_t header_length = (size_t)dict_length + padding + 1;

    FILE *f = fopen(path, "wb");
    if (f == NULL) {
        cli_error_set(err, "%s: cannot create: %s", path, strerror(errno));
        return NPY_ERR_IO;
    }
    unsigned char prefix[NPY_MAGIC_LENGTH + 4];
    memcpy(prefix, NPY_MAGIC, NPY_MAGIC_LENGTH);
    prefix[6] = 1;
    prefix[7] = 0;
    prefix[8] = (unsigned char)(header_length & 0xff);
    prefix[9] = (unsigned char)(header_length >> 8);
    bool ok = fwrite(prefix, 1, sizeof prefix, f) == sizeof prefix &&
              fwrite(dict, 1, (size_t)dict_length, f) == (size_t)dict_length;
    for (size_t i = 0; ok && i < padding; i++)
        ok = fputc(' ', f) != EOF;
    ok = ok && fputc('\n', f) != EOF;

    bool swap = !host_is_little_endian();
    float *row_buffer = swap ? malloc((size_t)cols * sizeof *row_buffer + 1) : NULL;
    if (swap && row_buffer == NULL)
        ok = false;
    /* A shape with a 0 writes no data, and data may then be NULL. */
    for (int64_t i = 0; ok && cols > 0 && i < rows; i++) {
        const float *row = data + i * ld;
        if (swap) {
            memcpy(row_buffer, row, (size_t)cols * sizeof *row);
            swap_bytes_f32(row_buffer, (size_t)cols);
            row = row_buffer;
        }
        ok = fwrite(row, sizeof *row, (size_t)cols, f) == (size_t)cols;
    }
    free(row_buffer);
    int saved_errno = errno;
    if (fclose(f) != 0 && ok) {
        ok = false;
        saved_errno = errno;
    }
    if (!ok) {
        cli_error_set(err, "%s: write failed: %s", path, strerror(saved_errno));
        return NPY_ERR_IO;
    }
    return NPY_OK;
}

void npy_matrix_free(npy_matrix_t *m)
{
    free(m->data);
    m->data = NULL;
    m->rows = m->cols = 0;
}
