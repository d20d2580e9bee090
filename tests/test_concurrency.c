/* Several handles used at once from several host threads (on the GPU, each
 * on a stream of its own) give the bits each product gives alone, as does
 * one GPU handle moved between two streams. A handle
 * serves one thread at a time (esmm.h), so every thread owns its handle and
 * its CSR descriptor; the inputs are shared, read-only.
 *   test_concurrency cpu|cuda   (cuda exits 77, skipped, without a GPU) */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "esmm.h"
#include "test_support.h"
#include "test_support_cuda.h"

enum {
    THREADS = 4,
    ROUNDS = 3,
    M = 300,
    N = 200,
    K = 1100, /* few C tiles and a long k: the GPU splits k */
    PRODUCTS = 4
};

/* The shared inputs, host copies and (cuda) device copies. */
typedef struct {
    float *a, *b, *b_rows_m; /* A M x K (zero blocks), B K x N, B' M x N */
    int32_t *row_ptr, *col_idx;
    float *values; /* W: A's nonzeros as CSR */
    int64_t nnz;
} inputs_t;

typedef struct {
    const inputs_t *in; /* host or device pointers, as the backend reads them */
    esmm_backend_t backend;
    float *out[PRODUCTS]; /* the thread's results, host memory */
    esmm_status_t status;
} job_t;

static const int64_t out_rows[PRODUCTS] = {M, K, M, K};

/* The products: sgemm N N and T N (A^T B'), CSR W B and W^T B' (prepared). */
static esmm_status_t run_products(esmm_handle_t h, const inputs_t *in, float *const c[PRODUCTS])
{
    const float one = 1.0f, zero = 0.0f;
    esmm_status_t st = esmm_sgemm(h, ESMM_OP_N, ESMM_OP_N, M, N, K, &one, in->a, K, in->b, N,
                                  &zero, c[0], N);
    if (st == ESMM_STATUS_SUCCESS)
        st = esmm_sgemm(h, ESMM_OP_T, ESMM_OP_N, K, N, M, &one, in->a, K, in->b_rows_m, N, &zero,
                        c[1], N);
    esmm_csr_t w = NULL;
    if (st == ESMM_STATUS_SUCCESS)
        st = esmm_csr_create(h, M, K, in->nnz, in->row_ptr, in->col_idx, in->values, 0.0f, &w);
    if (st == ESMM_STATUS_SUCCESS)
        st = esmm_scsrmm(h, ESMM_OP_N, w, N, &one, in->b, N, &zero, c[2], N);
    if (st == ESMM_STATUS_SUCCESS)
        st = esmm_csr_prepare(h, w, ESMM_OP_T);
    if (st == ESMM_STATUS_SUCCESS)
        st = esmm_scsrmm(h, ESMM_OP_T, w, N, &one, in->b_rows_m, N, &zero, c[3], N);
    const esmm_status_t destroyed = esmm_csr_destroy(w);
    return st != ESMM_STATUS_SUCCESS ? st : destroyed;
}

/* One thread's work: its own handle (and stream), ROUNDS times over. */
static void *run_job(void *arg)
{
    job_t *job = arg;
    esmm_handle_t h = NULL;
    job->status = esmm_create(&h, job->backend);
    if (job->status != ESMM_STATUS_SUCCESS)
        return NULL;
    /* Plans every product, however small: the planned paths are what this covers. */
    job->status = esmm_set_min_planned_work(h, 0);
    const int cuda = job->backend == ESMM_BACKEND_CUDA;
    cudaStream_t stream = NULL;
    float *c[PRODUCTS];
    for (int i = 0; i < PRODUCTS; i++) {
        const size_t bytes = (size_t)(out_rows[i] * N) * sizeof(float);
        c[i] = cuda ? device_alloc(bytes) : job->out[i];
    }
    if (cuda) {
        cuda_must(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
        job->status = esmm_set_stream(h, stream);
    }
    for (int r = 0; r < ROUNDS && job->status == ESMM_STATUS_SUCCESS; r++)
        job->status = run_products(h, job->in, c);
    if (cuda) {
        cuda_must(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
        for (int i = 0; i < PRODUCTS; i++) {
            device_download(job->out[i], c[i], (size_t)(out_rows[i] * N) * sizeof(float));
            device_free(c[i]);
        }
    }
    const esmm_status_t destroyed = esmm_destroy(h);
    if (job->status == ESMM_STATUS_SUCCESS)
        job->status = destroyed;
    if (cuda)
        cuda_must(cudaStreamDestroy(stream), "cudaStreamDestroy");
    return NULL;
}

static void make_inputs(inputs_t *in)
{
    uint64_t rng = 0xC0C0A11u;
    in->a = host_alloc(M * K, sizeof(float));
    in->b = host_alloc(K * N, sizeof(float));
    in->b_rows_m = host_alloc(M * N, sizeof(float));
    /* A: 32-row strips kept per 8-wide k block with probability 1/4. */
    for (int64_t s = 0; s < (M + 31) / 32; s++)
        for (int64_t kb = 0; kb < K / 8; kb++) {
            const int keep = rng_uniform(&rng) < 0.25;
            for (int64_t i = s * 32; i < min_i64(M, s * 32 + 32); i++)
                for (int64_t kk = kb * 8; kk < kb * 8 + 8; kk++)
                    in->a[i * K + kk] = keep ? nonzero_value(&rng) : 0.0f;
        }
    for (int64_t i = 0; i < K * N; i++)
        in->b[i] = nonzero_value(&rng);
    for (int64_t i = 0; i < M * N; i++)
        in->b_rows_m[i] = nonzero_value(&rng);
    in->row_ptr = host_alloc(M + 1, sizeof(int32_t));
    in->nnz = 0;
    for (int64_t i = 0; i < M * K; i++)
        in->nnz += in->a[i] != 0.0f;
    in->col_idx = host_alloc(max_i64(in->nnz, 1), sizeof(int32_t));
    in->values = host_alloc(max_i64(in->nnz, 1), sizeof(float));
    int64_t e = 0;
    for (int64_t i = 0; i < M; i++) {
        in->row_ptr[i] = (int32_t)e;
        for (int64_t kk = 0; kk < K; kk++)
            if (in->a[i * K + kk] != 0.0f) {
                in->col_idx[e] = (int32_t)kk;
                in->values[e++] = in->a[i * K + kk];
            }
    }
    in->row_ptr[M] = (int32_t)e;
}

/* Device copies of the inputs (pointers only differ). */
static inputs_t upload_inputs(const inputs_t *host)
{
    inputs_t d = *host;
    const struct {
        void **dst;
        const void *src;
        size_t bytes;
    } copies[] = {
        {(void **)&d.a, host->a, (size_t)(M * K) * sizeof(float)},
        {(void **)&d.b, host->b, (size_t)(K * N) * sizeof(float)},
        {(void **)&d.b_rows_m, host->b_rows_m, (size_t)(M * N) * sizeof(float)},
        {(void **)&d.row_ptr, host->row_ptr, (size_t)(M + 1) * sizeof(int32_t)},
        {(void **)&d.col_idx, host->col_idx, (size_t)max_i64(host->nnz, 1) * sizeof(int32_t)},
        {(void **)&d.values, host->values, (size_t)max_i64(host->nnz, 1) * sizeof(float)},
    };
    for (size_t i = 0; i < COUNT_OF(copies); i++) {
        *copies[i].dst = device_alloc(copies[i].bytes);
        device_upload(*copies[i].dst, copies[i].src, copies[i].bytes);
    }
    return d;
}

static void free_inputs(inputs_t *in, int device)
{
    void *pointers[] = {in->a, in->b, in->b_rows_m, in->row_ptr, in->col_idx, in->values};
    for (size_t i = 0; i < COUNT_OF(pointers); i++)
        device ? device_free(pointers[i]) : free(pointers[i]);
}

static job_t new_job(const inputs_t *in, esmm_backend_t backend)
{
    job_t job = {in, backend, {NULL}, ESMM_STATUS_SUCCESS};
    for (int i = 0; i < PRODUCTS; i++)
        job.out[i] = host_alloc(out_rows[i] * N, sizeof(float));
    return job;
}

/* One handle moved between two streams: calls on the second reuse the
 * workspace, so they must wait for the first's. The first stream is held up
 * by a 2 GB memset ahead of its product, so without that order its kernels
 * would run after the second stream's call had rewritten the masks and the
 * plan. Each product must give the bits it gives alone. */
static void check_stream_switch(const inputs_t *in, float *const alone[PRODUCTS])
{
    esmm_handle_t h = NULL;
    CHECK(esmm_create(&h, ESMM_BACKEND_CUDA) == ESMM_STATUS_SUCCESS &&
              esmm_set_min_planned_work(h, 0) == ESMM_STATUS_SUCCESS,
          "stream switch: esmm_create");
    cudaStream_t first, second;
    cuda_must(cudaStreamCreateWithFlags(&first, cudaStreamNonBlocking), "cudaStreamCreate");
    cuda_must(cudaStreamCreateWithFlags(&second, cudaStreamNonBlocking), "cudaStreamCreate");
    const size_t hold_bytes = (size_t)1 << 31;
    void *hold = device_alloc(hold_bytes);
    float *c[2] = {device_alloc((size_t)(M * N) * sizeof(float)),
                   device_alloc((size_t)(K * N) * sizeof(float))};
    const float one = 1.0f, zero = 0.0f;
    /* Both products once, so the workspace has grown (a growth frees and
     * so waits for the whole device) before the streams race. */
    for (int round = 0; round < 4; round++) {
        cuda_must(cudaMemset(c[0], 0xFF, (size_t)(M * N) * sizeof(float)), "poison");
        cuda_must(cudaMemset(c[1], 0xFF, (size_t)(K * N) * sizeof(float)), "poison");
        esmm_status_t st = esmm_set_stream(h, first);
        if (st == ESMM_STATUS_SUCCESS && round > 0)
            cuda_must(cudaMemsetAsync(hold, round, hold_bytes, first), "cudaMemsetAsync");
        if (st == ESMM_STATUS_SUCCESS)
            st = esmm_sgemm(h, ESMM_OP_N, ESMM_OP_N, M, N, K, &one, in->a, K, in->b, N, &zero,
                            c[0], N);
        if (st == ESMM_STATUS_SUCCESS)
            st = esmm_set_stream(h, second);
        if (st == ESMM_STATUS_SUCCESS)
            st = esmm_sgemm(h, ESMM_OP_T, ESMM_OP_N, K, N, M, &one, in->a, K, in->b_rows_m, N,
                            &zero, c[1], N);
        cuda_must(cudaStreamSynchronize(first), "cudaStreamSynchronize");
        cuda_must(cudaStreamSynchronize(second), "cudaStreamSynchronize");
        CHECK(st == ESMM_STATUS_SUCCESS, "stream switch, round %d: %s", round,
              esmm_status_string(st));
        for (int i = 0; i < 2; i++) {
            const size_t count = (size_t)(out_rows[i] * N);
            float *got = host_alloc((int64_t)count, sizeof(float));
            device_download(got, c[i], count * sizeof(float));
            CHECK(memcmp(got, alone[i], count * sizeof(float)) == 0,
                  "stream switch, round %d, product %d: not the bits of the product run alone",
                  round, i);
            free(got);
        }
    }
    CHECK(esmm_destroy(h) == ESMM_STATUS_SUCCESS, "stream switch: esmm_destroy");
    device_free(c[0]);
    device_free(c[1]);
    device_free(hold);
    cuda_must(cudaStreamDestroy(first), "cudaStreamDestroy");
    cuda_must(cudaStreamDestroy(second), "cudaStreamDestroy");
}

/* Holds a stream up until the flag is set (or 10 s have passed). */
static void CUDART_CB hold_until_released(void *flag)
{
    const struct timespec tick = {0, 100000};
    for (int i = 0; i < 100000 && !atomic_load((atomic_int *)flag); i++)
        nanosleep(&tick, NULL);
}

/* A handle with no workspace yet moved between two streams: what the first
 * stream writes (a copy of A, then A's pattern, extracted from it) must be
 * written before the product on the second reads it. The first stream is held
 * up by a host function until the product is queued, and the copy's
 * destination holds zeros until the copy runs, so without that order the
 * product would multiply zeros. Round 0, not held, gives the bits the held
 * round must give. */
static void check_switch_before_workspace(const inputs_t *in)
{
    cudaStream_t first, second;
    cuda_must(cudaStreamCreateWithFlags(&first, cudaStreamNonBlocking), "cudaStreamCreate");
    cuda_must(cudaStreamCreateWithFlags(&second, cudaStreamNonBlocking), "cudaStreamCreate");
    const size_t workspace_bytes = esmm_workspace_size(M, N, K);
    void *workspace = device_alloc(workspace_bytes);
    const size_t a_bytes = (size_t)(M * K) * sizeof(float), count = (size_t)(M * N);
    float *a = device_alloc(a_bytes);
    float *c = device_alloc(count * sizeof(float));
    float *want = host_alloc((int64_t)count, sizeof(float));
    float *got = host_alloc((int64_t)count, sizeof(float));
    const float one = 1.0f, zero = 0.0f;
    for (int round = 0; round < 2; round++) {
        cuda_must(cudaMemset(a, 0, a_bytes), "clear A's copy");
        cuda_must(cudaMemset(c, 0xFF, count * sizeof(float)), "poison");
        cuda_must(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        atomic_int released = round == 0;
        esmm_handle_t h = NULL;
        esmm_pattern_t pattern = NULL;
        esmm_status_t st = esmm_create(&h, ESMM_BACKEND_CUDA);
        if (st == ESMM_STATUS_SUCCESS)
            st = esmm_set_min_planned_work(h, 0);
        if (st == ESMM_STATUS_SUCCESS)
            st = esmm_set_stream(h, first);
        cuda_must(cudaLaunchHostFunc(first, hold_until_released, &released),
                  "cudaLaunchHostFunc");
        cuda_must(cudaMemcpyAsync(a, in->a, a_bytes, cudaMemcpyDeviceToDevice, first),
                  "cudaMemcpyAsync");
        if (st == ESMM_STATUS_SUCCESS)
            st = esmm_pattern_extract_a(h, ESMM_OP_N, M, K, a, K, &pattern);
        if (st == ESMM_STATUS_SUCCESS)
            st = esmm_set_stream(h, second);
        if (st == ESMM_STATUS_SUCCESS)
            st = esmm_set_workspace(h, workspace, workspace_bytes);
        if (st == ESMM_STATUS_SUCCESS)
            st = esmm_sgemm_patterns(h, ESMM_OP_N, ESMM_OP_N, M, N, K, &one, a, K, pattern,
                                     in->b, N, NULL, &zero, c, N);
        atomic_store(&released, 1);
        cuda_must(cudaStreamSynchronize(first), "cudaStreamSynchronize");
        cuda_must(cudaStreamSynchronize(second), "cudaStreamSynchronize");
        CHECK(st == ESMM_STATUS_SUCCESS, "stream switch before a workspace, round %d: %s",
              round, esmm_status_string(st));
        device_download(round == 0 ? want : got, c, count * sizeof(float));
        if (round > 0)
            CHECK(memcmp(got, want, count * sizeof(float)) == 0,
                  "stream switch before a workspace: the product on the second stream ran "
                  "before the first stream's copy and extraction");
        CHECK(esmm_pattern_destroy(pattern) == ESMM_STATUS_SUCCESS &&
                  esmm_destroy(h) == ESMM_STATUS_SUCCESS,
              "stream switch before a workspace: esmm_pattern_destroy, esmm_destroy");
    }
    free(want);
    free(got);
    device_free(a);
    device_free(c);
    device_free(workspace);
    cuda_must(cudaStreamDestroy(first), "cudaStreamDestroy");
    cuda_must(cudaStreamDestroy(second), "cudaStreamDestroy");
}

int main(int argc, char **argv)
{
    const int cuda = argc > 1 && strcmp(argv[1], "cuda") == 0;
    if (cuda && !cuda_device_present("concurrent CUDA handles"))
        return check_finish();
    const esmm_backend_t backend = cuda ? ESMM_BACKEND_CUDA : ESMM_BACKEND_CPU;
    inputs_t host;
    make_inputs(&host);
    inputs_t device = cuda ? upload_inputs(&host) : host;

    /* Alone first, then THREADS at once. */
    job_t alone = new_job(&device, backend);
    run_job(&alone);
    CHECK(alone.status == ESMM_STATUS_SUCCESS, "alone: %s", esmm_status_string(alone.status));
    if (cuda) {
        check_stream_switch(&device, alone.out);
        check_switch_before_workspace(&device);
    }
    job_t jobs[THREADS];
    pthread_t threads[THREADS];
    for (int t = 0; t < THREADS; t++) {
        jobs[t] = new_job(&device, backend);
        CHECK(pthread_create(&threads[t], NULL, run_job, &jobs[t]) == 0, "pthread_create");
    }
    for (int t = 0; t < THREADS; t++) {
        pthread_join(threads[t], NULL);
        CHECK(jobs[t].status == ESMM_STATUS_SUCCESS, "thread %d: %s", t,
              esmm_status_string(jobs[t].status));
        for (int i = 0; i < PRODUCTS; i++)
            CHECK(memcmp(jobs[t].out[i], alone.out[i], (size_t)(out_rows[i] * N) * sizeof(float)) ==
                      0,
                  "thread %d, product %d: not the bits of the product run alone", t, i);
        for (int i = 0; i < PRODUCTS; i++)
            free(jobs[t].out[i]);
    }
    /* The products themselves are right: one value of each against float64. */
    double want[PRODUCTS] = {0.0, 0.0, 0.0, 0.0};
    for (int64_t kk = 0; kk < K; kk++)
        want[0] += (double)host.a[kk] * host.b[kk * N];
    want[2] = want[0];
    for (int64_t i = 0; i < M; i++)
        want[1] += (double)host.a[i * K] * host.b_rows_m[i * N];
    want[3] = want[1];
    for (int i = 0; i < PRODUCTS; i++)
        CHECK(close_enough(alone.out[i][0], want[i], 1e-4), "product %d: C[0][0] = %g, want %g",
              i, (double)alone.out[i][0], want[i]);
    for (int i = 0; i < PRODUCTS; i++)
        free(alone.out[i]);
    if (cuda)
        free_inputs(&device, 1);
    free_inputs(&host, 0);
    return check_finish();
}
