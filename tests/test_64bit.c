/* Offsets past 2^31 elements: products whose leading dimensions make A, B or
 * C span more than 2^31 floats, though they touch few of them, on the CPU
 * backend (when the host lends the address space) or the GPU.
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
    esmm_handle_t h = NULL;
    CHECK(esmm_create(&h, cuda ? ESMM_BACKEND_CUDA : ESMM_BACKEND_CPU) == ESMM_STATUS_SUCCESS,
          "esmm_create");
    if (h != NULL) {
        /* Plans every product, however small: the extraction must reach the spans too. */
        CHECK(esmm_set_min_planned_work(h, 0) == ESMM_STATUS_SUCCESS, "esmm_set_min_planned_work");
        check_sgemm(h, cuda);
        check_csrmm(h, cuda);
    }
    esmm_destroy(h);
    return check_finish();
}
