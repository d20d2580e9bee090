/* After a failure the handle keeps working, and handles do not leak:
 *   - a lent workspace too small for a product: ESMM_STATUS_INVALID_VALUE,
 *     then the same handle runs the product right on its own workspace;
 *   - (GPU) a product whose workspace cannot be allocated (32 TiB of masks):
 *     ESMM_STATUS_ALLOC_FAILED, nothing read, then a right product;
 *   - (GPU) a dense kernel's grid past 2^31 - 1 CTAs: ESMM_STATUS_NOT_SUPPORTED,
 *     nothing launched, then a right product;
 *   - (GPU) 200 create / product / destroy cycles leave device memory where
 *     it was.
 *   test_failure_paths cpu|cuda   (cuda exits 77, skipped, without a GPU) */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "esmm.h"
#include "test_support.h"
#include "test_support_cuda.h"

enum { M = 40, N = 24, K = 72, CYCLES = 200 };

typedef struct {
    int cuda;
    float *a, *b, *c; /* the backend's memory */
    float host_a[M * K], host_b[K * N];
} problem_t;

static void *backend_alloc(int cuda, size_t bytes)
{
    return cuda ? device_alloc(bytes) : host_alloc((int64_t)bytes, 1);
}

static void backend_free(int cuda, void *p)
{
    if (cuda)
        device_free(p);
    else
        free(p);
}

/* Runs C = A B on h and checks C against float64. */
static void check_product(esmm_handle_t h, const problem_t *p, const char *when)
{
    const float one = 1.0f, zero = 0.0f;
    float c[M * N];
    for (int i = 0; i < M * N; i++)
        c[i] = poison_value();
    if (p->cuda)
        device_upload(p->c, c, sizeof c);
    else
        memcpy(p->c, c, sizeof c);
    const esmm_status_t st =
        esmm_sgemm(h, ESMM_OP_N, ESMM_OP_N, M, N, K, &one, p->a, K, p->b, N, &zero, p->c, N);
    CHECK(st == ESMM_STATUS_SUCCESS, "%s: esmm_sgemm: %s", when, esmm_status_string(st));
    if (p->cuda)
        device_download(c, p->c, sizeof c);
    else
        memcpy(c, p->c, sizeof c);
    int64_t bad = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double want = 0.0;
            for (int kk = 0; kk < K; kk++)
                want += (double)p->host_a[i * K + kk] * p->host_b[kk * N + j];
            bad += !close_enough(c[i * N + j], want, 1e-4);
        }
    CHECK(bad == 0, "%s: %lld elements of C wrong", when, (long long)bad);
}

static void check_small_lent_workspace(esmm_handle_t h, const problem_t *p)
{
    const size_t need = esmm_workspace_size(M, N, K);
    void *small = backend_alloc(p->cuda, 256);
    CHECK(esmm_set_workspace(h, small, 256) == ESMM_STATUS_SUCCESS, "esmm_set_workspace");
    const float one = 1.0f, zero = 0.0f;
    const esmm_status_t st =
        esmm_sgemm(h, ESMM_OP_N, ESMM_OP_N, M, N, K, &one, p->a, K, p->b, N, &zero, p->c, N);
    CHECK(need > 256 && st == ESMM_STATUS_INVALID_VALUE,
          "a lent workspace of 256 bytes for %zu needed: %s", need, esmm_status_string(st));
    CHECK(esmm_set_workspace(h, NULL, 0) == ESMM_STATUS_SUCCESS, "back to the handle's own");
    backend_free(p->cuda, small);
    check_product(h, p, "after a lent workspace too small");
}

/* m = n = 2^20 and k just under 2^31: the masks alone would take 32 TiB of
 * device memory, so the call fails before it reads A or B (one float each). */
static void check_alloc_failure(esmm_handle_t h, const problem_t *p)
{
    const int64_t mn = (int64_t)1 << 20, k = ((int64_t)1 << 31) - 16;
    const float one = 1.0f, zero = 0.0f;
    const esmm_status_t st =
        esmm_sgemm(h, ESMM_OP_N, ESMM_OP_N, mn, mn, k, &one, p->a, k, p->b, mn, &zero, p->c, mn);
    CHECK(st == ESMM_STATUS_ALLOC_FAILED, "workspace of 32 TiB: %s, want ESMM_STATUS_ALLOC_FAILED",
          esmm_status_string(st));
    check_product(h, p, "after a failed workspace allocation");
}

/* m = n = 2^24: 2^34 tiles of 128 x 128, more CTAs than a grid holds, so the
 * named dense kernel refuses the size before it reads A or B or writes C. */
static void check_grid_too_large(esmm_handle_t h, const problem_t *p)
{
    const int64_t mn = (int64_t)1 << 24, k = 8;
    const float one = 1.0f, zero = 0.0f;
    const esmm_status_t st = esmm_sgemm_kernel(h, "pipelined", ESMM_OP_N, ESMM_OP_N, mn, mn, k,
                                               &one, p->a, k, p->b, mn, &zero, p->c, mn);
    CHECK(st == ESMM_STATUS_NOT_SUPPORTED, "2^34 tiles: %s, want ESMM_STATUS_NOT_SUPPORTED",
          esmm_status_string(st));
    check_product(h, p, "after a grid too large");
}

static void check_no_leak(const problem_t *p)
{
    size_t free_before = 0, free_after = 0, total = 0;
    esmm_handle_t warm = NULL;
    CHECK(esmm_create(&warm, ESMM_BACKEND_CUDA) == ESMM_STATUS_SUCCESS &&
              esmm_set_min_planned_work(warm, 0) == ESMM_STATUS_SUCCESS,
          "esmm_create");
    check_product(warm, p, "warm-up");
    esmm_destroy(warm);
    cuda_must(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    cuda_must(cudaMemGetInfo(&free_before, &total), "cudaMemGetInfo");
    for (int i = 0; i < CYCLES; i++) {
        esmm_handle_t h = NULL;
        if (esmm_create(&h, ESMM_BACKEND_CUDA) != ESMM_STATUS_SUCCESS)
            break;
        esmm_set_min_planned_work(h, 0);
        const float one = 1.0f, zero = 0.0f;
        esmm_sgemm(h, ESMM_OP_N, ESMM_OP_N, M, N, K, &one, p->a, K, p->b, N, &zero, p->c, N);
        esmm_destroy(h);
    }
    cuda_must(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    cuda_must(cudaMemGetInfo(&free_after, &total), "cudaMemGetInfo");
    CHECK(free_after == free_before, "%d handles created and destroyed: free device memory %zu -> %zu",
          CYCLES, free_before, free_after);
}

int main(int argc, char **argv)
{
    problem_t p;
    memset(&p, 0, sizeof p);
    p.cuda = argc > 1 && strcmp(argv[1], "cuda") == 0;
    if (p.cuda && !cuda_device_present("GPU failure paths"))
        return check_finish();
    uint64_t rng = 0xFA11u;
    for (int i = 0; i < M * K; i++)
        p.host_a[i] = (i / 8) % 3 == 0 ? 0.0f : nonzero_value(&rng);
    for (int i = 0; i < K * N; i++)
        p.host_b[i] = nonzero_value(&rng);
    p.a = backend_alloc(p.cuda, sizeof p.host_a);
    p.b = backend_alloc(p.cuda, sizeof p.host_b);
    p.c = backend_alloc(p.cuda, (size_t)(M * N) * sizeof(float));
    if (p.cuda) {
        device_upload(p.a, p.host_a, sizeof p.host_a);
        device_upload(p.b, p.host_b, sizeof p.host_b);
    } else {
        memcpy(p.a, p.host_a, sizeof p.host_a);
        memcpy(p.b, p.host_b, sizeof p.host_b);
    }
    esmm_handle_t h = NULL;
    CHECK(esmm_create(&h, p.cuda ? ESMM_BACKEND_CUDA : ESMM_BACKEND_CPU) == ESMM_STATUS_SUCCESS,
          "esmm_create");
    if (h != NULL) {
        /* Plans every product, however small: the planned paths are what this covers. */
        CHECK(esmm_set_min_planned_work(h, 0) == ESMM_STATUS_SUCCESS, "esmm_set_min_planned_work");
        check_product(h, &p, "first product");
        check_small_lent_workspace(h, &p);
        if (p.cuda) {
            check_alloc_failure(h, &p);
            check_grid_too_large(h, &p);
        }
    }
    esmm_destroy(h);
    if (p.cuda)
        check_no_leak(&p);
    backend_free(p.cuda, p.a);
    backend_free(p.cuda, p.b);
    backend_free(p.cuda, p.c);
    return check_finish();
}
