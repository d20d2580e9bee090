/* Offsets past 2^31 elements: products whose leading dimensions make A, B or
 * C span more than 2^31 floats, though they touch few of them, on the CPU
 * backend (when the host lends the address space) or the GPU; and on the GPU
 * a CSR W of INT32_MAX entries and a B too large for the compressed path.
 *   test_64bit cpu|cuda   (cuda exits 77, skipped, without a GPU) */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "esmm.h"
#include "test_support.h"
#include "test_support_cuda.h"

enum { M = 3, N = 16, K = 64 };
static const int64_t HUGE_LD = 1100000000; /* (M - 1) * HUGE_LD > 2^31 */
static const int64_t CSR_LDB = 40000000;   /* (K - 1) * CSR_LDB > 2^31 */

/* A span of `elements` floats on the backend, NULL when it cannot be had. */
static float *span_alloc(int cuda, int64_t elements)
{
    if (cuda) {
        void *p = NULL;
        if (cudaMalloc(&p, (size_t)elements * sizeof(float)) != cudaSuccess) {
            cudaGetLastError();
            return NULL;
        }
        return p;
    }
    return malloc((size_t)elements * sizeof(float)); /* pages untouched stay free */
}

static void span_free(int cuda, float *p)
{
    if (cuda)
        cudaFree(p);
    else
        free(p);
}

static void put(int cuda, float *dst, const float *src, int64_t count)
{
    if (cuda)
        device_upload(dst, src, (size_t)count * sizeof(float));
    else
        memcpy(dst, src, (size_t)count * sizeof(float));
}

static void get(int cuda, float *dst, const float *src, int64_t count)
{
    if (cuda)
        device_download(dst, src, (size_t)count * sizeof(float));
    else
        memcpy(dst, src, (size_t)count * sizeof(float));
}

/* C = A B with A (M x K, lda HUGE_LD, half its 8-wide k blocks zero) and C
 * (ldc HUGE_LD): the rows lie gigabytes apart. */
static void check_sgemm(esmm_handle_t h, int cuda)
{
    uint64_t rng = 0x64B17u;
    float a[M][K], b[K * N], c[M][N];
    for (int i = 0; i < M; i++)
        for (int kk = 0; kk < K; kk++)
            a[i][kk] = (kk / 8) % 2 ? 0.0f : nonzero_value(&rng);
    for (int i = 0; i < K * N; i++)
        b[i] = nonzero_value(&rng);
    float *da = span_alloc(cuda, (M - 1) * HUGE_LD + K);
    float *dc = span_alloc(cuda, (M - 1) * HUGE_LD + N);
    float *db = span_alloc(cuda, K * N);
    if (da == NULL || dc == NULL || db == NULL) {
        check_skip("sgemm with 2^31-element spans: the memory could not be had");
    } else {
        float poison[N];
        for (int j = 0; j < N; j++)
            poison[j] = poison_value();
        for (int i = 0; i < M; i++) {
            put(cuda, da + i * HUGE_LD, a[i], K);
            put(cuda, dc + i * HUGE_LD, poison, N);
        }
        put(cuda, db, b, K * N);
        const float one = 1.0f, zero = 0.0f;
        const esmm_status_t st = esmm_sgemm(h, ESMM_OP_N, ESMM_OP_N, M, N, K, &one, da, HUGE_LD,
                                            db, N, &zero, dc, HUGE_LD);
        CHECK(st == ESMM_STATUS_SUCCESS, "sgemm, lda = ldc = %lld: %s", (long long)HUGE_LD,
              esmm_status_string(st));
        for (int i = 0; i < M; i++) {
            get(cuda, c[i], dc + i * HUGE_LD, N);
            for (int j = 0; j < N; j++) {
                double want = 0.0;
                for (int kk = 0; kk < K; kk++)
                    want += (double)a[i][kk] * b[kk * N + j];
                CHECK(close_enough(c[i][j], want, 1e-4), "sgemm C(%d, %d) = %g, want %g", i, j,
                      (double)c[i][j], want);
            }
        }
    }
    span_free(cuda, da), span_free(cuda, dc), span_free(cuda, db);
}

/* C = W B with W (M x K CSR, every entry stored) and B's rows CSR_LDB
 * apart. */
static void check_csrmm(esmm_handle_t h, int cuda)
{
    uint64_t rng = 0xC5A64u;
    int32_t row_ptr[M + 1], col_idx[M * K];
    float values[M * K], b[K][N], c[M * N];
    for (int i = 0; i <= M; i++)
        row_ptr[i] = i * K;
    for (int e = 0; e < M * K; e++) {
        col_idx[e] = e % K;
        values[e] = nonzero_value(&rng);
    }
    for (int kk = 0; kk < K; kk++)
        for (int j = 0; j < N; j++)
            b[kk][j] = nonzero_value(&rng);
    float *db = span_alloc(cuda, (K - 1) * CSR_LDB + N);
    float *dc = span_alloc(cuda, M * N);
    float *dv = span_alloc(cuda, M * K);
    int32_t *dptr = cuda ? device_alloc(sizeof row_ptr) : row_ptr;
    int32_t *didx = cuda ? device_alloc(sizeof col_idx) : col_idx;
    if (db == NULL || dc == NULL || dv == NULL) {
        check_skip("csrmm with a 2^31-element B: the memory could not be had");
    } else {
        for (int kk = 0; kk < K; kk++)
            put(cuda, db + kk * CSR_LDB, b[kk], N);
        put(cuda, dv, values, M * K);
        if (cuda) {
            device_upload(dptr, row_ptr, sizeof row_ptr);
            device_upload(didx, col_idx, sizeof col_idx);
        }
        esmm_csr_t w = NULL;
        const float one = 1.0f, zero = 0.0f;
        esmm_status_t st = esmm_csr_create(h, M, K, M * K, dptr, didx, dv, 0.0f, &w);
        if (st == ESMM_STATUS_SUCCESS)
            st = esmm_scsrmm(h, ESMM_OP_N, w, N, &one, db, CSR_LDB, &zero, dc, N);
        CHECK(st == ESMM_STATUS_SUCCESS, "csrmm, ldb = %lld: %s", (long long)CSR_LDB,
              esmm_status_string(st));
        esmm_csr_destroy(w);
        get(cuda, c, dc, M * N);
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double want = 0.0;
                for (int kk = 0; kk < K; kk++)
                    want += (double)values[i * K + kk] * b[kk][j];
                CHECK(close_enough(c[i * N + j], want, 1e-4), "csrmm C(%d, %d) = %g, want %g", i,
                      j, (double)c[i * N + j], want);
            }
    }
    span_free(cuda, db), span_free(cuda, dc), span_free(cuda, dv);
    if (cuda) {
        device_free(dptr);
        device_free(didx);
    }
}

/* A W whose last row ends at nnz = INT32_MAX (2^15 rows of 2^16 entries,
 * the last one short; column e % MAX_NNZ_COLS for entry e, one shared
 * weight 1), through every CUDA path: entry indices near 2^31 must not wrap
 * as a row's lanes step past its end. Sums of ones below 2^24 are exact.
 * The CPU backend is not run here: W's column indices take 8.6 GB of host
 * memory, which the GPU run uploads a chunk at a time. */
enum { MAX_NNZ_ROWS = 1 << 15, MAX_NNZ_ROW = 1 << 16, MAX_NNZ_COLS = 1024, PANEL = 4 };

/* How many entries of the rows from `first` on have column c: each whole
 * run of MAX_NNZ_COLS entries has one. */
static int64_t entries_in_column(int64_t first, int64_t end, int64_t c)
{
    const int64_t from = first + ((c - first % MAX_NNZ_COLS) % MAX_NNZ_COLS + MAX_NNZ_COLS) %
                                     MAX_NNZ_COLS;
    return from < end ? (end - 1 - from) / MAX_NNZ_COLS + 1 : 0;
}

static void check_max_nnz(esmm_handle_t h)
{
    const int64_t nnz = INT32_MAX, last = (int64_t)(MAX_NNZ_ROWS - 1) * MAX_NNZ_ROW;
    size_t free_bytes = 0, total = 0;
    if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess ||
        free_bytes < (size_t)nnz * sizeof(int32_t) + ((size_t)1 << 30)) {
        cudaGetLastError();
        check_skip("nnz = INT32_MAX: the GPU lacks 9.6 GB free");
        return;
    }
    static int32_t row_ptr[MAX_NNZ_ROWS + 1];
    for (int i = 0; i < MAX_NNZ_ROWS; i++)
        row_ptr[i] = (int32_t)((int64_t)i * MAX_NNZ_ROW);
    row_ptr[MAX_NNZ_ROWS] = (int32_t)nnz;
    /* Every chunk holds the same columns, as it is a whole number of runs. */
    const int64_t chunk = (int64_t)1 << 26;
    int32_t *columns = malloc((size_t)chunk * sizeof(int32_t));
    CHECK(columns != NULL, "host chunk of column indices");
    if (columns == NULL)
        return;
    for (int64_t e = 0; e < chunk; e++)
        columns[e] = (int32_t)(e % MAX_NNZ_COLS);
    int32_t *dptr = device_alloc(sizeof row_ptr);
    int32_t *didx = device_alloc((size_t)nnz * sizeof(int32_t));
    device_upload(dptr, row_ptr, sizeof row_ptr);
    for (int64_t at = 0; at < nnz; at += chunk)
        device_upload(didx + at, columns, (size_t)(nnz - at < chunk ? nnz - at : chunk) *
                                              sizeof(int32_t));
    free(columns);

    esmm_csr_t w = NULL;
    CHECK(esmm_csr_create(h, MAX_NNZ_ROWS, MAX_NNZ_COLS, nnz, dptr, didx, NULL, 1.0f, &w) ==
              ESMM_STATUS_SUCCESS,
          "esmm_csr_create with nnz = INT32_MAX");
    const float one = 1.0f, zero = 0.0f;
    /* N: x (and B's first row) one at column 0, so every row sums its 64
     * entries there (the last row's 65535 entries hold 64 too). */
    static float x_n[MAX_NNZ_COLS], b_n[MAX_NNZ_COLS][PANEL];
    x_n[0] = 1.0f;
    for (int j = 0; j < PANEL; j++)
        b_n[0][j] = (float)(j + 1);
    /* T: x (and B) one in the last row only, so the other rows are skipped
     * and the short last row is scattered. */
    static float x_t[MAX_NNZ_ROWS], b_t[MAX_NNZ_ROWS][PANEL];
    x_t[MAX_NNZ_ROWS - 1] = 1.0f;
    for (int j = 0; j < PANEL; j++)
        b_t[MAX_NNZ_ROWS - 1][j] = 1.0f;
    float *dx = device_alloc(sizeof b_t), *dy = device_alloc(sizeof b_t);
    static float y[MAX_NNZ_ROWS * PANEL];
    static const struct {
        esmm_operation_t op;
        int64_t n;
        const char *kernel; /* NULL: esmm_scsrmv or esmm_scsrmm */
    } runs[] = {{ESMM_OP_N, 1, NULL},          {ESMM_OP_T, 1, NULL},
                {ESMM_OP_N, PANEL, "csr-dense-b"}, {ESMM_OP_N, PANEL, "csr-sparse-b"},
                {ESMM_OP_T, PANEL, NULL}};
    for (size_t r = 0; r < sizeof runs / sizeof runs[0] && w != NULL; r++) {
        const int t = runs[r].op == ESMM_OP_T;
        const int64_t n = runs[r].n, rows_out = t ? MAX_NNZ_COLS : MAX_NNZ_ROWS;
        if (n == 1)
            device_upload(dx, t ? (const void *)x_t : (const void *)x_n,
                          t ? sizeof x_t : sizeof x_n);
        else
            device_upload(dx, t ? (const void *)b_t : (const void *)b_n,
                          t ? sizeof b_t : sizeof b_n);
        cuda_must(cudaMemset(dy, 0xff, (size_t)rows_out * n * sizeof(float)), "poisoning C");
        esmm_status_t st;
        if (n == 1)
            st = esmm_scsrmv(h, runs[r].op, w, &one, dx, &zero, dy);
        else if (runs[r].kernel != NULL)
            st = esmm_scsrmm_kernel(h, runs[r].kernel, runs[r].op, w, n, &one, dx, n, &zero, dy,
                                    n);
        else
            st = esmm_scsrmm(h, runs[r].op, w, n, &one, dx, n, &zero, dy, n);
        cuda_must(cudaDeviceSynchronize(), "the product with nnz = INT32_MAX");
        CHECK(st == ESMM_STATUS_SUCCESS, "nnz = INT32_MAX, run %zu: %s", r,
              esmm_status_string(st));
        device_download(y, dy, (size_t)rows_out * n * sizeof(float));
        int64_t wrong = 0, first_wrong = -1;
        for (int64_t i = 0; i < rows_out; i++)
            for (int64_t j = 0; j < n; j++) {
                const double want =
                    t ? (double)entries_in_column(last, nnz, i)
                      : (double)entries_in_column(row_ptr[i], row_ptr[i + 1], 0) * (double)(j + 1);
                if ((double)y[i * n + j] != want && wrong++ == 0)
                    first_wrong = i * n + j;
            }
        CHECK(wrong == 0, "nnz = INT32_MAX, op %s, n = %lld, %s: %lld wrong values, first at %lld",
              t ? "T" : "N", (long long)n, runs[r].kernel ? runs[r].kernel : "default",
              (long long)wrong, (long long)first_wrong);
    }
    esmm_csr_destroy(w);
    device_free(dx), device_free(dy), device_free(dptr), device_free(didx);
}

/* A B whose compressed nonzeros would sit past position INT32_MAX (k =
 * 2^26 + 1 rows of 2 columns, so 2^26 + 32 rows of 32 slots): the
 * compressed path refuses it (NOT_SUPPORTED) and leaves C, the dense one
 * computes it. W is 1 x k with one entry, in column 2^26 (the last group
 * of rows), so B's other rows are never read. */
static void check_compressed_limit(esmm_handle_t h)
{
    const int64_t k = ((int64_t)1 << 26) + 1, n = 2;
    const int32_t row_ptr[2] = {0, 1}, col_idx[1] = {1 << 26};
    const float b_row[2] = {3.0f, -5.0f}, weight = 0.5f, one = 1.0f, zero = 0.0f;
    float *db = span_alloc(1, k * n), *dc = span_alloc(1, n);
    if (db == NULL || dc == NULL) {
        check_skip("compressed B past 2^31 positions: the memory could not be had");
        span_free(1, db), span_free(1, dc);
        return;
    }
    int32_t *dptr = device_alloc(sizeof row_ptr), *didx = device_alloc(sizeof col_idx);
    device_upload(dptr, row_ptr, sizeof row_ptr);
    device_upload(didx, col_idx, sizeof col_idx);
    put(1, db + ((int64_t)1 << 26) * n, b_row, n);
    const float poison[2] = {poison_value(), poison_value()};
    put(1, dc, poison, n);
    esmm_csr_t w = NULL;
    esmm_status_t st = esmm_csr_create(h, 1, k, 1, dptr, didx, NULL, weight, &w);
    CHECK(st == ESMM_STATUS_SUCCESS, "esmm_csr_create 1 x %lld: %s", (long long)k,
          esmm_status_string(st));
    st = esmm_scsrmm_kernel(h, "csr-sparse-b", ESMM_OP_N, w, n, &one, db, n, &zero, dc, n);
    float c[2];
    get(1, c, dc, n);
    CHECK(st == ESMM_STATUS_NOT_SUPPORTED && float_bits(c[0]) == POISON_BITS &&
              float_bits(c[1]) == POISON_BITS,
          "csr-sparse-b with k = %lld: %s, C %g %g (expected NOT_SUPPORTED, C untouched)",
          (long long)k, esmm_status_string(st), (double)c[0], (double)c[1]);
    st = esmm_scsrmm_kernel(h, "csr-dense-b", ESMM_OP_N, w, n, &one, db, n, &zero, dc, n);
    get(1, c, dc, n);
    CHECK(st == ESMM_STATUS_SUCCESS && c[0] == 1.5f && c[1] == -2.5f,
          "csr-dense-b with k = %lld: %s, C %g %g (expected 1.5 -2.5)", (long long)k,
          esmm_status_string(st), (double)c[0], (double)c[1]);
    esmm_csr_destroy(w);
    device_free(dptr);
    device_free(didx);
    span_free(1, db), span_free(1, dc);
}

int main(int argc, char **argv)
{
    const int cuda = argc > 1 && strcmp(argv[1], "cuda") == 0;
    if (cuda && !cuda_device_present("2^31-element spans on the GPU"))
        return check_finish();
#ifdef __SANITIZE_ADDRESS__
    /* AddressSanitizer would map shadow for every gigabyte of the spans. */
    if (!cuda) {
        check_skip("2^31-element spans under AddressSanitizer");
        return check_finish();
    }
#endif
    /* The setup is checked only for failure, so a run whose parts were all
     * skipped reports itself skipped. */
    esmm_handle_t h = NULL;
    if (esmm_create(&h, cuda ? ESMM_BACKEND_CUDA : ESMM_BACKEND_CPU) != ESMM_STATUS_SUCCESS)
        CHECK(0, "esmm_create");
    /* Plans every product, however small: the extraction must reach the spans too. */
    else if (esmm_set_min_planned_work(h, 0) != ESMM_STATUS_SUCCESS)
        CHECK(0, "esmm_set_min_planned_work");
    else {
        check_sgemm(h, cuda);
        check_csrmm(h, cuda);
        if (cuda) {
            check_max_nnz(h);
            check_compressed_limit(h);
        } else {
            check_skip("nnz = INT32_MAX on the CPU backend (8.6 GB of host memory)");
        }
    }
    esmm_destroy(h);
    return check_finish();
}
