/* What the GPU runners (sgemm and CSR) share: device buffers holding several
 * copies of an operand, CUDA errors as messages, and the stream gate that
 * lets a batch of timed runs be queued before the device starts it. */
#ifndef ESMM_TOOLS_CUDA_BENCH_H
#define ESMM_TOOLS_CUDA_BENCH_H

#include <cuda_runtime.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "cli_error.h"

/* Each copy starts 256-byte aligned, like a fresh cudaMalloc, so every copy
 * sees the same alignment and vector paths. */
#define BENCH_COPY_ALIGN_FLOATS 64
/* Enough copies that a copy is reused only after at least this many times the
 * L2 size of other data has gone through, so no run starts with a warm L2. */
#define BENCH_L2_MULTIPLE 2

/* Sets the message "what: CUDA's description of e"; returns -1. */
int bench_cuda_fail(cli_error_t *err, const char *what, cudaError_t e);

int64_t bench_round_up(int64_t x, int64_t to);

/* Waits for the stream; a pending (asynchronous) error becomes a message
 * naming `what`. err may be NULL. */
int bench_cuda_wait(cudaStream_t stream, const char *what, cli_error_t *err);

/* How many copies of copy_bytes to cycle through: enough to exceed
 * BENCH_L2_MULTIPLE x L2, as long as they fit in half the free device memory. */
int64_t bench_choose_copies(int64_t copy_bytes, size_t l2_bytes);

/* cudaMalloc with a message naming `what` and the size on failure. */
int bench_device_alloc(void **ptr, size_t bytes, const char *what, cli_error_t *err);

/* Fills `copies` copies (stride floats apart) with host (count floats), or
 * zeros when host is NULL. */
int bench_fill_copies(float *slab, const float *host, int64_t count, int64_t stride,
                      int64_t copies, const char *what, cli_error_t *err);

/* C before a checked run: C0 when there is one, else all-ones bytes (a NaN),
 * so a kernel that leaves an element unwritten fails its check. */
cudaError_t bench_reset_c(float *c, const float *c0, size_t bytes, cudaStream_t stream);

/* Creates event pairs start[i], stop[i] for i from *created up to count;
 * *created counts the pairs made (destroy those with bench_destroy_events). */
int bench_create_events(cudaEvent_t *start, cudaEvent_t *stop, int count, int *created,
                        cli_error_t *err);
void bench_destroy_events(cudaEvent_t *start, cudaEvent_t *stop, int created);

/* ms[i] = time between start[i] and stop[i], i < batch. */
int bench_read_events(const cudaEvent_t *start, const cudaEvent_t *stop, int64_t batch,
                      double *ms, cli_error_t *err);

/* Holds the stream until the host has queued a whole batch, so the device
 * runs it back to back and the events time the device, not host overhead. A
 * call that waits for the device meanwhile is released after a timeout, and
 * timed_out says so. */
typedef struct {
    atomic_int open;
    atomic_int timed_out;
} stream_gate_t;

/* Closes the gate on the stream (without a gate the times may include host
 * overhead; they stay valid). */
void bench_gate_close(stream_gate_t *gate, cudaStream_t stream);
void bench_gate_open(stream_gate_t *gate);

#endif
