#define _POSIX_C_SOURCE 200809L /* nanosleep */

#include "cuda_bench.h"

#include <time.h>

#include "host_timing.h"

/* How long the gate holds the stream at most. */
#define GATE_TIMEOUT_MS 200.0
#define MAX_COPIES 4096

int bench_cuda_fail(cli_error_t *err, const char *what, cudaError_t e)
{
    return cli_error_set(err, "%s: %s", what, cudaGetErrorString(e));
}

int64_t bench_round_up(int64_t x, int64_t to)
{
    return (x + to - 1) / to * to;
}

int bench_cuda_wait(cudaStream_t stream, const char *what, cli_error_t *err)
{
    cudaError_t e = cudaStreamSynchronize(stream);
    if (e == cudaSuccess)
        e = cudaGetLastError();
    if (e != cudaSuccess)
        return cli_error_set(err, "%s: CUDA error: %s", what, cudaGetErrorString(e));
    return 0;
}

int64_t bench_choose_copies(int64_t copy_bytes, size_t l2_bytes)
{
    if (l2_bytes == 0 || copy_bytes <= 0)
        return 1;
    const int64_t target = (int64_t)l2_bytes * BENCH_L2_MULTIPLE;
    int64_t copies = (target + copy_bytes - 1) / copy_bytes;
    if (copies > MAX_COPIES)
        copies = MAX_COPIES;
    size_t free_bytes = 0, total_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) {
        const int64_t affordable = (int64_t)(free_bytes / 2) / copy_bytes;
        if (copies > affordable)
            copies = affordable;
    }
    return copies > 1 ? copies : 1;
}

int bench_device_alloc(void **ptr, size_t bytes, const char *what, cli_error_t *err)
{
    cudaError_t e = cudaMalloc(ptr, bytes > 0 ? bytes : 1);
    if (e != cudaSuccess) {
        *ptr = NULL;
        cudaGetLastError(); /* an allocation failure is not sticky; clear it */
        return cli_error_set(err, "cannot allocate %.1f MiB of device memory for %s: %s",
                             (double)bytes / (1 << 20), what, cudaGetErrorString(e));
    }
    return 0;
}

/* Uploads one copy and replicates it, doubling the filled part each time.
 * The padding after the first copy is zeroed first, so the replication reads
 * no byte that nothing wrote (compute-sanitizer's initcheck). */
int bench_fill_copies(float *slab, const float *host, int64_t count, int64_t stride,
                      int64_t copies, const char *what, cli_error_t *err)
{
    cudaError_t e = host != NULL
                        ? cudaMemcpy(slab, host, (size_t)count * sizeof(float), cudaMemcpyHostToDevice)
                        : cudaMemset(slab, 0, (size_t)count * sizeof(float));
    if (e == cudaSuccess && copies > 1 && stride > count)
        e = cudaMemset(slab + count, 0, (size_t)(stride - count) * sizeof(float));
    for (int64_t filled = 1; e == cudaSuccess && filled < copies;) {
        const int64_t now = copies - filled < filled ? copies - filled : filled;
        e = cudaMemcpy(slab + filled * stride, slab, (size_t)(now * stride) * sizeof(float),
                       cudaMemcpyDeviceToDevice);
        filled += now;
    }
    return e == cudaSuccess ? 0 : bench_cuda_fail(err, what, e);
}

cudaError_t bench_reset_c(float *c, const float *c0, size_t bytes, cudaStream_t stream)
{
    return c0 != NULL ? cudaMemcpyAsync(c, c0, bytes, cudaMemcpyHostToDevice, stream)
                      : cudaMemsetAsync(c, 0xff, bytes, stream);
}

int bench_create_events(cudaEvent_t *start, cudaEvent_t *stop, int count, int *created,
                        cli_error_t *err)
{
    for (; *created < count; (*created)++) {
        cudaError_t e = cudaEventCreate(&start[*created]);
        if (e == cudaSuccess) {
            e = cudaEventCreate(&stop[*created]);
            if (e != cudaSuccess)
                cudaEventDestroy(start[*created]);
        }
        if (e != cudaSuccess)
            return bench_cuda_fail(err, "creating CUDA events", e);
    }
    return 0;
}

void bench_destroy_events(cudaEvent_t *start, cudaEvent_t *stop, int created)
{
    for (int i = 0; i < created; i++) {
        cudaEventDestroy(start[i]);
        cudaEventDestroy(stop[i]);
    }
}

int bench_read_events(const cudaEvent_t *start, const cudaEvent_t *stop, int64_t batch,
                      double *ms, cli_error_t *err)
{
    for (int64_t i = 0; i < batch; i++) {
        float elapsed = 0.0f;
        const cudaError_t e = cudaEventElapsedTime(&elapsed, start[i], stop[i]);
        if (e != cudaSuccess)
            return bench_cuda_fail(err, "reading the CUDA events", e);
        ms[i] = elapsed;
    }
    return 0;
}

static void CUDART_CB hold_until_open(void *data)
{
    stream_gate_t *gate = data;
    const double deadline = host_now_ms() + GATE_TIMEOUT_MS;
    const struct timespec pause = {0, 10000};
    while (!atomic_load(&gate->open)) {
        if (host_now_ms() > deadline) {
            atomic_store(&gate->timed_out, 1);
            return;
        }
        nanosleep(&pause, NULL);
    }
}

void bench_gate_close(stream_gate_t *gate, cudaStream_t stream)
{
    atomic_store(&gate->open, 0);
    if (cudaLaunchHostFunc(stream, hold_until_open, gate) != cudaSuccess)
        cudaGetLastError();
}

void bench_gate_open(stream_gate_t *gate)
{
    atomic_store(&gate->open, 1);
}
